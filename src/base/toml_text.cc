#include "base/toml_text.h"

#include <cstdio>
#include <optional>
#include <sstream>

#include "base/parse.h"
#include "base/utf8.h"

namespace orrery {

namespace {

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

// A lexical scan that skips comments and strings (basic, literal, multi-line) and tracks
// the depth of [ and {.
std::optional<TextIssue> NestingIssue(std::string_view text) {
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
      if (++depth > kMaxTomlNesting)
        return TextIssue{line, col,
                         "expected arrays and inline tables nested at most " + std::to_string(kMaxTomlNesting) +
                             " deep, got deeper nesting"};
    } else if ((ch == ']' || ch == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

std::optional<TextIssue> Utf8Issue(std::string_view text) {
  const size_t bad = FirstInvalidUtf8(text);
  if (bad == std::string_view::npos) return std::nullopt;
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
  return TextIssue{line, col, std::string("expected UTF-8 text without NUL bytes, got byte ") + got};
}

}  // namespace

std::variant<toml::value, TextIssue> ParseTomlText(std::string_view text, const std::string& file) {
  if (auto issue = Utf8Issue(text)) return *issue;
  if (auto issue = NestingIssue(text)) return *issue;
  try {
    std::istringstream in{std::string(text)};
    return toml::parse(in, file);
  } catch (const toml::exception& e) {
    auto loc = e.location();
    TextIssue issue{static_cast<uint32_t>(loc.line()), static_cast<uint32_t>(loc.column()),
                    "TOML syntax error: " + SyntaxMessage(e.what())};
    AnnotatedPos(e.what(), &issue.line, &issue.col);
    return issue;
  } catch (const std::exception& e) {
    return TextIssue{1, 1, "TOML syntax error: " + SyntaxMessage(e.what())};
  }
}

Result<toml::value> ParseToml(std::string_view text, const std::string& file) {
  auto parsed = ParseTomlText(text, file);
  if (auto* issue = std::get_if<TextIssue>(&parsed))
    return MakeError(file + ":" + std::to_string(issue->line) + ":" + std::to_string(issue->col) + ": " +
                     issue->message);
  return std::get<toml::value>(std::move(parsed));
}

}  // namespace orrery
