// libFuzzer target: diagnosis and the rule-file parser. The first byte picks: odd = parse the
// rest as a rule file (must give rules or a located error "<fuzz>:line:col: ..."), even =
// diagnose the rest as a log (must give a category of the closed set, evidence lines of
// bounded size, `unknown` from a rule only when the rule is weaker than unknown_below, and never
// crash on binary data, huge lines or invalid UTF-8).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "logs/diagnose.h"

using namespace orrery::logs;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) {
    auto r = ParseRules(text, "<fuzz>");
    if (!r.ok() && r.error().message.rfind("<fuzz>", 0) != 0) __builtin_trap();
    if (r.ok() && r->rules.empty()) __builtin_trap();
    return 0;
  }
  static const Diagnoser kDiagnoser;
  Diagnosis d = kDiagnoser.Diagnose(text);
  if (d.evidence.size() > 4) __builtin_trap();
  for (const std::string& e : d.evidence)
    if (e.size() > 403) __builtin_trap();
  // Unknown with a deciding rule only when that rule's evidence is weak (below unknown_below).
  if (d.category == Category::kUnknown && d.source != DiagnosisSource::kNone &&
      d.confidence >= kDiagnoser.rules().unknown_below)
    __builtin_trap();
  return 0;
}
