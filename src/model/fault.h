// Fault causes and failure categories: what ends a training attempt, as the
// failure model draws it and as Acme classifies it (infrastructure / framework / script).
// Plain values; rates and sources in docs/design/failures.md.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/attempt.h"

namespace orrery {

enum class FailureCategory : uint8_t {
  kInfrastructure = 0,  // hardware or the platform: a retry on healthy nodes can succeed
  kFramework,           // the training framework or its libraries (NCCL errors, hangs, loss spikes)
  kScript,              // the user's code or arguments: a retry fails again
};
inline constexpr int kNumFailureCategories = 3;
std::string_view FailureCategoryName(FailureCategory c);  // "infrastructure", "framework", "script"

// The first kNumNodeCauses causes are per-node hazards (the fault names a node).
enum class FaultCause : uint8_t {
  kGpu = 0,    // GPU (incl. SRAM, system processor, thermal)
  kHbm,        // GPU HBM memory (ECC)
  kNvlink,     // NVLink / NVSwitch
  kNic,        // NIC, cable, switch port
  kHost,       // the rest of the server (CPU, memory, PSU, SSD, maintenance)
  kFramework,  // framework / library error (the process exits)
  kHang,       // no progress until a watchdog notices
  kLossSpike,  // the loss diverges: roll back and skip the batches
  kScript,     // the user's script fails (mostly early in a run)
};
inline constexpr int kNumFaultCauses = 9;
inline constexpr int kNumNodeCauses = 5;
std::string_view FaultCauseName(FaultCause c);  // "gpu", "hbm", "nvlink", "nic", "host", "framework", "hang", "loss_spike", "script"

constexpr bool IsNodeFault(FaultCause c) { return static_cast<int>(c) < kNumNodeCauses; }

constexpr FailureCategory CategoryOf(FaultCause c) {
  switch (c) {
    case FaultCause::kGpu:
    case FaultCause::kHbm:
    case FaultCause::kNvlink:
    case FaultCause::kNic:
    case FaultCause::kHost:
      return FailureCategory::kInfrastructure;
    case FaultCause::kFramework:
    case FaultCause::kHang:
    case FaultCause::kLossSpike:
      return FailureCategory::kFramework;
    case FaultCause::kScript:
      return FailureCategory::kScript;
  }
  return FailureCategory::kFramework;  // unreachable: every enumerator is handled above
}

// The attempt log's coarser kind (model/attempt.h).
constexpr FailureKind KindOf(FaultCause c) {
  switch (CategoryOf(c)) {
    case FailureCategory::kInfrastructure: return FailureKind::kHardware;
    case FailureCategory::kScript: return FailureKind::kUser;
    case FailureCategory::kFramework: return FailureKind::kUnknown;
  }
  return FailureKind::kUnknown;  // unreachable
}

}  // namespace orrery
