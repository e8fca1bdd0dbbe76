// libFuzzer target: the specs of `--failures`, `--checkpoint` and `--recovery` (failure model,
// checkpoint plan, recovery policy). Property: any input parses or returns an error, never
// crashes; a parsed spec gives finite, non-negative rates and intervals.
#include <cmath>
#include <cstdlib>
#include <string>

#include "sched/plugins/recovery.h"
#include "sim/checkpoint_plan.h"
#include "sim/failure_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string spec(reinterpret_cast<const char*>(data), size);
  if (auto m = orrery::MakeFailureModel(spec); m.ok()) {
    const double r = m->NodePerHour() + m->JobPerHour(2048);
    if (!(r >= 0) || !std::isfinite(r)) std::abort();
  }
  if (auto p = orrery::MakeCheckpointPlan(spec); p.ok()) {
    if (orrery::IntervalFor(*p, 11134.0) < 0) std::abort();
  }
  if (auto r = orrery::MakeRecovery(spec); r.ok()) {
    const orrery::RecoveryAction a = orrery::Decide(*r, orrery::FaultCause::kGpu);
    if (a.detect < 0 || a.diagnose < 0 || a.reschedule < 0) std::abort();
  }
  return 0;
}
