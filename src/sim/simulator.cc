#include "sim/simulator.h"

#include <algorithm>
#include <tuple>
#include <cmath>
#include <map>
#include <numeric>
#include <queue>

#include "sched/framework/internal/scheduler.h"
#include "base/rng.h"
#include "sim/cordon.h"
#include "sim/harvest.h"
#include "sim/sim_queue.h"
#include "sched/plugins/placers.h"
#include "sched/plugins/ces.h"
#include "sched/plugins/policies.h"
#include "sim/power_sim.h"
#include "sim/planner_progress.h"
#include "sim/progress.h"
#include "sim/signals.h"
#include "sim/storage_sim.h"
#include "sim/truth.h"

namespace orrery {

namespace {

// The simulator's events (sim/sim_queue.h): one (time, rank, seq) queue; at one instant they
// are handled in rank order, each rank in push order, then the instant ends with one
// scheduling cycle (Scheduler::RunCycle) and the energy step. Observations (samples) see the
// state after every instant at or before their time and make no instant themselves.

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


// One simulation run: the state of Simulate() and one handler per event kind.
class SimRun {
 public:
  SimRun(const Trace& trace, const Cluster& cluster, const Cluster& sched_cluster, const SimConfig& cfg,
         PolicyParts policy, std::unique_ptr<PlacePlugin> placer, std::unique_ptr<PowerPlugin> power_plugin,
         SimResult* r, std::shared_ptr<LentGpus> lent = nullptr);
  Status Run();

 private:
  // --- the loop
  bool HasWork() const;
  bool Live(const SimEvent& e) const;
  void BeginInstant(Time t);
  void Dispatch(const SimEvent& e, Time t);
  bool EndInstant(Time t);  // false: stop the run
  void PushTimers(Time t);
  void Observe(const SimEvent& e);
  Status Finish();
  // --- handlers
  void OnCompletion(const SimEvent& e, Time t);
  void OnFailure(const SimEvent& e, Time t);
  void CordonNodeOf(const SchedJob& sj, const InjectedFailure& f, Time t);
  void OnPower(Time t);
  void OnStorage(Time t);
  void OnArrival(Time t);
  // Submit to the scheduler (arrived, dependencies met); its queueing delay counts from `since`
  // (its submission, or its release by the jobs it depends on).
  void Enter(uint32_t idx, Time t, Time since);
  void OnProgressReport(const SimEvent& e, Time t);
  void OnWithdraw(const SimEvent& e, Time t);
  void OnHarvest(const SimEvent& e, Time t);
  void HarvestReturn(uint32_t slot, Time t);
  void NoteHarvestStart(uint32_t slot, uint32_t idx, Time t);
  void OnSignalReport(uint32_t slot, uint32_t idx, Time t);
  Duration DoneSeconds(uint32_t slot, uint32_t idx, Time t) const;
  bool HasPhases(uint32_t idx) const;
  void ApplyStart(uint32_t slot, Time t);
  void ApplyPreempt(uint32_t slot, Time t, bool cancel);
  // --- helpers
  bool AdmitStatic(const Job& j, JobOutcome& o);
  bool MapJob(const Job& j, JobOutcome& o, GpuTypeMask* types);
  void Track(uint32_t slot, uint32_t idx, Time t);
  void FinishJob(uint32_t slot, uint32_t idx, Time t);
  void HandOver(uint32_t slot, uint32_t idx, Time t);
  void PushCompletion(uint32_t slot, Time end);
  void Retime(uint32_t s, Time t);
  void ArmAttemptEvents(uint32_t slot, uint32_t idx, Time t);
  void OpenAttempt(uint32_t slot, uint32_t idx, Time t);
  void CloseAttempt(uint32_t slot, uint32_t idx, Time t, EndCause cause, FailureKind kind = FailureKind::kNone,
                    bool restartable = false);
  void Done(uint32_t idx);
  // --- dependencies (Trace::after) and checkpoint reads (kLoad phases)
  void InitDependencies();
  void Settle(uint32_t idx);  // a job left: release or reject the jobs that wait for it
  void RejectDependent(uint32_t idx);
  bool StartLoad(uint32_t slot, uint32_t idx, Time t);  // false: the job has no load to model
  void CancelLoad(uint32_t slot, uint32_t idx, Time t);
  uint8_t ReasonId(std::string_view why);
  uint32_t Order(size_t i) const { return order_.empty() ? static_cast<uint32_t>(i) : order_[i]; }
  // When job i reaches the scheduler: its submission plus the cluster's start latency.
  Time ArrivalAt(uint32_t i) const { return trace_.jobs[i].submit + (latency_.empty() ? 0 : latency_[i]); }
  uint32_t SeqOf(uint32_t i) const { return cfg_.tie_order.empty() ? i : cfg_.tie_order[i]; }
  void WatchNote(Time t, const char* kind, std::string text);
  void WatchAfterCycle(Time t, const std::vector<Decision>& decisions);
  void RecordPredictions(Time t);  // SimConfig::predictions

  const Trace& trace_;
  const Cluster& cluster_;
  const SimConfig& cfg_;
  SimResult& r_;
  SimTruth truth_;
  Scheduler sched_;
  std::shared_ptr<const ColocationContext> coloc_;
  std::unique_ptr<ProgressModel> progress_;
  bool dynamic_ = false;  // progress_->dynamic()
  ProfilerSpec prof_;
  VcId prof_vc_;
  GpuTypeMask prof_types_ = 0;  // GPU types present in the profiler
  uint64_t prof_gpus_ = 0;
  Mapping map_;
  std::unique_ptr<PowerSim> power_;
  std::unique_ptr<StorageSim> storage_;  // jobs with a kLoad phase exist
  std::unique_ptr<HarvestSim> harvest_;  // SimConfig::harvest is not empty
  std::vector<uint32_t> victims_;        // HarvestReturn's borrowers to preempt
  std::vector<Duration> post_load_;      // per slot: seconds after its load phase
  std::vector<ReadDone> reads_done_;
  // dependencies: per job, predecessors not finished yet; dependents (CSR); arrived and held
  // until they finish (dep_held_, not the per-slot fault hold held_);
  // doomed (a predecessor cannot finish)
  bool has_deps_ = false;
  std::vector<uint32_t> waiting_on_, dep_begin_, dep_list_;
  std::vector<uint8_t> dep_held_, doomed_;
  size_t dep_held_count_ = 0;
  SimQueue q_;
  std::vector<uint32_t> order_;  // arrival order when the trace is not in (ArrivalAt, seq) order
  std::vector<Duration> latency_;  // per job: Cluster::start_latency drawn (empty when off)
  size_t next_ = 0, n_ = 0;
  uint64_t done_ = 0, progress_step_ = 1, completions_queued_ = 0;
  uint64_t withdraws_armed_ = 0;  // pending jobs whose user will cancel them (SimConfig::renege)
  Time last_t_ = kNoTime;
  Time sample_at_ = kNoTime;  // the pending time-series sample
  uint64_t busy_milli_ = 0;
  std::vector<Decision> decisions_;
  // per slot
  std::vector<uint32_t> slot_job_, slot_gen_;
  std::vector<Time> pending_since_, seg_start_;
  std::vector<uint64_t> run_milli_;  // milli-GPUs of the running attempt (its shape)
  // dynamic progress (co-location): work left in seconds of running alone, speed, since when
  std::vector<double> work_left_;
  std::vector<float> rate_;
  std::vector<Time> rate_since_, shared_since_;
  // attempts (SimConfig::record_attempts): the nodes of each running attempt
  std::vector<std::vector<NodeId>> attempt_nodes_;
  // injected failures indexed by (job, attempt): positions in cfg_.failures
  std::vector<uint32_t> failure_order_;
  const InjectedFailure* FailureOf(uint32_t job, uint16_t attempt) const;
  bool HoldAfterFault(const SimEvent& e, const InjectedFailure& f, Time t);
  std::vector<uint8_t> held_;  // per slot: the attempt's fault was seen, its decision is pending
  uint64_t holds_ = 0;         // attempts held now (their failure event is queued)
  Cordons cordons_;
  Rng node_rng_;  // "failures/node": which node of an attempt a cordoning failure names
  // fragmentation
  bool measure_frag_ = false;
  std::vector<std::pair<std::pair<uint32_t, uint16_t>, double>> mix_;
  // explain
  bool watching_ = false, watch_done_ = false;
  bool predicted_ = false;  // SimConfig::predictions recorded
  uint32_t watch_slot_ = UINT32_MAX;
  std::string last_block_text_;
};

SimRun::SimRun(const Trace& trace, const Cluster& cluster, const Cluster& sched_cluster, const SimConfig& cfg,
               PolicyParts policy, std::unique_ptr<PlacePlugin> placer, std::unique_ptr<PowerPlugin> power_plugin,
               SimResult* r, std::shared_ptr<LentGpus> lent)
    : trace_(trace),
      cluster_(cluster),
      cfg_(cfg),
      r_(*r),
      truth_(policy.restart_overhead(), &trace.work),
      sched_(sched_cluster, r->fractional, cfg.model_cpu_mem, std::move(policy), std::move(placer)),
      n_(trace.jobs.size()),
      node_rng_(cfg.seed, "failures/node") {
  sched_.AttachTruth(&truth_);
  coloc_ = sched_.policy().share ? sched_.policy().colocation : nullptr;
  if (coloc_)
    progress_ = std::make_unique<ColocationProgress>(coloc_, &slot_job_);
  else if (cfg.planner)
    progress_ = std::make_unique<PlannerProgress>(cfg.planner, &sched_cluster, &trace.work, &slot_job_);
  else
    progress_ = std::make_unique<SoloProgress>();
  dynamic_ = progress_->dynamic();
  prof_ = sched_.policy().profiler;
  if (prof_.enabled) {
    prof_vc_ = VcId(static_cast<uint16_t>(sched_cluster.vcs.size() - 1));
    for (NodeId nid : sched_cluster.vcs.back().nodes) {
      const Node& nd = sched_cluster.nodes[nid.v];
      if (nd.gpu_type.valid()) prof_types_ |= 1u << nd.gpu_type.v;
      prof_gpus_ += nd.gpus;
    }
  }
  map_ = BuildMapping(trace, cluster);
  failure_order_.resize(cfg.failures.size());
  std::iota(failure_order_.begin(), failure_order_.end(), 0u);
  std::stable_sort(failure_order_.begin(), failure_order_.end(), [&](uint32_t a, uint32_t b) {
    const InjectedFailure &fa = cfg.failures[a], &fb = cfg.failures[b];
    return fa.job != fb.job ? fa.job < fb.job : fa.attempt < fb.attempt;
  });
  measure_frag_ = r->fractional && cfg.frag_interval > 0;
  if (measure_frag_) mix_ = DemandMix(trace);
  progress_step_ = std::max<uint64_t>(1, n_ / 100);
  if (cluster.start_latency.active()) {
    Rng rng(cfg.seed, "sim/start-latency");
    latency_.resize(n_);
    for (Duration& l : latency_) l = DrawStartLatency(cluster.start_latency, rng);
  }
  // Arrival order: (ArrivalAt, tie order). Traces from the importers and the generator are
  // in (submit, tie) order, and then, without a start latency, no index array is kept (4 bytes
  // per job saved).
  const auto before = [&](uint32_t a, uint32_t b) {
    const Time ta = ArrivalAt(a), tb = ArrivalAt(b);
    return ta != tb ? ta < tb : SeqOf(a) < SeqOf(b);
  };
  bool sorted = true;
  for (size_t i = 1; i < n_ && sorted; ++i) sorted = before(static_cast<uint32_t>(i - 1), static_cast<uint32_t>(i));
  if (!sorted) {
    order_.resize(n_);
    std::iota(order_.begin(), order_.end(), 0u);
    std::stable_sort(order_.begin(), order_.end(), before);
  }
  r_.first_submit = n_ ? trace.jobs[Order(0)].submit : 0;
  for (size_t i = 0; i < latency_.size(); ++i) r_.first_submit = std::min(r_.first_submit, trace.jobs[i].submit);
  if (power_plugin)
    power_ = std::make_unique<PowerSim>(sched_cluster, std::move(power_plugin), cfg.node_power, cfg.wake_latency,
                                        cfg.resume_failure, cfg.seed, r_.first_submit);
  InitDependencies();
  for (const WorkSpec& w : trace.work)
    for (const Phase& p : w.phases)
      if (p.kind == PhaseKind::kLoad && !storage_) storage_ = std::make_unique<StorageSim>(cfg.storage);
  if (storage_) r_.load_seconds.assign(n_, 0);
  if (lent) harvest_ = std::make_unique<HarvestSim>(cfg.harvest, n_, sched_cluster.nodes.size(), std::move(lent));
  watching_ = cfg.watch_job >= 0 && static_cast<size_t>(cfg.watch_job) < n_ && cfg.watch_notes;
  if (watching_) sched_.Watch(&trace.jobs[static_cast<size_t>(cfg.watch_job)], cfg.watch_notes);
}

// ---------------------------------------------------------------- the loop

// flatten: the handlers are inlined into the loop (one call per event saved; 1M-job runs).
[[gnu::flatten]] Status SimRun::Run() {
  if (n_) q_.SetTimer(EventKind::kArrival, ArrivalAt(Order(0)));
  if (cfg_.sample_interval > 0 && n_) {
    const Time m = r_.first_submit % cfg_.sample_interval;
    sample_at_ = r_.first_submit - (m < 0 ? m + cfg_.sample_interval : m);  // floor to the period
    q_.SetTimer(EventKind::kSample, sample_at_);
  }
  if (measure_frag_ && n_) {  // the first grid point at or after the first instant
    const Time f = cfg_.frag_interval, t0 = r_.first_submit;
    const Time m = ((t0 % f) + f) % f;
    q_.SetTimer(EventKind::kFragSample, m == 0 ? t0 : t0 - m + f);
  }
  PushTimers(kNoTime);
  while (HasWork() && !q_.empty()) {
    const SimEvent top = q_.Top();
    q_.Drop(top);
    if (top.kind == EventKind::kSample || top.kind == EventKind::kFragSample) {
      Observe(top);
      continue;
    }
    if (!Live(top)) continue;
    const Time t = top.t;
    BeginInstant(t);
    Dispatch(top, t);
    while (!q_.empty()) {
      const SimEvent e = q_.Top();
      if (e.t != t || e.kind == EventKind::kSample || e.kind == EventKind::kFragSample) break;
      q_.Drop(e);
      Dispatch(e, t);
    }
    if (!EndInstant(t)) break;
    if (watch_done_ && cfg_.stop_after_watch) {
      r_.stopped_early = true;
      return Status::Ok();
    }
    PushTimers(t);
  }
  return Finish();
}

// The run goes on while anything can still happen (arrivals, attempts ending, ticks while
// jobs wait, boots).
bool SimRun::HasWork() const {
  return next_ < n_ || completions_queued_ > 0 || withdraws_armed_ > 0 ||
         (sched_.policy().tick > 0 && sched_.pending_total() > 0) || (power_ && power_->booting()) ||
         (storage_ && storage_->busy()) || (cordons_.out() > 0 && sched_.pending_total() > 0) || holds_ > 0;
}

// Whether an event makes an instant: a stale failure or progress report does not; a stale
// completion does (as it always has: outputs stay as they were); timers are always current.
bool SimRun::Live(const SimEvent& e) const {
  switch (e.kind) {
    case EventKind::kFailure:
    case EventKind::kProgressReport:
    case EventKind::kWithdraw:
    case EventKind::kHarvest: return slot_gen_[e.slot] == e.gen;
    case EventKind::kDecision:
    case EventKind::kPower:
    case EventKind::kStorage:
    case EventKind::kRepair:
    case EventKind::kCompletion:
    case EventKind::kArrival:
    case EventKind::kSample:
    case EventKind::kFragSample:
      return true;
  }
  return true;
}

// Timers for the next instant: the core's decision cadence and the energy controller's.
void SimRun::PushTimers(Time t) {
  q_.SetTimer(EventKind::kDecision, sched_.NextDecisionTime(t));
  if (storage_) q_.SetTimer(EventKind::kStorage, storage_->NextEvent());
  if (!power_) return;
  const Time p = power_->NextEvent(next_ < n_ || completions_queued_ > 0 || sched_.pending_total() > 0);
  q_.SetTimer(EventKind::kPower, p == INT64_MAX ? kNoTime : p);
}

void SimRun::Observe(const SimEvent& e) {
  if (e.kind == EventKind::kSample) {
    r_.samples.push_back(TimeSample{e.t, busy_milli_, static_cast<uint32_t>(sched_.running_total()),
                                    static_cast<uint32_t>(sched_.pending_total()), sched_.pending_gpu_milli()});
    if (power_) r_.powered_samples.push_back(power_->powered());
    sample_at_ = e.t + cfg_.sample_interval;
    q_.SetTimer(EventKind::kSample, sample_at_);
    return;
  }
  r_.fragmentation.push_back(Fragmentation(sched_.cluster_state(), e.t, mix_));
  q_.SetTimer(EventKind::kFragSample, e.t + cfg_.frag_interval);
}

// Integrates busy GPUs and power over [last instant, t).
void SimRun::BeginInstant(Time t) {
  if (last_t_ != kNoTime) {
    r_.gpu_seconds_busy += static_cast<double>(busy_milli_) / 1000.0 * static_cast<double>(t - last_t_);
    if (power_) power_->Advance(last_t_, t, busy_milli_);
  }
  last_t_ = t;
}

void SimRun::Dispatch(const SimEvent& e, Time t) {
  switch (e.kind) {
    case EventKind::kCompletion: return OnCompletion(e, t);
    case EventKind::kFailure: return OnFailure(e, t);
    case EventKind::kPower: return OnPower(t);
    case EventKind::kStorage: return OnStorage(t);
    case EventKind::kRepair: return cordons_.Repair(NodeId(e.slot), t, sched_);
    case EventKind::kArrival: return OnArrival(t);
    case EventKind::kProgressReport: return OnProgressReport(e, t);
    case EventKind::kWithdraw: return OnWithdraw(e, t);
    case EventKind::kHarvest: return OnHarvest(e, t);
    case EventKind::kDecision: return;  // the instant's cycle runs in EndInstant
    case EventKind::kSample:
    case EventKind::kFragSample: return;  // observations never reach Dispatch
  }
}

// The instant's one scheduling cycle, its decisions, then the energy step.
bool SimRun::EndInstant(Time t) {
  if (watching_ && !watch_done_ && watch_slot_ == UINT32_MAX &&
      r_.outcomes[static_cast<size_t>(cfg_.watch_job)].status != OutcomeStatus::kFinished) {
    const JobOutcome& wo = r_.outcomes[static_cast<size_t>(cfg_.watch_job)];
    WatchNote(t, "rejected", "not simulated: " + r_.reasons[wo.reject_reason]);
    watch_done_ = true;
  }
  decisions_.clear();
  const CycleRun run = sched_.RunCycle(t, &decisions_);
  if (watching_ && watch_slot_ != UINT32_MAX && run.ran) WatchAfterCycle(t, decisions_);
  // Periodic policies: a tick that changes nothing with nothing left to happen would repeat forever.
  if (run.at_tick && decisions_.empty() && completions_queued_ == 0 && next_ == n_ && sched_.running_total() == 0 &&
      !(power_ && power_->booting()) && cordons_.out() == 0)
    return false;
  // A job started and preempted in the same cycle produced both decisions in order; the
  // completion pushed for the earlier start carries a stale generation and is skipped.
  for (const Decision& d : decisions_)
    std::visit(Overloaded{[&](const StartDecision& s) { ApplyStart(s.slot, t); },
                          [&](const PreemptDecision& p) { ApplyPreempt(p.slot, t, p.cancel); }},
               d);
  if (power_) power_->AfterCycle(t, sched_);
  if (cfg_.predictions && !predicted_ && t >= cfg_.predict_at) RecordPredictions(t);
  return true;
}

void SimRun::RecordPredictions(Time t) {
  predicted_ = true;
  const std::vector<StartPrediction>& f = sched_.Forecast(t);
  for (uint32_t slot = 0; slot < f.size(); ++slot) {
    const StartPrediction& p = f[slot];
    if (p.kind == PredictionKind::kRunning || p.kind == PredictionKind::kUnknownJob) continue;
    cfg_.predictions->push_back(SimPrediction{slot_job_[slot], t, p.at, p.kind});
  }
}

Status SimRun::Finish() {
  if (sample_at_ != kNoTime && last_t_ != kNoTime && sample_at_ <= last_t_) {  // final sample at the last instant
    r_.samples.push_back(TimeSample{sample_at_, busy_milli_, 0, 0, 0});
    if (power_) r_.powered_samples.push_back(power_->powered());
  }
  const Time last = last_t_ == kNoTime ? 0 : last_t_;
  if (cordons_.cordoned() > 0) std::tie(r_.cordoned_node_seconds, r_.cordoned_gpu_seconds) = cordons_.Seconds(r_.last_end);
  if (storage_) {
    r_.storage_bytes = storage_->shared_bytes();
    r_.max_concurrent_reads = storage_->max_concurrent();
  }
  if (harvest_) r_.harvest = harvest_->stats();
  if (power_) {
    r_.has_energy = true;
    r_.energy = power_->Finish(r_.first_submit, last);
    r_.energy.spec = cfg_.energy;
  }
  if (cfg_.explain && sched_.policy().share) {
    for (size_t i = 0; i < n_; ++i) {
      std::string why = sched_.policy().share->Explain(JobId(static_cast<uint32_t>(i)));
      if (!why.empty()) r_.explain.emplace_back(static_cast<uint32_t>(i), std::move(why));
    }
  }
  if (dep_held_count_ != 0)
    return MakeError("simulation ended with " + std::to_string(dep_held_count_) + " jobs waiting for jobs they depend on",
                     kExitRuntime);
  if (sched_.running_total() != 0 || sched_.pending_total() != 0) {
    return MakeError("simulation ended with " + std::to_string(sched_.running_total()) + " running and " +
                         std::to_string(sched_.pending_total()) + " pending jobs",
                     kExitRuntime);
  }
  return Status::Ok();
}

// ---------------------------------------------------------------- handlers

// A running attempt's work is done: the job finishes, or (profiler) is handed over.
void SimRun::OnCompletion(const SimEvent& e, Time t) {
  --completions_queued_;
  if (e.slot == SimQueue::kVoidSlot || slot_gen_[e.slot] != e.gen) return;  // cancelled by a preemption or a re-timing
  ++r_.events;
  const uint32_t idx = slot_job_[e.slot];
  const SchedJob& sj = sched_.view(e.slot);
  if (sj.home_vc.valid() && truth_.Remaining(e.slot) > t - sj.started) return HandOver(e.slot, idx, t);
  if (sj.home_vc.valid()) {
    ++r_.profiled;
    ++r_.done_in_profiler;
  }
  FinishJob(e.slot, idx, t);
}

void SimRun::FinishJob(uint32_t slot, uint32_t idx, Time t) {
  JobOutcome& o = r_.outcomes[idx];
  const SchedJob& sj = sched_.view(slot);
  o.end = t;
  o.run += t - seg_start_[slot];
  const uint32_t partner = sj.partner;
  if (partner == kNoSlot) busy_milli_ -= run_milli_[slot];  // else the partner keeps the GPUs
  if (power_) power_->OnStop(slot, sj, false, t);
  sched_.Finish(slot, t);
  CloseAttempt(slot, idx, t, EndCause::kFinished);
  if (partner != kNoSlot) {  // the partner runs alone again, at full speed
    r_.shared_run[idx] += t - shared_since_[slot];
    r_.shared_run[slot_job_[partner]] += t - shared_since_[partner];
    Retime(partner, t);
  }
  if (watching_ && slot == watch_slot_) {
    WatchNote(t, "finished", "finished: waited " + std::to_string(o.wait) + " s, ran " + std::to_string(o.run) +
                                 " s, JCT " + std::to_string(t - trace_.jobs[idx].submit) + " s");
    watch_slot_ = UINT32_MAX;
    watch_done_ = true;
  }
  ++slot_gen_[slot];  // no event of this job outlives it
  sched_.Release(slot);
  r_.last_end = std::max(r_.last_end, t);
  Done(idx);
}

// Lucid's profiler: the time limit is over and work is left; the job goes to its own VC.
void SimRun::HandOver(uint32_t slot, uint32_t idx, Time t) {
  JobOutcome& o = r_.outcomes[idx];
  o.run += t - seg_start_[slot];
  busy_milli_ -= run_milli_[slot];
  CancelLoad(slot, idx, t);
  if (power_) power_->OnStop(slot, sched_.view(slot), true, t);
  sched_.Handover(slot, t);
  CloseAttempt(slot, idx, t, EndCause::kRequeued);
  ++slot_gen_[slot];
  pending_since_[slot] = t;
  ++r_.profiled;
}

// An injected failure (SimConfig::failures) ends the running attempt.
void SimRun::OnFailure(const SimEvent& e, Time t) {
  if (slot_gen_[e.slot] != e.gen) return;  // the attempt ended before
  const uint32_t idx = slot_job_[e.slot];
  const SchedJob& sj = sched_.view(e.slot);
  const InjectedFailure* f = FailureOf(idx, static_cast<uint16_t>(sj.attempts - 1));
  ORR_CHECK(f && sj.partner == kNoSlot);
  if (HoldAfterFault(e, *f, t)) return;
  ++r_.events;
  JobOutcome& o = r_.outcomes[idx];
  o.run += t - seg_start_[e.slot];
  busy_milli_ -= run_milli_[e.slot];
  CancelLoad(e.slot, idx, t);
  if (power_) power_->OnStop(e.slot, sj, f->restartable, t);
  ++slot_gen_[e.slot];
  if (f->cordon_for > 0) CordonNodeOf(sj, *f, t);
  sched_.Fail(e.slot, t, f->kind, f->restartable);
  CloseAttempt(e.slot, idx, t, EndCause::kFailed, f->kind, f->restartable);
  if (f->restartable) {
    pending_since_[e.slot] = t;
    return;
  }
  o.status = OutcomeStatus::kFailed;
  o.end = t;
  sched_.Release(e.slot);
  r_.last_end = std::max(r_.last_end, t);
  Done(idx);
}

// The fault of an attempt with a hold (InjectedFailure::hold): its progress stops now, its GPUs
// stay allocated until the decision at t + hold, when the same failure event fires again (the
// attempt's completion and reports are cancelled by the new generation). False: decide now.
bool SimRun::HoldAfterFault(const SimEvent& e, const InjectedFailure& f, Time t) {
  if (held_.size() <= e.slot) held_.resize(slot_gen_.size(), 0);
  if (held_[e.slot]) {  // the decision
    held_[e.slot] = 0;
    --holds_;
    return false;
  }
  if (f.hold <= 0) return false;
  held_[e.slot] = 1;
  ++holds_;
  truth_.FreezeProgress(e.slot, t, t + f.hold);
  q_.PushJob(t + f.hold, EventKind::kFailure, e.slot, ++slot_gen_[e.slot]);
  return true;
}

// The failure names one node of the attempt (uniform over its nodes); it is drained until its repair.
void SimRun::CordonNodeOf(const SchedJob& sj, const InjectedFailure& f, Time t) {
  if (sj.alloc.empty()) return;
  const size_t i = std::min(sj.alloc.size() - 1, static_cast<size_t>(node_rng_.Uniform() * sj.alloc.size()));
  const NodeId node = sj.alloc[i].node;
  cordons_.Add(node, t, t + f.cordon_for, cluster_.nodes[node.v].gpus, sched_, q_);
  ++r_.cordoned_nodes;
}

void SimRun::OnPower(Time t) { power_->FinishBoots(t, sched_); }

// Checkpoint reads that end now: each trial goes on with the phases after its load.
void SimRun::OnStorage(Time t) {
  reads_done_.clear();
  storage_->Advance(t, &reads_done_);
  for (const ReadDone& d : reads_done_) {
    r_.load_seconds[slot_job_[d.slot]] += t - d.joined;
    PushCompletion(d.slot, t + post_load_[d.slot]);
  }
}

void SimRun::OnArrival(Time t) {
  const uint32_t idx = Order(next_++);
  if (next_ < n_) q_.SetTimer(EventKind::kArrival, ArrivalAt(Order(next_)));
  ++r_.events;
  const Job& j = trace_.jobs[idx];
  JobOutcome& o = r_.outcomes[idx];
  o.job = JobId(idx);
  o.gpus = j.gpus;
  o.gpu_milli = j.gpu_milli;
  if (has_deps_ && doomed_[idx]) return RejectDependent(idx);
  if (has_deps_ && waiting_on_[idx] > 0) {  // held until its predecessors finished (Settle)
    dep_held_[idx] = 1;
    ++dep_held_count_;
    return;
  }
  Enter(idx, t, j.submit);
}

void SimRun::Enter(uint32_t idx, Time t, Time since) {
  const Job& j = trace_.jobs[idx];
  JobOutcome& o = r_.outcomes[idx];
  if (has_deps_) r_.released[idx] = since;
  GpuTypeMask types = 0;
  if (!AdmitStatic(j, o) || !MapJob(j, o, &types)) return Done(idx);
  const bool watched_now = watching_ && idx == static_cast<uint32_t>(cfg_.watch_job);
  if (watched_now)
    WatchNote(t, "submitted", "submitted to VC " + cluster_.vcs[o.vc.v].name + " (" + std::to_string(j.gpus) +
                                  " GPUs, " + std::to_string(j.duration) + " s of work)");
  // Profiler: jobs of at most max_gpus GPUs that fit it (and accept its GPU types) go there first.
  const bool stage = prof_.enabled && j.gpus > 0 && j.gpus <= prof_.max_gpus && j.gpus <= prof_gpus_ &&
                     j.nodes <= prof_.nodes && (types == 0 || prof_types_ == 0 || (types & prof_types_) == prof_types_);
  auto slot = stage ? sched_.SubmitStaged(&j, o.vc, prof_vc_, types, SeqOf(idx), t)
                    : sched_.Submit(&j, o.vc, types, SeqOf(idx), t);
  if (!slot.ok()) {
    o.status = OutcomeStatus::kRejected;
    o.reject_reason = ReasonId(slot.error().message);
    return Done(idx);
  }
  Track(*slot, idx, t);
  pending_since_[*slot] = since;  // a start latency is queueing delay
  if (cfg_.renege && j.state == JobState::kCancelled) {  // its user's patience runs from `since`
    q_.PushJob(std::max(t, since + j.duration), EventKind::kWithdraw, *slot, slot_gen_[*slot]);
    ++withdraws_armed_;
  }
  if (watched_now) {
    watch_slot_ = *slot;
    sched_.Describe(*slot, t, cfg_.watch_notes);
  }
  if (power_) power_->OnSubmit(sched_.view(*slot));
}

// Reneging (SimConfig::renege): the user cancels the job at its patience's end; it leaves the
// queue if it has not started (a start moved its slot's generation on).
void SimRun::OnWithdraw(const SimEvent& e, Time t) {
  if (slot_gen_[e.slot] != e.gen) return;  // it started (ApplyStart disarmed it)
  --withdraws_armed_;
  ++r_.events;
  const uint32_t idx = slot_job_[e.slot];
  JobOutcome& o = r_.outcomes[idx];
  o.status = OutcomeStatus::kWithdrawn;
  o.start = o.end = t;
  o.wait += t - pending_since_[e.slot];
  if (power_) power_->OnWithdraw(sched_.view(e.slot));
  if (watching_ && e.slot == watch_slot_) {
    WatchNote(t, "withdrawn", "cancelled by its user while pending, after " + std::to_string(o.wait) + " s");
    watch_slot_ = UINT32_MAX;
    watch_done_ = true;
  }
  ++slot_gen_[e.slot];
  sched_.Withdraw(e.slot, t);
  sched_.Release(e.slot);
  Done(idx);
}

// Harvest (sim/harvest.h): an attempt that starts may land on lent GPUs (a borrower); an RL
// job with a plan arms its first lending event.
void SimRun::NoteHarvestStart(uint32_t slot, uint32_t idx, Time t) {
  const SchedJob& sj = sched_.view(slot);
  if (harvest_->NoteStart(slot, slot_gen_[slot], sj.alloc, t) && watching_ && slot == watch_slot_)
    WatchNote(t, "harvest", "started on a node holding GPUs an RL job lent from its idle rollout workers: "
                            "preempted when the RL job takes them back");
  const int64_t total = HasPhases(idx) ? trace_.work[idx].total_steps() : 0;
  const Time next = harvest_->Started(slot, idx, t, truth_.RestartCost(slot), truth_.steps_durable(slot), total);
  if (next != kNoTime) q_.PushJob(next, EventKind::kHarvest, slot, slot_gen_[slot]);
}

// An RL job's rollout workers went idle (their GPUs are lent: its allocation shrinks and the
// instant's cycle may place queued jobs there), or its rollout ended (the lent GPUs come back).
void SimRun::OnHarvest(const SimEvent& e, Time t) {
  if (slot_gen_[e.slot] != e.gen) return;  // the attempt ended
  switch (harvest_->Due(e.slot, t)) {
    case HarvestSim::Action::kNone: break;
    case HarvestSim::Action::kLend: {
      const uint64_t milli = 1000ULL * harvest_->Lend(e.slot, t, sched_);
      busy_milli_ -= milli;
      run_milli_[e.slot] -= milli;
      if (milli > 0 && watching_ && e.slot == watch_slot_)
        WatchNote(t, "harvest", "lent " + std::to_string(milli / 1000) + " GPUs of idle rollout workers until the rollout ends");
      break;
    }
    case HarvestSim::Action::kReturn: HarvestReturn(e.slot, t); break;
  }
  const Time next = harvest_->Next(e.slot);
  if (next != kNoTime) q_.PushJob(next, EventKind::kHarvest, e.slot, e.gen);
}

// The phase boundary: the borrowers holding the lent GPUs are preempted and requeued (their
// restart cost charged as for any preemption), then the RL job's allocation is whole again.
void SimRun::HarvestReturn(uint32_t slot, Time t) {
  victims_.clear();
  harvest_->Victims(slot, sched_, [&](uint32_t s, uint32_t) { return sched_.view(s).running; }, &victims_);
  for (uint32_t v : victims_) {
    harvest_->NoteBorrowerPreempted();
    if (watching_ && v == watch_slot_)
      WatchNote(t, "harvest", "preempted: the RL job whose GPUs it borrowed took them back at its phase boundary");
    sched_.Requeue(v, t, EndCause::kPreempted);
    ApplyPreempt(v, t, false);
  }
  const uint64_t milli = 1000ULL * harvest_->Reclaim(slot, t, sched_);
  busy_milli_ += milli;
  run_milli_[slot] += milli;
  if (watching_ && slot == watch_slot_)
    WatchNote(t, "harvest", "took back " + std::to_string(milli / 1000) + " lent GPUs (" + std::to_string(victims_.size()) +
                                " borrowers preempted)");
}

// A running job reports its progress: a trace job through its log (SimConfig::signals),
// a job with phases the steps it has done (as a live job's step counter would).
void SimRun::OnProgressReport(const SimEvent& e, Time t) {
  if (slot_gen_[e.slot] != e.gen) return;
  const uint32_t idx = slot_job_[e.slot];
  if (!HasPhases(idx)) return OnSignalReport(e.slot, idx, t);
  const WorkSpec& w = trace_.work[idx];
  const SchedJob& sj = sched_.view(e.slot);
  const Duration restore = std::min<Duration>(t - sj.started, truth_.RestartCost(e.slot));
  const StepsReached s = StepsAfter(w, truth_.steps_durable(e.slot), t - sj.started - restore);
  sched_.ReportProgress(e.slot, t, Progress{s.done, w.total_steps(), t});
  q_.PushJob(t + cfg_.progress_report, EventKind::kProgressReport, e.slot, e.gen);
}

// The log of trace job idx read at t: its steps to ReportProgress, its ETA to
// UpdateEstimate (the belief of the attempt's duration: time run so far + ETA).
void SimRun::OnSignalReport(uint32_t slot, uint32_t idx, Time t) {
  ReportReading(sched_, slot, t, cfg_.signals->Read(idx, t, DoneSeconds(slot, idx, t)), t);
  q_.PushJob(t + cfg_.signals->Interval(), EventKind::kProgressReport, slot, slot_gen_[slot]);
}

// Seconds of its work trace job idx has done at t (running in slot): its duration less what
// remains until its true end.
Duration SimRun::DoneSeconds(uint32_t slot, uint32_t idx, Time t) const {
  const Duration d = trace_.jobs[idx].duration;
  return std::clamp<Duration>(d - (truth_.TrueEnd(slot) - t), 0, d);
}

bool SimRun::HasPhases(uint32_t idx) const { return idx < trace_.work.size() && !trace_.work[idx].phases.empty(); }

void SimRun::ApplyStart(uint32_t slot, Time t) {
  const uint32_t idx = slot_job_[slot];
  JobOutcome& o = r_.outcomes[idx];
  const SchedJob& sj = sched_.view(slot);
  if (o.start == kNoTime) {
    o.start = t;
    if (cfg_.renege && trace_.jobs[idx].state == JobState::kCancelled) --withdraws_armed_;  // its user saw it start
  }
  seg_start_[slot] = t;
  o.wait += t - pending_since_[slot];
  ++slot_gen_[slot];  // events of an earlier attempt are void
  OpenAttempt(slot, idx, t);
  if (sj.partner == kNoSlot || sj.owns_gpus) {
    run_milli_[slot] = sj.job->gpu_milli_total();  // the shape it runs in (ShapePlugin)
    busy_milli_ += run_milli_[slot];
    // Solo and co-location models give a job starting alone speed 1: only the planner's differs.
    const float speed = cfg_.planner ? progress_->Speed(sched_, slot) : 1.0f;
    truth_.SetSpeed(slot, speed);
    const Duration rem = truth_.WallRemaining(slot);
    if (dynamic_) {
      work_left_[slot] = static_cast<double>(truth_.Remaining(slot));
      rate_[slot] = speed;
      rate_since_[slot] = t;
    }
    if (!StartLoad(slot, idx, t))
      PushCompletion(slot, t + (sj.home_vc.valid() ? std::min(rem, prof_.time_limit) : rem));
  } else {  // packed onto a running partner's GPUs: both slow down
    ++r_.packed_starts;
    const uint32_t p = sj.partner;
    r_.packs.emplace_back(idx, slot_job_[p]);
    run_milli_[slot] = sj.job->gpu_milli_total();  // released if it outlives its partner
    work_left_[slot] = static_cast<double>(truth_.Remaining(slot));
    rate_[slot] = 1.0f;
    rate_since_[slot] = t;
    Retime(slot, t);
    Retime(p, t);
    shared_since_[slot] = shared_since_[p] = t;
  }
  ArmAttemptEvents(slot, idx, t);
  if (harvest_) NoteHarvestStart(slot, idx, t);
  if (power_) power_->OnStart(slot, sj, trace_.jobs[idx].submit, t);
}

// Preempted: its completion event is void; it waits again from now, or (cancel) it ends.
void SimRun::ApplyPreempt(uint32_t slot, Time t, bool cancel) {
  const uint32_t idx = slot_job_[slot];
  JobOutcome& o = r_.outcomes[idx];
  ++slot_gen_[slot];
  if (slot < held_.size() && held_[slot]) {  // preempted while its fault was being diagnosed
    held_[slot] = 0;
    --holds_;
  }
  if (o.preemptions < UINT16_MAX) ++o.preemptions;
  o.run += t - seg_start_[slot];
  busy_milli_ -= run_milli_[slot];
  CancelLoad(slot, idx, t);
  pending_since_[slot] = t;
  CloseAttempt(slot, idx, t, EndCause::kPreempted);
  if (power_) power_->OnStop(slot, sched_.view(slot), !cancel, t);
  if (!cancel) return;
  o.status = OutcomeStatus::kPreempted;
  o.end = t;
  if (watching_ && slot == watch_slot_) {
    WatchNote(t, "preempted", "preempted and cancelled: waited " + std::to_string(o.wait) + " s, ran " +
                                  std::to_string(o.run) + " s");
    watch_slot_ = UINT32_MAX;
    watch_done_ = true;
  }
  sched_.Release(slot);
  r_.last_end = std::max(r_.last_end, t);
  Done(idx);
}

// ---------------------------------------------------------------- helpers

// Jobs that can never be simulated.
bool SimRun::AdmitStatic(const Job& j, JobOutcome& o) {
  if (j.duration < 0 && (trace_.work.empty() || trace_.work[o.job.v].phases.empty())) {
    o.status = OutcomeStatus::kSkipped;
    o.reject_reason = ReasonId("duration unknown in the trace");
    return false;
  }
  if (j.gpus == 0 && !cfg_.run_cpu_jobs) {
    o.status = OutcomeStatus::kSkipped;
    o.reject_reason = ReasonId("CPU-only job (use --cpu-jobs to simulate)");
    return false;
  }
  return true;
}

// The job's VC and GPU types in the cluster's ids (rejected when it has none there).
bool SimRun::MapJob(const Job& j, JobOutcome& o, GpuTypeMask* types) {
  int32_t vc = j.vc.valid() && j.vc.v < map_.vc.size() ? map_.vc[j.vc.v] : (map_.vc.empty() ? -1 : map_.vc[0]);
  if (!j.vc.valid() && (cluster_.single_pool || cluster_.vcs.size() == 1)) vc = 0;
  if (vc < 0) {
    o.status = OutcomeStatus::kRejected;
    o.reject_reason = ReasonId("job's VC is not in the cluster");
    return false;
  }
  o.vc = VcId(static_cast<uint16_t>(vc));
  *types = 0;
  for (uint32_t m = j.gpu_types; m; m &= m - 1) {
    const int tt = std::countr_zero(m);
    if (tt < static_cast<int>(map_.type.size()) && map_.type[tt] >= 0) *types |= 1u << map_.type[tt];
  }
  if (j.gpu_types != 0 && *types == 0) {
    o.status = OutcomeStatus::kRejected;
    o.reject_reason = ReasonId("no accepted GPU type exists in the cluster");
    return false;
  }
  return true;
}

void SimRun::Track(uint32_t s, uint32_t idx, Time t) {
  if (slot_job_.size() <= s) {
    slot_job_.resize(s + 1);
    slot_gen_.resize(s + 1, 0);
    pending_since_.resize(s + 1);
    seg_start_.resize(s + 1);
    run_milli_.resize(s + 1);
    if (storage_) post_load_.resize(s + 1);
    if (dynamic_) {
      work_left_.resize(s + 1);
      rate_.resize(s + 1);
      rate_since_.resize(s + 1);
      shared_since_.resize(s + 1);
    }
    if (cfg_.record_attempts) attempt_nodes_.resize(s + 1);
  }
  slot_job_[s] = idx;
  ++slot_gen_[s];
  pending_since_[s] = t;
}

void SimRun::PushCompletion(uint32_t slot, Time end) {
  q_.PushJob(end, EventKind::kCompletion, slot, slot_gen_[slot]);
  ++completions_queued_;
  if (q_.WantsSweep()) q_.SweepVoid([&](uint32_t s, uint32_t gen) { return slot_gen_[s] != gen; });
}

// Re-times running job s at t to the progress model's speed now: its completion event is
// re-pushed (the old one becomes stale through the slot generation).
void SimRun::Retime(uint32_t s, Time t) {
  const float speed = progress_->Speed(sched_, s);
  work_left_[s] = std::max(0.0, work_left_[s] - static_cast<double>(rate_[s]) * static_cast<double>(t - rate_since_[s]));
  rate_[s] = speed;
  rate_since_[s] = t;
  ++slot_gen_[s];
  PushCompletion(s, t + static_cast<Time>(std::ceil(work_left_[s] / speed - 1e-6)));
}

// Events of the attempt that starts now: an injected failure, progress reports.
void SimRun::ArmAttemptEvents(uint32_t slot, uint32_t idx, Time t) {
  if (cfg_.failures.empty() && cfg_.progress_report <= 0 && !cfg_.signals) return;
  const uint16_t attempt = sched_.view(slot).attempts;
  if (const InjectedFailure* f = attempt > 0 ? FailureOf(idx, static_cast<uint16_t>(attempt - 1)) : nullptr)
    q_.PushJob(t + f->after, EventKind::kFailure, slot, slot_gen_[slot]);
  if (cfg_.progress_report > 0 && HasPhases(idx))
    q_.PushJob(t + cfg_.progress_report, EventKind::kProgressReport, slot, slot_gen_[slot]);
  if (cfg_.signals && !HasPhases(idx)) {
    cfg_.signals->AttemptStarted(idx, trace_.jobs[idx], static_cast<uint16_t>(attempt - 1), t, DoneSeconds(slot, idx, t));
    q_.PushJob(t + cfg_.signals->Interval(), EventKind::kProgressReport, slot, slot_gen_[slot]);
  }
}

// The last injected failure of attempt `attempt` of trace job `job` (as the list gives them), or null.
const InjectedFailure* SimRun::FailureOf(uint32_t job, uint16_t attempt) const {
  const auto key = [&](uint32_t i) { return std::pair{cfg_.failures[i].job, cfg_.failures[i].attempt}; };
  auto it = std::upper_bound(failure_order_.begin(), failure_order_.end(), std::pair{job, attempt},
                             [&](const std::pair<uint32_t, uint16_t>& k, uint32_t i) { return k < key(i); });
  if (it == failure_order_.begin() || key(*(it - 1)) != std::pair{job, attempt}) return nullptr;
  return &cfg_.failures[*(it - 1)];
}

void SimRun::OpenAttempt(uint32_t slot, uint32_t, Time) {
  if (!cfg_.record_attempts) return;
  auto& nodes = attempt_nodes_[slot];
  nodes.clear();
  for (const Slot& s : sched_.view(slot).alloc) nodes.push_back(s.node);
}

void SimRun::CloseAttempt(uint32_t slot, uint32_t idx, Time t, EndCause cause, FailureKind kind, bool restartable) {
  if (harvest_) harvest_->Stopped(slot, t);
  if (cfg_.signals && !HasPhases(idx)) cfg_.signals->AttemptEnded(idx);
  if (!cfg_.record_attempts) return;
  Attempt a;
  a.job = JobId(idx);
  a.start = seg_start_[slot];
  a.end = t;
  a.steps_done = truth_.steps_done(slot);
  a.steps_durable = truth_.steps_durable(slot);
  const Job& req = trace_.jobs[idx];  // a shaped attempt held run_milli_ / 1000 whole GPUs
  a.gpus = req.is_fractional() || req.gpu_milli == 0 ? req.gpus : static_cast<uint32_t>(run_milli_[slot] / req.gpu_milli);
  a.cause = cause;
  a.failure = kind;
  a.restartable = restartable;
  const uint16_t n = sched_.view(slot).attempts;
  a.index = static_cast<uint8_t>(std::min<uint16_t>(255, n > 0 ? n - 1 : 0));
  const auto& nodes = attempt_nodes_[slot];
  r_.attempts.Add(a, nodes.data(), nodes.size());
}

void SimRun::Done(uint32_t idx) {
  ++done_;
  if (cfg_.progress && done_ % progress_step_ == 0) cfg_.progress(done_, n_);
  if (has_deps_) Settle(idx);
}

void SimRun::InitDependencies() {
  for (const auto& a : trace_.after) has_deps_ |= !a.empty();
  if (!has_deps_) return;
  waiting_on_.assign(n_, 0);
  dep_held_.assign(n_, 0);
  doomed_.assign(n_, 0);
  r_.released.assign(n_, kNoTime);
  dep_begin_.assign(n_ + 1, 0);
  for (size_t i = 0; i < n_; ++i) {
    waiting_on_[i] = static_cast<uint32_t>(trace_.after[i].size());
    for (uint32_t p : trace_.after[i]) ++dep_begin_[p + 1];
  }
  for (size_t i = 0; i < n_; ++i) dep_begin_[i + 1] += dep_begin_[i];
  dep_list_.resize(dep_begin_[n_]);
  std::vector<uint32_t> fill(dep_begin_.begin(), dep_begin_.end() - 1);
  for (size_t i = 0; i < n_; ++i)
    for (uint32_t p : trace_.after[i]) dep_list_[fill[p]++] = static_cast<uint32_t>(i);
}

// Job idx left the run (finished, failed, rejected or skipped): a dependent whose last
// predecessor finished is submitted now if it has arrived; one whose predecessor did not
// finish can never run (Slurm's DependencyNeverSatisfied) and is rejected.
void SimRun::Settle(uint32_t idx) {
  const bool finished = r_.outcomes[idx].status == OutcomeStatus::kFinished;
  for (uint32_t k = dep_begin_[idx]; k < dep_begin_[idx + 1]; ++k) {
    const uint32_t d = dep_list_[k];
    if (doomed_[d]) continue;
    if (!finished) {
      doomed_[d] = 1;
      if (dep_held_[d]) RejectDependent(d);
      continue;
    }
    if (--waiting_on_[d] == 0 && dep_held_[d]) {
      dep_held_[d] = 0;
      --dep_held_count_;
      Enter(d, last_t_, last_t_);
    }
  }
}

void SimRun::RejectDependent(uint32_t idx) {
  if (dep_held_[idx]) {
    dep_held_[idx] = 0;
    --dep_held_count_;
  }
  JobOutcome& o = r_.outcomes[idx];
  o.status = OutcomeStatus::kRejected;
  o.reject_reason = ReasonId("a job it depends on did not finish");
  Done(idx);
}

// A job whose work has a kLoad phase (an evaluation trial) that starts from its first step:
// its read joins the storage model after the phases before the load; its completion is
// pushed when the read ends (OnStorage), the phases after it then take their own seconds.
bool SimRun::StartLoad(uint32_t slot, uint32_t idx, Time t) {
  if (!storage_ || !HasPhases(idx)) return false;
  const WorkSpec& w = trace_.work[idx];
  int64_t before = 0;
  const Phase* load = nullptr;
  for (const Phase& p : w.phases) {
    if (p.kind == PhaseKind::kLoad) {
      load = &p;
      break;
    }
    before += p.steps;
  }
  const int64_t total = w.total_steps();
  if (!load || truth_.Remaining(slot) != SecondsBetween(w, 0, total)) return false;
  const SchedJob& sj = sched_.view(slot);
  ORR_CHECK(!sj.alloc.empty());
  post_load_[slot] = SecondsBetween(w, before + load->steps, total);
  storage_->Join(slot, sj.alloc.begin()->node.v, load->load.checkpoint, load->load.bytes, load->load.cacheable,
                 t + SecondsBetween(w, 0, before));
  return true;
}

// A running job stops before its end: its read (if any) leaves the storage model.
void SimRun::CancelLoad(uint32_t slot, uint32_t idx, Time t) {
  if (!storage_) return;
  const Time joined = storage_->Cancel(slot, t);
  if (joined != kNoTime) r_.load_seconds[idx] += t - joined;
}

uint8_t SimRun::ReasonId(std::string_view why) {
  for (size_t i = 0; i < r_.reasons.size(); ++i)
    if (r_.reasons[i] == why) return static_cast<uint8_t>(i);
  r_.reasons.emplace_back(why);
  return static_cast<uint8_t>(r_.reasons.size() - 1);
}

void SimRun::WatchNote(Time t, const char* kind, std::string text) {
  cfg_.watch_notes->push_back(ExplainNote{t, "simulator", kind, std::move(text), {}});
}

// Explain: the watched job's state after a cycle (decisions about it, why it still waits).
void SimRun::WatchAfterCycle(Time t, const std::vector<Decision>& decisions) {
  const SchedJob& w = sched_.view(watch_slot_);
  bool touched = false, cancelled = false;
  for (const Decision& d : decisions) {
    touched |= SlotOf(d) == watch_slot_;
    if (const auto* p = std::get_if<PreemptDecision>(&d)) cancelled |= p->cancel && p->slot == watch_slot_;
  }
  if (cancelled) return;  // it leaves (ApplyPreempt notes its end)
  if (touched) sched_.Describe(watch_slot_, t, cfg_.watch_notes);
  if (w.running) {
    last_block_text_.clear();
    return;
  }
  const PluginStatus b = sched_.last_block(w.vc);
  std::string why = b.ok() ? "no blocking reason recorded (the jobs ahead of it were placed, skipped or kept running)"
                           : std::string(b.reason) + " [" + std::string(b.plugin) + "]";
  if (why != last_block_text_) {
    WatchNote(t, "pending", "pending; the VC's last cycle stopped because: " + why);
    last_block_text_ = why;
    const StartPrediction p = sched_.PredictStart(watch_slot_, t);
    ExplainNote n{t, "scheduler", "predicted", DescribePrediction(p), {}};
    if (p.at != kNoTime) n.fields = {{"predicted_start", static_cast<double>(p.at)}, {"ahead", static_cast<double>(p.ahead)}};
    cfg_.watch_notes->push_back(std::move(n));
  }
}

}  // namespace

Duration DrawStartLatency(const StartLatency& l, Rng& rng) {
  const double excess = (l.median_s - l.min_s) * (l.sigma > 0 ? std::exp(l.sigma * rng.Normal()) : 1.0);
  return static_cast<Duration>(std::llround(l.min_s + excess));
}

Result<SimResult> Simulate(const Trace& trace, const Cluster& cluster, const SimConfig& cfg) {
  if (cluster.vcs.empty()) return MakeError("cluster '" + cluster.name + "' has no nodes");
  PolicyEnv env{&trace, &cluster, cfg.planner, {}};
  ORR_ASSIGN_OR_RETURN(PolicyParts policy, MakePolicyFor(cfg.policy, cfg.seed, &env));
  if (policy.fault) {  // a policy that can fail while it runs: its failure is the run's error
    const std::function<Status()> fault = policy.fault;
    Result<SimResult> r = policy.shape ? MakeError("policy '" + cfg.policy + "': shaping is not available here")
                                       : Simulate(trace, cluster, cfg, std::move(policy));
    if (Status f = fault(); !f.ok()) return f.error();
    return r;
  }
  if (!policy.shape) return Simulate(trace, cluster, cfg, std::move(policy));
  // A shaping policy (shape=goodput): its jobs are timed by the planner it shapes with, and
  // every attempt is recorded (an attempt's GPUs are its own).
  SimConfig shaped = cfg;
  shaped.planner = env.planner;
  shaped.record_attempts = true;
  return Simulate(trace, cluster, shaped, std::move(policy));
}

namespace {

Status CheckConfig(const Trace& trace, const SimConfig& cfg, const PolicyParts& policy) {
  if (cfg.signals && policy.share)
    return MakeError("policy '" + cfg.policy +
                     "': semantic signals are not modelled for GPU-sharing policies (re-timed progress)");
  if (cfg.signals && cfg.signals->Interval() < 1) return MakeError("signals: read interval must be ≥ 1 s");
  if (policy.share && (!policy.colocation || policy.colocation->job_workload.size() != trace.jobs.size()))
    return MakeError("policy '" + cfg.policy + "' shares GPUs but supplies no per-job interference data");
  if (!cfg.energy.empty()) {
    if (!(cfg.resume_failure >= 0 && cfg.resume_failure <= 0.9))
      return MakeError("resume failure probability must be in [0, 0.9], got " + std::to_string(cfg.resume_failure));
    if (cfg.wake_latency < 0) return MakeError("wake-up latency must be ≥ 0 s");
  }
  if (!cfg.tie_order.empty() && cfg.tie_order.size() != trace.jobs.size())
    return MakeError("tie order has " + std::to_string(cfg.tie_order.size()) + " entries for " +
                     std::to_string(trace.jobs.size()) + " jobs");
  if (!trace.after.empty() && trace.after.size() != trace.jobs.size())
    return MakeError("trace has dependencies for " + std::to_string(trace.after.size()) + " of its " +
                     std::to_string(trace.jobs.size()) + " jobs");
  for (size_t i = 0; i < trace.after.size(); ++i)
    for (uint32_t p : trace.after[i])
      if (p >= i)
        return MakeError("job " + std::to_string(i) + " depends on job " + std::to_string(p) +
                         ": a job may depend only on jobs before it in the trace");
  if (!trace.work.empty() && trace.work.size() != trace.jobs.size())
    return MakeError("trace has phases for " + std::to_string(trace.work.size()) + " of its " +
                     std::to_string(trace.jobs.size()) + " jobs");
  for (const InjectedFailure& f : cfg.failures)
    if (f.job >= trace.jobs.size() || f.after < 0)
      return MakeError("injected failure: job " + std::to_string(f.job) + " after " + std::to_string(f.after) +
                       " s is not a job of the trace / a time ≥ 0");
  if (policy.shape && !cfg.record_attempts)
    return MakeError("policy '" + cfg.policy + "' reshapes jobs: record attempts (each attempt's GPUs are its own)");
  if (policy.shape && !cfg.planner)
    return MakeError("policy '" + cfg.policy + "' reshapes jobs (ShapePlugin '" + policy.shape->name() +
                     "'): shaped jobs need the planner-aware progress model (SimConfig::planner)");
  if (cfg.planner && policy.share)
    return MakeError("the planner-aware progress model cannot be combined with GPU sharing");
  bool loads = false;
  for (const WorkSpec& w : trace.work)
    for (const Phase& p : w.phases) loads |= p.kind == PhaseKind::kLoad;
  if (loads && policy.share)
    return MakeError("policy '" + cfg.policy + "': checkpoint loads (evaluation trials) are not modelled with GPU sharing");
  if (loads && !(cfg.storage.aggregate_bytes_per_s > 0 && cfg.storage.node_bytes_per_s > 0 &&
                 cfg.storage.cache_bytes_per_s > 0))
    return MakeError("storage bandwidths must be positive");
  if (policy.share && !cfg.failures.empty())
    return MakeError("injected failures are not supported with GPU-sharing policies");
  if (!cfg.harvest.empty()) {
    const char* why = policy.share               ? "GPU-sharing policies"
                      : policy.shape             ? "reshaping policies"
                      : cfg.model_cpu_mem        ? "CPU/memory modelling"
                      : !cfg.energy.empty()      ? "energy saving (--energy)"
                                                 : nullptr;
    if (why) return MakeError(std::string("harvest (lending idle rollout GPUs) cannot be combined with ") + why);
    for (const HarvestPlan& h : cfg.harvest)
      if (h.job >= trace.jobs.size() || trace.work.size() <= h.job || trace.work[h.job].phases.empty())
        return MakeError("harvest: job " + std::to_string(h.job) + " is not an RL job of the trace (a job with phases)");
  }
  if (!cfg.energy.empty() && std::any_of(cfg.failures.begin(), cfg.failures.end(),
                                         [](const InjectedFailure& f) { return f.cordon_for > 0; }))
    return MakeError("cordoning failed nodes (recovery acme) cannot be combined with energy saving (--energy)");  // drain vs power states
  return Status::Ok();
}

}  // namespace

Result<SimResult> Simulate(const Trace& trace, const Cluster& cluster, const SimConfig& cfg, PolicyParts policy) {
  if (cluster.vcs.empty()) return MakeError("cluster '" + cluster.name + "' has no nodes");
  ORR_ASSIGN_OR_RETURN(std::unique_ptr<PlacePlugin> placer, MakePlacer(cfg.placer, cfg.seed));
  if (policy.placer) placer = policy.placer(std::move(placer));  // the policy's own place()
  ORR_RETURN_IF_ERROR(CheckConfig(trace, cfg, policy));
  std::shared_ptr<LentGpus> lent;
  if (!cfg.harvest.empty()) {  // RL jobs (a rollout phase) never borrow lent GPUs
    lent = std::make_shared<LentGpus>();
    lent->first_job = trace.jobs.data();
    lent->no_borrow.assign(trace.jobs.size(), 0);
    for (size_t i = 0; i < trace.work.size(); ++i)
      for (const Phase& p : trace.work[i].phases) lent->no_borrow[i] |= p.kind == PhaseKind::kRollout;
    placer = std::make_unique<HarvestPlacer>(std::move(placer), lent);
  }
  std::unique_ptr<PowerPlugin> power_plugin;
  if (!cfg.energy.empty()) {
    ORR_ASSIGN_OR_RETURN(power_plugin, MakePowerPlugin(cfg.energy, cfg.seed, trace.epoch_unix));
  }
  SimResult r;
  r.policy = cfg.policy;
  r.placer = cfg.placer;
  r.oracle = policy.reads_oracle();
  r.shaped = policy.shape != nullptr;
  r.total_gpus = cluster.total_gpus();
  if (policy.share) {
    const ColocationContext& c = *policy.colocation;
    r.shared_run.assign(trace.jobs.size(), 0);
    r.workload_assignment = "seeded: each job gets one of the " + std::to_string(c.n()) + " workloads of " + c.source +
                            " uniformly (seed " + std::to_string(c.seed) + "); the trace has no model/batch/utilization columns";
  }
  for (const auto& v : cluster.vcs) r.vc_names.push_back(v.name);
  for (const Job& j : trace.jobs) r.fractional |= j.is_fractional();
  if (r.fractional) ORR_RETURN_IF_ERROR(CheckGpuTracking(cluster));
  if (r.fractional && !cfg.harvest.empty())
    return MakeError("harvest (lending idle rollout GPUs) cannot be combined with fractional-GPU jobs");
  r.outcomes.resize(trace.jobs.size());
  // Lucid's profiler: a staging VC carved out of the cluster (the scheduler sees the derived
  // cluster; trace VCs still map onto the original VC ids, which the derived one keeps).
  Cluster derived;
  if (policy.profiler.enabled) {
    ORR_ASSIGN_OR_RETURN(derived, CarveProfiler(cluster, policy.profiler));
  }
  const Cluster& sched_cluster = policy.profiler.enabled ? derived : cluster;
  auto run = std::make_unique<SimRun>(trace, cluster, sched_cluster, cfg, std::move(policy), std::move(placer),
                                      std::move(power_plugin), &r, std::move(lent));
  ORR_RETURN_IF_ERROR(run->Run());
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
    if (o.status != OutcomeStatus::kFinished && o.status != OutcomeStatus::kFailed &&
        o.status != OutcomeStatus::kPreempted)
      continue;
    if (o.start == kNoTime || o.end == kNoTime || o.start < j.submit || o.end < o.start)
      return MakeError("conservation: job " + std::to_string(i) + " finished with inconsistent times", kExitRuntime);
    if (o.status == OutcomeStatus::kFinished && o.run < j.duration)
      return MakeError("conservation: job " + std::to_string(i) + " ran " + std::to_string(o.run) + " s of its " +
                           std::to_string(j.duration) + " s",
                       kExitRuntime);
    const Time entered = r.released.empty() ? j.submit : r.released[i];
    if (o.end - entered != o.wait + o.run)
      return MakeError("conservation: job " + std::to_string(i) + " wait + run != end - submit", kExitRuntime);
    if (i < trace.after.size())
      for (uint32_t p : trace.after[i])
        if (r.outcomes[p].status != OutcomeStatus::kFinished || o.start < r.outcomes[p].end)
          return MakeError("conservation: job " + std::to_string(i) + " started before job " + std::to_string(p) +
                               ", which it depends on, finished",
                           kExitRuntime);
    // A GPU shared by two jobs is busy once: each partner's shared seconds count half.
    const double shared = r.shared_run.empty() ? 0.0 : static_cast<double>(r.shared_run[i]);
    if (shared > static_cast<double>(o.run))
      return MakeError("conservation: job " + std::to_string(i) + " shared its GPUs longer than it ran", kExitRuntime);
    if (!r.shaped) gpu_seconds += (static_cast<double>(o.run) - shared / 2) * j.gpus * j.gpu_milli / 1000.0;
  }
  // Shaped runs: a job's GPUs differ between attempts; each attempt holds its own.
  if (r.shaped)
    for (const Attempt& a : r.attempts.attempts)
      gpu_seconds += static_cast<double>(a.end - a.start) * a.gpus * trace.jobs[a.job.v].gpu_milli / 1000.0;
  gpu_seconds -= r.harvest.lent_gpu_seconds;  // RL jobs ran without their lent GPUs meanwhile
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
