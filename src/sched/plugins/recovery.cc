#include "sched/plugins/recovery.h"

#include <charconv>

#include "sched/framework/api/decision.h"
#include "sched/plugins/policies.h"

namespace orrery {

Result<Duration> ParseDurationText(std::string_view text) {
  int64_t scale = 1;
  std::string_view num = text;
  if (!text.empty()) {
    switch (text.back()) {
      case 's': scale = 1; break;
      case 'm': scale = 60; break;
      case 'h': scale = 3600; break;
      case 'd': scale = 86400; break;
      default: scale = 0; break;
    }
    if (scale != 0) num.remove_suffix(1); else scale = 1;
  }
  double v = 0;
  const auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
  if (num.empty() || ec != std::errc() || p != num.data() + num.size() || !(v >= 0) || v * scale > 1e12)
    return MakeError("expected a duration such as 90, 30s, 5m, 3h or 2d, got \"" + std::string(text) + "\"");
  return static_cast<Duration>(v * static_cast<double>(scale) + 0.5);
}

namespace {

Status SetDuration(const std::string& key, const std::string& value, Duration* out) {
  Result<Duration> d = ParseDurationText(value);
  if (!d) return d.error().With("recovery key '" + key + "'");
  *out = *d;
  return Status::Ok();
}

Status SetCount(const std::string& key, const std::string& value, int64_t max, int64_t* out) {
  int64_t v = -1;
  const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || p != value.data() + value.size() || v < 0 || v > max)
    return MakeError("recovery key '" + key + "': expected an integer in [0, " + std::to_string(max) + "], got \"" +
                     value + "\"");
  *out = v;
  return Status::Ok();
}

Error UnknownKey(std::string_view policy, const std::string& key, std::string_view keys) {
  return MakeError("recovery policy '" + std::string(policy) + "': unknown key '" + key + "' (keys: " +
                   std::string(keys) + ")");
}

Result<RecoveryPolicy> MakeNone(const PluginSpec& s) {
  RecoveryNone p;
  for (const auto& [k, v] : s.params) {
    if (k == "human") ORR_RETURN_IF_ERROR(SetDuration(k, v, &p.human));
    else if (k == "watchdog") ORR_RETURN_IF_ERROR(SetDuration(k, v, &p.watchdog));
    else if (k == "reschedule") ORR_RETURN_IF_ERROR(SetDuration(k, v, &p.reschedule));
    else return UnknownKey("none", k, "human, watchdog, reschedule");
  }
  return RecoveryPolicy{p};
}

Result<RecoveryPolicy> MakeRequeue(const PluginSpec& s) {
  RecoveryRequeue p;
  for (const auto& [k, v] : s.params) {
    if (k == "from") {
      if (v != "scratch" && v != "checkpoint")
        return MakeError("recovery key 'from': expected scratch or checkpoint, got \"" + v + "\"");
      p.from_checkpoint = v == "checkpoint";
    } else if (k == "detect") ORR_RETURN_IF_ERROR(SetDuration(k, v, &p.detect));
    else if (k == "watchdog") ORR_RETURN_IF_ERROR(SetDuration(k, v, &p.watchdog));
    else if (k == "human") ORR_RETURN_IF_ERROR(SetDuration(k, v, &p.human));
    else if (k == "reschedule") ORR_RETURN_IF_ERROR(SetDuration(k, v, &p.reschedule));
    else if (k == "max_requeues") {
      int64_t n = 0;
      ORR_RETURN_IF_ERROR(SetCount(k, v, 1000, &n));
      p.max_requeues = static_cast<int>(n);
    } else return UnknownKey("requeue", k, "from, detect, watchdog, human, reschedule, max_requeues");
  }
  return RecoveryPolicy{p};
}

Result<RecoveryPolicy> MakeAcme(const PluginSpec& s) {
  RecoveryAcme p;
  for (const auto& [k, v] : s.params) {
    if (k == "spares") {
      int64_t n = 0;
      ORR_RETURN_IF_ERROR(SetCount(k, v, 100000, &n));
      p.spares = static_cast<uint32_t>(n);
    } else if (k == "detect") ORR_RETURN_IF_ERROR(SetDuration(k, v, &p.detect));
    else if (k == "hang_detect") ORR_RETURN_IF_ERROR(SetDuration(k, v, &p.hang_detect));
    else if (k == "diagnose") ORR_RETURN_IF_ERROR(SetDuration(k, v, &p.diagnose));
    else if (k == "swap") ORR_RETURN_IF_ERROR(SetDuration(k, v, &p.swap));
    else if (k == "reschedule") ORR_RETURN_IF_ERROR(SetDuration(k, v, &p.reschedule));
    else if (k == "human") ORR_RETURN_IF_ERROR(SetDuration(k, v, &p.human));
    else if (k == "reinit") ORR_RETURN_IF_ERROR(SetDuration(k, v, &p.reinit));
    else if (k == "restart") {
      if (v != "job" && v != "in-job")
        return MakeError("recovery key 'restart': expected job or in-job, got \"" + v + "\"");
      p.restart = v == "job" ? RestartScope::kJob : RestartScope::kInJob;
    } else if (k == "overlap") {
      if (v != "true" && v != "false")
        return MakeError("recovery key 'overlap': expected true or false, got \"" + v + "\"");
      p.overlap = v == "true";
    } else
      return UnknownKey("acme", k,
                        "spares, detect, hang_detect, diagnose, swap, reschedule, human, restart, reinit, overlap");
  }
  return RecoveryPolicy{p};
}

// How long a fault runs unnoticed: hangs until the watchdog, loss spikes until someone (or
// something) looks at the loss curve, crashes at once.
Duration Unnoticed(FaultCause c, Duration crash, Duration watchdog, Duration loss) {
  switch (c) {
    case FaultCause::kHang: return watchdog;
    case FaultCause::kLossSpike: return loss;
    case FaultCause::kGpu:
    case FaultCause::kHbm:
    case FaultCause::kNvlink:
    case FaultCause::kNic:
    case FaultCause::kHost:
    case FaultCause::kFramework:
    case FaultCause::kScript:
      return crash;
  }
  return crash;  // unreachable
}

RecoveryAction DecideNone(const RecoveryNone& p, FaultCause c) {
  RecoveryAction a;
  a.automatic = false;
  a.detect = Unnoticed(c, 0, p.watchdog, p.human);
  a.diagnose = p.human;
  a.reschedule = p.reschedule;
  a.reschedule_cold = p.reschedule;
  return a;
}

RecoveryAction DecideRequeue(const RecoveryRequeue& p, FaultCause c, int repeats) {
  RecoveryAction a;
  a.from_checkpoint = p.from_checkpoint;
  a.detect = Unnoticed(c, p.detect, p.watchdog + p.detect, p.human);
  a.reschedule = p.reschedule;
  a.reschedule_cold = p.reschedule;
  // A loss spike is no error to the RM, and a script error that keeps failing is held: a person acts.
  if (c == FaultCause::kLossSpike || (c == FaultCause::kScript && repeats >= p.max_requeues)) {
    a.automatic = false;
    a.diagnose = p.human;
  }
  return a;
}

RecoveryAction DecideAcme(const RecoveryAcme& p, FaultCause c) {
  RecoveryAction a;
  a.detect = Unnoticed(c, p.detect, p.hang_detect, p.detect);
  a.diagnose = p.diagnose;
  a.reschedule = p.swap;  // the same (or swapped) nodes restart
  a.in_job = p.restart == RestartScope::kInJob;
  a.reinit = p.reinit;
  a.overlap = p.overlap;
  a.reschedule_cold = p.reschedule;
  if (IsNodeFault(c)) {
    a.cordon = true;
    a.use_spare = p.spares > 0;
    if (!a.use_spare) {
      a.reschedule = p.reschedule;
      a.in_job = false;  // no warm standby to take the node's ranks: the job is relaunched
    }
  }
  if (c == FaultCause::kScript) {  // a retry would fail again: the user fixes it
    a.retry = false;
    a.automatic = false;
    a.diagnose = p.diagnose + p.human;
    a.in_job = false;  // the fixed code is a new launch
  }
  return a;
}

}  // namespace

Result<RecoveryPolicy> MakeRecovery(const std::string& spec) {
  Result<PluginSpec> s = ParsePluginSpec(spec, "recovery policy");
  if (!s) return s.error();
  if (s->name == "none") return MakeNone(*s);
  if (s->name == "requeue") return MakeRequeue(*s);
  if (s->name == "acme") return MakeAcme(*s);
  return MakeError("unknown recovery policy '" + s->name + "' (choices: none, requeue, acme)");
}

std::string_view RecoveryName(const RecoveryPolicy& p) {
  return std::visit(Overloaded{[](const RecoveryNone&) { return std::string_view("none"); },
                               [](const RecoveryRequeue&) { return std::string_view("requeue"); },
                               [](const RecoveryAcme&) { return std::string_view("acme"); }},
                    p);
}

RecoveryAction Decide(const RecoveryPolicy& p, FaultCause cause, int repeats) {
  return std::visit(Overloaded{[&](const RecoveryNone& x) { return DecideNone(x, cause); },
                               [&](const RecoveryRequeue& x) { return DecideRequeue(x, cause, repeats); },
                               [&](const RecoveryAcme& x) { return DecideAcme(x, cause); }},
                    p);
}

}  // namespace orrery
