#include <gtest/gtest.h>

#include "eval/suite.h"

namespace orrery::eval {
namespace {

constexpr const char* kHeader = "name,examples,task_type,max_out_len,few_shot,source\n";

Result<Suite> Parse(const std::string& body, const std::string& header = kHeader) {
  return ParseSuite(header + body, "s.csv");
}

TEST(SuiteTest, ParsesTheColumnsOfTheSharedSuite) {
  auto s = Parse("\"mmlu (57 subjects, test)\",14042,perplexity,,5,x\nopenai_humaneval,164,generation,512,0,y\n"
                 "C3,,perplexity,,0,z\nwinogrande,1267,loglikelihood,,0,w\n");
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s->datasets.size(), 4u);
  const Dataset& mmlu = s->datasets[0];
  EXPECT_EQ(mmlu.name, "mmlu (57 subjects, test)");
  EXPECT_EQ(*mmlu.examples, 14042u);
  EXPECT_EQ(mmlu.task, TaskType::kPerplexity);
  EXPECT_FALSE(mmlu.max_out_len.has_value());
  EXPECT_EQ(mmlu.few_shot, 5u);
  EXPECT_EQ(mmlu.metric, MetricKind::kMatch);
  EXPECT_EQ(mmlu.line, 2u);
  const Dataset& he = s->datasets[1];
  EXPECT_EQ(*he.max_out_len, 512u);
  EXPECT_EQ(he.metric, MetricKind::kCode);  // default metric by name: humaneval* -> code execution
  EXPECT_FALSE(s->datasets[2].examples.has_value());
  EXPECT_EQ(s->datasets[3].task, TaskType::kLoglikelihood);
}

TEST(SuiteTest, OptionalColumnsOverrideTheDefaults) {
  auto s = Parse("a,10,perplexity,,0,3,900,judge\nmbpp,500,generation,512,3,,,\n",
                 "name,examples,task_type,max_out_len,few_shot,candidates,prompt_tokens,metric\n");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(*s->datasets[0].candidates, 3u);
  EXPECT_EQ(*s->datasets[0].prompt_tokens, 900u);
  EXPECT_EQ(s->datasets[0].metric, MetricKind::kJudge);
  EXPECT_EQ(s->datasets[1].metric, MetricKind::kCode);  // empty metric: the default (mbpp -> code)
}

struct BadCase {
  std::string header, body, message;
};

TEST(SuiteTest, BadInputGivesLocatedMessages) {
  const std::vector<BadCase> cases = {
      {kHeader, "a,ten,generation,,0,\n", "s.csv:2:3: field 'examples': expected an integer in [1, 1000000000] or empty, got \"ten\""},
      {kHeader, "a,0,generation,,0,\n", "s.csv:2:3: field 'examples': expected an integer in [1, 1000000000] or empty, got \"0\""},
      {kHeader, "a,5,generate,,0,\n", "s.csv:2:5: field 'task_type': expected generation, perplexity or loglikelihood, got \"generate\""},
      {kHeader, "a,5,generation,-1,0,\n", "s.csv:2:16: field 'max_out_len': expected an integer in [1, 10000000] or empty, got \"-1\""},
      {kHeader, "a,5,generation,,0\n", "s.csv:2:1: expected 6 fields (as in the header), got 5"},
      {kHeader, ",5,generation,,0,\n", "s.csv:2:1: field 'name': expected a dataset name, got \"\""},
      {kHeader, "a,5,generation,,0,\na,6,generation,,0,\n", "s.csv:3:1: dataset \"a\" appears twice (first on line 2)"},
      {kHeader, "\"a,5,generation,,0,\n", "s.csv:2:1: unterminated quoted field"},
      {"name,examples,task_type,few_shot\n", "", "s.csv:1:1: missing column 'max_out_len' (a suite needs name, examples, task_type, max_out_len, few_shot)"},
      {"name,examples,task,max_out_len,few_shot\n", "", "s.csv:1:15: unknown column \"task\" (expected name, examples, task_type, max_out_len, few_shot, source, candidates, prompt_tokens, metric)"},
      {"", "", "s.csv:1:1: empty suite: expected a header line (name, examples, task_type, max_out_len, few_shot, source, candidates, prompt_tokens, metric)"},
  };
  for (const BadCase& c : cases) {
    auto s = Parse(c.body, c.header);
    ASSERT_FALSE(s.ok()) << c.body;
    EXPECT_EQ(s.error().message, c.message);
    EXPECT_EQ(s.error().exit_code, kExitBadInput);
  }
}

TEST(SuiteTest, UnsizedAndUnknownDatasetsAreClearErrors) {
  auto s = Parse("a,5,generation,,0,\nC3,,perplexity,,0,\n");
  ASSERT_TRUE(s.ok());
  auto sized = RequireSized(*s, false, nullptr);
  ASSERT_FALSE(sized.ok());
  EXPECT_EQ(sized.error().message,
            "datasets without an example count (fill 'examples' or pass --skip-unsized): s.csv:3: \"C3\"");
  std::vector<std::string> dropped;
  auto skipped = RequireSized(*s, true, &dropped);
  ASSERT_TRUE(skipped.ok());
  EXPECT_EQ(skipped->datasets.size(), 1u);
  EXPECT_EQ(dropped, std::vector<std::string>{"C3"});
  auto unknown = SelectDatasets(*s, {"a", "nope"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "unknown dataset \"nope\": s.csv has no row with that name");
  auto only_c3 = SelectDatasets(*s, {"C3"});
  ASSERT_TRUE(only_c3.ok());
  auto zero = RequireSized(*only_c3, true, nullptr);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().message, "s.csv: zero-size suite: no dataset with examples to evaluate");
  EXPECT_EQ(zero.error().exit_code, kExitBadInput);
  auto empty = Parse("");
  ASSERT_TRUE(empty.ok());  // a header alone parses; planning it is the zero-size error
  EXPECT_FALSE(RequireSized(*empty, false, nullptr).ok());
}

TEST(SuiteTest, GlobMatchesLikeFnmatchStar) {
  EXPECT_TRUE(GlobMatch("bbh*", "bbh (27 tasks)"));
  EXPECT_TRUE(GlobMatch("*professional_law", "lukaemon_mmlu_professional_law"));
  EXPECT_TRUE(GlobMatch("agieval-math", "agieval-math"));
  EXPECT_FALSE(GlobMatch("agieval-math", "agieval-mathcloze"));
  EXPECT_FALSE(GlobMatch("math*", "gsm8k"));
  EXPECT_TRUE(GlobMatch("*a*b*", "xxaxxbxx"));
}

TEST(SuiteTest, ReadsTheSharedSuite) {
  auto s = LoadSuite(std::string(ORRERY_SHARED_DIR) + "/corpora/eval-suite/datasets.csv");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->datasets.size(), 66u);  // README: 66 rows, 3 without a count
  std::vector<std::string> dropped;
  auto sized = RequireSized(*s, true, &dropped);
  ASSERT_TRUE(sized.ok());
  EXPECT_EQ(sized->datasets.size(), 63u);  // as many as Acme's 63-dataset evaluation
  EXPECT_EQ(dropped, (std::vector<std::string>{"C3", "lcsts", "summedits"}));
}

}  // namespace
}  // namespace orrery::eval
