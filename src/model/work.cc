#include "model/work.h"

namespace orrery {

std::string_view PhaseKindName(PhaseKind k) {
  switch (k) {
    case PhaseKind::kGeneric: return "generic";
    case PhaseKind::kTrain: return "train";
    case PhaseKind::kEvalTrial: return "eval_trial";
    case PhaseKind::kRollout: return "rollout";
    case PhaseKind::kInference: return "inference";
    case PhaseKind::kLoad: return "load";
    case PhaseKind::kMetric: return "metric";
  }
  return "?";
}

int64_t WorkSpec::total_steps() const {
  int64_t s = 0;
  for (const Phase& p : phases) s += p.steps;
  return s;
}

Demand DemandOf(const Job& j) {
  return Demand{j.gpus, j.gpu_milli, j.nodes, j.cpu_milli, j.mem_mib, j.gpu_types};
}

WorkSpec TraceWork(const Job& j) {
  Phase p;
  p.kind = PhaseKind::kGeneric;
  p.steps = j.duration;
  p.seconds_per_step = 1.0;
  p.demand = DemandOf(j);
  return WorkSpec{{p}};
}

}  // namespace orrery
