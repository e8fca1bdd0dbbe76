#include "sim/failure_inject.h"

#include <algorithm>
#include <cmath>

#include "base/rng.h"

namespace orrery {

namespace {

FaultCause Representative(FailureCategory c) {
  switch (c) {
    case FailureCategory::kInfrastructure: return FaultCause::kGpu;
    case FailureCategory::kFramework: return FaultCause::kFramework;
    case FailureCategory::kScript: return FaultCause::kScript;
  }
  return FaultCause::kFramework;  // unreachable
}

// The policy's decision for a fault of a trace job: retried when the policy restarts it by
// itself (`none`: the job leaves; its user's resubmission is not a trace job); the attempt
// holds its GPUs until the decision (RecoveryAction::HeldFor); the named node is cordoned for
// the repair or reboot the failure model draws (CordonDuration) when the policy cordons.
void ApplyDecision(const RecoveryPolicy& p, FaultCause c, bool noticed, const FailureModel& m, Rng& repair,
                   InjectedFailure* f) {
  const RecoveryAction a = Decide(p, c);
  f->kind = KindOf(c);
  f->restartable = a.retry && a.automatic;
  f->hold = a.HeldFor(noticed);
  f->cordon_for = a.cordon ? CordonDuration(m, repair) : 0;
}

void Count(InjectedSummary* s, FaultCause c, const InjectedFailure& f, uint32_t gpus) {
  if (!s) return;
  ++s->by_category[static_cast<int>(CategoryOf(c))];
  ++(f.restartable ? s->retried : s->not_retried);
  s->held_gpu_seconds += static_cast<double>(f.hold) * gpus;
}

double Nodes(const Job& j, uint32_t gpus_per_node) {
  return std::max(1.0, std::ceil(static_cast<double>(j.gpus) / std::max<uint32_t>(gpus_per_node, 1)));
}

// Seconds into an attempt until the first fault and its cause (constant hazards plus, when
// `script`, a Weibull script error).
std::pair<double, FaultCause> FirstFault(const FailureModel& m, double nodes, bool script, Rng& time, Rng& cause) {
  const double constant = nodes * m.NodePerHour() + m.JobPerHour(nodes) - m.loss_spike_per_hour;
  double t = constant > 0 ? time.Exponential(constant / 3600.0) : INFINITY;
  FaultCause c = FaultCause::kFramework;
  if (script && m.script_weight > 0) {  // cumulative hazard w (t/s)^k -> t = s (E/w)^(1/k)
    const double ts = m.script_scale_h * 3600.0 * std::pow(time.Exponential(1.0) / m.script_weight, 1.0 / m.script_shape);
    if (ts < t) return {ts, FaultCause::kScript};
  }
  double u = cause.Uniform() * constant;
  const double framework = m.framework_per_node_hour * nodes, hang = m.hang_per_node_hour * nodes;
  if (u < framework) return {t, FaultCause::kFramework};
  u -= framework;
  if (u < hang) return {t, FaultCause::kHang};
  u -= hang;
  for (int k = 0; k < kNumNodeCauses; ++k) {
    c = static_cast<FaultCause>(k);
    if (u < m.node_per_hour[k] * nodes) break;
    u -= m.node_per_hour[k] * nodes;
  }
  return {t, c};
}

}  // namespace

std::vector<InjectedFailure> RecordedFailures(const Trace& trace, const FailureModel& m, const RecoveryPolicy& policy,
                                              uint32_t gpus_per_node, uint64_t seed, InjectedSummary* summary) {
  std::vector<InjectedFailure> out;
  Rng rng(seed, "failures/attribution"), repair(seed, "failures/repair");
  for (const Job& j : trace.jobs) {
    if (j.gpus == 0 || j.duration <= 0) continue;
    InjectedFailure f;
    f.job = j.id.v;
    // One second before its recorded end: at the end itself its completion would come first
    // (completions rank before failures at one instant) and the work would count as done.
    f.after = j.duration - 1;
    FaultCause cause = FaultCause::kGpu;
    switch (j.state) {
      case JobState::kFailed:
      case JobState::kNodeFail:
        cause = Representative(AttributeFailure(m, j, gpus_per_node, rng));
        ApplyDecision(policy, cause, true, m, repair, &f);
        break;
      case JobState::kTimeout:  // its time limit: a restart would hit it again
        f.kind = FailureKind::kTimeout;
        f.restartable = false;
        if (summary) ++summary->timeouts, ++summary->not_retried;
        out.push_back(f);
        continue;
      case JobState::kUnknown:
      case JobState::kCompleted:
      case JobState::kCancelled:
      case JobState::kRunning:
      case JobState::kPending:
      case JobState::kPreempted:
        continue;
    }
    Count(summary, cause, f, j.gpus);
    out.push_back(f);
  }
  return out;
}

std::vector<InjectedFailure> DrawFailures(const Trace& trace, const FailureModel& m, const RecoveryPolicy& policy,
                                          uint32_t gpus_per_node, uint64_t seed, int max_attempts,
                                          InjectedSummary* summary) {
  std::vector<InjectedFailure> out;
  Rng time(seed, "failures/time"), cause(seed, "failures/cause"), repair(seed, "failures/repair");
  for (const Job& j : trace.jobs) {
    if (j.gpus == 0 || j.duration <= 0) continue;
    const double nodes = Nodes(j, gpus_per_node);
    for (int a = 0; a < max_attempts; ++a) {
      const auto [t, c] = FirstFault(m, nodes, a == 0, time, cause);
      if (!(t < static_cast<double>(j.duration))) break;  // this attempt finishes
      InjectedFailure f;
      f.job = j.id.v;
      f.attempt = static_cast<uint16_t>(a);
      f.after = static_cast<Duration>(t);
      ApplyDecision(policy, c, false, m, repair, &f);
      f.restartable = f.restartable && a + 1 < max_attempts;
      Count(summary, c, f, j.gpus);
      out.push_back(f);
      if (!f.restartable) break;
    }
  }
  return out;
}

std::vector<WorkSpec> CheckpointedWork(const Trace& trace, const FailureModel& m, const CheckpointPlan& plan,
                                       uint32_t gpus_per_node) {
  std::vector<WorkSpec> work(trace.jobs.size());
  for (const Job& j : trace.jobs) {
    if (j.gpus == 0 || j.duration <= 0) continue;
    const double nodes = Nodes(j, gpus_per_node);
    const double per_hour = nodes * m.NodePerHour() + m.JobPerHour(nodes);
    Phase p;
    p.kind = PhaseKind::kTrain;
    p.steps = j.duration;
    p.demand = DemandOf(j);
    p.checkpoint = ToCheckpointPolicy(plan, per_hour > 0 ? 3600.0 / per_hour : 1e12);
    work[j.id.v].phases.push_back(p);
  }
  return work;
}

}  // namespace orrery
