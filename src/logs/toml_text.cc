#include "logs/toml_text.h"

#include <algorithm>
#include <sstream>

#include "base/utf8.h"

namespace orrery::logs {

namespace {

Error At(const std::string& file, uint32_t line, uint32_t col, const std::string& msg) {
  return MakeError(file + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + msg);
}

// toml11 parses nested arrays and inline tables recursively: refuse deep nesting first
// (comments and strings skipped) so that no input can exhaust the stack.
Status CheckNesting(const std::string& file, std::string_view text) {
  int depth = 0;
  uint32_t line = 1, col = 0;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    ++col;
    if (ch == '\n') {
      ++line;
      col = 0;
      if (quote == '#') quote = 0;
      continue;
    }
    if (quote != 0) {
      if (quote == '"' && ch == '\\') {
        ++i;
        ++col;
      } else if (ch == quote) {
        quote = 0;
      }
      continue;
    }
    if (ch == '#' || ch == '"' || ch == '\'') quote = ch;
    else if (ch == '[' || ch == '{') {
      if (++depth > 32) return At(file, line, col, "arrays or tables nested more than 32 deep");
    } else if (ch == ']' || ch == '}') {
      depth = depth > 0 ? depth - 1 : 0;
    }
  }
  return Status::Ok();
}

}  // namespace

Result<toml::value> ParseTomlText(std::string_view text, const std::string& file) {
  if (const size_t bad = FirstInvalidUtf8(text); bad != std::string_view::npos) {
    const uint32_t line = 1 + static_cast<uint32_t>(std::count(text.begin(), text.begin() + bad, '\n'));
    const size_t nl = text.rfind('\n', bad == 0 ? 0 : bad - 1);
    const uint32_t col = static_cast<uint32_t>(nl == std::string_view::npos || bad == 0 ? bad + 1 : bad - nl);
    return At(file, line, col, "expected UTF-8 text without NUL bytes");
  }
  ORR_RETURN_IF_ERROR(CheckNesting(file, text));
  try {
    std::istringstream in{std::string(text)};
    return toml::parse(in, file);
  } catch (const toml::exception& e) {
    std::string what = e.what();
    std::string first = what.substr(0, what.find('\n'));
    if (first.rfind("[error] ", 0) == 0) first = first.substr(8);
    if (first.rfind("toml::", 0) == 0 && first.find(": ") != std::string::npos) first = first.substr(first.find(": ") + 2);
    auto loc = e.location();
    return At(file, static_cast<uint32_t>(loc.line()), static_cast<uint32_t>(loc.column()), "TOML syntax error: " + first);
  } catch (const std::exception& e) {
    return MakeError(file + ": TOML syntax error: " + std::string(e.what()).substr(0, 200));
  }
}

}  // namespace orrery::logs
