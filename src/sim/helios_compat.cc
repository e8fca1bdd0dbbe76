#include "sim/helios_compat.h"

#include <algorithm>
#include <numeric>
#include <queue>
#include <set>

#include "sched/plugins/placers.h"
#include "sched/plugins/policies.h"

namespace orrery {

namespace {

enum class Mode { kFifo, kSjf, kQssf };

struct VcSim {
  std::vector<uint32_t> queue;  // job indices in queue order
  std::vector<uint32_t> arrivals;  // indices arriving this second
};

}  // namespace

Result<SimResult> SimulateHeliosCompat(const Trace& trace, const Cluster& cluster, const SimConfig& cfg) {
  std::string base = cfg.policy.substr(0, cfg.policy.find(':'));
  Mode mode;
  if (base == "fifo") mode = Mode::kFifo;
  else if (base == "sjf") mode = Mode::kSjf;
  else if (base == "qssf") mode = Mode::kQssf;
  else return MakeError("Helios-compatible mode supports fifo, sjf and qssf, not '" + base + "'");
  if (cfg.placer != "consolidate") return MakeError("Helios-compatible mode uses the consolidate placer only");
  ORR_ASSIGN_OR_RETURN(PolicyParts policy, MakePolicy(cfg.policy, cfg.seed, &trace));
  ORR_ASSIGN_OR_RETURN(auto placer, MakePlacer("consolidate", cfg.seed));
  const size_t n = trace.jobs.size();
  if (!cfg.tie_order.empty() && cfg.tie_order.size() != n) return MakeError("tie order size does not match the trace");

  SimResult r;
  r.policy = cfg.policy + " (helios-compat)";
  r.placer = "consolidate";
  r.oracle = mode == Mode::kSjf || (policy.estimator && policy.estimator->is_oracle());
  r.total_gpus = cluster.total_gpus();
  for (const auto& v : cluster.vcs) r.vc_names.push_back(v.name);
  r.outcomes.resize(n);
  ClusterState state(cluster, false, false);

  auto seq_of = [&](uint32_t i) { return cfg.tie_order.empty() ? i : cfg.tie_order[i]; };
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const Job &ja = trace.jobs[a], &jb = trace.jobs[b];
    return ja.submit != jb.submit ? ja.submit < jb.submit : seq_of(a) < seq_of(b);
  });

  // VC mapping by name.
  std::vector<int32_t> vcmap(trace.vcs.size(), -1);
  for (size_t i = 0; i < trace.vcs.size(); ++i)
    for (size_t v = 0; v < cluster.vcs.size(); ++v)
      if (cluster.vcs[v].name == trace.vcs.Get(static_cast<uint32_t>(i))) vcmap[i] = static_cast<int32_t>(v);

  std::vector<VcSim> vcs(cluster.vcs.size());
  std::vector<int64_t> priority(n, 0);
  std::vector<uint8_t> has_priority(n, 0);
  std::vector<Allocation> allocs(n);
  std::vector<SchedJob> sj(n);
  using Ev = std::pair<Time, uint32_t>;  // (end, job)
  std::priority_queue<Ev, std::vector<Ev>, std::greater<>> running;
  std::vector<uint8_t> touched(cluster.vcs.size(), 0);
  std::vector<uint16_t> touched_list;
  std::set<Time> extra_ticks;
  uint64_t busy = 0;
  Time last_t = kNoTime;
  size_t next = 0;
  r.first_submit = n ? trace.jobs[order[0]].submit : 0;
  Time next_sample = kNoTime;
  if (cfg.sample_interval > 0 && n) {
    Time m = r.first_submit % cfg.sample_interval;
    next_sample = r.first_submit - (m < 0 ? m + cfg.sample_interval : m);
  }
  size_t pending = 0, nrunning = 0;
  uint64_t pending_milli = 0;

  auto reason_id = [&](std::string_view why) -> uint8_t {
    for (size_t i = 0; i < r.reasons.size(); ++i)
      if (r.reasons[i] == why) return static_cast<uint8_t>(i);
    r.reasons.emplace_back(why);
    return static_cast<uint8_t>(r.reasons.size() - 1);
  };
  auto touch = [&](uint16_t v) {
    if (!touched[v]) {
      touched[v] = 1;
      touched_list.push_back(v);
    }
  };

  while (next < n || !running.empty() || !extra_ticks.empty()) {
    Time t = next < n ? trace.jobs[order[next]].submit : INT64_MAX;
    if (!running.empty()) t = std::min(t, running.top().first);
    if (!extra_ticks.empty()) t = std::min(t, *extra_ticks.begin());
    bool extra = !extra_ticks.empty() && *extra_ticks.begin() == t;
    if (extra) extra_ticks.erase(extra_ticks.begin());
    while (next_sample != kNoTime && next_sample < t) {
      r.samples.push_back(TimeSample{next_sample, busy * 1000, static_cast<uint32_t>(nrunning),
                                     static_cast<uint32_t>(pending), pending_milli});
      next_sample += cfg.sample_interval;
    }
    if (last_t != kNoTime) r.gpu_seconds_busy += static_cast<double>(busy) * static_cast<double>(t - last_t);
    last_t = t;
    // 1. Release.
    while (!running.empty() && running.top().first == t) {
      uint32_t j = running.top().second;
      running.pop();
      state.Release(allocs[j]);
      busy -= trace.jobs[j].gpus;
      --nrunning;
      r.last_end = std::max(r.last_end, t);
      touch(r.outcomes[j].vc.v);
      ++r.events;
    }
    // 2. Arrivals.
    while (next < n && trace.jobs[order[next]].submit == t) {
      uint32_t j = order[next++];
      const Job& job = trace.jobs[j];
      JobOutcome& o = r.outcomes[j];
      o.job = JobId(j);
      o.gpus = job.gpus;
      o.gpu_milli = job.gpu_milli;
      ++r.events;
      int32_t v = job.vc.valid() && job.vc.v < vcmap.size() ? vcmap[job.vc.v] : -1;
      if (job.duration < 0) {
        o.status = OutcomeStatus::kSkipped;
        o.reject_reason = reason_id("duration unknown in the trace");
        continue;
      }
      if (v < 0) {
        o.status = OutcomeStatus::kRejected;
        o.reject_reason = reason_id("job's VC is not in the cluster");
        continue;
      }
      if (job.gpus > state.vc_total_gpus(VcId(static_cast<uint16_t>(v))) || job.gpus == 0 || job.is_fractional()) {
        o.status = OutcomeStatus::kRejected;
        o.reject_reason = reason_id("job cannot run in Helios-compatible mode (0 GPUs, fractional, or larger than its VC)");
        continue;
      }
      o.vc = VcId(static_cast<uint16_t>(v));
      sj[j].job = &job;
      sj[j].vc = o.vc;
      vcs[v].arrivals.push_back(j);
      vcs[v].queue.push_back(j);
      ++pending;
      pending_milli += job.gpu_milli_total();
      touch(static_cast<uint16_t>(v));
    }
    if (extra) {
      for (uint16_t v = 0; v < vcs.size(); ++v)
        if (!vcs[v].queue.empty()) touch(v);
    }
    std::sort(touched_list.begin(), touched_list.end());
    // 3-4. Sort and place, per touched VC.
    for (uint16_t v : touched_list) {
      touched[v] = 0;
      VcSim& vs = vcs[v];
      auto& q = vs.queue;
      bool gpu_only = false;
      switch (mode) {
        case Mode::kFifo:
          std::stable_sort(q.begin(), q.end(),
                           [&](uint32_t a, uint32_t b) { return trace.jobs[a].submit < trace.jobs[b].submit; });
          break;
        case Mode::kSjf:
          std::stable_sort(q.begin(), q.end(),
                           [&](uint32_t a, uint32_t b) { return trace.jobs[a].duration < trace.jobs[b].duration; });
          break;
        case Mode::kQssf:
          std::stable_sort(q.begin(), q.end(),
                           [&](uint32_t a, uint32_t b) { return trace.jobs[a].gpus < trace.jobs[b].gpus; });
          if (q.size() > vs.arrivals.size()) {
            for (uint32_t j : q) {
              if (!has_priority[j]) {
                priority[j] = policy.estimator->Estimate(trace.jobs[j], t) * static_cast<int64_t>(trace.jobs[j].gpus);
                has_priority[j] = 1;
              }
            }
            std::stable_sort(q.begin(), q.end(), [&](uint32_t a, uint32_t b) { return priority[a] < priority[b]; });
          } else {
            gpu_only = true;
          }
          break;
      }
      vs.arrivals.clear();
      size_t placed = 0;
      for (; placed < q.size(); ++placed) {
        uint32_t j = q[placed];
        Allocation a;
        if (!placer->Place(sj[j], state, nullptr, &a).ok()) break;
        state.Apply(a);
        allocs[j] = std::move(a);
        JobOutcome& o = r.outcomes[j];
        o.start = t;
        o.end = t + trace.jobs[j].duration;
        o.wait = t - trace.jobs[j].submit;
        o.run = trace.jobs[j].duration;
        busy += trace.jobs[j].gpus;
        ++nrunning;
        --pending;
        pending_milli -= trace.jobs[j].gpu_milli_total();
        running.emplace(o.end, j);
        if (trace.jobs[j].duration == 0) r.last_end = std::max(r.last_end, t);
      }
      q.erase(q.begin(), q.begin() + static_cast<std::ptrdiff_t>(placed));
      if (gpu_only && !q.empty()) extra_ticks.insert(t + 1);
    }
    touched_list.clear();
  }
  if (next_sample != kNoTime && next_sample <= last_t) r.samples.push_back(TimeSample{next_sample, busy * 1000, 0, 0, 0});
  for (auto& vs : vcs)
    if (!vs.queue.empty()) return MakeError("Helios-compatible run ended with jobs blocked forever", kExitRuntime);
  return r;
}

}  // namespace orrery
