#include "logs/rules.h"

#include <cctype>

#include <algorithm>

#include <toml.hpp>

#include "base/io.h"
#include "logs/default_rules_toml.h"
#include "base/toml_text.h"

namespace orrery::logs {

std::string_view CategoryName(Category c) {
  switch (c) {
    case Category::kInfrastructure: return "infrastructure";
    case Category::kFramework: return "framework";
    case Category::kScript: return "script";
    case Category::kUnknown: return "unknown";
  }
  return "unknown";
}

std::optional<Category> ParseCategory(std::string_view s) {
  if (s == "infrastructure") return Category::kInfrastructure;
  if (s == "framework") return Category::kFramework;
  if (s == "script") return Category::kScript;
  return std::nullopt;
}

std::optional<SuspectKind> ParseSuspectKind(std::string_view s) {
  if (s == "none") return SuspectKind::kNone;
  if (s == "pci") return SuspectKind::kPci;
  if (s == "nccl_host") return SuspectKind::kNcclHost;
  if (s == "slurm_node") return SuspectKind::kSlurmNode;
  if (s == "storage_server") return SuspectKind::kStorageServer;
  return std::nullopt;
}

std::string_view SuspectKindName(SuspectKind k) {
  switch (k) {
    case SuspectKind::kNone: return "none";
    case SuspectKind::kPci: return "pci";
    case SuspectKind::kNcclHost: return "nccl_host";
    case SuspectKind::kSlurmNode: return "slurm_node";
    case SuspectKind::kStorageServer: return "storage_server";
  }
  return "none";
}

namespace {

using TV = toml::value;

const std::vector<std::string> kRootKeys = {"diagnose", "rule"};
const std::vector<std::string> kSettingsKeys = {"tie_break", "keep_first", "tail_lines", "llm_below", "unknown_below"};
const std::vector<std::string> kRuleKeys = {"name",   "category", "subtype",   "retry",  "priority", "confidence",
                                            "any",    "all",      "unless",    "exception", "near",  "window",
                                            "min_count", "suspect", "why", "case_sensitive"};

struct Ctx {
  const std::string& file;
  Error At(const TV& v, const std::string& msg) const {
    auto loc = v.location();
    return MakeError(file + ":" + std::to_string(loc.line()) + ":" + std::to_string(loc.column()) + ": " + msg);
  }
  Error At(uint32_t line, uint32_t col, const std::string& msg) const {
    return MakeError(file + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + msg);
  }
};

std::string Got(const TV& v) {
  if (v.is_string()) return "the string \"" + v.as_string().str.substr(0, 40) + "\"";
  if (v.is_integer()) return std::to_string(v.as_integer());
  if (v.is_floating()) return std::to_string(v.as_floating());
  if (v.is_boolean()) return v.as_boolean() ? "true" : "false";
  if (v.is_array()) return "an array";
  if (v.is_table()) return "a table";
  return "a date/time";
}

std::string Join(const std::vector<std::string>& keys) {
  std::string s;
  for (size_t i = 0; i < keys.size(); ++i) s += (i ? ", " : "") + keys[i];
  return s;
}

Status CheckKeys(const Ctx& c, const TV& table, const std::string& where, const std::vector<std::string>& allowed) {
  for (const auto& [k, v] : table.as_table()) {
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end())
      return c.At(v, "unknown key '" + k + "' in " + where + " (expected one of: " + Join(allowed) + ")");
  }
  return Status::Ok();
}

const TV* Find(const TV& table, const std::string& key) {
  const auto& t = table.as_table();
  auto it = t.find(key);
  return it == t.end() ? nullptr : &it->second;
}

Result<std::string> String(const Ctx& c, const TV& v, const std::string& what) {
  if (!v.is_string()) return c.At(v, what + ": expected a string, got " + Got(v));
  return v.as_string().str;
}

Result<std::vector<std::string>> StringList(const Ctx& c, const TV& v, const std::string& what) {
  if (!v.is_array()) return c.At(v, what + ": expected an array of strings, got " + Got(v));
  std::vector<std::string> out;
  for (const TV& e : v.as_array()) {
    if (!e.is_string()) return c.At(e, what + ": expected an array of strings, got an element " + Got(e));
    if (e.as_string().str.empty()) return c.At(e, what + ": expected non-empty strings, got \"\"");
    out.push_back(e.as_string().str);
  }
  return out;
}

Result<int64_t> Integer(const Ctx& c, const TV& v, const std::string& what, int64_t lo, int64_t hi) {
  if (!v.is_integer() || v.as_integer() < lo || v.as_integer() > hi)
    return c.At(v, what + ": expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                       Got(v));
  return static_cast<int64_t>(v.as_integer());
}

Result<double> Fraction(const Ctx& c, const TV& v, const std::string& what) {
  double d = v.is_floating() ? v.as_floating() : v.is_integer() ? static_cast<double>(v.as_integer()) : -1;
  if ((!v.is_floating() && !v.is_integer()) || !(d >= 0 && d <= 1))
    return c.At(v, what + ": expected a number in [0, 1], got " + Got(v));
  return d;
}

bool IsSnakeCase(const std::string& s) {
  if (s.empty() || s.size() > 48) return false;
  if (!(s[0] >= 'a' && s[0] <= 'z')) return false;
  return std::all_of(s.begin(), s.end(), [](char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_'; });
}

Status ParseSettings(const Ctx& c, const TV& t, RuleSet* rs) {
  if (!t.is_table()) return c.At(t, "[diagnose]: expected a table, got " + Got(t));
  ORR_RETURN_IF_ERROR(CheckKeys(c, t, "[diagnose]", kSettingsKeys));
  if (const TV* v = Find(t, "tie_break")) {
    ORR_ASSIGN_OR_RETURN(std::string s, String(c, *v, "[diagnose] tie_break"));
    if (s == "chain_root") rs->tie_break = TieBreak::kChainRoot;
    else if (s == "first") rs->tie_break = TieBreak::kFirst;
    else if (s == "last") rs->tie_break = TieBreak::kLast;
    else return c.At(*v, "[diagnose] tie_break: expected one of chain_root, first, last, got \"" + s + "\"");
  }
  if (const TV* v = Find(t, "keep_first")) {
    ORR_ASSIGN_OR_RETURN(int64_t k, Integer(c, *v, "[diagnose] keep_first", 1, 100));
    rs->compress.keep_first = static_cast<uint32_t>(k);
  }
  if (const TV* v = Find(t, "tail_lines")) {
    ORR_ASSIGN_OR_RETURN(int64_t k, Integer(c, *v, "[diagnose] tail_lines", 0, 10000));
    rs->compress.tail_lines = static_cast<uint32_t>(k);
  }
  if (const TV* v = Find(t, "llm_below")) {
    ORR_ASSIGN_OR_RETURN(rs->llm_below, Fraction(c, *v, "[diagnose] llm_below"));
  }
  if (const TV* v = Find(t, "unknown_below")) {
    ORR_ASSIGN_OR_RETURN(rs->unknown_below, Fraction(c, *v, "[diagnose] unknown_below"));
  }
  return Status::Ok();
}

Status ParseMatchers(const Ctx& c, const TV& t, const std::string& w, Rule* r) {
  struct ListKey {
    const char* key;
    std::vector<std::string>* out;
  };
  for (ListKey lk : {ListKey{"any", &r->any}, ListKey{"all", &r->all}, ListKey{"unless", &r->unless},
                     ListKey{"exception", &r->exception}, ListKey{"near", &r->near}}) {
    if (const TV* v = Find(t, lk.key)) {
      ORR_ASSIGN_OR_RETURN(*lk.out, StringList(c, *v, w + " key '" + lk.key + "'"));
    }
  }
  if (r->any.empty() && r->exception.empty())
    return c.At(t, w + ": needs a non-empty 'any' or 'exception' list (what a matching line contains)");
  if (const TV* v = Find(t, "window")) {
    ORR_ASSIGN_OR_RETURN(int64_t k, Integer(c, *v, w + " key 'window'", 0, 1000));
    r->window = static_cast<uint32_t>(k);
  }
  if (!r->near.empty() && r->window == 0) return c.At(t, w + ": 'near' needs 'window' (kept lines looked back) ≥ 1");
  if (const TV* v = Find(t, "min_count")) {
    ORR_ASSIGN_OR_RETURN(int64_t k, Integer(c, *v, w + " key 'min_count'", 1, 1000000));
    r->min_count = static_cast<uint32_t>(k);
  }
  if (const TV* v = Find(t, "case_sensitive")) {
    if (!v->is_boolean()) return c.At(*v, w + " key 'case_sensitive': expected true or false, got " + Got(*v));
    r->case_sensitive = v->as_boolean();
  }
  if (!r->case_sensitive) {
    for (auto* list : {&r->any, &r->all, &r->unless, &r->near})
      for (std::string& s : *list) s = AsciiLower(s);
  }
  return Status::Ok();
}

Status ParseOutcome(const Ctx& c, const TV& t, const std::string& w, Rule* r) {
  const TV* cat = Find(t, "category");
  if (cat == nullptr) return c.At(t, w + ": missing required key 'category' (infrastructure, framework or script)");
  ORR_ASSIGN_OR_RETURN(std::string cs, String(c, *cat, w + " key 'category'"));
  auto pc = ParseCategory(cs);
  if (!pc) return c.At(*cat, w + " key 'category': expected one of infrastructure, framework, script, got \"" + cs + "\"");
  r->category = *pc;
  const TV* sub = Find(t, "subtype");
  if (sub == nullptr) return c.At(t, w + ": missing required key 'subtype' (a snake_case name)");
  ORR_ASSIGN_OR_RETURN(r->subtype, String(c, *sub, w + " key 'subtype'"));
  if (!IsSnakeCase(r->subtype))
    return c.At(*sub, w + " key 'subtype': expected snake_case ([a-z][a-z0-9_]*, at most 48 bytes), got \"" + r->subtype + "\"");
  const TV* retry = Find(t, "retry");
  if (retry == nullptr) return c.At(t, w + ": missing required key 'retry' (true or false)");
  if (!retry->is_boolean()) return c.At(*retry, w + " key 'retry': expected true or false, got " + Got(*retry));
  r->retry = retry->as_boolean();
  if (const TV* v = Find(t, "priority")) {
    ORR_ASSIGN_OR_RETURN(int64_t p, Integer(c, *v, w + " key 'priority'", 0, 1000));
    r->priority = static_cast<int>(p);
  }
  if (const TV* v = Find(t, "confidence")) {
    ORR_ASSIGN_OR_RETURN(r->confidence, Fraction(c, *v, w + " key 'confidence'"));
  }
  if (const TV* v = Find(t, "suspect")) {
    ORR_ASSIGN_OR_RETURN(std::string s, String(c, *v, w + " key 'suspect'"));
    auto k = ParseSuspectKind(s);
    if (!k) return c.At(*v, w + " key 'suspect': expected one of none, pci, nccl_host, slurm_node, got \"" + s + "\"");
    r->suspect = *k;
  }
  if (const TV* v = Find(t, "why")) {
    ORR_ASSIGN_OR_RETURN(r->why, String(c, *v, w + " key 'why'"));
  }
  return Status::Ok();
}

Result<Rule> ParseRule(const Ctx& c, const TV& t, size_t index) {
  std::string w = "[[rule]] #" + std::to_string(index + 1);
  if (!t.is_table()) return c.At(t, w + ": expected a table, got " + Got(t));
  ORR_RETURN_IF_ERROR(CheckKeys(c, t, w, kRuleKeys));
  Rule r;
  r.line = static_cast<uint32_t>(t.location().line());
  const TV* name = Find(t, "name");
  if (name == nullptr) return c.At(t, w + ": missing required key 'name'");
  ORR_ASSIGN_OR_RETURN(r.name, String(c, *name, w + " key 'name'"));
  if (r.name.empty()) return c.At(*name, w + " key 'name': expected a non-empty string");
  w = "rule '" + r.name + "'";
  ORR_RETURN_IF_ERROR(ParseOutcome(c, t, w, &r));
  ORR_RETURN_IF_ERROR(ParseMatchers(c, t, w, &r));
  return r;
}

}  // namespace

Result<RuleSet> ParseRules(std::string_view text, const std::string& file) {
  Ctx c{file};
  ORR_ASSIGN_OR_RETURN(TV root, ParseToml(text, file));
  if (!root.is_table()) return c.At(1, 1, "expected a TOML table at top level");
  ORR_RETURN_IF_ERROR(CheckKeys(c, root, "the top-level table", kRootKeys));
  RuleSet rs;
  rs.source = file;
  if (const TV* s = Find(root, "diagnose")) ORR_RETURN_IF_ERROR(ParseSettings(c, *s, &rs));
  const TV* rules = Find(root, "rule");
  if (rules == nullptr || !rules->is_array() || rules->as_array().empty())
    return c.At(1, 1, "no [[rule]] tables: a rule file needs at least one rule");
  const auto& arr = rules->as_array();
  for (size_t i = 0; i < arr.size(); ++i) {
    ORR_ASSIGN_OR_RETURN(Rule r, ParseRule(c, arr[i], i));
    for (const Rule& o : rs.rules)
      if (o.name == r.name)
        return c.At(arr[i], "rule '" + r.name + "': name already used by the rule at line " + std::to_string(o.line));
    rs.rules.push_back(std::move(r));
  }
  return rs;
}

Result<RuleSet> LoadRules(const std::string& path) {
  ORR_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseRules(text, path);
}

const RuleSet& DefaultRules() {
  static const RuleSet kRules = [] {
    auto r = ParseRules(kEmbeddedDiagnoseRulesToml, "<embedded diagnose-rules.toml>");
    ORR_CHECK(r.ok());  // the embedded file is tested (rules_test.cc)
    return std::move(r).value();
  }();
  return kRules;
}

RuleSet MergeRules(RuleSet base, const RuleSet& extra) {
  for (const Rule& r : extra.rules) {
    auto it = std::find_if(base.rules.begin(), base.rules.end(), [&](const Rule& b) { return b.name == r.name; });
    if (it != base.rules.end()) *it = r;
    else base.rules.push_back(r);
  }
  base.source += " + " + extra.source;
  return base;
}

namespace {

bool IsIdent(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '.';
}

// The exception class ending at `end` (exclusive) if the text there is one.
std::string_view ExceptionAt(std::string_view line, size_t end) {
  if (end < line.size() && line[end] != ':') return {};
  size_t s = end;
  while (s > 0 && IsIdent(line[s - 1])) --s;
  if (s > 0 && !(line[s - 1] == ' ' || line[s - 1] == '\t' || line[s - 1] == ']' || line[s - 1] == '>' ||
                 line[s - 1] == ':' || line[s - 1] == '`')) {
    return {};
  }
  std::string_view name = line.substr(s, end - s);
  size_t dot = name.rfind('.');
  if (dot != std::string_view::npos) name.remove_prefix(dot + 1);
  if (name.empty() || !(name[0] >= 'A' && name[0] <= 'Z')) return {};
  std::string_view before = line.substr(0, s);
  while (!before.empty() && (before.back() == ' ' || before.back() == '\t')) before.remove_suffix(1);
  for (std::string_view kw : {"except", "raise", "import", "class", "def"}) {
    if (before.size() >= kw.size() && before.substr(before.size() - kw.size()) == kw) return {};
  }
  return name;
}

}  // namespace

std::string AsciiLower(std::string_view s) {
  std::string o(s);
  for (char& ch : o)
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  return o;
}

std::string_view PythonException(std::string_view line) {
  for (std::string_view suffix : {"Error", "Exception", "Interrupt", "Exit"}) {
    size_t p = line.find(suffix);
    while (p != std::string_view::npos) {
      std::string_view name = ExceptionAt(line, p + suffix.size());
      if (!name.empty()) return name;
      p = line.find(suffix, p + 1);
    }
  }
  return {};
}

namespace {

bool IsHexChar(char ch) { return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F'); }
bool IsHostChar(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' ||
         ch == '_';
}

bool IsPciAt(std::string_view r) {  // dddd:bb:dd
  bool ok = r.size() >= 10 && r[4] == ':' && r[7] == ':';
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) ok = ok && i < r.size() && IsHexChar(r[i]);
  return ok && (r.size() == 10 || !IsHexChar(r[10]));
}

// "gpu-n08: ..." (pdsh, the deepspeed launcher, mpirun --tag-output style): the host that
// printed the line. A name of lowercase letters, digits, '-' and '.', with a letter and a digit.
std::string HostPrefix(std::string_view line) {
  size_t i = 0;
  bool letter = false, digit = false;
  while (i < line.size() && (std::islower(static_cast<unsigned char>(line[i])) || std::isdigit(static_cast<unsigned char>(line[i])) ||
                             line[i] == '-' || line[i] == '.')) {
    letter = letter || std::islower(static_cast<unsigned char>(line[i]));
    digit = digit || std::isdigit(static_cast<unsigned char>(line[i]));
    ++i;
  }
  if (i < 2 || !letter || !digit || line.substr(i, 2) != ": ") return "";
  return std::string(line.substr(0, i));
}

std::string Pci(std::string_view line) {
  size_t p = line.find("PCI:");
  while (p != std::string_view::npos) {
    std::string_view r = line.substr(p + 4);
    if (IsPciAt(r)) return "PCI:" + std::string(r.substr(0, 10));
    p = line.find("PCI:", p + 4);
  }
  // The kernel's PCIe error reports name the device bare ("nvidia 0000:41:00.0: AER: ...",
  // "AER: ... error received: 0000:41:00.0"); a PCIe port ("pcieport 0000:40:01.1") is the bridge
  // that reports it, not the device. (NVRM's own lines are read by their "PCI:" form only.)
  if (line.find("AER") == std::string_view::npos) return "";
  for (size_t i = 0; i + 10 <= line.size(); ++i) {
    if (!IsPciAt(line.substr(i)) || (i > 0 && (IsHexChar(line[i - 1]) || line[i - 1] == ':'))) continue;
    std::string_view before = line.substr(0, i);
    while (!before.empty() && before.back() == ' ') before.remove_suffix(1);
    if (before.size() >= 8 && before.substr(before.size() - 8) == "pcieport") continue;
    size_t end = i + 10;
    if (end + 1 < line.size() && line[end] == '.' && std::isdigit(static_cast<unsigned char>(line[end + 1]))) end += 2;
    std::string id(line.substr(i, end - i));
    std::string host = HostPrefix(line);
    return host.empty() ? id : host + "," + id;
  }
  return "";
}

// The server of a network file system that stopped answering: Lustre's "(at 10.20.0.12@o2ib)"
// or "Connection restored to 10.20.0.12@o2ib", NFS's "nfs: server fs01 not responding".
std::string StorageServer(std::string_view line) {
  for (std::string_view lnet : {"@o2ib", "@tcp"}) {
    size_t p = line.find(lnet);
    if (p == std::string_view::npos) continue;
    size_t b = p;
    while (b > 0 && (std::isdigit(static_cast<unsigned char>(line[b - 1])) || line[b - 1] == '.')) --b;
    if (b < p) return std::string(line.substr(b, p - b));
  }
  if (size_t p = line.find("nfs: server "); p != std::string_view::npos) {
    size_t b = p + 12, e = b;
    while (e < line.size() && IsHostChar(line[e])) ++e;
    if (e > b) return std::string(line.substr(b, e - b));
  }
  return "";
}

std::string NcclHost(std::string_view line) {
  // "host:pid:tid [dev] NCCL": a host name, then ':' digits ':' digits ' ['.
  size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  size_t h = i;
  while (i < line.size() && IsHostChar(line[i])) ++i;
  if (i == h || i >= line.size() || line[i] != ':') return "";
  size_t host_end = i;
  for (int part = 0; part < 2; ++part) {
    ++i;
    size_t d = i;
    while (i < line.size() && line[i] >= '0' && line[i] <= '9') ++i;
    if (i == d) return "";
    if (part == 0 && (i >= line.size() || line[i] != ':')) return "";
  }
  if (line.substr(i, 2) != " [") return "";
  return std::string(line.substr(h, host_end - h));
}

std::string HostAfter(std::string_view line, std::string_view marker, std::string_view must_follow) {
  size_t p = line.find(marker);
  if (p == std::string_view::npos) return "";
  size_t i = p + marker.size();
  size_t h = i;
  while (i < line.size() && IsHostChar(line[i])) ++i;
  if (i == h) return "";
  if (!must_follow.empty() && line.substr(i, must_follow.size()) != must_follow) return "";
  return std::string(line.substr(h, i - h));
}

std::string SlurmNode(std::string_view line) {
  for (auto [marker, follow] : {std::pair<std::string_view, std::string_view>{" ON ", " CANCELLED"},
                                {"Node failure on ", ""},
                                {"srun: error: ", ": task"},
                                {"failed on node ", ""},
                                {"NodeName=", ""}}) {
    std::string h = HostAfter(line, marker, follow);
    while (!h.empty() && h.back() == '.') h.pop_back();
    if (!h.empty()) return h;
  }
  return "";
}

}  // namespace

std::string ExtractSuspect(SuspectKind kind, std::string_view line) {
  switch (kind) {
    case SuspectKind::kNone: return "";
    case SuspectKind::kPci: return Pci(line);
    case SuspectKind::kNcclHost: return NcclHost(line);
    case SuspectKind::kSlurmNode: return SlurmNode(line);
    case SuspectKind::kStorageServer: return StorageServer(line);
  }
  return "";
}

}  // namespace orrery::logs
