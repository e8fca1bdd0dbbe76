// `orrery report` on runs with failures: the "Failures and recovery" section (GPU-hours lost
// by cause per run, the counts) appears only when a run has a summary.json "failures" object.
#include <gtest/gtest.h>

#include "analysis/report.h"

namespace orrery {
namespace {

LoadedRun MakeRun(const std::string& label, nlohmann::ordered_json failures) {
  LoadedRun r;
  r.label = label;
  r.summary = {{"policy", label}, {"jobs", {{"finished", 1}}}};
  if (!failures.is_null()) r.summary["failures"] = std::move(failures);
  return r;
}

const report::Section* Find(const report::Page& p, const std::string& title) {
  for (const auto& s : p.sections)
    if (s.title == title) return &s;
  return nullptr;
}

TEST(ReportFailures, GpuHoursByCausePerRun) {
  const nlohmann::ordered_json acme = {
      {"spec", "trace"}, {"recovery", "acme"}, {"injected", 10}, {"retried", 4}, {"not_retried", 6},
      {"by_category", {{"infrastructure", 3}, {"framework", 1}, {"script", 6}}}, {"cordoned_nodes", 3},
      {"metrics", {{"lost_work_gpu_hours", 12.5}, {"overhead_gpu_hours", 2.0}, {"waiting_gpu_hours", 0.5},
                   {"mttr_s", 90.0}, {"ettr_failed_jobs", 0.5}}}};
  nlohmann::ordered_json requeue = acme;
  requeue["recovery"] = "requeue";
  requeue["metrics"]["lost_work_gpu_hours"] = 30.0;
  const report::Page page = RunReportPage({MakeRun("acme", acme), MakeRun("requeue", requeue)});
  const report::Section* s = Find(page, "Failures and recovery");
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->charts.size(), 1u);
  const report::Chart& c = s->charts[0];
  EXPECT_EQ(c.id, "failure_gpu_hours");
  ASSERT_EQ(c.data.size(), 6u);  // 2 runs x 3 causes
  EXPECT_EQ(c.data[0]["policy"], "acme");
  EXPECT_EQ(c.data[0]["cause"], "lost work");
  EXPECT_DOUBLE_EQ(c.data[0]["gpu_hours"].get<double>(), 12.5);
  EXPECT_DOUBLE_EQ(c.data[3]["gpu_hours"].get<double>(), 30.0);
  ASSERT_EQ(s->tables.size(), 1u);
  const report::Table& t = s->tables[0];
  EXPECT_EQ(t.header, (std::vector<std::string>{"metric", "acme", "requeue"}));
  EXPECT_EQ(t.rows[0], (std::vector<std::string>{"failure source / recovery", "trace / acme", "trace / requeue"}));
  bool cordon = false;
  for (const auto& row : t.rows) cordon |= row[0] == "nodes cordoned" && row[1] == "3";
  EXPECT_TRUE(cordon);
}

TEST(ReportFailures, AbsentWithoutFailures) {
  const report::Page page = RunReportPage({MakeRun("fifo", nullptr)});
  EXPECT_EQ(Find(page, "Failures and recovery"), nullptr);
  // Failures without attempts (no metrics): the table, no chart, a note saying why.
  const report::Page bare = RunReportPage({MakeRun("fifo", {{"spec", "trace"}, {"recovery", "none"}, {"injected", 2}})});
  const report::Section* s = Find(bare, "Failures and recovery");
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(s->charts.empty());
  EXPECT_EQ(s->missing.size(), 1u);
}

}  // namespace
}  // namespace orrery
