// Readers: one per format, each reducing a file to a Document (document.h).
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <toml.hpp>
#include <tuple>

#include "base/json_text.h"
#include "base/toml_text.h"
#include "semantic/arith.h"
#include "semantic/document.h"
#include "semantic/shell.h"
#include "semantic/strings.h"

namespace orrery::semantic {

std::string_view FormatName(Format f) {
  switch (f) {
    case Format::kShell: return "shell";
    case Format::kJson: return "json";
    case Format::kYaml: return "yaml";
    case Format::kToml: return "toml";
    case Format::kPython: return "python";
    case Format::kMarkdown: return "markdown";
  }
  return "shell";
}

std::string NormalizeKey(std::string_view key) {
  while (!key.empty() && (key.front() == '-' || key.front() == '+' || key.front() == '~')) key.remove_prefix(1);
  std::string out;
  out.reserve(key.size());
  for (char c : key) out.push_back(c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return out;
}

namespace {


// Deepest nesting of JSON/TOML/YAML flow brackets; the libraries recurse per level.
size_t BracketDepth(std::string_view text) {
  size_t depth = 0, max_depth = 0;
  for (char c : text) {
    if (c == '[' || c == '{') max_depth = std::max(max_depth, ++depth);
    if ((c == ']' || c == '}') && depth > 0) --depth;
  }
  return max_depth;
}
constexpr size_t kMaxNesting = 100;

void Warn(Document* doc, Loc l, std::string msg) {
  doc->warnings.push_back(Warning{doc->file, l.line, l.col, std::move(msg)});
}

bool LooksNumeric(std::string_view w) {
  if (w.empty()) return false;
  size_t i = (w[0] == '-' || w[0] == '+') ? 1 : 0;
  return i < w.size() && (std::isdigit(static_cast<unsigned char>(w[i])) || w[i] == '.');
}

LocText SliceText(const LocText& t, size_t b) {
  LocText out;
  out.s = t.s.substr(b);
  out.at.assign(t.at.begin() + static_cast<long>(b), t.at.end());
  return out;
}

// ---------------------------------------------------------------------------------------
// Command-line arguments -> settings.

// Options that never take a value, though a positional word may follow them.
bool IsBareFlag(std::string_view key) {
  static const std::set<std::string, std::less<>> kBare = {
      "standalone", "fp16", "bf16", "deepspeed", "multi_gpu", "use_deepspeed", "use_fsdp", "no_python", "u",
      "x", "e", "trust_remote_code", "do_train", "do_eval", "overwrite_output_dir", "gradient_checkpointing",
      "checkpoint_activations", "bash", "c", "v"};
  return kBare.count(key) > 0;
}

void AddProgram(Document* doc, std::string_view word) {
  if (word.empty() || doc->programs.size() >= 64) return;
  doc->programs.push_back(Lower(StripUnresolved(word)));
}

void AddSetting(Document* doc, const std::string& prefix, std::string_view raw_key, const ShellWord* value,
                SettingKind kind, Loc key_loc) {
  Setting s;
  s.raw_key = (kind == SettingKind::kSbatch ? "#SBATCH " : "") + std::string(raw_key);
  s.key = prefix + NormalizeKey(raw_key);
  s.kind = kind;
  if (value == nullptr) {
    s.value = "true";
    s.loc = key_loc;
  } else {
    s.value = StripUnresolved(value->text.s);
    s.loc = value->text.at.empty() ? key_loc : value->text.first();
    s.unresolved = value->unresolved;
  }
  doc->settings.push_back(std::move(s));
}

// Reads options (--key value, --key=value, -k value), Hydra-style key=value overrides and
// positional programs from a command's words.
void ArgsToSettings(const std::vector<ShellWord>& words, SettingKind kind, const std::string& prefix, Document* doc) {
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i].text.s;
    Loc at = words[i].text.first();
    if (w == "--") continue;  // end of a launcher's own options (ray job submit -- python ...)
    if (w.size() > 1 && w[0] == '-' && !LooksNumeric(w)) {
      size_t eq = w.find('=');
      if (eq != std::string::npos) {
        ShellWord v;
        v.text = SliceText(words[i].text, eq + 1);
        v.unresolved = words[i].unresolved;
        AddSetting(doc, prefix, std::string_view(w).substr(0, eq), &v, kind, at);
        continue;
      }
      std::string key = NormalizeKey(w);
      if ((key == "m" || key == "module") && i + 1 < words.size()) {  // python -m module, deepspeed --module
        AddProgram(doc, words[++i].text.s);
        continue;
      }
      // HF's `--deepspeed ds.json` takes a file where Megatron's `--deepspeed` takes nothing.
      bool bare = IsBareFlag(key) && !(i + 1 < words.size() && IsConfigPath(words[i + 1].text.s));
      bool has_value = i + 1 < words.size() && !bare &&
                       (words[i + 1].text.s.empty() || words[i + 1].text.s[0] != '-' || LooksNumeric(words[i + 1].text.s));
      AddSetting(doc, prefix, w, has_value ? &words[i + 1] : nullptr, kind, at);
      if (has_value) ++i;
      continue;
    }
    size_t eq = w.find('=');
    if (eq != std::string::npos && eq > 0 && (std::isalpha(static_cast<unsigned char>(w[0])) || w[0] == '+' || w[0] == '_')) {
      ShellWord v;
      v.text = SliceText(words[i].text, eq + 1);
      v.unresolved = words[i].unresolved;
      AddSetting(doc, prefix, std::string_view(w).substr(0, eq), &v, kind, at);
      continue;
    }
    AddProgram(doc, w);
  }
}

// Splits an expanded scalar into words on blanks (the shell's field splitting).
std::vector<ShellWord> SplitFields(const ShellWord& w) {
  std::vector<ShellWord> out;
  ShellWord cur;
  for (size_t i = 0; i < w.text.s.size(); ++i) {
    char c = w.text.s[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (!cur.text.empty()) out.push_back(std::move(cur));
      cur = ShellWord{};
      continue;
    }
    cur.text.push(c, w.text.at[i]);
    cur.unresolved = cur.unresolved || c == kUnresolvedMark;
  }
  if (!cur.text.empty()) out.push_back(std::move(cur));
  return out;
}

// ---------------------------------------------------------------------------------------
// JSON, YAML, TOML: nested keys flattened to dotted paths.

// Finds keys in document order (nlohmann::ordered_json keeps it) to give each value a line.
class JsonLocator {
 public:
  explicit JsonLocator(const LocText& text) : text_(text) {}
  Loc Find(const std::string& key) {
    std::string quoted = "\"" + key + "\"";
    size_t p = text_.s.find(quoted, cursor_);
    if (p == std::string::npos) return Loc{};
    cursor_ = p + quoted.size();
    size_t colon = text_.s.find(':', cursor_);
    size_t v = colon == std::string::npos ? p : colon + 1;
    while (v < text_.s.size() && std::isspace(static_cast<unsigned char>(text_.s[v]))) ++v;
    return v < text_.at.size() ? text_.at[v] : text_.at[p];
  }

 private:
  const LocText& text_;
  size_t cursor_ = 0;
};

std::string JsonScalar(const nlohmann::ordered_json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number_unsigned()) return std::to_string(v.get<unsigned long long>());
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v.get<double>());
  return buf;
}

void FlattenJson(const nlohmann::ordered_json& v, const std::string& path, JsonLocator& loc, Document* doc, int depth) {
  for (auto it = v.begin(); it != v.end(); ++it) {
    std::string key = path.empty() ? it.key() : path + "." + it.key();
    Loc at = loc.Find(it.key());
    if (it->is_object()) {
      if (depth < static_cast<int>(kMaxNesting)) FlattenJson(*it, key, loc, doc, depth + 1);
      continue;
    }
    if (it->is_array() || it->is_null()) continue;
    Setting s;
    s.raw_key = key;
    s.key = NormalizeKey(key);
    s.value = JsonScalar(*it);
    s.loc = at;
    s.kind = SettingKind::kConfigKey;
    doc->settings.push_back(std::move(s));
  }
}

// Where in the file a parse issue at (line, col) of the read text lies.
Loc IssueLoc(const LocText& text, const TextIssue& issue) {
  if (text.at.empty()) return Loc{1, 1};
  size_t offset = 0;
  for (uint32_t l = 1; l < issue.line && offset < text.s.size(); ++l) {
    const size_t nl = text.s.find('\n', offset);
    offset = nl == std::string::npos ? text.s.size() : nl + 1;
  }
  offset += issue.col - 1;
  if (offset < text.at.size()) return text.at[offset];
  Loc end = text.at.back();  // just past the last byte
  return text.s.back() == '\n' ? Loc{end.line + 1, 1} : Loc{end.line, end.col + 1};
}

void ReadJsonText(const LocText& text, Document* doc) {
  if (BracketDepth(text.s) > kMaxNesting) {
    Warn(doc, text.first(), "JSON nested deeper than 100 levels: not read");
    return;
  }
  auto parsed = ParseJsonTextAs<nlohmann::ordered_json>(text.s);
  if (const TextIssue* issue = std::get_if<TextIssue>(&parsed)) {
    Warn(doc, IssueLoc(text, *issue), issue->message);
    return;
  }
  const nlohmann::ordered_json& root = std::get<nlohmann::ordered_json>(parsed);
  if (!root.is_object()) {
    Warn(doc, text.first(), "expected a JSON object at top level");
    return;
  }
  JsonLocator loc(text);
  FlattenJson(root, "", loc, doc, 0);
}

LocText WholeText(std::string_view text, uint32_t base_line) {
  LocText t;
  t.s.assign(text);
  t.at.reserve(text.size());
  Loc l{base_line + 1, 1};
  for (char c : text) {
    t.at.push_back(l);
    if (c == '\n') {
      ++l.line;
      l.col = 1;
    } else {
      ++l.col;
    }
  }
  return t;
}

void FlattenYaml(const YAML::Node& node, const std::string& path, uint32_t base_line, Document* doc, int depth) {
  if (!node.IsMap() || depth > static_cast<int>(kMaxNesting)) return;
  for (const auto& kv : node) {
    const YAML::Node k = kv.first;  // copies: the iterator's pair is a temporary
    const YAML::Node v = kv.second;
    if (!k.IsScalar()) continue;
    std::string key = path.empty() ? k.Scalar() : path + "." + k.Scalar();
    if (v.IsMap()) {
      FlattenYaml(v, key, base_line, doc, depth + 1);
      continue;
    }
    if (!v.IsScalar()) continue;
    Setting s;
    s.raw_key = key;
    s.key = NormalizeKey(key);
    s.value = v.Scalar();
    YAML::Mark m = v.Mark();
    if (m.line < 0) m = k.Mark();
    s.loc = Loc{base_line + static_cast<uint32_t>(std::max(0, m.line)) + 1, static_cast<uint32_t>(std::max(0, m.column)) + 1};
    s.kind = SettingKind::kConfigKey;
    doc->settings.push_back(std::move(s));
  }
}

void ReadYamlText(std::string_view text, uint32_t base_line, Document* doc) {
  if (BracketDepth(text) > kMaxNesting) {
    Warn(doc, Loc{base_line + 1, 1}, "YAML flow collections nested deeper than 100 levels: not read");
    return;
  }
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    Warn(doc, Loc{base_line + static_cast<uint32_t>(std::max(0, e.mark.line)) + 1, static_cast<uint32_t>(std::max(0, e.mark.column)) + 1},
         "YAML syntax error: " + e.msg);
    return;
  }
  if (!root.IsMap()) {
    if (!root.IsNull()) Warn(doc, Loc{base_line + 1, 1}, "expected a YAML mapping at top level");
    return;
  }
  FlattenYaml(root, "", base_line, doc, 0);
}

std::string TomlScalar(const toml::value& v) {
  switch (v.type()) {
    case toml::value_t::boolean: return v.as_boolean() ? "true" : "false";
    case toml::value_t::integer: return std::to_string(v.as_integer());
    case toml::value_t::floating: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", v.as_floating());
      return buf;
    }
    case toml::value_t::string: return v.as_string().str;
    default: return "";
  }
}

void FlattenToml(const toml::value& node, const std::string& path, uint32_t base_line, Document* doc, int depth) {
  if (!node.is_table() || depth > static_cast<int>(kMaxNesting)) return;
  for (const auto& [k, v] : node.as_table()) {
    std::string key = path.empty() ? k : path + "." + k;
    if (v.is_table()) {
      FlattenToml(v, key, base_line, doc, depth + 1);
      continue;
    }
    std::string value = TomlScalar(v);
    if (value.empty() && !v.is_string()) continue;  // arrays, dates
    Setting s;
    s.raw_key = key;
    s.key = NormalizeKey(key);
    s.value = value;
    auto loc = v.location();
    s.loc = Loc{base_line + static_cast<uint32_t>(loc.line()), static_cast<uint32_t>(loc.column())};
    s.kind = SettingKind::kConfigKey;
    doc->settings.push_back(std::move(s));
  }
}

void ReadTomlText(std::string_view text, uint32_t base_line, Document* doc) {
  auto parsed = ParseTomlText(text, doc->file);
  if (auto* issue = std::get_if<TextIssue>(&parsed)) {
    Warn(doc, Loc{base_line + issue->line, issue->col}, issue->message + ": not read");
    return;
  }
  FlattenToml(std::get<toml::value>(parsed), "", base_line, doc, 0);
}

// ---------------------------------------------------------------------------------------
// NeMo / OmegaConf interpolation: ${path}, ${.relative}, ${multiply:a, b}.

class Interpolator {
 public:
  explicit Interpolator(Document* doc) : doc_(doc) {
    for (const Setting& s : doc->settings) values_[s.key] = s.value;
  }

  void Run() {
    for (int pass = 0; pass < 4; ++pass) {
      bool changed = false;
      for (Setting& s : doc_->settings) {
        if (s.value.find("${") == std::string::npos) continue;
        std::string r = Substitute(s.key, s.value);
        if (r != s.value) {
          s.value = r;
          values_[s.key] = r;
          changed = true;
        }
      }
      if (!changed) break;
    }
    for (Setting& s : doc_->settings) s.unresolved = s.unresolved || s.value.find("${") != std::string::npos;
  }

 private:
  std::string Substitute(const std::string& key, const std::string& value) {
    std::string out;
    size_t i = 0;
    while (i < value.size()) {
      size_t b = value.find("${", i);
      if (b == std::string::npos) break;
      size_t e = Close(value, b);
      if (e == std::string::npos) break;
      out += value.substr(i, b - i);
      auto r = Resolve(key, value.substr(b + 2, e - b - 2));
      out += r ? *r : value.substr(b, e - b + 1);
      i = e + 1;
    }
    return out + value.substr(std::min(i, value.size()));
  }

  static size_t Close(const std::string& v, size_t b) {
    int depth = 0;
    for (size_t k = b; k < v.size(); ++k) {
      if (v[k] == '{') ++depth;
      if (v[k] == '}' && --depth == 0) return k;
    }
    return std::string::npos;
  }

  std::optional<std::string> Resolve(const std::string& key, std::string_view expr) {
    expr = TrimView(expr);
    size_t colon = expr.find(':');
    if (colon != std::string_view::npos && expr.find("${") > colon) return Resolver(key, expr.substr(0, colon), expr.substr(colon + 1));
    return Lookup(key, expr);
  }

  std::optional<std::string> Lookup(const std::string& key, std::string_view ref) {
    std::string path;
    if (!ref.empty() && ref[0] == '.') {
      std::string base = key;
      size_t dots = 0;
      while (dots < ref.size() && ref[dots] == '.') ++dots;
      for (size_t d = 0; d < dots; ++d) {
        size_t p = base.rfind('.');
        base = p == std::string::npos ? "" : base.substr(0, p);
      }
      path = base.empty() ? std::string(ref.substr(dots)) : base + "." + std::string(ref.substr(dots));
    } else {
      path = std::string(ref);
    }
    path = NormalizeKey(path);
    for (int strip = 0; strip < 2 && !path.empty(); ++strip) {
      auto it = values_.find(path);
      if (it != values_.end() && it->second.find("${") == std::string::npos) return it->second;
      size_t p = path.find('.');  // the launcher's root (training.model.x) is not part of the file
      if (p == std::string::npos) break;
      path = path.substr(p + 1);
    }
    return std::nullopt;
  }

  std::optional<std::string> Resolver(const std::string& key, std::string_view name, std::string_view args) {
    if (TrimView(name) != "multiply") return std::nullopt;
    double product = 1;
    std::string rest = Substitute(key, std::string(args));
    std::stringstream ss(rest);
    std::string part;
    while (std::getline(ss, part, ',')) {
      auto v = EvalArith(TrimView(part), [](std::string_view) { return std::nullopt; }, false);
      if (!v) return std::nullopt;
      product *= *v;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", product);
    return std::string(buf);
  }

  Document* doc_;
  std::map<std::string, std::string> values_;
};

// ---------------------------------------------------------------------------------------
// Shell scripts.

bool IsLauncherWord(std::string_view w) {
  static const char* kLaunchers[] = {"torchrun", "python", "python3", "deepspeed", "accelerate", "srun", "mpirun",
                                     "sbatch", "llamafactory-cli", "axolotl", "tune", "hf", "huggingface-cli", "bash"};
  for (const char* l : kLaunchers) {
    if (w == l) return true;
  }
  return false;
}

// A here-document that holds a JSON object (an inline DeepSpeed config).
void ReadEmbeddedConfig(const HereDoc& h, Document* doc) {
  std::string_view body = TrimView(h.body.s);
  if (body.empty()) return;
  if (body.front() != '{') return;
  LocText clean;  // an unknown value leaves a syntax error at its place, reported as such
  for (size_t i = 0; i < h.body.s.size(); ++i) {
    if (h.body.s[i] != kUnresolvedMark) clean.push(h.body.s[i], h.body.at[i]);
  }
  ReadJsonText(clean, doc);
}

// #SBATCH directives, and launch commands quoted in comments ("$ torchrun ... train.py").
void ReadComments(const ShellScan& scan, Document* doc) {
  for (const Comment& c : scan.comments) {
    std::string_view t = c.text;
    if (c.full_line && t.rfind("SBATCH", 0) == 0) {
      Loc at{c.loc.line, c.loc.col + 7};
      ArgsToSettings(ExpandLine(t.substr(6), at, scan), SettingKind::kSbatch, "sbatch.", doc);
      continue;
    }
    if (!c.full_line) continue;
    size_t lead = 0;
    while (lead < t.size() && (t[lead] == ' ' || t[lead] == '\t')) ++lead;
    if (t.substr(lead, 2) == "$ ") lead += 2;
    std::string_view rest = t.substr(lead);
    std::string_view first = rest.substr(0, rest.find_first_of(" \t"));
    if (IsLauncherWord(first) && rest.find(' ') != std::string_view::npos) {
      std::vector<ShellWord> words = ExpandLine(rest, Loc{c.loc.line, c.loc.col + 1 + static_cast<uint32_t>(lead)}, scan);
      if (words.empty()) continue;
      AddProgram(doc, words[0].text.s);
      words.erase(words.begin());
      ArgsToSettings(words, SettingKind::kComment, "", doc);
      continue;
    }
    doc->comments.push_back(Document::Note{std::string(TrimView(t)), c.loc});
  }
}

void ReadShellInto(std::string_view text, uint32_t base_line, Document* doc) {
  ShellScan scan = ScanShell(text, doc->file, base_line);
  for (Warning& w : scan.warnings) doc->warnings.push_back(std::move(w));
  for (const ShellCommand& cmd : scan.commands) ArgsToSettings(cmd.words, SettingKind::kFlag, "", doc);
  for (const auto& [name, var] : scan.vars) {
    if (var.is_array) {
      ArgsToSettings(var.items, SettingKind::kFlag, "", doc);
      continue;
    }
    if (var.items.empty()) continue;
    const ShellWord& v = var.items[0];
    Setting s;
    s.key = NormalizeKey(name);
    s.raw_key = name;
    s.value = StripUnresolved(v.text.s);
    s.loc = v.text.empty() ? var.loc : v.text.first();
    s.kind = SettingKind::kVariable;
    s.unresolved = v.unresolved;
    doc->settings.push_back(s);
    if (v.text.s.find("--") != std::string::npos) {
      std::vector<ShellWord> words = SplitFields(v);
      size_t b = 0;  // a launcher string ("python -u -m torch.distributed.launch --nnodes 2")
      while (b < words.size() && words[b].text.s.rfind("-", 0) != 0) AddProgram(doc, words[b++].text.s);
      ArgsToSettings(std::vector<ShellWord>(words.begin() + static_cast<long>(b), words.end()), SettingKind::kFlag, "", doc);
    }
  }
  for (const HereDoc& h : scan.heredocs) ReadEmbeddedConfig(h, doc);
  ReadComments(scan, doc);
}

// ---------------------------------------------------------------------------------------
// Python configs (nanoGPT style): top-level `name = literal` assignments.

std::string_view StripPyComment(std::string_view v, std::string_view* comment) {
  char quote = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    char c = v[i];
    if (quote) {
      if (c == '\\') ++i;
      else if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '#') {
      *comment = v.substr(i + 1);
      return TrimView(v.substr(0, i));
    }
  }
  return TrimView(v);
}

std::optional<std::string> PyLiteral(std::string_view v, const std::map<std::string, double>& numbers) {
  if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front()) return std::string(v.substr(1, v.size() - 2));
  if (v == "True") return std::string("true");
  if (v == "False") return std::string("false");
  auto n = EvalArith(v, [&](std::string_view name) -> std::optional<double> {
    auto it = numbers.find(std::string(name));
    if (it == numbers.end()) return std::nullopt;
    return it->second;
  }, false);
  if (!n) return std::nullopt;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", *n);
  return std::string(buf);
}

void ReadPythonText(std::string_view text, Document* doc) {
  std::map<std::string, double> numbers;
  std::vector<std::string_view> lines = SplitLines(text);
  std::string launch_comments;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    Loc at{static_cast<uint32_t>(i + 1), 1};
    std::string_view trimmed = TrimView(line);
    if (!trimmed.empty() && trimmed[0] == '#') {
      launch_comments += std::string(line) + "\n";
      continue;
    }
    launch_comments += "\n";
    size_t n = 0;
    while (n < line.size() && (std::isalnum(static_cast<unsigned char>(line[n])) || line[n] == '_')) ++n;
    if (n == 0 || std::isdigit(static_cast<unsigned char>(line[0]))) continue;
    size_t eq = n;
    while (eq < line.size() && line[eq] == ' ') ++eq;
    if (eq >= line.size() || line[eq] != '=' || (eq + 1 < line.size() && line[eq + 1] == '=')) continue;
    std::string_view comment;
    std::string_view value = StripPyComment(line.substr(eq + 1), &comment);
    auto lit = PyLiteral(value, numbers);
    if (!lit) continue;
    std::string name(line.substr(0, n));
    double num = 0;
    if (value.front() != '\'' && value.front() != '"' && std::sscanf(lit->c_str(), "%lf", &num) == 1) numbers[name] = num;
    Setting s;
    s.key = NormalizeKey(name);
    s.raw_key = name;
    s.value = *lit;
    size_t vcol = static_cast<size_t>(value.data() - line.data());
    s.loc = Loc{at.line, static_cast<uint32_t>(vcol + 1)};
    s.kind = SettingKind::kConfigKey;
    doc->settings.push_back(std::move(s));
  }
  // Comments are shell-scanned: they hold the launch command ("$ torchrun --nproc_per_node=8 ...").
  ShellScan scan = ScanShell(launch_comments, doc->file, 0);
  ReadComments(scan, doc);
}

// ---------------------------------------------------------------------------------------
// Markdown: the fenced code blocks, each read in its language (shell by default).

void ReadMarkdownText(std::string_view text, Document* doc) {
  std::vector<std::string_view> lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view t = TrimView(lines[i]);
    if (t.rfind("```", 0) != 0 && t.rfind("~~~", 0) != 0) continue;
    std::string fence(t.substr(0, 3));
    std::string lang = Lower(TrimView(t.substr(3)));
    size_t start = i + 1, end = start;
    while (end < lines.size() && TrimView(lines[end]).rfind(fence, 0) != 0) ++end;
    std::string block;
    for (size_t k = start; k < end; ++k) {
      std::string l(lines[k]);
      size_t p = l.find_first_not_of(" \t");
      if (p != std::string::npos && l.compare(p, 2, "$ ") == 0) l.replace(p, 2, "  ");  // shell prompt
      block += l + "\n";
    }
    uint32_t base = static_cast<uint32_t>(start);
    if (lang == "yaml" || lang == "yml") ReadYamlText(block, base, doc);
    else if (lang == "json") ReadJsonText(WholeText(block, base), doc);
    else if (lang == "toml") ReadTomlText(block, base, doc);
    else if (lang.empty() || lang == "sh" || lang == "bash" || lang == "shell" || lang == "console" || lang == "zsh") ReadShellInto(block, base, doc);
    i = end;
  }
}

// Drops the copies of one setting (a flag seen in a variable's value and again in the
// command that expands it).
void Dedupe(Document* doc) {
  std::set<std::tuple<std::string, uint32_t, uint32_t, std::string>> seen;
  std::vector<Setting> out;
  for (Setting& s : doc->settings) {
    if (seen.insert({s.key, s.loc.line, s.loc.col, s.value}).second) out.push_back(std::move(s));
  }
  doc->settings = std::move(out);
}

}  // namespace

void MergeReferenced(Document* doc, const Document& other) {
  uint16_t offset = static_cast<uint16_t>(doc->files.size());
  doc->files.insert(doc->files.end(), other.files.begin(), other.files.end());
  for (Setting s : other.settings) {
    s.file = static_cast<uint16_t>(s.file + offset);
    doc->settings.push_back(std::move(s));
  }
  for (const std::string& p : other.programs) AddProgram(doc, p);
}

Format DetectFormat(std::string_view file_name, std::string_view text) {
  std::string name = Lower(file_name);
  struct Ext {
    const char* ext;
    Format f;
  };
  static const Ext kExts[] = {{".sh", Format::kShell},   {".bash", Format::kShell}, {".slurm", Format::kShell},
                              {".sbatch", Format::kShell}, {".json", Format::kJson},  {".yaml", Format::kYaml},
                              {".yml", Format::kYaml},   {".toml", Format::kToml},  {".py", Format::kPython},
                              {".md", Format::kMarkdown}, {".markdown", Format::kMarkdown}};
  for (const Ext& e : kExts) {
    if (EndsWith(name, e.ext)) return e.f;
  }
  std::string_view t = TrimView(text);
  if (!t.empty() && t.front() == '{') return Format::kJson;
  if (t.rfind("#!", 0) == 0) return Format::kShell;
  if (t.find("```") != std::string_view::npos) return Format::kMarkdown;
  size_t yaml = 0, toml = 0, shell = 0;
  for (std::string_view line : SplitLines(text)) {
    std::string_view l = TrimView(line);
    if (l.empty() || l[0] == '#') continue;
    if (l.front() == '[' && l.back() == ']') ++toml;
    else if (l.find(" = ") != std::string_view::npos) ++toml;
    size_t colon = l.find(": ");
    if ((colon != std::string_view::npos && colon > 0 && l.find(' ') >= colon) || (!l.empty() && l.back() == ':')) ++yaml;
    if (l.find("--") != std::string_view::npos || l.back() == '\\' || l.find('$') != std::string_view::npos) ++shell;
  }
  if (yaml > toml && yaml > shell) return Format::kYaml;
  if (toml > shell) return Format::kToml;
  return Format::kShell;
}

Document ReadDocument(std::string_view file_name, std::string_view text, Format format) {
  Document doc;
  doc.file = std::string(file_name);
  doc.files.push_back(doc.file);
  doc.format = format;
  switch (format) {
    case Format::kShell: ReadShellInto(text, 0, &doc); break;
    case Format::kJson: ReadJsonText(WholeText(text, 0), &doc); break;
    case Format::kYaml:
      ReadYamlText(text, 0, &doc);
      Interpolator(&doc).Run();
      break;
    case Format::kToml: ReadTomlText(text, 0, &doc); break;
    case Format::kPython: ReadPythonText(text, &doc); break;
    case Format::kMarkdown: ReadMarkdownText(text, &doc); break;
  }
  if (format != Format::kShell && format != Format::kPython && format != Format::kMarkdown) {
    // Comments of config files: full-line '#' comments (YAML, TOML) name presets and models.
    std::vector<std::string_view> lines = SplitLines(text);
    for (size_t i = 0; i < lines.size(); ++i) {
      std::string_view t = TrimView(lines[i]);
      if (t.size() > 1 && t[0] == '#') doc.comments.push_back(Document::Note{std::string(TrimView(t.substr(1))), Loc{static_cast<uint32_t>(i + 1), 1}});
    }
  }
  Dedupe(&doc);
  if (format != Format::kToml) return doc;
  std::stable_sort(doc.settings.begin(), doc.settings.end(), [](const Setting& a, const Setting& b) {
    return std::tie(a.loc.line, a.loc.col) < std::tie(b.loc.line, b.loc.col);
  });  // toml11 keeps tables in unordered maps: restore the file's order
  return doc;
}

}  // namespace orrery::semantic
