#include "model/fault.h"

namespace orrery {

std::string_view FailureCategoryName(FailureCategory c) {
  switch (c) {
    case FailureCategory::kInfrastructure: return "infrastructure";
    case FailureCategory::kFramework: return "framework";
    case FailureCategory::kScript: return "script";
  }
  return "";
}

std::string_view FaultCauseName(FaultCause c) {
  switch (c) {
    case FaultCause::kGpu: return "gpu";
    case FaultCause::kHbm: return "hbm";
    case FaultCause::kNvlink: return "nvlink";
    case FaultCause::kNic: return "nic";
    case FaultCause::kHost: return "host";
    case FaultCause::kFramework: return "framework";
    case FaultCause::kHang: return "hang";
    case FaultCause::kLossSpike: return "loss_spike";
    case FaultCause::kScript: return "script";
  }
  return "";
}

}  // namespace orrery
