#include "live/recovery.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <variant>

#include <fmt/format.h>

namespace orrery::live {

std::string_view TriggerName(Trigger t) {
  switch (t) {
    case Trigger::kFailed: return "failed";
    case Trigger::kNodeFail: return "node-fail";
    case Trigger::kBootFail: return "boot-fail";
    case Trigger::kTimeout: return "timeout";
    case Trigger::kOutOfMemory: return "out-of-memory";
    case Trigger::kHang: return "hang";
  }
  return "?";
}

Trigger TriggerOf(SlurmFailure f) {
  switch (f) {
    case SlurmFailure::kNone:
    case SlurmFailure::kExit: return Trigger::kFailed;
    case SlurmFailure::kNodeFail: return Trigger::kNodeFail;
    case SlurmFailure::kBootFail: return Trigger::kBootFail;
    case SlurmFailure::kTimeout: return Trigger::kTimeout;
    case SlurmFailure::kOutOfMemory: return Trigger::kOutOfMemory;
  }
  return Trigger::kFailed;
}

std::string_view StepName(RecoveryStep s) {
  switch (s) {
    case RecoveryStep::kRequeue: return "requeue";
    case RecoveryStep::kDrainRequeue: return "drain-requeue";
    case RecoveryStep::kGiveUp: return "give-up";
  }
  return "?";
}

std::optional<Trigger> ParseTrigger(std::string_view name) {
  for (Trigger t : {Trigger::kFailed, Trigger::kNodeFail, Trigger::kBootFail, Trigger::kTimeout, Trigger::kOutOfMemory,
                    Trigger::kHang})
    if (TriggerName(t) == name) return t;
  return std::nullopt;
}

std::optional<RecoveryStep> ParseStep(std::string_view name) {
  for (RecoveryStep s : {RecoveryStep::kRequeue, RecoveryStep::kDrainRequeue, RecoveryStep::kGiveUp})
    if (StepName(s) == name) return s;
  return std::nullopt;
}

namespace {

struct SubtypeCause {
  std::string_view subtype;
  FaultCause cause;
};
// Infrastructure subtypes of the rules (configs/logs/diagnose-rules.toml) that name a node's
// hardware; every other infrastructure subtype (storage, host OOM, time limit, signals,
// preemption) is no fault of a node and is handled like a framework error.
constexpr SubtypeCause kNodeSubtypes[] = {
    {"gpu_xid", FaultCause::kGpu},          {"gpu_unavailable", FaultCause::kGpu},
    {"gpu_ecc", FaultCause::kHbm},          {"nvlink_error", FaultCause::kNvlink},
    {"network_ib", FaultCause::kNic},       {"nccl_system_error", FaultCause::kNic},
    {"nccl_timeout", FaultCause::kNic},     {"node_failure", FaultCause::kHost},
    {"hang", FaultCause::kHang},
};

bool NodeLost(Trigger t) { return t == Trigger::kNodeFail || t == Trigger::kBootFail; }

FaultCause InfrastructureCause(std::string_view subtype) {
  for (const SubtypeCause& s : kNodeSubtypes)
    if (s.subtype == subtype) return s.cause;
  return FaultCause::kFramework;
}

FailureKind TriggerKind(Trigger t) {
  switch (t) {
    case Trigger::kFailed: return FailureKind::kUser;
    case Trigger::kNodeFail:
    case Trigger::kBootFail: return FailureKind::kHardware;
    case Trigger::kTimeout: return FailureKind::kTimeout;
    case Trigger::kOutOfMemory: return FailureKind::kOom;
    case Trigger::kHang: return FailureKind::kUnknown;
  }
  return FailureKind::kUnknown;
}

bool Matched(const logs::Diagnosis& d) { return d.source != logs::DiagnosisSource::kNone; }

// The core's kind: what the diagnosis says (memory and time limits by subtype), else what
// Slurm's state says.
FailureKind KindFor(FaultCause cause, const logs::Diagnosis& d, Trigger t) {
  if (t == Trigger::kHang || !Matched(d)) return TriggerKind(t);
  if (d.subtype == "cuda_oom" || d.subtype == "host_oom_kill") return FailureKind::kOom;
  if (d.subtype == "time_limit") return FailureKind::kTimeout;
  return KindOf(cause);
}

bool Names(std::string_view line, std::string_view node) {
  for (size_t p = line.find(node); p != std::string_view::npos; p = line.find(node, p + 1)) {
    auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; };
    const bool left = p == 0 || !word(line[p - 1]);
    const size_t e = p + node.size();
    if (left && (e == line.size() || !word(line[e]))) return true;
  }
  return false;
}

std::string Shorten(std::string s, size_t n) {
  if (s.size() > n) s = s.substr(0, n) + "...";
  return s;
}

std::string WhyNotRetried(const RecoveryAction& a, bool rules_veto, const Incident& inc, int max_restarts,
                          FaultCause cause) {
  if (cause == FaultCause::kScript) return "not retried: a script error fails again (the user fixes it)";
  if (!a.retry || !a.automatic) return "not retried: the recovery policy leaves it to its user";
  if (rules_veto) return "not retried: the diagnosis says a retry fails again";
  return fmt::format("not retried: {} restart(s), the limit", std::min(inc.restarts, max_restarts));
}

}  // namespace

FaultCause CauseOf(const logs::Diagnosis& d, Trigger t) {
  if (t == Trigger::kHang) return FaultCause::kHang;
  FaultCause c = FaultCause::kFramework;
  switch (d.category) {
    case logs::Category::kScript: c = FaultCause::kScript; break;
    case logs::Category::kFramework: c = FaultCause::kFramework; break;
    case logs::Category::kInfrastructure: c = InfrastructureCause(d.subtype); break;
    case logs::Category::kUnknown: c = FaultCause::kFramework; break;
  }
  // Slurm itself saw a node go (NODE_FAIL, BOOT_FAIL): a node's fault whatever the log says last.
  if (NodeLost(t) && !IsNodeFault(c)) c = FaultCause::kHost;
  return c;
}

std::string SuspectNode(const logs::Diagnosis& d, const Incident& inc) {
  for (const std::string& n : inc.nodes)  // a name the rules extracted (several: comma-separated)
    if (Names(d.suspect_node, n)) return n;
  // Exactly one of the job's nodes named where `named_in` looks.
  auto only = [&](auto named_in) {
    std::string one;
    int count = 0;
    for (const std::string& n : inc.nodes)
      if (named_in(n)) {
        one = n;
        ++count;
      }
    return count == 1 ? one : std::string();
  };
  std::string s = only([&](const std::string& n) {
    return std::any_of(d.evidence.begin(), d.evidence.end(), [&](const std::string& l) { return Names(l, n); });
  });
  if (s.empty()) s = only([&](const std::string& n) { return Names(inc.log, n); });
  if (s.empty() && inc.nodes.size() == 1) s = inc.nodes[0];
  return s;
}

RecoveryVerdict Judge(const RecoveryPolicy& policy, const logs::Diagnosis& d, const Incident& inc, int max_restarts) {
  RecoveryVerdict v;
  v.cause = CauseOf(d, inc.trigger);
  const RecoveryAction a = Decide(policy, v.cause, inc.restarts);
  const bool rules_veto = inc.trigger != Trigger::kHang && Matched(d) && !d.retry &&
                          !std::holds_alternative<RecoveryRequeue>(policy);
  const bool retry = a.retry && a.automatic && !rules_veto && inc.restarts < max_restarts;
  v.kind = KindFor(v.cause, d, inc.trigger);
  v.suspect = SuspectNode(d, inc);
  const bool drain = retry && a.cordon && !v.suspect.empty();
  v.step = !retry ? RecoveryStep::kGiveUp : drain ? RecoveryStep::kDrainRequeue : RecoveryStep::kRequeue;
  const std::string what = inc.trigger == Trigger::kHang ? "hang/no progress"
                           : Matched(d) ? fmt::format("{}/{}", logs::CategoryName(d.category), d.subtype)
                                        : fmt::format("unknown (Slurm: {})", TriggerName(inc.trigger));
  const std::string where = v.suspect.empty() ? "" : " on " + v.suspect;
  const std::string evidence = d.evidence.empty() ? "" : ": " + Shorten(d.evidence.front(), 160);
  std::string done;
  switch (v.step) {
    case RecoveryStep::kRequeue: done = fmt::format("requeued (restart {})", inc.restarts + 1); break;
    case RecoveryStep::kDrainRequeue:
      done = fmt::format("{} drained, requeued (restart {})", v.suspect, inc.restarts + 1);
      break;
    case RecoveryStep::kGiveUp: done = WhyNotRetried(a, rules_veto, inc, max_restarts, v.cause); break;
  }
  v.reason = what + where + evidence + "; " + done;
  return v;
}

std::string CommentValue(std::string_view comment, std::string_view key) {
  const std::string k = "orrery:" + std::string(key) + "=";
  size_t p = comment.find(k);
  while (p != std::string_view::npos && p > 0 && comment[p - 1] != ' ' && comment[p - 1] != ',')
    p = comment.find(k, p + 1);
  if (p == std::string_view::npos) return "";
  size_t b = p + k.size(), e = b;
  while (e < comment.size() && comment[e] != ' ' && comment[e] != ',' && comment[e] != '\t') ++e;
  return std::string(comment.substr(b, e - b));
}

std::string HeartbeatPath(std::string_view comment, uint32_t job) {
  std::string p = CommentValue(comment, "heartbeat");
  for (size_t at = p.find("%j"); at != std::string::npos; at = p.find("%j", at)) {
    const std::string id = std::to_string(job);
    p.replace(at, 2, id);
    at += id.size();
  }
  return p;
}

Duration HangAfter(std::string_view comment) {
  auto d = ParseDurationText(CommentValue(comment, "hang"));
  return d.ok() && *d > 0 ? *d : -1;
}

Time LastBeat(const std::string& path) {
  struct stat st;
  if (path.empty() || stat(path.c_str(), &st) != 0) return kNoTime;
  return static_cast<Time>(st.st_mtim.tv_sec);
}


}  // namespace orrery::live
