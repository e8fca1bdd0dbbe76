#include "base/json_text.h"

#include <algorithm>
#include <optional>

#include "base/utf8.h"

namespace orrery {

namespace {

// Line and column (1-based, columns in bytes) of byte `offset` of `text`; an offset past the
// end is the position just after the last byte.
TextIssue IssueAt(std::string_view text, size_t offset, std::string message) {
  offset = std::min(offset, text.size());
  TextIssue issue;
  const std::string_view before = text.substr(0, offset);
  issue.line = 1 + static_cast<uint32_t>(std::count(before.begin(), before.end(), '\n'));
  const size_t nl = before.rfind('\n');
  issue.col = 1 + static_cast<uint32_t>(nl == std::string_view::npos ? offset : offset - nl - 1);
  issue.message = std::move(message);
  return issue;
}

// nlohmann's "parse error at line 1, column 4: syntax error while parsing value - ..." with
// the position dropped (the issue carries its own) and the bytes that are not UTF-8 in the
// quoted token shown as '?'.
std::string SyntaxText(const nlohmann::json::exception& e) {
  std::string what = JsonExceptionText(e);
  const size_t p = what.find("syntax error");
  what = "JSON " + (p == std::string::npos ? what : what.substr(p));
  for (size_t bad = FirstInvalidUtf8(what); bad != std::string::npos; bad = FirstInvalidUtf8(what)) what[bad] = '?';
  return what;
}

// Offset of the bracket that opens level kMaxJsonNesting + 1 (strings skipped), or the end.
size_t TooDeepOffset(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if ((c == '[' || c == '{') && ++depth > kMaxJsonNesting) return i;
    if (c == ']' || c == '}') --depth;
  }
  return text.size();
}

// nlohmann's DOM builder with the first error's position kept and nesting bounded.
template <class J>
class LocatingSax : public nlohmann::detail::json_sax_dom_parser<J> {
 public:
  using Base = nlohmann::detail::json_sax_dom_parser<J>;
  LocatingSax(J& root, std::string_view text) : Base(root, false), text_(text) {}

  bool start_object(std::size_t n) { return Deeper() && Base::start_object(n); }
  bool start_array(std::size_t n) { return Deeper() && Base::start_array(n); }
  bool end_object() {
    --depth_;
    return Base::end_object();
  }
  bool end_array() {
    --depth_;
    return Base::end_array();
  }
  bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception& ex) {
    if (ex.id == 406) {  // out_of_range: number overflow; `position` is just past the number
      const size_t start = position >= token.size() ? position - token.size() : 0;
      issue_ = IssueAt(text_, start,
                       "expected a number within a double's range (magnitude below 1.8e308), got " + Quote(token));
    } else {
      issue_ = IssueAt(text_, position > 0 ? position - 1 : 0, SyntaxText(ex));
    }
    return false;
  }
  const std::optional<TextIssue>& issue() const { return issue_; }

 private:
  bool Deeper() {
    if (++depth_ <= kMaxJsonNesting) return true;
    issue_ = IssueAt(text_, TooDeepOffset(text_),
                     "expected JSON nested at most " + std::to_string(kMaxJsonNesting) +
                         " levels deep, got a bracket one level deeper");
    return false;
  }

  std::string_view text_;
  int depth_ = 0;
  std::optional<TextIssue> issue_;
};

template <class J>
Result<J> ParseLocated(std::string_view text, const std::string& file) {
  auto parsed = ParseJsonTextAs<J>(text);
  if (auto* issue = std::get_if<TextIssue>(&parsed))
    return MakeError(file + ":" + std::to_string(issue->line) + ":" + std::to_string(issue->col) + ": " + issue->message);
  return std::move(std::get<J>(parsed));
}

}  // namespace

template <class J>
std::variant<J, TextIssue> ParseJsonTextAs(std::string_view text) {
  J root;
  LocatingSax<J> sax(root, text);
  const bool ok = J::sax_parse(text.begin(), text.end(), &sax, nlohmann::json::input_format_t::json, true, false);
  if (sax.issue()) return *sax.issue();
  if (!ok) return TextIssue{1, 1, "JSON text could not be read"};  // every failure reports through parse_error
  return root;
}

template std::variant<nlohmann::json, TextIssue> ParseJsonTextAs<nlohmann::json>(std::string_view);
template std::variant<nlohmann::ordered_json, TextIssue> ParseJsonTextAs<nlohmann::ordered_json>(std::string_view);

Result<nlohmann::json> ParseJson(std::string_view text, const std::string& file) {
  return ParseLocated<nlohmann::json>(text, file);
}

Result<nlohmann::json> ParseJsonLine(std::string_view line, const std::string& file, uint64_t lineno) {
  auto parsed = ParseJsonTextAs<nlohmann::json>(line);
  if (auto* issue = std::get_if<TextIssue>(&parsed))  // a line holds no newline: issue->line is 1
    return MakeError(file + ":" + std::to_string(lineno) + ":" + std::to_string(issue->col) + ": " + issue->message);
  return std::move(std::get<nlohmann::json>(parsed));
}

Result<nlohmann::ordered_json> ParseOrderedJson(std::string_view text, const std::string& file) {
  return ParseLocated<nlohmann::ordered_json>(text, file);
}

std::string JsonExceptionText(const nlohmann::json::exception& e) {
  std::string what = e.what();
  if (what.rfind("[json.exception.", 0) == 0) {
    const size_t close = what.find("] ");
    if (close != std::string::npos) what = what.substr(close + 2);
  }
  return what;
}

}  // namespace orrery
