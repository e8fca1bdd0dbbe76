// The predicted start (Scheduler::Forecast): a dry run of the policy itself on a copy of the
// scheduler, with believed durations and no new arrivals. The copy runs the same RunCycle
// as a driver (decision ticks, wake-ups, every PostFilter and Reschedule plugin), driven by
// a small event loop that mirrors the simulator's instants: each instant first ends the
// running jobs due then, then runs the cycle; the next instant is the next believed end
// (a preempted attempt's old end included, as the simulator's stale completions make
// instants too) or the next decision time.
#include <algorithm>
#include <queue>
#include <string>

#include "sched/framework/internal/scheduler.h"

namespace orrery {

std::string_view PredictionKindName(PredictionKind k) {
  switch (k) {
    case PredictionKind::kRunning: return "running";
    case PredictionKind::kPredicted: return "predicted";
    case PredictionKind::kBeyondHorizon: return "beyond-horizon";
    case PredictionKind::kNever: return "never";
    case PredictionKind::kOraclePolicy: return "oracle-policy";
    case PredictionKind::kNotCopyable: return "not-copyable";
    case PredictionKind::kUnknownJob: return "unknown-job";
  }
  return "unknown-job";
}

std::string DescribePrediction(const StartPrediction& p) {
  const std::string who(p.blocker);
  switch (p.kind) {
    case PredictionKind::kRunning: return "running since " + std::to_string(p.at);
    case PredictionKind::kPredicted:
      return "predicted start " + std::to_string(p.at) + " (a dry run of the policy on believed durations, " +
             std::to_string(p.ahead) + " job(s) ahead in its order, no new arrivals)";
    case PredictionKind::kBeyondHorizon: return "no predicted start: not started within the dry run's horizon";
    case PredictionKind::kNever:
      return "no predicted start: in the dry run nothing more happens (no believed end, tick or wake-up) while it waits";
    case PredictionKind::kOraclePolicy:
      return "no prediction: the policy reads true durations ('" + who + "'), which a dry run on beliefs cannot replay";
    case PredictionKind::kNotCopyable:
      return "no prediction: plugin '" + who + "' cannot copy its state for a dry run";
    case PredictionKind::kUnknownJob: return "no prediction: not an active job";
  }
  return "no prediction";
}

Scheduler::Scheduler(const Scheduler& o, PolicyParts policy, std::unique_ptr<PlacePlugin> placer, CopyFor purpose,
                     std::unique_ptr<TruthModel> truth)
    : state_(o.state_),  // reads o's cluster (cluster_ stays empty: a copy never grows)
      policy_(std::move(policy)),
      placer_(std::move(placer)),
      opts_(o.opts_),
      pool_(o.pool_),
      free_slots_(o.free_slots_),
      vcs_(o.vcs_),
      dirty_list_(o.dirty_list_),
      now_(o.now_),
      pending_total_(o.pending_total_),
      running_total_(o.running_total_),
      pending_milli_(o.pending_milli_),
      track_running_(o.track_running_),
      requested_(o.requested_),
      next_tick_(o.next_tick_),
      last_cycle_(o.last_cycle_) {
  // The copy's placer answers for itself: no blocked head is carried over.
  memo_blocked_ = CanMemoBlockedHead();
  for (VcQueues& q : vcs_) {
    q.blocked = BlockedHead{};
    q.settled = kNoVersion;  // judged by o's plugins
  }
  IndexPending();  // o's positions point into o's queues
  // Shaped jobs point at the copy's own shaped requests.
  shaped_.resize(o.shaped_.size());
  for (size_t s = 0; s < o.shaped_.size(); ++s) {
    if (!o.shaped_[s]) continue;
    shaped_[s] = std::make_unique<Job>(*o.shaped_[s]);
    pool_[s].job = shaped_[s].get();
  }
  switch (purpose) {
    case CopyFor::kForecast:
      // Beliefs frozen: a job without an estimate runs for what the core believes now (its
      // walltime live; a preemption then re-bases it as any estimate, StopToQueue).
      for (SchedJob& j : pool_)
        if (j.job && j.estimate < 0) j.estimate = o.BelievedDuration(j);
      return;
    case CopyFor::kWalkCheck: CopyCheckState(o, std::move(truth)); return;
  }
}

PredictionKind Scheduler::ClonePolicy(PolicyParts* out, std::unique_ptr<PlacePlugin>* placer,
                                      std::string_view* who) const {
  const PolicyParts& p = policy_;
  if (p.sort->wants_oracle()) {
    *who = p.sort->name();
    return PredictionKind::kOraclePolicy;
  }
  if (p.post && p.post->needs_true_end_order()) {
    *who = p.post->name();
    return PredictionKind::kOraclePolicy;
  }
  return CopyPlugins(out, placer, who, false) ? PredictionKind::kPredicted : PredictionKind::kNotCopyable;
}

bool Scheduler::CopyPlugins(PolicyParts* out, std::unique_ptr<PlacePlugin>* placer, std::string_view* who,
                            bool inner_placer) const {
  const PolicyParts& p = policy_;
  auto not_copyable = [&](std::string_view name) {
    *who = name;
    return false;
  };
  PluginCopies copies;
  if (!(out->sort = p.sort->Clone(copies))) return not_copyable(p.sort->name());
  if (p.post && !(out->post = p.post->Clone(copies))) return not_copyable(p.post->name());
  if (p.reschedule && !(out->reschedule = p.reschedule->Clone(copies))) return not_copyable(p.reschedule->name());
  if (p.share && !(out->share = p.share->Clone(copies))) return not_copyable(p.share->name());
  if (p.shape && !(out->shape = p.shape->Clone())) return not_copyable(p.shape->name());
  const PlacePlugin& place = inner_placer && reserving_ ? reserving_->inner() : *placer_;
  if (!(*placer = place.Clone(copies))) return not_copyable(place.name());
  out->name = p.name;
  out->tick = p.tick;
  out->tick_and_events = p.tick_and_events;
  out->preempt_overhead = p.preempt_overhead;
  out->blocking = p.blocking;
  out->preemptive = p.preemptive;
  out->cancels = p.cancels;
  out->colocation = p.colocation;
  out->profiler = p.profiler;
  return true;  // estimator left out: the copy submits and learns nothing
}

const std::vector<StartPrediction>& Scheduler::Forecast(Time now) const {
  if (forecast_epoch_ == epoch_ && forecast_now_ == now) return forecast_;
  forecast_.assign(pool_.size(), StartPrediction{});
  DryRun(now, &forecast_);
  NoteAhead(&forecast_);
  forecast_epoch_ = epoch_;
  forecast_now_ = now;
  return forecast_;
}

StartPrediction Scheduler::PredictStart(uint32_t slot, Time now) const {
  const std::vector<StartPrediction>& f = Forecast(now);
  return slot < f.size() ? f[slot] : StartPrediction{};
}

void Scheduler::DryRun(Time now, std::vector<StartPrediction>* out) const {
  std::vector<StartPrediction>& f = *out;
  size_t waiting = 0;
  for (const SchedJob& j : pool_) {
    if (!j.job) continue;
    StartPrediction& p = f[j.slot];
    p.kind = j.running ? PredictionKind::kRunning : PredictionKind::kBeyondHorizon;
    p.at = j.running ? j.started : kNoTime;
    if (!j.running) p.why = vcs_[j.vc.v].last_block;
    waiting += !j.running;
  }
  if (waiting == 0) return;
  PolicyParts parts;
  std::unique_ptr<PlacePlugin> placer;
  std::string_view who;
  if (const PredictionKind k = ClonePolicy(&parts, &placer, &who); k != PredictionKind::kPredicted) {
    for (StartPrediction& p : f)
      if (p.kind == PredictionKind::kBeyondHorizon) {
        p.kind = k;
        p.blocker = who;
      }
    return;
  }
  Scheduler d(*this, std::move(parts), std::move(placer), CopyFor::kForecast);
  // Believed ends; an overdue job (past its believed end) is believed to end within a second.
  struct End {
    Time t;
    uint32_t slot, gen;
    bool operator>(const End& o) const { return t != o.t ? t > o.t : slot > o.slot; }
  };
  std::priority_queue<End, std::vector<End>, std::greater<>> ends;
  std::vector<uint32_t> gen(d.pool_.size(), 0);
  for (const SchedJob& j : d.pool_)
    if (j.job && j.running) ends.push(End{std::max(j.est_end, now + 1), j.slot, 0});
  auto next_instant = [&](Time after) {
    const Time tick = d.NextDecisionTime(after);
    const Time end = ends.empty() ? kNoTime : ends.top().t;
    return tick == kNoTime ? end : (end == kNoTime ? tick : std::min(tick, end));
  };
  // A cycle already ran at `now`: the copy goes on from the next instant, as the driver would.
  Time t = last_cycle_ != kNoTime && now <= last_cycle_ ? next_instant(now) : now;
  std::vector<Decision> decisions;
  for (size_t instants = 0; waiting > 0; ++instants) {
    if (t == kNoTime) {
      for (StartPrediction& p : f)
        if (p.kind == PredictionKind::kBeyondHorizon) p.kind = PredictionKind::kNever;
      return;
    }
    if (t > now + opts_.predict_horizon || instants >= opts_.predict_max_instants) return;
    while (!ends.empty() && ends.top().t <= t) {
      const End e = ends.top();
      ends.pop();
      if (e.gen != gen[e.slot] || !d.pool_[e.slot].running) continue;  // a stale end still made the instant
      d.Finish(e.slot, t);
      d.Release(e.slot);
    }
    decisions.clear();
    d.RunCycle(t, &decisions);
    for (const Decision& dec : decisions)
      std::visit(Overloaded{[&](const StartDecision& s) {
                              StartPrediction& p = f[s.slot];
                              if (p.kind == PredictionKind::kBeyondHorizon) {
                                p.kind = PredictionKind::kPredicted;
                                p.at = t;
                                --waiting;
                              }
                              ends.push(End{d.pool_[s.slot].est_end, s.slot, gen[s.slot]});
                            },
                            [&](const PreemptDecision& p) { ++gen[p.slot]; }},
                 dec);
    t = next_instant(t);
  }
}

// `ahead`: pending jobs before each in its VC's queue order (the classes merged by key).
void Scheduler::NoteAhead(std::vector<StartPrediction>* out) const {
  std::vector<QEntry> order;
  for (const VcQueues& q : vcs_) {
    order.clear();
    for (const auto& cls : q.classes) order.insert(order.end(), cls.begin(), cls.end());
    std::sort(order.begin(), order.end());
    for (size_t i = 0; i < order.size(); ++i) (*out)[order[i].slot].ahead = static_cast<uint32_t>(i);
  }
}

}  // namespace orrery
