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

std::string_view JobKindName(JobKind k) {
  switch (k) {
    case JobKind::kUnknown: return "unknown";
    case JobKind::kPretrain: return "pretrain";
    case JobKind::kFinetune: return "finetune";
    case JobKind::kEval: return "eval";
    case JobKind::kDebug: return "debug";
    case JobKind::kOther: return "other";
  }
  return "?";
}

JobKind AcmeJobKind(std::string_view type) {
  auto is = [&](std::string_view name) {
    if (type.size() != name.size()) return false;
    for (size_t i = 0; i < name.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(type[i])) != name[i]) return false;
    return true;
  };
  if (is("pretrain")) return JobKind::kPretrain;
  if (is("sft") || is("mllm")) return JobKind::kFinetune;
  if (is("eval")) return JobKind::kEval;
  if (is("debug")) return JobKind::kDebug;
  if (is("other")) return JobKind::kOther;
  return JobKind::kUnknown;
}

static_assert(sizeof(Job) == 80, "JobKind must stay in the padding after JobState");

}  // namespace orrery
