#include "config/toml_util.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string_view>

#include "base/parse.h"
#include "base/toml_text.h"

namespace orrery::toml_util {

namespace {

// Source text of a value (exactly as written), when it lies on one line.
std::string RawToken(const Value& v) {
  auto loc = v.location();
  const std::string& line = loc.line_str();
  size_t b = loc.column() ? loc.column() - 1 : 0;
  if (b >= line.size()) return "";
  std::string tok = line.substr(b, loc.region());
  if (tok.size() > 60) tok = tok.substr(0, 57) + "...";
  return tok;
}

// "what was found", e.g. `-3`, `a string "64"`, `a table`.
std::string GotImpl(const Value& v) {
  switch (v.type()) {
    case toml::value_t::integer:
    case toml::value_t::floating: {
      std::string tok = RawToken(v);
      if (!tok.empty()) return tok;
      char buf[64];
      if (v.is_integer())
        std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v.as_integer()));
      else
        std::snprintf(buf, sizeof buf, "%g", v.as_floating());
      return buf;
    }
    case toml::value_t::boolean:
      return std::string("a boolean ") + (v.as_boolean() ? "true" : "false");
    case toml::value_t::string:
      return "a string " + Quote(v.as_string().str);
    case toml::value_t::table:
      return "a table";
    case toml::value_t::array:
      return "an array";
    case toml::value_t::offset_datetime:
    case toml::value_t::local_datetime:
    case toml::value_t::local_date:
    case toml::value_t::local_time:
      return "a date/time " + RawToken(v);
    default:
      return "an empty value";
  }
}

std::string IntExpected(int64_t lo) {
  return lo == 1 ? "a positive integer" : lo == 0 ? "a non-negative integer" : "an integer";
}

}  // namespace

std::string Got(const Value& v) { return GotImpl(v); }

std::string Locator::Pos(uint32_t line, uint32_t col) const {
  return file_ + ":" + std::to_string(line) + ":" + std::to_string(col);
}

Error Locator::At(const Value& v, const std::string& msg) const {
  auto loc = v.location();
  return MakeError(Pos(loc.line(), loc.column()) + ": " + msg);
}

Error Locator::AtKey(const Value& v, const std::string& key, const std::string& msg) const {
  auto loc = v.location();
  uint32_t col = loc.column();
  if (!v.is_table() && !v.is_array()) {
    const std::string& line = loc.line_str();
    size_t limit = std::min<size_t>(line.size(), col ? col - 1 : 0);
    size_t p = line.rfind(key, limit);
    if (p != std::string::npos && p < limit) col = static_cast<uint32_t>(p + 1);
  }
  return MakeError(Pos(loc.line(), col) + ": " + msg);
}

Result<Value> Parse(const Locator& c, const std::string& text) {
  ORR_ASSIGN_OR_RETURN(Value root, ParseToml(text, c.file()));
  if (!root.is_table()) return MakeError(c.Pos(1, 1) + ": expected a TOML table at top level");
  return root;
}

const Value* Find(const Value& tbl, const std::string& key) {
  const auto& t = tbl.as_table();
  auto it = t.find(key);
  return it == t.end() ? nullptr : &it->second;
}

std::vector<std::pair<std::string, const Value*>> SortedEntries(const Value& tbl) {
  std::vector<std::pair<std::string, const Value*>> out;
  for (const auto& [k, v] : tbl.as_table()) out.emplace_back(k, &v);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    auto la = a.second->location(), lb = b.second->location();
    if (la.line() != lb.line()) return la.line() < lb.line();
    if (la.column() != lb.column()) return la.column() < lb.column();
    return a.first < b.first;
  });
  return out;
}

std::string JoinKeys(const std::vector<std::string>& keys) {
  std::string s;
  for (size_t i = 0; i < keys.size(); ++i) s += (i ? ", " : "") + keys[i];
  return s;
}

Status CheckKeys(const Locator& c, const Value& tbl, const std::string& where, const std::vector<std::string>& allowed,
                 Locate at) {
  for (const auto& [k, v] : SortedEntries(tbl)) {
    if (std::find(allowed.begin(), allowed.end(), k) != allowed.end()) continue;
    std::string msg = "unknown key '" + k + "' in " + where + ": expected one of " + JoinKeys(allowed);
    switch (at) {
      case Locate::kKey:
        return c.AtKey(*v, k, msg);
      case Locate::kValue:
        return c.At(*v, msg);
    }
  }
  return Status::Ok();
}

Result<std::optional<int64_t>> GetInt(const Locator& c, const Value& tbl, const std::string& key,
                                      const std::string& label, int64_t lo, int64_t hi, IntWording wording) {
  const Value* v = Find(tbl, key);
  if (!v) return std::optional<int64_t>();
  std::string range = std::to_string(lo) + ".." + std::to_string(hi);
  switch (wording) {
    case IntWording::kRange:
      if (!v->is_integer()) return c.At(*v, label + ": expected an integer");
      if (v->as_integer() < lo || v->as_integer() > hi)
        return c.At(*v, label + ": expected " + range + ", got " + std::to_string(v->as_integer()));
      break;
    case IntWording::kSign: {
      // toml11 saturates out-of-range literals at INT64_MIN/MAX; Got reports the raw token.
      std::string expected = IntExpected(lo);
      if (!v->is_integer() || v->as_integer() < lo)
        return c.At(*v, label + ": expected " + expected + ", got " + Got(*v));
      if (v->as_integer() > hi)
        return c.At(*v, label + ": expected " + expected + " no greater than " + std::to_string(hi) + ", got " + Got(*v));
      break;
    }
  }
  return std::optional<int64_t>(v->as_integer());
}

Result<std::optional<bool>> GetBool(const Locator& c, const Value& tbl, const std::string& key,
                                    const std::string& label) {
  const Value* v = Find(tbl, key);
  if (!v) return std::optional<bool>();
  if (!v->is_boolean()) return c.At(*v, label + ": expected true or false, got " + Got(*v));
  return std::optional<bool>(v->as_boolean());
}

Result<std::optional<std::string>> GetString(const Locator& c, const Value& tbl, const std::string& key,
                                             const std::string& label) {
  const Value* v = Find(tbl, key);
  if (!v) return std::optional<std::string>();
  if (!v->is_string()) return c.At(*v, label + ": expected a string");
  return std::optional<std::string>(v->as_string().str);
}

Result<std::optional<std::string>> GetName(const Locator& c, const Value& tbl, const std::string& key,
                                           const std::string& label) {
  const Value* v = Find(tbl, key);
  if (!v) return std::optional<std::string>();
  if (!v->is_string() || v->as_string().str.empty())
    return c.At(*v, label + ": expected a non-empty string, got " +
                        (v->is_string() ? std::string("an empty string") : Got(*v)));
  const std::string& s = v->as_string().str;
  if (s.size() > kMaxNameBytes)
    return c.At(*v, label + ": expected a name of at most " + std::to_string(kMaxNameBytes) + " bytes, got one of " +
                        std::to_string(s.size()));
  for (unsigned char ch : s)
    if (ch < 0x20 || ch == 0x7f || ch == ',')
      return c.At(*v, label + ": expected a name without commas or control characters, got " + Got(*v));
  return std::optional<std::string>(s);
}

Result<const Value*> GetTable(const Locator& c, const Value& root, const std::string& key) {
  const Value* v = Find(root, key);
  if (!v) return static_cast<const Value*>(nullptr);
  if (!v->is_table()) return c.At(*v, "'" + key + "': expected a table [" + key + "]");
  return v;
}

}  // namespace orrery::toml_util
