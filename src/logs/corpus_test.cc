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
  // Reached: 21/21 category, 21/21 subtype, retry tp 9 fp 0 fn 0, 21/21 suspect_node.
  EXPECT_GE(s->category.rate(), 0.95);
  EXPECT_GE(s->subtype.rate(), 0.9);
  EXPECT_GE(s->retry_precision(), 0.9);
  EXPECT_GE(s->retry_recall(), 0.9);
  EXPECT_GE(s->suspect.rate(), 0.9);
  for (const char* c : {"infrastructure", "framework", "script"}) EXPECT_GE(s->by_category[c].rate(), 0.8) << c;
}

TEST(CorpusTest, TrackerOnProgressLogsDev) {
  const std::string path = Corpus("progress-logs/dev.jsonl");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
  auto s = EvaluateProgress(path);
  ASSERT_TRUE(s.ok()) << s.error().message;
  std::fputs(FormatProgressScores(*s, false).c_str(), stdout);
  // Reached: 12/12 on every value field; framework 11/12 (P002 is axolotl printing HF
  // Trainer dicts, which nothing in the excerpt distinguishes from hf_trainer).
  for (const char* f : {"step", "total_steps", "epoch", "loss", "seconds_per_step"}) EXPECT_GE(s->fields[f].rate(), 0.9) << f;
  EXPECT_GE(s->fields["framework"].rate(), 0.85);
}

}  // namespace
}  // namespace orrery::logs
