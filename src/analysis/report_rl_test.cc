// `orrery report` on runs with RL jobs: the "RL post-training jobs" section appears only when a
// run has a summary.json "rl" object, with the step's phases per run and the RL figures.
#include <gtest/gtest.h>

#include "analysis/report.h"

namespace orrery {
namespace {

LoadedRun MakeRun(const std::string& label, nlohmann::ordered_json rl) {
  LoadedRun r;
  r.label = label;
  r.summary = {{"policy", label}, {"jobs", {{"finished", 1}}}};
  if (!rl.is_null()) r.summary["rl"] = std::move(rl);
  return r;
}

const report::Section* Find(const report::Page& p, const std::string& title) {
  for (const auto& s : p.sections)
    if (s.title == title) return &s;
  return nullptr;
}

TEST(ReportRl, StepPhasesAndFiguresPerRun) {
  const nlohmann::ordered_json tlt = {{"strategy", "tlt"}, {"jobs", 4}, {"finished", 3},
                                      {"step_time_s", 200.0}, {"sync_step_time_s", 300.0},
                                      {"breakdown_s", {{"rollout", 150.0}, {"tail", 60.0}, {"reward", 20.0}, {"train", 29.0}, {"sync", 1.0}}},
                                      {"gpu_hours", 120.5}, {"idle_gpu_hours", 10.25},
                                      {"other_jobs", {{"finished", 9}, {"avg_jct_s", 3600.0}, {"preemptions", 2}}}};
  const report::Page page = RunReportPage({MakeRun("fifo", tlt), MakeRun("plain", nullptr)});
  const report::Section* s = Find(page, "RL post-training jobs");
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->charts.size(), 1u);
  const report::Chart& c = s->charts[0];
  ASSERT_EQ(c.data.size(), 4u);  // one run with RL jobs x 4 phases (the tail is part of the rollout)
  EXPECT_EQ(c.data[0]["phase"], "rollout");
  EXPECT_DOUBLE_EQ(c.data[0]["seconds"].get<double>(), 150.0);
  EXPECT_DOUBLE_EQ(c.data[3]["seconds"].get<double>(), 1.0);
  const report::Table& t = s->tables[0];
  EXPECT_EQ(t.header, (std::vector<std::string>{"metric", "fifo"}));
  EXPECT_EQ(t.rows[1], (std::vector<std::string>{"RL jobs (finished)", "4 (3)"}));
  EXPECT_EQ(t.rows[4], (std::vector<std::string>{"speedup over sync", "1.50x"}));  // 300 / 200
  EXPECT_EQ(t.rows[8], (std::vector<std::string>{"other jobs: preemptions", "2"}));
  EXPECT_EQ(Find(RunReportPage({MakeRun("plain", nullptr)}), "RL post-training jobs"), nullptr);
  EXPECT_EQ(t.rows.size(), 9u);  // no harvest rows without a harvest run

  // A harvest run beside it: three more rows, a dash for the run that lent nothing.
  nlohmann::ordered_json hv = tlt;
  hv["strategy"] = "harvest";
  hv["harvest"] = {{"lent_gpu_hours", 30.4}, {"harvested_gpu_hours", 12.0}, {"borrower_preemptions", 7}};
  const report::Page both = RunReportPage({MakeRun("tlt", tlt), MakeRun("harvest", hv)});
  const report::Table& h = Find(both, "RL post-training jobs")->tables[0];
  ASSERT_EQ(h.rows.size(), 12u);
  EXPECT_EQ(h.rows[9], (std::vector<std::string>{"harvest: lent GPU-hours", "—", "30.4"}));
  EXPECT_EQ(h.rows[10], (std::vector<std::string>{"harvest: harvested GPU-hours", "—", "12.0"}));
  EXPECT_EQ(h.rows[11], (std::vector<std::string>{"harvest: borrowers preempted", "—", "7"}));
}

}  // namespace
}  // namespace orrery
