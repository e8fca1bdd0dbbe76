#include "base/parse.h"

#include <gtest/gtest.h>

namespace orrery {
namespace {

TEST(ParseTest, SplitLineHandlesQuotesAndEmptyFields) {
  std::vector<Field> f;
  std::vector<std::string> scratch;
  uint32_t bad = 0;
  ASSERT_TRUE(SplitLine(R"(a,"b,c",,"d""e",)", ',', &f, &scratch, &bad));
  ASSERT_EQ(f.size(), 5u);
  EXPECT_EQ(f[0].text, "a");
  EXPECT_EQ(f[1].text, "b,c");
  EXPECT_EQ(f[1].col, 3u);
  EXPECT_EQ(f[2].text, "");
  EXPECT_EQ(f[3].text, "d\"e");
  EXPECT_EQ(f[4].text, "");
  EXPECT_FALSE(SplitLine(R"(a,"bc)", ',', &f, &scratch, &bad));
  EXPECT_EQ(bad, 3u);
}

// Values in messages: cut at 57 bytes, control bytes and bytes outside well-formed UTF-8 as
// \xHH, well-formed UTF-8 as it is.
TEST(ParseTest, QuoteNeverWritesRawBytes) {
  EXPECT_EQ(Quote("abc"), "\"abc\"");
  EXPECT_EQ(Quote(std::string("\x7f" "ELF\x02\x00\x1b[31m", 11)), "\"\\x7fELF\\x02\\x00\\x1b[31m\"");
  EXPECT_EQ(Quote("caf\xc3\xa9\ttab"), "\"caf\xc3\xa9\\x09tab\"");  // é kept, the tab escaped
  EXPECT_EQ(Quote("\xff\xfe"), "\"\\xff\\xfe\"");
  EXPECT_EQ(Quote(std::string(70, 'x')), "\"" + std::string(57, 'x') + "...\"");
}

TEST(ParseTest, Integers) {
  int64_t v = 0;
  EXPECT_TRUE(ParseI64("-42", &v));
  EXPECT_EQ(v, -42);
  EXPECT_FALSE(ParseI64("4x", &v));
  EXPECT_FALSE(ParseI64("", &v));
  EXPECT_FALSE(ParseI64("99999999999999999999", &v));  // overflow is an error, not a wrap
  EXPECT_TRUE(ParseI64Lenient("66.0", &v));
  EXPECT_EQ(v, 66);
  EXPECT_FALSE(ParseI64Lenient("66.5", &v));
}

TEST(ParseTest, DateTimeRoundTrip) {
  int64_t t = 0;
  ASSERT_TRUE(ParseDateTime("2017-10-09 07:01:55", &t));
  EXPECT_EQ(t, 1507532515);  // date -u -d '2017-10-09 07:01:55' +%s
  EXPECT_EQ(FormatDateTime(t), "2017-10-09 07:01:55");
  ASSERT_TRUE(ParseDateTime("2020-02-29T23:59:59", &t));
  EXPECT_EQ(FormatDateTime(t), "2020-02-29 23:59:59");
  EXPECT_FALSE(ParseDateTime("2017-13-01 00:00:00", &t));
  EXPECT_FALSE(ParseDateTime("2017/10/09 07:01:55", &t));
}

}  // namespace
}  // namespace orrery
