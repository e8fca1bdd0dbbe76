#include "sched/plugins/spec_args.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/parse.h"

namespace orrery {

Result<PluginSpec> ParsePluginSpec(const std::string& spec, std::string_view what) {
  PluginSpec p;
  size_t colon = spec.find(':');
  p.name = spec.substr(0, colon);
  if (colon == std::string::npos) return p;
  std::string rest = spec.substr(colon + 1);
  size_t pos = 0;
  while (pos <= rest.size()) {
    size_t comma = rest.find(',', pos);
    std::string item = rest.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      return MakeError(std::string(what) + " '" + spec + "': expected key=value parameters, got \"" + item + "\"");
    p.params.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return p;
}

namespace {

std::string Range(const OptionSpec& o) {
  return fmt::format("[{}, {}{}", o.lo, o.hi, o.open_hi ? ")" : "]");
}

// "a|b|c" -> "a, b or c".
std::string ChoiceList(std::string_view choices) {
  std::vector<std::string_view> c;
  for (size_t pos = 0;;) {
    const size_t bar = choices.find('|', pos);
    c.push_back(choices.substr(pos, bar == std::string_view::npos ? std::string_view::npos : bar - pos));
    if (bar == std::string_view::npos) break;
    pos = bar + 1;
  }
  std::string s;
  for (size_t i = 0; i < c.size(); ++i) {
    if (i > 0) s += i + 1 == c.size() ? " or " : ", ";
    s += c[i];
  }
  return s;
}

bool IsChoice(std::string_view choices, std::string_view v) {
  for (size_t pos = 0;;) {
    const size_t bar = choices.find('|', pos);
    if (choices.substr(pos, bar == std::string_view::npos ? std::string_view::npos : bar - pos) == v) return true;
    if (bar == std::string_view::npos) return false;
    pos = bar + 1;
  }
}

// Column (1-based, in `spec`) of each parameter, in the order ParsePluginSpec returns them.
std::vector<size_t> ParamColumns(const std::string& spec) {
  std::vector<size_t> cols;
  size_t colon = spec.find(':');
  if (colon == std::string::npos) return cols;
  for (size_t pos = colon + 1;;) {
    cols.push_back(pos + 1);
    const size_t comma = spec.find(',', pos);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return cols;
}

}  // namespace

std::string ExpectedText(const OptionSpec& o) {
  if (!o.expect.empty()) return std::string(o.expect);
  switch (o.type) {
    case OptionType::kBool: return "true or false";
    case OptionType::kInt: return "an integer in " + Range(o);
    case OptionType::kNumber: return "a number in " + Range(o);
    case OptionType::kChoice: return ChoiceList(o.choices);
    case OptionType::kText: return "text";
  }
  return "";
}

std::string TypeText(const OptionSpec& o) {
  std::string t;
  switch (o.type) {
    case OptionType::kBool: t = "true|false"; break;
    case OptionType::kInt: t = "integer " + Range(o); break;
    case OptionType::kNumber: t = "number " + Range(o); break;
    case OptionType::kChoice: t = std::string(o.choices); break;
    case OptionType::kText: t = "text"; break;
  }
  return t + ", default " + (o.def.empty() ? std::string("unset") : std::string(o.def));
}

Result<SpecArgs> SpecArgs::Parse(const std::string& spec, std::string_view what, std::vector<OptionSchema> schemas) {
  ORR_ASSIGN_OR_RETURN(PluginSpec p, ParsePluginSpec(spec, what));
  SpecArgs a;
  a.spec_ = spec;
  a.name_ = p.name;
  a.what_ = std::string(what);
  a.schemas_ = std::move(schemas);
  const std::vector<size_t> cols = ParamColumns(spec);
  for (size_t i = 0; i < p.params.size(); ++i) {
    const auto& [k, v] = p.params[i];
    if (a.Find(k) == nullptr) {
      std::vector<std::string_view> known;
      for (const OptionSchema& s : a.schemas_)
        for (const OptionSpec& o : s) known.push_back(o.key);
      std::sort(known.begin(), known.end());
      std::string list;
      for (std::string_view k2 : known) list += (list.empty() ? "" : ", ") + std::string(k2);
      return MakeError(a.what_ + " '" + spec + "': unknown parameter '" + k + "' at column " + std::to_string(cols[i]) +
                       " (" + (list.empty() ? a.name_ + " takes no parameters" : a.name_ + " knows " + list) + ")");
    }
    a.given_[k] = v;  // a repeated key: the last value
  }
  return a;
}

const OptionSpec* SpecArgs::Find(std::string_view key) const {
  for (const OptionSchema& s : schemas_)
    for (const OptionSpec& o : s)
      if (o.key == key) return &o;
  return nullptr;
}

Error SpecArgs::Undeclared(std::string_view key) const {
  return MakeError(what_ + " '" + spec_ + "': parameter '" + std::string(key) + "' is read but not declared");
}

std::string SpecArgs::Raw(const OptionSpec& o) const {
  auto it = given_.find(o.key);
  return it == given_.end() ? std::string(o.def) : it->second;
}

Error SpecArgs::Bad(std::string_view key, std::string_view expected, std::string_view value) const {
  return MakeError(what_ + " '" + spec_ + "': parameter '" + std::string(key) + "': expected " + std::string(expected) +
                   ", got \"" + std::string(value) + "\"");
}

Error SpecArgs::Bad(std::string_view key, std::string_view value) const {
  const OptionSpec* o = Find(key);
  return o == nullptr ? Undeclared(key) : Bad(key, ExpectedText(*o), value);
}

Error SpecArgs::Fail(std::string_view message) const {
  return MakeError(what_ + " '" + spec_ + "': " + std::string(message));
}

Result<bool> SpecArgs::Bool(std::string_view key) const {
  const OptionSpec* o = Find(key);
  if (o == nullptr) return Undeclared(key);
  const std::string v = Raw(*o);
  if (v == "true" || v == "1") return true;
  if (v == "false" || v == "0") return false;
  return Bad(key, ExpectedText(*o), v);
}

Result<int64_t> SpecArgs::Int(std::string_view key) const {
  const OptionSpec* o = Find(key);
  if (o == nullptr) return Undeclared(key);
  const std::string v = Raw(*o);
  int64_t x = 0;
  if (!ParseI64(v, &x) || static_cast<double>(x) < o->lo || static_cast<double>(x) > o->hi)
    return Bad(key, ExpectedText(*o), v);
  return x;
}

Result<double> SpecArgs::Number(std::string_view key) const {
  const OptionSpec* o = Find(key);
  if (o == nullptr) return Undeclared(key);
  const std::string v = Raw(*o);
  double x = 0;
  if (!ParseF64(v, &x) || !(x >= o->lo) || (o->open_hi ? !(x < o->hi) : !(x <= o->hi)))
    return Bad(key, ExpectedText(*o), v);
  return x;
}

Result<std::string> SpecArgs::Choice(std::string_view key) const {
  const OptionSpec* o = Find(key);
  if (o == nullptr) return Undeclared(key);
  std::string v = Raw(*o);
  if (!IsChoice(o->choices, v)) return Bad(key, ExpectedText(*o), v);
  return v;
}

std::string SpecArgs::Text(std::string_view key) const {
  const OptionSpec* o = Find(key);
  return o == nullptr ? std::string() : Raw(*o);
}

}  // namespace orrery
