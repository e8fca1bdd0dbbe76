#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <queue>

#include "sched/framework/scheduler.h"
#include "sim/event_queue.h"
#include "sched/plugins/placers.h"
#include "sched/plugins/ces.h"
#include "sched/plugins/policies.h"
#include "sim/power_sim.h"
#include "sim/truth.h"

namespace orrery {

namespace {

struct Completion {
  uint32_t slot;
  uint32_t gen;  // lazy cancellation: stale when the slot's generation moved on
};

// Maps trace VCs and GPU types onto the cluster's.
struct Mapping {
  std::vector<int32_t> vc;          // trace vc id -> cluster vc id (-1 = none)
  std::vector<int32_t> type;        // trace type id -> cluster type id (-1 = none)
};

Mapping BuildMapping(const Trace& trace, const Cluster& cluster) {
  Mapping m;
  bool pool = cluster.single_pool || cluster.vcs.size() == 1;
  m.vc.assign(trace.vcs.size(), pool ? 0 : -1);
  if (!pool) {
    for (size_t i = 0; i < trace.vcs.size(); ++i) {
      for (size_t v = 0; v < cluster.vcs.size(); ++v)
        if (cluster.vcs[v].name == trace.vcs.Get(static_cast<uint32_t>(i))) m.vc[i] = static_cast<int32_t>(v);
    }
  }
  m.type.assign(trace.gpu_types.size(), -1);
  for (size_t i = 0; i < trace.gpu_types.size(); ++i) {
    uint32_t c = cluster.gpu_types.Find(trace.gpu_types.Get(static_cast<uint32_t>(i)));
    if (c != UINT32_MAX) m.type[i] = static_cast<int32_t>(c);
  }
  return m;
}

// Moves `spec.nodes` nodes into a new last VC "profiler": one node (the highest-numbered)
// from each donor VC in turn (spec.donor_vcs, else the VCs with the most nodes, ties by id);
// a VC keeps at least one node.
Result<Cluster> CarveProfiler(const Cluster& in, const ProfilerSpec& spec) {
  Cluster c = in;
  std::vector<size_t> donors;
  if (!spec.donor_vcs.empty()) {
    for (const std::string& name : spec.donor_vcs) {
      size_t k = c.vcs.size();
      for (size_t v = 0; v < c.vcs.size(); ++v)
        if (c.vcs[v].name == name) k = v;
      if (k == c.vcs.size()) return MakeError("profiler: donor VC '" + name + "' is not in cluster '" + c.name + "'");
      donors.push_back(k);
    }
  } else {
    for (size_t v = 0; v < c.vcs.size(); ++v) donors.push_back(v);
    std::stable_sort(donors.begin(), donors.end(),
                     [&](size_t a, size_t b) { return c.vcs[a].nodes.size() > c.vcs[b].nodes.size(); });
  }
  VirtualCluster pv;
  pv.id = VcId(static_cast<uint16_t>(c.vcs.size()));
  pv.name = "profiler";
  for (int taken = 0, round = 0; taken < spec.nodes && round < spec.nodes + 1; ++round) {
    bool any = false;
    for (size_t k : donors) {
      if (taken >= spec.nodes) break;
      VirtualCluster& v = c.vcs[k];
      if (v.nodes.size() < 2) continue;
      NodeId nid = v.nodes.back();
      v.nodes.pop_back();
      v.gpus -= c.nodes[nid.v].gpus;
      c.nodes[nid.v].vc = pv.id;
      pv.nodes.push_back(nid);
      pv.gpus += c.nodes[nid.v].gpus;
      ++taken;
      any = true;
    }
    if (!any) break;
  }
  if (static_cast<int>(pv.nodes.size()) < spec.nodes)
    return MakeError("profiler: cluster '" + c.name + "' cannot spare " + std::to_string(spec.nodes) + " nodes");
  std::sort(pv.nodes.begin(), pv.nodes.end());
  c.vcs.push_back(pv);
  c.single_pool = false;
  return c;
}

// The trace's demand mix: (GPUs, milli per GPU) → probability, over jobs with GPUs.
std::vector<std::pair<std::pair<uint32_t, uint16_t>, double>> DemandMix(const Trace& trace) {
  std::map<std::pair<uint32_t, uint16_t>, uint64_t> counts;
  uint64_t total = 0;
  for (const Job& j : trace.jobs) {
    if (j.gpus == 0) continue;
    ++counts[{j.gpus, j.gpu_milli}];
    ++total;
  }
  std::vector<std::pair<std::pair<uint32_t, uint16_t>, double>> mix;
  for (const auto& [k, c] : counts) mix.push_back({k, static_cast<double>(c) / static_cast<double>(total)});
  return mix;
}

FragSample Fragmentation(const ClusterState& st, Time t,
                         const std::vector<std::pair<std::pair<uint32_t, uint16_t>, double>>& mix) {
  FragSample f;
  f.t = t;
  const auto& nodes = st.cluster().nodes;
  uint16_t free_milli[64];
  for (const Node& nd : nodes) {
    const int g = std::min<int>(nd.gpus, 64);
    double node_free = 0, partial_free = 0;
    for (int i = 0; i < g; ++i) {
      free_milli[i] = st.gpu_free_milli(nd.id, i);
      node_free += free_milli[i];
      if (free_milli[i] < 1000) partial_free += free_milli[i];
    }
    if (node_free == 0) continue;
    const uint16_t whole = st.free_gpus(nd.id);
    double frag = 0;
    for (const auto& [demand, p] : mix) {
      const auto [k, m] = demand;
      if (m >= 1000) {
        frag += p * (whole >= std::min<uint32_t>(k, static_cast<uint32_t>(g)) ? partial_free : node_free);
      } else {
        double unusable = 0;
        for (int i = 0; i < g; ++i)
          if (free_milli[i] < m) unusable += free_milli[i];
        frag += p * unusable;
      }
    }
    f.free_gpus += node_free / 1000.0;
    f.fragmented_gpus += frag / 1000.0;
  }
  return f;
}

}  // namespace

Result<SimResult> Simulate(const Trace& trace, const Cluster& cluster, const SimConfig& cfg) {
  if (cluster.vcs.empty()) return MakeError("cluster '" + cluster.name + "' has no nodes");
  ORR_ASSIGN_OR_RETURN(PolicyParts policy, MakePolicy(cfg.policy, cfg.seed, &trace));
  return Simulate(trace, cluster, cfg, std::move(policy));
}

Result<SimResult> Simulate(const Trace& trace, const Cluster& cluster, const SimConfig& cfg, PolicyParts policy) {
  if (cluster.vcs.empty()) return MakeError("cluster '" + cluster.name + "' has no nodes");
  ORR_ASSIGN_OR_RETURN(auto placer, MakePlacer(cfg.placer, cfg.seed));
  // GPU sharing: the true co-located speeds come from the policy's interference context.
  const std::shared_ptr<const ColocationContext> coloc = policy.share ? policy.colocation : nullptr;
  if (policy.share && (!coloc || coloc->job_workload.size() != trace.jobs.size()))
    return MakeError("policy '" + cfg.policy + "' shares GPUs but supplies no per-job interference data");
  std::unique_ptr<PowerPlugin> power_plugin;
  if (!cfg.energy.empty()) {
    ORR_ASSIGN_OR_RETURN(power_plugin, MakePowerPlugin(cfg.energy, cfg.seed, trace.epoch_unix));
    if (!(cfg.resume_failure >= 0 && cfg.resume_failure <= 0.9))
      return MakeError("resume failure probability must be in [0, 0.9], got " + std::to_string(cfg.resume_failure));
    if (cfg.wake_latency < 0) return MakeError("wake-up latency must be ≥ 0 s");
  }
  if (!cfg.tie_order.empty() && cfg.tie_order.size() != trace.jobs.size())
    return MakeError("tie order has " + std::to_string(cfg.tie_order.size()) + " entries for " +
                     std::to_string(trace.jobs.size()) + " jobs");

  SimResult r;
  r.policy = cfg.policy;
  r.placer = cfg.placer;
  r.oracle = (policy.estimator && policy.estimator->is_oracle()) || policy.sort->wants_oracle();
  r.total_gpus = cluster.total_gpus();
  if (coloc) {
    r.shared_run.assign(trace.jobs.size(), 0);
    r.workload_assignment = "seeded: each job gets one of the " + std::to_string(coloc->n()) +
                            " workloads of " + coloc->source + " uniformly (seed " + std::to_string(coloc->seed) +
                            "); the trace has no model/batch/utilization columns";
  }
  for (const auto& v : cluster.vcs) r.vc_names.push_back(v.name);
  bool fractional = false;
  for (const Job& j : trace.jobs) fractional |= j.is_fractional();
  // Lucid's profiler: a staging VC carved out of the cluster (the scheduler sees the derived
  // cluster; trace VCs still map onto the original VC ids, which the derived one keeps).
  const ProfilerSpec prof = policy.profiler;
  Cluster derived;
  VcId prof_vc;
  if (prof.enabled) {
    ORR_ASSIGN_OR_RETURN(derived, CarveProfiler(cluster, prof));
    prof_vc = VcId(static_cast<uint16_t>(derived.vcs.size() - 1));
  }
  const Cluster& sched_cluster = prof.enabled ? derived : cluster;
  GpuTypeMask prof_types = 0;  // GPU types present in the profiler
  uint64_t prof_gpus = 0;
  if (prof.enabled) {
    for (NodeId nid : derived.vcs.back().nodes) {
      const Node& nd = derived.nodes[nid.v];
      if (nd.gpu_type.valid()) prof_types |= 1u << nd.gpu_type.v;
      prof_gpus += nd.gpus;
    }
  }
  SimTruth truth(policy.preempt_overhead ? policy.preempt_overhead : &PreemptionOverhead);
  Scheduler sched(sched_cluster, fractional, cfg.model_cpu_mem, std::move(policy), std::move(placer));
  sched.AttachTruth(&truth);
  const bool measure_frag = fractional && cfg.frag_interval > 0;
  const auto mix = measure_frag ? DemandMix(trace) : decltype(DemandMix(trace)){};
  Time next_frag = kNoTime;
  // --- explain: one watched job (SimConfig::watch_job)
  const bool watching = cfg.watch_job >= 0 && static_cast<size_t>(cfg.watch_job) < trace.jobs.size() && cfg.watch_notes;
  uint32_t watch_slot = UINT32_MAX;
  std::string last_block_text;
  bool watch_done = false;
  auto note = [&](Time t, const char* kind, std::string text) {
    cfg.watch_notes->push_back(ExplainNote{t, "simulator", kind, std::move(text), {}});
  };
  if (watching) sched.Watch(&trace.jobs[static_cast<size_t>(cfg.watch_job)], cfg.watch_notes);

  const size_t n = trace.jobs.size();
  r.outcomes.resize(n);
  auto reason_id = [&](std::string_view why) -> uint8_t {
    for (size_t i = 0; i < r.reasons.size(); ++i)
      if (r.reasons[i] == why) return static_cast<uint8_t>(i);
    r.reasons.emplace_back(why);
    return static_cast<uint8_t>(r.reasons.size() - 1);
  };

  // Arrival order: (submit, tie order). Traces from the importers and the generator are
  // already in that order, and then no index array is kept (4 bytes per job saved).
  auto seq_of = [&](uint32_t i) { return cfg.tie_order.empty() ? i : cfg.tie_order[i]; };
  bool sorted = true;
  for (size_t i = 1; i < n && sorted; ++i) {
    const Job &a = trace.jobs[i - 1], &b = trace.jobs[i];
    sorted = a.submit < b.submit || (a.submit == b.submit && seq_of(static_cast<uint32_t>(i - 1)) < seq_of(static_cast<uint32_t>(i)));
  }
  std::vector<uint32_t> order_storage;
  if (!sorted) {
    order_storage.resize(n);
    std::iota(order_storage.begin(), order_storage.end(), 0u);
    std::stable_sort(order_storage.begin(), order_storage.end(), [&](uint32_t a, uint32_t b) {
      const Job &ja = trace.jobs[a], &jb = trace.jobs[b];
      return ja.submit != jb.submit ? ja.submit < jb.submit : seq_of(a) < seq_of(b);
    });
  }
  auto order = [&](size_t i) -> uint32_t { return sorted ? static_cast<uint32_t>(i) : order_storage[i]; };

  Mapping map = BuildMapping(trace, cluster);
  std::vector<uint32_t> slot_job;   // slot -> job index
  std::vector<uint32_t> slot_gen;   // slot -> generation (lazy cancellation of completions)
  std::vector<Time> pending_since;  // per slot
  std::vector<Time> seg_start;      // per slot: start of the current running segment
  // Sharing only (coloc): per slot, work left in seconds of exclusive running, the current
  // progress rate (1 alone, the interference truth while sharing) and since when.
  std::vector<double> work_left;
  std::vector<float> rate;
  std::vector<Time> rate_since, shared_since;
  EventQueue<Completion> heap;
  std::vector<Decision> decisions;
  size_t next = 0;
  uint64_t done = 0;
  uint64_t progress_step = std::max<uint64_t>(1, n / 100);
  Time next_sample = kNoTime;
  Time last_t = kNoTime;
  uint64_t busy_milli = 0;
  r.first_submit = n ? trace.jobs[order(0)].submit : 0;
  if (cfg.sample_interval > 0 && n) {
    Time m = r.first_submit % cfg.sample_interval;
    next_sample = r.first_submit - (m < 0 ? m + cfg.sample_interval : m);  // floor to the period
  }

  // Re-times a running job whose rate changes at t to `new_rate`: its completion event
  // is re-pushed (the old one becomes stale through the slot generation).
  auto retime = [&](uint32_t s, Time t, float new_rate) {
    work_left[s] = std::max(0.0, work_left[s] - static_cast<double>(rate[s]) * static_cast<double>(t - rate_since[s]));
    rate[s] = new_rate;
    rate_since[s] = t;
    ++slot_gen[s];
    Time end = t + static_cast<Time>(std::ceil(work_left[s] / new_rate - 1e-6));
    heap.Push(end, Completion{s, slot_gen[s]});
  };
  // Energy saving (null when off: the loop below is then exactly the plain simulator's).
  std::unique_ptr<PowerSim> power;
  if (power_plugin)
    power = std::make_unique<PowerSim>(sched_cluster, std::move(power_plugin), cfg.node_power, cfg.wake_latency,
                                       cfg.resume_failure, cfg.seed, r.first_submit);

  auto finish_outcome = [&](uint32_t idx) {
    ++done;
    if (cfg.progress && done % progress_step == 0) cfg.progress(done, n);
  };

  // Pre-pass: jobs that can never be simulated.
  auto admit_static = [&](const Job& j, JobOutcome& o) -> bool {
    if (j.duration < 0) {
      o.status = OutcomeStatus::kSkipped;
      o.reject_reason = reason_id("duration unknown in the trace");
      return false;
    }
    if (j.gpus == 0 && !cfg.run_cpu_jobs) {
      o.status = OutcomeStatus::kSkipped;
      o.reject_reason = reason_id("CPU-only job (use --cpu-jobs to simulate)");
      return false;
    }
    return true;
  };

  // The decision cadence is the core's (Scheduler::NextDecisionTime / RunCycle): decision
  // ticks of periodic policies, wake-ups of event-driven ones (e.g. Tiresias' demotions).
  const Duration tick = sched.policy().tick;
  while (next < n || !heap.empty() || (tick > 0 && sched.pending_total() > 0) || (power && power->booting())) {
    Time t = next < n ? trace.jobs[order(next)].submit : INT64_MAX;
    if (!heap.empty()) t = std::min(t, heap.Top().t);
    if (const Time due = sched.NextDecisionTime(last_t); due != kNoTime) t = std::min(t, due);
    if (power) t = std::min(t, power->NextEvent(next < n || !heap.empty() || sched.pending_total() > 0));
    // Samples strictly before t see the state as it was since the previous instant.
    if (measure_frag && t != INT64_MAX) {  // the state since the previous instant, sampled on the grid
      if (next_frag == kNoTime) next_frag = t - (t % cfg.frag_interval + cfg.frag_interval) % cfg.frag_interval;
      while (next_frag < t) {
        if (last_t != kNoTime) r.fragmentation.push_back(Fragmentation(sched.cluster_state(), next_frag, mix));
        next_frag += cfg.frag_interval;
      }
    }
    while (next_sample != kNoTime && next_sample < t) {
      r.samples.push_back(TimeSample{next_sample, busy_milli, static_cast<uint32_t>(sched.running_total()),
                                     static_cast<uint32_t>(sched.pending_total()), sched.pending_gpu_milli()});
      if (power) r.powered_samples.push_back(power->powered());
      next_sample += cfg.sample_interval;
    }
    if (last_t != kNoTime) r.gpu_seconds_busy += static_cast<double>(busy_milli) / 1000.0 * static_cast<double>(t - last_t);
    if (power && last_t != kNoTime) power->Advance(last_t, t, busy_milli);
    last_t = t;
    // 1. Completions.
    while (!heap.empty() && heap.Top().t == t) {
      Completion c = heap.Pop().payload;
      if (slot_gen[c.slot] != c.gen) continue;  // cancelled by a preemption
      ++r.events;
      uint32_t idx = slot_job[c.slot];
      const SchedJob& sj = sched.view(c.slot);
      JobOutcome& o = r.outcomes[idx];
      if (sj.home_vc.valid() && truth.Remaining(c.slot) > t - sj.started) {  // profiling over, work left: hand over
        o.run += t - seg_start[c.slot];
        busy_milli -= trace.jobs[idx].gpu_milli_total();
        if (power) power->OnStop(c.slot, sj, true, t);
        sched.Handover(c.slot, t);
        pending_since[c.slot] = t;
        ++r.profiled;
        continue;
      }
      if (sj.home_vc.valid()) {
        ++r.profiled;
        ++r.done_in_profiler;
      }
      o.end = t;
      o.run += t - seg_start[c.slot];
      const uint32_t partner = sj.partner;
      if (partner == kNoSlot) busy_milli -= trace.jobs[idx].gpu_milli_total();  // else the partner keeps the GPUs
      if (power) power->OnStop(c.slot, sj, false, t);
      sched.Finish(c.slot, t);
      if (partner != kNoSlot) {  // the partner runs alone again, at full speed
        r.shared_run[idx] += t - shared_since[c.slot];
        r.shared_run[slot_job[partner]] += t - shared_since[partner];
        retime(partner, t, 1.0f);
      }
      if (watching && c.slot == watch_slot) {
        note(t, "finished", "finished: waited " + std::to_string(o.wait) + " s, ran " + std::to_string(o.run) +
                                " s, JCT " + std::to_string(t - trace.jobs[idx].submit) + " s");
        watch_slot = UINT32_MAX;
        watch_done = true;
      }
      sched.Release(c.slot);
      r.last_end = std::max(r.last_end, t);
      finish_outcome(idx);
    }
    // 1b. Boots that end now (the nodes join this instant's cycle).
    if (power) power->FinishBoots(t, sched);
    // 2. Arrivals.
    while (next < n && trace.jobs[order(next)].submit == t) {
      uint32_t idx = order(next++);
      ++r.events;
      const Job& j = trace.jobs[idx];
      JobOutcome& o = r.outcomes[idx];
      o.job = JobId(idx);
      o.gpus = j.gpus;
      o.gpu_milli = j.gpu_milli;
      if (!admit_static(j, o)) {
        finish_outcome(idx);
        continue;
      }
      int32_t vc = j.vc.valid() && j.vc.v < map.vc.size() ? map.vc[j.vc.v] : (map.vc.empty() ? -1 : map.vc[0]);
      if (!j.vc.valid() && (cluster.single_pool || cluster.vcs.size() == 1)) vc = 0;
      if (vc < 0) {
        o.status = OutcomeStatus::kRejected;
        o.reject_reason = reason_id("job's VC is not in the cluster");
        finish_outcome(idx);
        continue;
      }
      o.vc = VcId(static_cast<uint16_t>(vc));
      GpuTypeMask types = 0;
      bool had_types = j.gpu_types != 0;
      for (uint32_t m = j.gpu_types; m; m &= m - 1) {
        int tt = std::countr_zero(m);
        if (tt < static_cast<int>(map.type.size()) && map.type[tt] >= 0) types |= 1u << map.type[tt];
      }
      if (had_types && types == 0) {
        o.status = OutcomeStatus::kRejected;
        o.reject_reason = reason_id("no accepted GPU type exists in the cluster");
        finish_outcome(idx);
        continue;
      }
      const bool watched_now = watching && idx == static_cast<uint32_t>(cfg.watch_job);
      if (watched_now)
        note(t, "submitted", "submitted to VC " + cluster.vcs[o.vc.v].name + " (" + std::to_string(j.gpus) + " GPUs, " +
                                 std::to_string(j.duration) + " s of work)");
      // Profiler: jobs of at most max_gpus GPUs that fit it (and accept its GPU types) go there first.
      const bool stage = prof.enabled && j.gpus > 0 && j.gpus <= prof.max_gpus && j.gpus <= prof_gpus &&
                         j.nodes <= prof.nodes && (types == 0 || prof_types == 0 || (types & prof_types) == prof_types);
      auto slot = stage ? sched.SubmitStaged(&j, o.vc, prof_vc, types, seq_of(idx), t)
                        : sched.Submit(&j, o.vc, types, seq_of(idx), t);
      if (!slot.ok()) {
        o.status = OutcomeStatus::kRejected;
        o.reject_reason = reason_id(slot.error().message);
        finish_outcome(idx);
        continue;
      }
      uint32_t s = *slot;
      if (slot_job.size() <= s) {
        slot_job.resize(s + 1);
        slot_gen.resize(s + 1, 0);
        pending_since.resize(s + 1);
        seg_start.resize(s + 1);
        if (coloc) {
          work_left.resize(s + 1);
          rate.resize(s + 1);
          rate_since.resize(s + 1);
          shared_since.resize(s + 1);
        }
      }
      slot_job[s] = idx;
      ++slot_gen[s];
      pending_since[s] = t;
      if (watched_now) {
        watch_slot = s;
        sched.Describe(s, t, cfg.watch_notes);
      }
      if (power) power->OnSubmit(sched.view(s));
    }
    if (watching && !watch_done && watch_slot == UINT32_MAX &&
        r.outcomes[static_cast<size_t>(cfg.watch_job)].status != OutcomeStatus::kFinished) {
      const JobOutcome& wo = r.outcomes[static_cast<size_t>(cfg.watch_job)];
      note(t, "rejected", "not simulated: " + r.reasons[wo.reject_reason]);
      watch_done = true;
    }
    // 3. One scheduling cycle (periodic policies: only at ticks, unless tick_and_events).
    decisions.clear();
    const CycleRun run = sched.RunCycle(t, &decisions);
    const bool cycle = run.ran, at_tick = run.at_tick;
    if (watching && watch_slot != UINT32_MAX && cycle) {
      const SchedJob& w = sched.view(watch_slot);
      bool touched = false;
      for (const Decision& d : decisions) touched |= SlotOf(d) == watch_slot;
      if (touched) sched.Describe(watch_slot, t, cfg.watch_notes);
      if (!w.running) {
        PluginStatus b = sched.last_block(w.vc);
        std::string why = b.ok() ? "no blocking reason recorded (the jobs ahead of it were placed, skipped or kept running)"
                                 : std::string(b.reason) + " [" + std::string(b.plugin) + "]";
        if (why != last_block_text) {
          note(t, "pending", "pending; the VC's last cycle stopped because: " + why);
          last_block_text = why;
        }
      } else {
        last_block_text.clear();
      }
    }
    // Periodic policies: a tick that changes nothing with nothing left to happen would repeat forever.
    if (at_tick && decisions.empty() && heap.empty() && next == n && sched.running_total() == 0 &&
        !(power && power->booting()))
      break;
    for (const Decision& dec : decisions) {
      const uint32_t ds = SlotOf(dec);
      uint32_t idx = slot_job[ds];
      JobOutcome& o = r.outcomes[idx];
      const SchedJob& sj = sched.view(ds);
      if (std::holds_alternative<StartDecision>(dec)) {
        const StartDecision d = std::get<StartDecision>(dec);
        if (o.start == kNoTime) o.start = t;
        seg_start[d.slot] = t;
        o.wait += t - pending_since[d.slot];
        if (sj.partner == kNoSlot || sj.owns_gpus) {
          busy_milli += trace.jobs[idx].gpu_milli_total();
          if (coloc) {
            work_left[d.slot] = static_cast<double>(truth.Remaining(d.slot));
            rate[d.slot] = 1.0f;
            rate_since[d.slot] = t;
          }
          const Duration seg = sj.home_vc.valid() ? std::min(truth.Remaining(d.slot), prof.time_limit) : truth.Remaining(d.slot);
          heap.Push(t + seg, Completion{d.slot, slot_gen[d.slot]});
        } else {  // packed onto a running partner's GPUs: both slow down
          ++r.packed_starts;
          const uint32_t p = sj.partner;
          r.packs.emplace_back(idx, slot_job[p]);
          const uint16_t wa = coloc->workload(JobId(idx)), wb = coloc->workload(JobId(slot_job[p]));
          work_left[d.slot] = static_cast<double>(truth.Remaining(d.slot));
          rate[d.slot] = 1.0f;
          rate_since[d.slot] = t;
          retime(d.slot, t, coloc->TrueSpeed(wa, wb));
          retime(p, t, coloc->TrueSpeed(wb, wa));
          shared_since[d.slot] = shared_since[p] = t;
        }
        if (power) power->OnStart(d.slot, sj, trace.jobs[idx].submit, t);
      } else {  // preempted: its completion event is void; it waits again from now
        const PreemptDecision d = std::get<PreemptDecision>(dec);
        ++slot_gen[d.slot];
        if (o.preemptions < UINT16_MAX) ++o.preemptions;
        o.run += t - seg_start[d.slot];
        busy_milli -= trace.jobs[idx].gpu_milli_total();
        pending_since[d.slot] = t;
        if (power) power->OnStop(d.slot, sj, true, t);
      }
    }
    // A job started and preempted in the same cycle produced both decisions in order; the
    // completion pushed for the earlier start carries a stale generation and is skipped.
    // 4. Energy saving: the control step (when due) and wake-ups for jobs left pending.
    if (power) power->AfterCycle(t, sched);
    if (watch_done && cfg.stop_after_watch) {
      r.stopped_early = true;
      return r;
    }
  }
  // Final sample at the last instant.
  if (next_sample != kNoTime && next_sample <= last_t) {
    r.samples.push_back(TimeSample{next_sample, busy_milli, 0, 0, 0});
    if (power) r.powered_samples.push_back(power->powered());
  }
  if (power) {
    r.has_energy = true;
    r.energy = power->Finish(r.first_submit, last_t);
    r.energy.spec = cfg.energy;
  }
  if (cfg.explain && sched.policy().share) {
    for (size_t i = 0; i < n; ++i) {
      std::string why = sched.policy().share->Explain(JobId(static_cast<uint32_t>(i)));
      if (!why.empty()) r.explain.emplace_back(static_cast<uint32_t>(i), std::move(why));
    }
  }
  if (sched.running_total() != 0 || sched.pending_total() != 0) {
    return MakeError("simulation ended with " + std::to_string(sched.running_total()) + " running and " +
                         std::to_string(sched.pending_total()) + " pending jobs",
                     kExitRuntime);
  }
  return r;
}

Status CheckConservation(const Trace& trace, const SimResult& r) {
  if (r.outcomes.size() != trace.jobs.size())
    return MakeError("conservation: " + std::to_string(trace.jobs.size()) + " jobs submitted, " +
                         std::to_string(r.outcomes.size()) + " accounted for",
                     kExitRuntime);
  double gpu_seconds = 0;
  for (size_t i = 0; i < r.outcomes.size(); ++i) {
    const JobOutcome& o = r.outcomes[i];
    const Job& j = trace.jobs[i];
    if (o.status != OutcomeStatus::kFinished) continue;
    if (o.start == kNoTime || o.end == kNoTime || o.start < j.submit || o.end < o.start)
      return MakeError("conservation: job " + std::to_string(i) + " finished with inconsistent times", kExitRuntime);
    if (o.run < j.duration)
      return MakeError("conservation: job " + std::to_string(i) + " ran " + std::to_string(o.run) + " s of its " +
                           std::to_string(j.duration) + " s",
                       kExitRuntime);
    if (o.end - j.submit != o.wait + o.run)
      return MakeError("conservation: job " + std::to_string(i) + " wait + run != end - submit", kExitRuntime);
    // A GPU shared by two jobs is busy once: each partner's shared seconds count half.
    const double shared = r.shared_run.empty() ? 0.0 : static_cast<double>(r.shared_run[i]);
    if (shared > static_cast<double>(o.run))
      return MakeError("conservation: job " + std::to_string(i) + " shared its GPUs longer than it ran", kExitRuntime);
    gpu_seconds += (static_cast<double>(o.run) - shared / 2) * j.gpus * j.gpu_milli / 1000.0;
  }
  double capacity = static_cast<double>(r.total_gpus) * static_cast<double>(std::max<Time>(0, r.last_end - r.first_submit));
  if (gpu_seconds > capacity * (1 + 1e-9) + 1e-6)
    return MakeError("conservation: " + std::to_string(gpu_seconds) + " GPU-seconds used > capacity " +
                         std::to_string(capacity),
                     kExitRuntime);
  if (std::abs(gpu_seconds - r.gpu_seconds_busy) > 1e-6 * std::max(1.0, gpu_seconds))
    return MakeError("conservation: integrated busy GPU-seconds " + std::to_string(r.gpu_seconds_busy) +
                         " != sum over jobs " + std::to_string(gpu_seconds),
                     kExitRuntime);
  return Status::Ok();
}

}  // namespace orrery
