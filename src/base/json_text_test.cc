#include "base/json_text.h"

#include <gtest/gtest.h>

#include <string>

namespace orrery {
namespace {

std::string Err(std::string_view text) {
  auto r = ParseJson(text, "f.json");
  return r.ok() ? "ok" : r.error().message;
}

TEST(JsonText, NumberBeyondADoubleIsALocatedError) {
  // The 11 bytes that aborted the inspect fuzz target: nlohmann reads "110e11190" as one
  // number (the "e8" after it is never reached) and throws out_of_range 406 for it.
  EXPECT_EQ(Err("110e11190e8"),
            "f.json:1:1: expected a number within a double's range (magnitude below 1.8e308), got \"110e11190\"");
  // `{"train_batch_size": ` is 21 bytes: the number starts at column 22.
  EXPECT_EQ(Err("{\"train_batch_size\": 10e11190}"),
            "f.json:1:22: expected a number within a double's range (magnitude below 1.8e308), got \"10e11190\"");
  // Line 3, after `  "b": ` (7 bytes).
  EXPECT_EQ(Err("{\n  \"a\": 1,\n  \"b\": -1e400\n}"),
            "f.json:3:8: expected a number within a double's range (magnitude below 1.8e308), got \"-1e400\"");
  // The largest double and an integer beyond int64 (read as a double) are numbers.
  EXPECT_EQ(Err("[1.7976931348623157e308, 123456789012345678901234567890]"), "ok");
}

TEST(JsonText, SyntaxErrorsAreLocatedAtTheOffendingByte) {
  // 't','r','u' then '}' (offset 9, column 10) is not a literal.
  EXPECT_EQ(Err("{\"a\": tru}"), "f.json:1:10: JSON syntax error while parsing value - invalid literal; last read: '\"a\": tru}'");
  // Byte 0xFF at offset 7 inside a string; the error shows it as '?'.
  EXPECT_EQ(Err("{\"a\": \"\xff\"}"),
            "f.json:1:8: JSON syntax error while parsing value - invalid string: ill-formed UTF-8 byte; last read: '\"?'");
  EXPECT_EQ(Err(""),
            "f.json:1:1: JSON syntax error while parsing value - unexpected end of input; expected '[', '{', or a literal");
}

TEST(JsonText, NestingIsBoundedAtTheBracketOneLevelTooDeep) {
  const std::string ok = std::string(kMaxJsonNesting, '[') + std::string(kMaxJsonNesting, ']');
  EXPECT_EQ(Err(ok), "ok");
  // 257 levels: the 257th '[' is at offset 256, column 257. A '[' inside a string is no level.
  const std::string deep = "[\"[\"," + std::string(kMaxJsonNesting, '[') + std::string(kMaxJsonNesting + 1, ']');
  // `["[",` is 5 bytes and opens level 1; the 256th '[' after it opens level 257, at offset
  // 5 + 255 = 260, column 261.
  EXPECT_EQ(Err(deep), "f.json:1:261: expected JSON nested at most 256 levels deep, got a bracket one level deeper");
}

TEST(JsonText, GuardedReadsTurnTypeErrorsIntoErrors) {
  const nlohmann::json j = nlohmann::json::parse(R"({"n": "five", "a": [1]})");
  Result<int64_t> n = ReadJsonGuarded("cfg.json", [&]() -> Result<int64_t> { return j.at("n").get<int64_t>(); });
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().message, "cfg.json: type must be number, but is string");
  Status missing = ReadJsonGuarded("cfg.json", [&]() -> Status {
    (void)j.at("absent");
    return Status::Ok();
  });
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "cfg.json: key 'absent' not found");
}

TEST(JsonText, DumpReplacesInvalidUtf8AndIntegersAreExact) {
  EXPECT_EQ(DumpJson(nlohmann::json("a\xff" "b")), "\"a\xef\xbf\xbd" "b\"");  // U+FFFD
  int64_t v = 0;
  // Accepted: an integer, an unsigned up to INT64_MAX, an integral double in range.
  EXPECT_TRUE(JsonToI64(nlohmann::json(-7), &v));
  EXPECT_EQ(v, -7);
  EXPECT_TRUE(JsonToI64(nlohmann::json(9223372036854775807ull), &v));
  EXPECT_EQ(v, INT64_MAX);
  EXPECT_TRUE(JsonToI64(nlohmann::json(4096.0), &v));
  EXPECT_EQ(v, 4096);
  // Refused (v untouched): 2^63 as unsigned and as a double, a fraction, a string.
  v = 1;
  EXPECT_FALSE(JsonToI64(nlohmann::json(9223372036854775808ull), &v));
  EXPECT_FALSE(JsonToI64(nlohmann::json(9223372036854775808.0), &v));
  EXPECT_FALSE(JsonToI64(nlohmann::json(2.5), &v));
  EXPECT_FALSE(JsonToI64(nlohmann::json("3"), &v));
  EXPECT_EQ(v, 1);
}

}  // namespace
}  // namespace orrery
