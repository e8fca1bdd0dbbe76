#include "model/job.h"

#include <cctype>

namespace orrery {

namespace {
constexpr std::string_view kNames[kNumJobStates] = {"UNKNOWN", "COMPLETED", "FAILED",  "CANCELLED", "TIMEOUT",
                                                    "NODE_FAIL", "RUNNING",  "PENDING", "PREEMPTED"};
bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(a[i])) != static_cast<unsigned char>(b[i])) return false;
  return true;
}
}  // namespace

std::string_view JobStateName(JobState s) { return kNames[static_cast<int>(s)]; }

bool ParseJobState(std::string_view s, JobState* out) {
  for (int i = 0; i < kNumJobStates; ++i) {
    if (IEquals(s, kNames[i])) {
      *out = static_cast<JobState>(i);
      return true;
    }
  }
  return false;
}

}  // namespace orrery
