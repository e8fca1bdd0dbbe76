#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "eval/history.h"

namespace orrery::eval {
namespace {

std::string TempPath(const std::string& tag) {
  std::string p = (std::filesystem::temp_directory_path() / ("orrery_eval_" + tag + "_" + std::to_string(getpid()) + ".db")).string();
  std::filesystem::remove(p);
  return p;
}

Suite Named(std::vector<std::string> names) {
  Suite s;
  s.path = "t.csv";
  for (auto& n : names) {
    Dataset d;
    d.name = n;
    d.examples = 100;
    s.datasets.push_back(d);
  }
  return s;
}

TrialRecord Rec(std::string key, std::string dataset, double infer_s, uint64_t examples, double scale = 1) {
  TrialRecord r;
  r.key = std::move(key);
  r.dataset = std::move(dataset);
  r.model_params = 7e9;
  r.gpu = "a100-80g";
  r.examples = examples;
  r.infer_s = infer_s;
  r.time_scale = scale;
  return r;
}

TEST(HistoryTest, PriorsAreMediansScaledToTheModel) {
  const std::string path = TempPath("priors");
  auto h = History::Open(path, true);
  ASSERT_TRUE(h.ok()) << h.error().message;
  ASSERT_TRUE(*(*h)->Record(Rec("r1/0", "mmlu", 100, 100)));        // 1.0 s/ex
  ASSERT_TRUE(*(*h)->Record(Rec("r1/1", "mmlu", 30, 10, 0.01)));    // 30 / 0.01 / 10 = 300 s/ex
  ASSERT_TRUE(*(*h)->Record(Rec("r2/0", "mmlu", 200, 100)));        // 2.0 s/ex
  EXPECT_FALSE(*(*h)->Record(Rec("r2/0", "mmlu", 999, 1)));         // same key: ignored
  TrialRecord metric = Rec("r2/m", "mmlu", 0, 100);
  metric.metric_s = 50;  // 0.5 s/ex
  ASSERT_TRUE(*(*h)->Record(metric));
  EXPECT_EQ(*(*h)->Count(), 4u);
  auto batch = (*h)->RecordAll({Rec("r3/0", "gsm8k", 10, 10), Rec("r1/0", "mmlu", 1, 1)});  // one new, one known
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(*batch, 1u);
  EXPECT_EQ(*(*h)->Count(), 5u);
  const GpuSpec g{"a100-80g", 1, 1, 1};
  ModelSpec m14;
  m14.params = 14e9;
  auto p = (*h)->Priors(Named({"mmlu", "gsm8k", "nq"}), m14, g, 1);
  ASSERT_TRUE(p.ok()) << p.error().message;
  // median(1, 300, 2) = 2 s/ex for 7B on 1 GPU -> 4 s/ex for 14B; metric 0.5 s/ex.
  EXPECT_DOUBLE_EQ((*p)[0].infer_s_per_example, 4.0);
  EXPECT_DOUBLE_EQ((*p)[0].metric_s_per_example, 0.5);
  EXPECT_DOUBLE_EQ((*p)[1].infer_s_per_example, 2.0);  // gsm8k: 1 s/ex for 7B -> 2 s/ex for 14B
  EXPECT_LT((*p)[2].infer_s_per_example, 0);  // no runs: no prior
  // Another GPU kind has no priors.
  auto other = (*h)->Priors(Named({"mmlu"}), m14, GpuSpec{"h200", 1, 1, 1}, 1);
  ASSERT_TRUE(other.ok());
  EXPECT_LT((*other)[0].infer_s_per_example, 0);
  h->reset();
  auto again = History::Open(path, false);  // reopens: the schema is checked, not recreated
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(*(*again)->Count(), 5u);
  std::filesystem::remove(path);
}

TEST(HistoryTest, OtherSchemaVersionsAndForeignFilesAreExit2) {
  const std::string path = TempPath("v2");
  {
    auto h = History::Open(path, true);
    ASSERT_TRUE(h.ok());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE meta SET value='2' WHERE key='schema_version'", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto v2 = History::Open(path, false);
  ASSERT_FALSE(v2.ok());
  EXPECT_EQ(v2.error().message, "history " + path +
                                    ": schema version 2, this orrery reads version 1 (use a history written by the same version)");
  EXPECT_EQ(v2.error().exit_code, kExitBadInput);

  const std::string text = TempPath("text");
  std::ofstream(text) << "name,examples\nnot a database at all, but long enough to have a header page\n";
  auto t = History::Open(text, false);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message, "history " + text + ": not a SQLite database");
  EXPECT_EQ(t.error().exit_code, kExitBadInput);

  const std::string other = TempPath("other");
  ASSERT_EQ(sqlite3_open(other.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE decisions(x)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto o = History::Open(other, false);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().message, "history " + other + ": not an Orrery evaluation history (no meta table)");
  EXPECT_EQ(o.error().exit_code, kExitBadInput);

  auto missing = History::Open(TempPath("missing"), false);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().exit_code, kExitBadInput);
  for (const auto& p : {path, text, other}) std::filesystem::remove(p);
}

}  // namespace
}  // namespace orrery::eval
