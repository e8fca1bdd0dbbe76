#include "sim/checkpoint_plan.h"

#include <algorithm>
#include <charconv>
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

Duration StorageEvery(const CheckpointPlan& p, Duration interval) {
  if (p.mode != CheckpointMode::kMemory || interval <= 0) return 1;
  const Duration cycle = interval + p.stall();
  const Duration wanted = (p.persist_every + interval / 2) / interval;  // rounded
  const Duration written = (p.write + cycle - 1) / cycle;               // ceil: one write at a time
  return std::max<Duration>({wanted, written, 1});
}

RestoreTier TierAfter(const CheckpointPlan& p, FaultCause cause, bool node_replaced) {
  if (p.mode != CheckpointMode::kMemory || cause == FaultCause::kLossSpike) return RestoreTier::kStorage;
  if (p.peers > 0) return RestoreTier::kMemory;
  return !node_replaced && cause != FaultCause::kHost ? RestoreTier::kMemory : RestoreTier::kStorage;
}

CheckpointProgress RunWithCheckpoints(const CheckpointPlan& p, Duration interval, Duration from, Duration wall,
                                      Duration from_storage) {
  CheckpointProgress s;
  if (from_storage < 0) from_storage = from;
  if (interval <= 0 || p.mode == CheckpointMode::kNone) {
    s.work = wall;
    s.durable = from_storage;
    s.durable_memory = from;
    return s;
  }
  const Duration stall = p.stall(), lag = p.persist_lag();
  const Duration cycle = interval + stall;
  const Duration k = wall / cycle, r = wall - k * cycle;  // whole cycles, then the part of one
  s.work = k * interval + std::min(r, interval);
  s.stall = k * stall + std::max<Duration>(0, r - interval);
  // The j-th checkpoint's snapshot ends at j*cycle; restorable lag s later.
  const auto done_by = [&](Duration after) { return wall >= after ? std::min(k, (wall - after) / cycle) : 0; };
  if (p.mode != CheckpointMode::kMemory) {
    s.durable = from + done_by(lag) * interval;
    s.durable_memory = s.durable;
    return s;
  }
  s.durable_memory = from + done_by(lag) * interval;
  const Duration m = StorageEvery(p, interval);
  const Duration stored = done_by(p.write) / m;  // storage copies j = m, 2m, ... written by `wall`
  s.durable = stored > 0 ? from + stored * m * interval : from_storage;
  return s;
}

namespace {

Status SetPeers(const std::string& v, uint32_t* out) {
  uint32_t n = 0;
  const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || ptr != v.data() + v.size() || n > 64)
    return MakeError("checkpoint plan key 'peers': expected an integer in [0, 64], got \"" + v + "\"");
  *out = n;
  return Status::Ok();
}

}  // namespace

Result<CheckpointPlan> MakeCheckpointPlan(const std::string& spec) {
  Result<PluginSpec> s = ParsePluginSpec(spec, "checkpoint plan");
  if (!s) return s.error();
  CheckpointPlan p;
  if (s->name == "none") p.mode = CheckpointMode::kNone;
  else if (s->name == "sync") p.mode = CheckpointMode::kSync;
  else if (s->name == "async") p.mode = CheckpointMode::kAsync;
  else if (s->name == "memory") p.mode = CheckpointMode::kMemory;
  else return MakeError("unknown checkpoint plan '" + s->name + "' (choices: none, sync, async, memory)");
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
    else if (p.mode == CheckpointMode::kMemory && k == "replicate") field = &p.replicate;
    else if (p.mode == CheckpointMode::kMemory && k == "persist_every") field = &p.persist_every;
    else if (p.mode == CheckpointMode::kMemory && k == "restore_memory") field = &p.restore_memory;
    else if (p.mode == CheckpointMode::kMemory && k == "peers") {
      ORR_RETURN_IF_ERROR(SetPeers(v, &p.peers));
      continue;
    } else
      return MakeError("checkpoint plan '" + s->name + "': unknown key '" + k + "' (keys: every, write, snapshot, restore, init" +
                       (p.mode == CheckpointMode::kMemory ? ", peers, replicate, persist_every, restore_memory)" : ")"));
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
