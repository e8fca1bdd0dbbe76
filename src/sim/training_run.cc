#include "sim/training_run.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <queue>

#include "base/rng.h"

namespace orrery {

namespace {

struct NodeHealth {
  double mult = 1;     // hazard multiplier (a persistent fault not yet repaired)
  uint32_t faults = 0;
};

class TrainingRun {
 public:
  TrainingRun(const TrainingRunSpec& spec, const FailureModel& m, const CheckpointPlan& plan,
              const RecoveryPolicy& policy, uint64_t seed)
      : spec_(spec), m_(m), plan_(plan), policy_(policy), time_rng_(seed, "failures/time"),
        cause_rng_(seed, "failures/cause"), node_rng_(seed, "failures/node"), persist_rng_(seed, "failures/persist") {}

  TrainingRunResult Run();

 private:
  uint32_t HotSpares() const {
    const auto* a = std::get_if<RecoveryAcme>(&policy_);
    return a ? a->spares : 0;
  }
  void Spend(Duration d, Duration* bucket) {
    d = std::clamp<Duration>(d, 0, spec_.horizon - t_);
    *bucket += d;
    t_ += d;
  }
  double GangRatePerHour() const {
    double mult = 0;
    for (uint32_t n : gang_) mult += health_[n].mult;
    return mult * m_.NodePerHour() + m_.JobPerHour(static_cast<double>(gang_.size()));
  }
  FaultCause DrawCause(uint32_t* node);
  void Fault(FaultCause cause, uint32_t node, const CheckpointProgress& seg, Time attempt_start);
  Duration ReplaceNode(uint32_t node, const RecoveryAction& a, bool* spare);
  void SpendRestart(const RecoveryAction& a, bool replaced, bool spare, Duration wait, RestoreTier tier);
  void ReturnRepaired();

  const TrainingRunSpec& spec_;
  const FailureModel& m_;
  const CheckpointPlan& plan_;
  const RecoveryPolicy& policy_;
  Rng time_rng_, cause_rng_, node_rng_, persist_rng_;
  std::vector<NodeHealth> health_;
  std::vector<uint32_t> gang_;
  std::deque<uint32_t> spares_, cold_;
  std::priority_queue<std::pair<Time, uint32_t>, std::vector<std::pair<Time, uint32_t>>, std::greater<>> repairs_;
  TrainingRunResult r_;
  Time t_ = 0;
  Duration done_ = 0;    // training time reached (= durable at an attempt's start)
  Duration stored_ = 0;  // training time of the last checkpoint on storage (<= done_)
  int script_repeats_ = 0;
  bool script_pending_ = false;  // an automatic retry of a script error: it fails again at once
  double downtime_sum_ = 0;
};

FaultCause TrainingRun::DrawCause(uint32_t* node) {
  if (script_pending_) return FaultCause::kScript;
  const double nodes = static_cast<double>(gang_.size());
  const double node_part = GangRatePerHour() - m_.JobPerHour(nodes);
  double u = cause_rng_.Uniform() * GangRatePerHour();
  if (u < node_part) {  // which node (by its multiplier), then which component (by the mix)
    double v = node_rng_.Uniform() * node_part / m_.NodePerHour();
    *node = gang_.back();
    for (uint32_t n : gang_) {
      if (v < health_[n].mult) {
        *node = n;
        break;
      }
      v -= health_[n].mult;
    }
    double w = cause_rng_.Uniform() * m_.NodePerHour();
    for (int c = 0; c < kNumNodeCauses; ++c) {
      if (w < m_.node_per_hour[c]) return static_cast<FaultCause>(c);
      w -= m_.node_per_hour[c];
    }
    return FaultCause::kHost;
  }
  u -= node_part;
  const double framework = m_.framework_per_node_hour * nodes, hang = m_.hang_per_node_hour * nodes;
  if (u < framework) return FaultCause::kFramework;
  if (u < framework + hang) return FaultCause::kHang;
  return FaultCause::kLossSpike;
}

void TrainingRun::ReturnRepaired() {
  while (!repairs_.empty() && repairs_.top().first <= t_) {
    const uint32_t n = repairs_.top().second;
    repairs_.pop();
    health_[n].mult = 1;
    (spares_.size() < HotSpares() ? spares_ : cold_).push_back(n);
  }
}

// Takes the cordoned node out of the gang and brings in a replacement (*spare: a hot spare);
// returns the s spent waiting for a repaired node when none is idle.
Duration TrainingRun::ReplaceNode(uint32_t node, const RecoveryAction& a, bool* spare) {
  ++r_.cordoned;
  repairs_.push({t_ + m_.repair, node});
  ReturnRepaired();
  Duration wait = 0;
  if (spares_.empty() && cold_.empty()) {  // wait for the earliest repair
    wait = std::max<Duration>(0, repairs_.top().first - t_);
    const uint32_t n = repairs_.top().second;
    repairs_.pop();
    health_[n].mult = 1;
    cold_.push_back(n);
  }
  std::deque<uint32_t>& from = a.use_spare && !spares_.empty() ? spares_ : !cold_.empty() ? cold_ : spares_;
  *spare = &from == &spares_;
  if (*spare) ++r_.spares_used;
  *std::find(gang_.begin(), gang_.end(), node) = from.front();
  from.pop_front();
  return wait;
}

// The restart after the decision (docs/design/failures.md, "Restart costs"): an in-job restart
// (when the policy does one and, for a replaced node, a warm spare took its ranks) rebuilds the
// process groups in `reinit` and fetches the state from host memory when a copy survived
// (`restore_memory`), else reads storage (`restore`); a job restart reschedules the gang (a
// spare's swap or a cold node) and relaunches it (`restore`, or `init` from scratch). With
// `overlap` the swap or re-initialisation runs during the diagnosis (not after a wait for a
// repaired node).
void TrainingRun::SpendRestart(const RecoveryAction& a, bool replaced, bool spare, Duration wait, RestoreTier tier) {
  const bool in_job = a.in_job && (!replaced || spare);
  const Duration setup = in_job ? a.reinit : !replaced || spare ? a.reschedule : a.reschedule_cold;
  const Duration load = done_ == 0                             ? plan_.init
                        : in_job && tier == RestoreTier::kMemory ? plan_.restore_memory
                                                                 : plan_.restore;
  const Duration overlapped = a.overlap && wait == 0 ? std::min(a.diagnose, setup) : 0;
  Spend(a.diagnose, &r_.time.diagnose);
  Spend(wait, &r_.time.waiting);
  Spend(setup - overlapped, &r_.time.reschedule);
  Spend(load, &r_.time.load);
  if (in_job) ++r_.in_job_restarts;
}

void TrainingRun::Fault(FaultCause cause, uint32_t node, const CheckpointProgress& seg, Time attempt_start) {
  ++r_.faults[static_cast<int>(cause)];
  ++r_.by_category[static_cast<int>(CategoryOf(cause))];
  const RecoveryAction a = Decide(policy_, cause, script_repeats_);
  const Duration reached = done_ + seg.work;
  const bool replaced = IsNodeFault(cause) && a.cordon;
  const RestoreTier tier = TierAfter(plan_, cause, replaced);
  Duration target = !a.from_checkpoint ? 0 : tier == RestoreTier::kMemory ? seg.durable_memory : seg.durable;
  if (cause == FaultCause::kLossSpike) target = std::min(target, std::max<Duration>(0, reached - m_.rollback));
  r_.time.lost_work += reached - target;
  if (tier == RestoreTier::kMemory && target > 0) ++r_.memory_restores;
  Attempt at;
  at.start = attempt_start;
  at.end = t_;
  at.steps_done = reached;
  at.steps_durable = target;
  at.gpus = spec_.nodes * spec_.gpus_per_node;
  at.cause = EndCause::kFailed;
  at.failure = KindOf(cause);
  at.restartable = a.retry && a.automatic;
  at.index = static_cast<uint8_t>(std::min<uint32_t>(r_.restarts, 255));
  r_.attempts.Add(at, nullptr, 0);
  r_.attempts.attempts.back().node_count = static_cast<uint16_t>(std::min<uint32_t>(spec_.nodes, 65535));
  done_ = target;
  stored_ = std::min(seg.durable, target);
  const Time fault_at = t_;
  // A loss spike trains on unnoticed; a hang or crash just waits to be noticed.
  Spend(a.detect, cause == FaultCause::kLossSpike ? &r_.time.lost_work : &r_.time.detect);
  Duration wait = 0;
  bool spare = false;
  if (IsNodeFault(cause)) {
    if (health_[node].faults++ > 0) ++r_.repeat_faults;
    if (health_[node].mult > 1) ++r_.flaky_faults;
    if (persist_rng_.Uniform() < m_.persist_probability) health_[node].mult = m_.recur_factor;
    if (a.cordon) wait = ReplaceNode(node, a, &spare);
  }
  SpendRestart(a, replaced, spare, wait, tier);
  if (!a.automatic) ++r_.manual;
  const bool script_retry = cause == FaultCause::kScript && a.retry && a.automatic;
  script_pending_ = script_retry;
  script_repeats_ = script_retry ? script_repeats_ + 1 : 0;
  downtime_sum_ += static_cast<double>(t_ - fault_at);
}

TrainingRunResult TrainingRun::Run() {
  const uint32_t total = spec_.nodes + HotSpares() + spec_.cold_nodes;
  health_.assign(total, NodeHealth{});
  for (uint32_t n = 0; n < spec_.nodes; ++n) gang_.push_back(n);
  for (uint32_t n = spec_.nodes; n < spec_.nodes + HotSpares(); ++n) spares_.push_back(n);
  for (uint32_t n = spec_.nodes + HotSpares(); n < total; ++n) cold_.push_back(n);
  r_.mtbf_s = 3600.0 / (spec_.nodes * m_.NodePerHour() + m_.JobPerHour(spec_.nodes));
  r_.interval = IntervalFor(plan_, r_.mtbf_s);
  while (t_ < spec_.horizon) {
    const Time start = t_;
    const double rate = GangRatePerHour() / 3600.0;
    const Duration gap = script_pending_ ? 60
                         : rate > 0      ? static_cast<Duration>(std::ceil(time_rng_.Exponential(rate)))
                                         : spec_.horizon;
    const Duration e = std::min<Duration>(gap, spec_.horizon - t_);
    const CheckpointProgress seg = RunWithCheckpoints(plan_, r_.interval, done_, e, stored_);
    r_.time.stall += seg.stall;
    t_ += e;
    if (t_ >= spec_.horizon) {
      done_ += seg.work;
      break;
    }
    uint32_t node = 0;
    const FaultCause cause = DrawCause(&node);
    Fault(cause, node, seg, start);
    if (t_ < spec_.horizon) ++r_.restarts;
  }
  r_.time.productive = done_;
  r_.ettr = static_cast<double>(done_) / static_cast<double>(spec_.horizon);
  const uint32_t n = r_.by_category[0] + r_.by_category[1] + r_.by_category[2];
  r_.mttr_s = n ? downtime_sum_ / n : 0;
  return std::move(r_);
}

}  // namespace

Result<TrainingRunResult> SimulateTrainingRun(const TrainingRunSpec& spec, const FailureModel& model,
                                              const CheckpointPlan& plan, const RecoveryPolicy& policy, uint64_t seed) {
  if (spec.nodes == 0 || spec.gpus_per_node == 0 || spec.horizon <= 0)
    return MakeError("training run: nodes, GPUs per node and the horizon must be positive");
  TrainingRun run(spec, model, plan, policy, seed);
  return run.Run();
}

}  // namespace orrery
