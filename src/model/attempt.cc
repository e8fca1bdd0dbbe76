#include "model/attempt.h"

namespace orrery {

std::string_view EndCauseName(EndCause c) {
  switch (c) {
    case EndCause::kFinished: return "finished";
    case EndCause::kFailed: return "failed";
    case EndCause::kPreempted: return "preempted";
    case EndCause::kWithdrawn: return "withdrawn";
    case EndCause::kRequeued: return "requeued";
    case EndCause::kNodeLost: return "node_lost";
    case EndCause::kUnfinished: return "unfinished";
  }
  return "?";
}

std::string_view FailureKindName(FailureKind k) {
  switch (k) {
    case FailureKind::kNone: return "";
    case FailureKind::kUser: return "user";
    case FailureKind::kOom: return "oom";
    case FailureKind::kHardware: return "hardware";
    case FailureKind::kTimeout: return "timeout";
    case FailureKind::kUnknown: return "unknown";
  }
  return "?";
}

}  // namespace orrery
