#include "sched/plugins/policy_registry.h"

#include <cctype>
#include <set>

namespace orrery {

std::string_view LiveSupportName(LiveSupport s) {
  switch (s) {
    case LiveSupport::kLive: return "yes";
    case LiveSupport::kSomeSettings: return "some settings";
    case LiveSupport::kSimulatorOnly: return "no";
  }
  return "?";
}

const PolicyInfo* FindPolicy(std::string_view name) {
  for (const PolicyInfo& p : Policies())
    if (p.name == name) return &p;
  return nullptr;
}

std::string PolicyNameList() {
  std::string s;
  for (const PolicyInfo& p : Policies()) s += (s.empty() ? "" : ", ") + std::string(p.name);
  return s;
}

namespace {

// "|" inside a Markdown table cell.
std::string Cell(std::string_view text) {
  std::string s;
  for (char c : text) s += c == '|' ? std::string("\\|") : std::string(1, c);
  return s;
}

void OptionTable(OptionSchema options, std::string* out) {
  *out += "| key | values, default | what it does |\n|---|---|---|\n";
  for (const OptionSpec& o : options)
    *out += "| `" + std::string(o.key) + "` | " + Cell(TypeText(o)) + " | " + Cell(o.help) + " |\n";
}

void PolicySection(const PolicyInfo& p, std::string* out) {
  std::string summary(p.summary);
  if (!summary.empty()) summary[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(summary[0])));
  *out += "\n## `" + std::string(p.name) + "`\n\n" + summary + ".\n\n";
  *out += "orrery serve: " + std::string(LiveSupportName(p.live));
  if (!p.live_note.empty()) *out += " (" + std::string(p.live_note) + ")";
  *out += ".\n\n";
  if (p.options.empty()) {
    *out += "No options of its own.\n";
    return;
  }
  OptionTable(p.options, out);
  std::set<std::string_view> own;
  for (const OptionSpec& o : p.options) own.insert(o.key);
  std::string overrides;
  for (const OptionSpec& o : CommonPolicyOptions())
    if (own.count(o.key)) overrides += (overrides.empty() ? "`" : ", `") + std::string(o.key) + "`";
  if (!overrides.empty()) *out += "\nIts own default replaces the common one for " + overrides + ".\n";
}

}  // namespace

std::string PolicyListMarkdown() {
  std::string out =
      "# Policies\n\n"
      "Generated from the policy registry (`src/sched/plugins/policies.cc`): `orrery simulate --list-policies`\n"
      "prints this text, and a test keeps this file equal to it.\n\n"
      "A policy is given as `name[:key=value,...]`: to `orrery simulate --policy` (several, comma-separated,\n"
      "are simulated side by side: `--policy fifo,easy:estimator=oracle,bf_max_job_test=10`) and as\n"
      "`[policy] spec` of `orrery serve`. A key the policy does not know is an error that names its column\n"
      "and the keys the policy knows. `default unset` means the policy's own behaviour (see its text).\n\n"
      "| policy | what it does | orrery serve |\n|---|---|---|\n";
  for (const PolicyInfo& p : Policies())
    out += "| `" + std::string(p.name) + "` | " + Cell(p.summary) + " | " + std::string(LiveSupportName(p.live)) + " |\n";
  out += "\n## Options every policy takes\n\n";
  OptionTable(CommonPolicyOptions(), &out);
  for (const PolicyInfo& p : Policies()) PolicySection(p, &out);
  return out;
}

}  // namespace orrery
