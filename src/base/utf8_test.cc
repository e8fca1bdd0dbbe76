#include "base/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace orrery {
namespace {

TEST(Utf8Test, FirstInvalidByteOfEachIllFormedSequence) {
  struct Case {
    std::string text;
    size_t bad;  // npos: well-formed
  };
  const size_t ok = std::string_view::npos;
  const Case cases[] = {
      {"plain ascii", ok},
      {"\xc3\xa9t\xc3\xa9", ok},               // "été"
      {"\xe2\x82\xac", ok},                    // U+20AC
      {"\xed\x9f\xbf", ok},                    // U+D7FF, just below the surrogates
      {"\xf0\x90\x80\x80", ok},                // U+10000
      {"\xf4\x8f\xbf\xbf", ok},                // U+10FFFF
      {"a\xc0\xaf", 1},                        // overlong '/'
      {"a\xc1\xbf", 1},                        // overlong 2-byte
      {"'\xe0\x85\x86'", 1},                   // overlong 3-byte (cluster_config_fuzz's crash in toml11)
      {"\xed\xa0\x80", 0},                     // U+D800, a surrogate
      {"\xf0\x8f\xbf\xbf", 0},                 // overlong 4-byte
      {"\xf4\x90\x80\x80", 0},                 // above U+10FFFF
      {"\xf5\x80\x80\x80", 0},                 // no such lead byte
      {"ab\xe2\x82", 2},                       // truncated at the end
      {"x\xe2(\xac", 1},                       // a continuation byte missing
      {std::string("a\0b", 3), 1},             // NUL
  };
  for (const Case& c : cases) EXPECT_EQ(FirstInvalidUtf8(c.text), c.bad) << ::testing::PrintToString(c.text);
}

}  // namespace
}  // namespace orrery
