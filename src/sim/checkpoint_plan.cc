#include "sim/checkpoint_plan.h"

#include <algorithm>
#include <cmath>

#include "sched/plugins/policies.h"
#include "sched/plugins/recovery.h"

namespace orrery {

Duration YoungDalyInterval(Duration stall, double mtbf_s) {
  return static_cast<Duration>(std::llround(std::sqrt(2.0 * static_cast<double>(stall) * mtbf_s)));
}

Duration IntervalFor(const CheckpointPlan& p, double mtbf_s) {
  if (p.mode == CheckpointMode::kNone) return 0;
  const Duration tau = p.young_daly ? YoungDalyInterval(p.stall(), mtbf_s) : p.interval;
  return std::max<Duration>({tau, p.persist_lag(), 1});
}

CheckpointProgress RunWithCheckpoints(const CheckpointPlan& p, Duration interval, Duration from, Duration wall) {
  CheckpointProgress s;
  if (interval <= 0 || p.mode == CheckpointMode::kNone) {
    s.work = wall;
    s.durable = from;
    return s;
  }
  const Duration stall = p.stall(), lag = p.persist_lag();
  const Duration cycle = interval + stall;
  const Duration k = wall / cycle, r = wall - k * cycle;  // whole cycles, then the part of one
  s.work = k * interval + std::min(r, interval);
  s.stall = k * stall + std::max<Duration>(0, r - interval);
  const Duration persisted = wall >= lag ? std::min(k, (wall - lag) / cycle) : 0;  // j-th durable at j*cycle + lag
  s.durable = from + persisted * interval;
  return s;
}

Result<CheckpointPlan> MakeCheckpointPlan(const std::string& spec) {
  Result<PluginSpec> s = ParsePluginSpec(spec, "checkpoint plan");
  if (!s) return s.error();
  CheckpointPlan p;
  if (s->name == "none") p.mode = CheckpointMode::kNone;
  else if (s->name == "sync") p.mode = CheckpointMode::kSync;
  else if (s->name == "async") p.mode = CheckpointMode::kAsync;
  else return MakeError("unknown checkpoint plan '" + s->name + "' (choices: none, sync, async)");
  bool has_every = false;
  for (const auto& [k, v] : s->params) {
    Duration* field = nullptr;
    if (k == "every") {
      has_every = true;
      if (v == "young-daly") {
        p.young_daly = true;
        continue;
      }
      field = &p.interval;
    } else if (k == "write") field = &p.write;
    else if (k == "snapshot") field = &p.snapshot;
    else if (k == "restore") field = &p.restore;
    else if (k == "init") field = &p.init;
    else
      return MakeError("checkpoint plan '" + s->name + "': unknown key '" + k +
                       "' (keys: every, write, snapshot, restore, init)");
    Result<Duration> d = ParseDurationText(v);
    if (!d) return d.error().With("checkpoint plan key '" + k + "'");
    *field = *d;
  }
  if (p.mode != CheckpointMode::kNone && (!has_every || (!p.young_daly && p.interval <= 0)))
    return MakeError("checkpoint plan '" + s->name + "': needs every=DURATION or every=young-daly");
  return p;
}

CheckpointPolicy ToCheckpointPolicy(const CheckpointPlan& p, double mtbf_s) {
  CheckpointPolicy c;
  c.every_seconds = IntervalFor(p, mtbf_s);
  c.cost = p.stall();
  c.restore = p.restore;
  c.on_preempt = true;
  return c;
}

}  // namespace orrery
