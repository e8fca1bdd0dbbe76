#include "cli/flag_rules.h"

#include <gtest/gtest.h>

namespace orrery::cli {
namespace {

TEST(FlagRules, QuotedCutsAndEscapes) {
  struct Case {
    std::string in;
    size_t max;
    std::string want;
  };
  const Case cases[] = {
      {"-3", 24, "\"-3\""},
      {"abcdef", 4, "\"abcd\"... (6 characters)"},
      {std::string("a\0b", 3), 24, "\"a\\x00b\""},
      {"\xff\"\\", 24, "\"\\xff\\x22\\x5c\""},  // never a raw byte, quote or backslash
  };
  for (const Case& c : cases) EXPECT_EQ(Quoted(c.in, c.max), c.want) << c.in;
}

TEST(FlagRules, NearestWithinTwoEditsOrAPrefix) {
  const std::vector<std::string> names = {"simulate", "import", "generate", "diagnose", "progress", "plan"};
  struct Case {
    std::string word, want;
  };
  const Case cases[] = {
      {"simulat", "simulate"},   // one deletion
      {"smiulate", "simulate"},  // a transposition is two substitutions
      {"sim", "simulate"},       // a prefix of at least 3 letters
      {"imprt", "import"},
      {"plna", "plan"},          // two edits
      {"xyzzy", ""},             // five edits from the nearest
      {"pl", "plan"},            // two insertions
  };
  for (const Case& c : cases) EXPECT_EQ(Nearest(c.word, names), c.want) << c.word;
}

TEST(FlagRules, RangeValidatorsNameTheRange) {
  CLI::Validator days = InRange(0, 3650, true, "days");
  struct Case {
    std::string in, err;  // err "" = accepted
  };
  const std::string expected = "expected a number of days greater than 0 and at most 3650, got ";
  const Case cases[] = {
      {"3", ""}, {"0.5", ""}, {"3650", ""},
      {"0", expected + "\"0\""}, {"-3", expected + "\"-3\""}, {"3651", expected + "\"3651\""},
      {"nan", expected + "\"nan\""}, {"1e400", expected + "\"1e400\""}, {"3x", expected + "\"3x\""},
  };
  for (const Case& c : cases) {
    std::string v = c.in;
    EXPECT_EQ(days(v), c.err) << c.in;
  }
  CLI::Validator jobs = CountInRange(1, 100, "jobs");
  std::string ok = "100", zero = "0", frac = "2.5", neg = "-1";
  EXPECT_EQ(jobs(ok), "");
  EXPECT_EQ(jobs(zero), "expected a whole number of jobs from 1 to 100, got \"0\"");
  EXPECT_EQ(jobs(frac), "expected a whole number of jobs from 1 to 100, got \"2.5\"");
  EXPECT_EQ(jobs(neg), "expected a whole number of jobs from 1 to 100, got \"-1\"");
  CLI::Validator closed = InRange(0, 1, false, "probability");
  std::string zero_ok = "0";
  EXPECT_EQ(closed(zero_ok), "");
}

TEST(FlagRules, SubcommandHintWalksTheCommandTree) {
  CLI::App app;
  CLI::App* plan = app.add_subcommand("plan");
  plan->add_subcommand("estimate");
  plan->add_subcommand("search");
  app.add_subcommand("simulate");
  struct Case {
    std::vector<std::string> args;
    std::string want;
  };
  const Case cases[] = {
      {{"simulat"}, "'simulat' is not a command; did you mean 'simulate'?"},
      {{"plan", "estimat", "--json"}, "'estimat' is not a command; did you mean 'estimate'?"},
      {{"plan", "search"}, ""},          // both known
      {{"simulate", "trace.csv"}, ""},   // simulate has no subcommands: a positional
      {{"--help"}, ""},                  // a flag stops the walk
      {{"frobnicate"}, ""},              // nothing near
  };
  for (const Case& c : cases) EXPECT_EQ(SubcommandHint(app, c.args), c.want) << c.args.front();
}

}  // namespace
}  // namespace orrery::cli
