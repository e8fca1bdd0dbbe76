#include "base/toml_text.h"

#include <gtest/gtest.h>

namespace orrery {
namespace {

std::string Err(std::string_view text) {
  auto r = ParseToml(text, "t.toml");
  return r.ok() ? std::string("(parsed)") : r.error().message;
}

TEST(TomlText, ParsesValidText) {
  auto r = ParseToml("a = 1\n[t]\nb = \"x\"\n", "t.toml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(toml::find<int64_t>(*r, "a"), 1);
  EXPECT_EQ(toml::find<std::string>(r->at("t"), "b"), "x");
}

// Every reader (config, log rules, inspect) refuses the same inputs with the same located
// messages, before toml11 sees them.
TEST(TomlText, RefusedBeforeParsingWithLocatedMessages) {
  struct Case {
    std::string text, want;
  };
  const Case cases[] = {
      // Line 2 "x = 'a" + 0xFF + "'": the byte is column 7 (toml11 overruns a buffer
      // reporting it inside a literal string, found by diagnose_fuzz).
      {"k = 1\nx = 'a\xff'\n", "t.toml:2:7: expected UTF-8 text without NUL bytes, got byte 0xFF"},
      {std::string("k = \"a\0b\"\n", 10), "t.toml:1:7: expected UTF-8 text without NUL bytes, got byte 0x00"},
      // "a = [" opens depth 1 at column 5; the 64th '[' after it (column 69) is depth 65.
      {"a = [" + std::string(70, '['), "t.toml:1:69: expected arrays and inline tables nested at most 64 deep, got deeper nesting"},
      // Brackets inside strings and comments do not count.
      {"a = \"" + std::string(70, '[') + "\"\n# " + std::string(70, '{') + "\nb = 1\n", "(parsed)"},
      {"name = \"x\"\nname = \"y\"\n", "t.toml:2:8: TOML syntax error: value (\"name\") already exists (value defined twice)"},
  };
  for (const Case& c : cases) EXPECT_EQ(Err(c.text), c.want) << c.text.substr(0, 40);
}

TEST(TomlText, IssueCarriesLineAndColumn) {
  auto parsed = ParseTomlText("a = 1\nb = 'x\xc0'\n", "t.toml");
  const TextIssue* issue = std::get_if<TextIssue>(&parsed);
  ASSERT_NE(issue, nullptr);
  EXPECT_EQ(issue->line, 2u);
  EXPECT_EQ(issue->col, 7u);
}

}  // namespace
}  // namespace orrery
