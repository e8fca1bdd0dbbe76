#include "config/toml_util.h"

#include "base/utf8.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string_view>

#include "base/parse.h"

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

// toml11 annotates the offending spot as
//    " 12 | text"
//    "    |      ^--- note"
// The last annotated line and column is more precise than exception::location().
bool AnnotatedPos(const std::string& what, uint32_t* line_out, uint32_t* col_out) {
  bool found = false;
  long cur_line = -1;
  size_t pos = 0;
  while (pos < what.size()) {
    size_t e = what.find('\n', pos);
    if (e == std::string::npos) e = what.size();
    std::string_view line(what.data() + pos, e - pos);
    pos = e + 1;
    size_t bar = line.find(" | ");
    if (bar == std::string_view::npos) {
      continue;
    }
    std::string_view gutter = Trim(line.substr(0, bar));
    std::string_view body = line.substr(bar + 3);
    if (!gutter.empty()) {
      int64_t n = 0;
      cur_line = ParseI64(gutter, &n) && n > 0 ? n : -1;
      continue;
    }
    size_t m = body.find_first_not_of(' ');
    if (cur_line > 0 && m != std::string_view::npos && (body[m] == '^' || body[m] == '~')) {
      *line_out = static_cast<uint32_t>(cur_line);
      *col_out = static_cast<uint32_t>(m + 1);
      found = true;
    }
  }
  return found;
}

std::string SyntaxMessage(const std::string& what) {
  // toml11 writes "[error] toml::parse_xxx: message\n --> file\n ... | ^--- note".
  std::string first = what.substr(0, what.find('\n'));
  if (first.rfind("[error] ", 0) == 0) first = first.substr(8);
  if (first.rfind("toml::", 0) == 0) {
    size_t p = first.find(": ");
    if (p != std::string::npos) first = first.substr(p + 2);
  }
  std::string note;
  size_t pos = 0;
  while (pos < what.size()) {
    size_t e = what.find('\n', pos);
    if (e == std::string::npos) e = what.size();
    std::string_view line(what.data() + pos, e - pos);
    for (std::string_view mark : {"^--- ", "~~~ "}) {
      size_t m = line.find(mark);
      if (m != std::string_view::npos) note = std::string(line.substr(m + mark.size()));
    }
    pos = e + 1;
  }
  while (!first.empty() && (first.back() == ' ' || first.back() == '.')) first.pop_back();
  while (!note.empty() && (note.back() == ' ' || note.back() == '.')) note.pop_back();
  if (!note.empty() && note != first) first += " (" + note + ")";
  return first;
}

// toml11 parses nested arrays and inline tables recursively, so very deep nesting would
// overflow the stack. Reject it before parsing: a lexical scan that skips comments and
// strings (basic, literal, multi-line) and tracks the depth of [ and {.
constexpr int kMaxNesting = 64;

Status CheckNesting(const Locator& c, const std::string& text) {
  int depth = 0;
  uint32_t line = 1, col = 0;
  size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    char ch = text[i];
    ++col;
    if (ch == '\n') {
      ++line;
      col = 0;
      continue;
    }
    if (ch == '#') {
      while (i + 1 < n && text[i + 1] != '\n') ++i;
      continue;
    }
    if (ch == '"' || ch == '\'') {
      bool multi = i + 2 < n && text[i + 1] == ch && text[i + 2] == ch;
      size_t j = i + (multi ? 3 : 1);
      for (; j < n; ++j) {
        if (text[j] == '\n') {
          if (!multi) break;  // a single-line string cannot span lines
          ++line;
          col = 0;
          continue;
        }
        ++col;
        if (ch == '"' && text[j] == '\\') {
          ++j;
          ++col;
          continue;
        }
        if (text[j] == ch) {
          if (!multi) break;
          if (j + 2 < n && text[j + 1] == ch && text[j + 2] == ch) {
            j += 2;
            col += 2;
            break;
          }
        }
      }
      if (j < n && text[j] == '\n') --j;  // let the outer loop count the newline
      i = j < n ? j : n;
      continue;
    }
    if (ch == '[' || ch == '{') {
      if (++depth > kMaxNesting)
        return MakeError(c.Pos(line, col) + ": expected arrays and inline tables nested at most " +
                         std::to_string(kMaxNesting) + " deep, got deeper nesting");
    } else if ((ch == ']' || ch == '}') && depth > 0) {
      --depth;
    }
  }
  return Status::Ok();
}

// TOML is UTF-8 without NUL bytes (base/utf8.h says why toml11 must never see other text).
Status CheckUtf8(const Locator& c, const std::string& text) {
  const size_t bad = FirstInvalidUtf8(text);
  if (bad == std::string_view::npos) return Status::Ok();
  uint32_t line = 1, col = 1;
  for (size_t i = 0; i < bad;) {
    const unsigned char b = static_cast<unsigned char>(text[i]);
    if (b == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
    i += b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : 4;
  }
  char got[8];
  std::snprintf(got, sizeof got, "0x%02X", static_cast<unsigned char>(text[bad]));
  return MakeError(c.Pos(line, col) + ": expected UTF-8 text without NUL bytes, got byte " + got);
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
  ORR_RETURN_IF_ERROR(CheckUtf8(c, text));
  ORR_RETURN_IF_ERROR(CheckNesting(c, text));
  Value root;
  try {
    std::istringstream in(text);
    root = toml::parse(in, c.file());
  } catch (const toml::exception& e) {
    auto loc = e.location();
    uint32_t line = loc.line(), col = loc.column();
    AnnotatedPos(e.what(), &line, &col);
    return MakeError(c.Pos(line, col) + ": TOML syntax error: " + SyntaxMessage(e.what()));
  } catch (const std::exception& e) {
    return MakeError(c.file() + ": TOML syntax error: " + SyntaxMessage(e.what()));
  }
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
