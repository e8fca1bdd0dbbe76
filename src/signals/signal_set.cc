#include "signals/signal_set.h"

namespace orrery::signals {

namespace {

std::string NameOf(const std::string& spec) { return spec.substr(0, spec.find(':')); }

// The value of parameter `key` in spec's "name:k=v,k=v" ("" when absent).
std::string ParamOf(const std::string& spec, const std::string& key) {
  const size_t colon = spec.find(':');
  if (colon == std::string::npos) return "";
  std::string found;
  size_t pos = colon + 1;
  while (pos <= spec.size()) {
    const size_t comma = spec.find(',', pos);
    const std::string item = spec.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item.rfind(key + "=", 0) == 0) found = item.substr(key.size() + 1);  // the last one wins (as MakePolicy)
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return found;
}

}  // namespace

Result<SignalSet> ParseSignalSet(const std::string& list) {
  SignalSet s;
  if (list.empty() || list == "none") return s;
  size_t pos = 0;
  while (pos <= list.size()) {
    const size_t comma = list.find(',', pos);
    const std::string item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item == "advisor") {
      s.advisor = true;
    } else if (item == "tracker") {
      s.tracker = true;
    } else {
      return MakeError("--signals: expected a list of advisor, tracker (or none), got \"" + item + "\"");
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return s;
}

bool ReadsEstimate(const std::string& spec) {
  const std::string name = NameOf(spec);
  return name == "qssf" || name == "easy" || name == "srtf";
}

Result<std::string> WithAdvisor(const std::string& spec) {
  if (!ReadsEstimate(spec)) return spec;
  const std::string est = ParamOf(spec, "estimator");
  if (est.rfind("semantic", 0) == 0) return spec;
  if (!est.empty())
    return MakeError("--signals advisor: policy '" + spec + "' already names estimator=" + est +
                     " (the advisor is estimator=semantic; drop one of them)");
  return spec + (spec.find(':') == std::string::npos ? ":" : ",") + "estimator=semantic";
}

}  // namespace orrery::signals
