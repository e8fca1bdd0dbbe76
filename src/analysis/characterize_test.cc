#include "analysis/characterize.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "trace/import.h"

namespace orrery {
namespace {

// Hand-made canonical trace: 4 GPU jobs, 1 CPU job, 3 users, epoch 2020-01-06 00:00 UTC (a Monday).
constexpr const char* kTrace =
    "#orrery-trace v1\n#origin=canonical\n#epoch_unix=1578268800\n"
    "id,source_id,user,vc,name,submit,duration,walltime,start,end,gpus,gpu_milli,gpu_types,nodes,cpu_milli,mem_mib,state\n"
    "0,,alice,vcA,,0,100,,10,110,1,1000,,0,0,0,COMPLETED\n"
    "1,,alice,vcA,,3600,200,,3600,3800,2,1000,,0,0,0,FAILED\n"
    "2,,bob,vcB,,7200,1000,,7300,8300,8,1000,,0,0,0,COMPLETED\n"
    "3,,carol,vcB,,90000,50,,90400,90450,1,1000,,0,0,0,CANCELLED\n"
    "4,,carol,vcA,,90000,30,,90000,90030,0,1000,,0,1000,0,COMPLETED\n";

Trace Load() {
  ImportReport rep;
  auto t = ImportTraceFromString(TraceFormat::kCanonical, kTrace, "hand.csv", {}, &rep);
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message);
  return *t;
}

TEST(Characterize, HandComputedValues) {
  const Trace t = Load();
  CharacterizeOptions opt;
  opt.vc_gpus = {{"vcA", 4}, {"vcB", 8}};
  const Characterization c = Characterize(t, opt);
  EXPECT_EQ(c.jobs, 5u);
  EXPECT_EQ(c.gpu_jobs, 4u);
  EXPECT_EQ(c.cpu_jobs, 1u);
  // GPU time: 100*1 + 200*2 + 1000*8 + 50*1 = 8550 GPU-s.
  EXPECT_DOUBLE_EQ(c.total_gpu_seconds, 8550.0);
  // GPU duration CDF: values 50, 100, 200, 1000 → (50, .25) (100, .5) (200, .75) (1000, 1).
  ASSERT_EQ(c.duration_cdf_gpu.size(), 4u);
  EXPECT_DOUBLE_EQ(c.duration_cdf_gpu[0].x, 50);
  EXPECT_DOUBLE_EQ(c.duration_cdf_gpu[0].p, 0.25);
  EXPECT_DOUBLE_EQ(c.duration_cdf_gpu[2].x, 200);
  EXPECT_DOUBLE_EQ(c.duration_cdf_gpu[2].p, 0.75);
  EXPECT_DOUBLE_EQ(c.duration_cdf_gpu[3].p, 1.0);
  ASSERT_EQ(c.duration_cdf_cpu.size(), 1u);
  EXPECT_DOUBLE_EQ(c.duration_cdf_cpu[0].x, 30);
  // Queueing (GPU): 10, 0, 100, 400 → CDF (0,.25) (10,.5) (100,.75) (400,1); mean 127.5.
  ASSERT_EQ(c.queue_cdf_gpu.size(), 4u);
  EXPECT_DOUBLE_EQ(c.queue_cdf_gpu[0].x, 0);
  EXPECT_DOUBLE_EQ(c.queue_cdf_gpu[1].x, 10);
  EXPECT_DOUBLE_EQ(c.queue_cdf_gpu[1].p, 0.5);
  EXPECT_DOUBLE_EQ(c.queue_gpu.mean, 127.5);
  // Demand buckets: "0 (CPU)", "1" (2 jobs), "2", "5-8".
  ASSERT_EQ(c.demand.size(), 4u);
  EXPECT_EQ(c.demand[0].label, "0 (CPU)");
  EXPECT_EQ(c.demand[1].label, "1");
  EXPECT_EQ(c.demand[1].jobs, 2u);
  EXPECT_DOUBLE_EQ(c.demand[1].job_share, 0.4);
  EXPECT_DOUBLE_EQ(c.demand[1].gpu_time_share, 150.0 / 8550.0);
  EXPECT_EQ(c.demand[3].label, "5-8");
  EXPECT_DOUBLE_EQ(c.demand[3].gpu_time_share, 8000.0 / 8550.0);
  EXPECT_EQ(c.demand[1].states[static_cast<int>(JobState::kCancelled)], 1u);
  EXPECT_EQ(c.demand[2].states[static_cast<int>(JobState::kFailed)], 1u);
  // Calendar: submissions at 00:00, 01:00, 02:00 Monday and 01:00 Tuesday (x2).
  EXPECT_TRUE(c.absolute_calendar);
  EXPECT_EQ(c.hourly[0], 1u);
  EXPECT_EQ(c.hourly[1], 3u);
  EXPECT_EQ(c.hourly[2], 1u);
  EXPECT_EQ(c.weekday[0], 3u);
  EXPECT_EQ(c.weekday[1], 2u);
  ASSERT_EQ(c.monthly.size(), 1u);
  EXPECT_EQ(c.monthly[0].label, "2020-01");
  EXPECT_EQ(c.monthly[0].jobs, 5u);
  // Users by GPU time: bob 8000, alice 500, carol 50 (GPU-s). Top 1 %, 5 %, 10 % of 3 users = 1 user.
  EXPECT_EQ(c.users, 3u);
  EXPECT_DOUBLE_EQ(c.top1_share, 8000.0 / 8550.0);
  EXPECT_DOUBLE_EQ(c.top10_share, 8000.0 / 8550.0);
  ASSERT_EQ(c.top_users.size(), 3u);
  EXPECT_EQ(c.top_users[0].user, "bob");
  EXPECT_EQ(c.top_users[1].user, "alice");
  EXPECT_DOUBLE_EQ(c.top_users[1].avg_queue, 5.0);
  // VC series: hourly bins from 00:00; vcB (more GPU time) first; bin 2 (02:00-03:00) holds
  // bob's 8 GPUs for 1000 s → 8000/3600 GPUs.
  EXPECT_TRUE(c.vc_series_is_allocation);
  EXPECT_TRUE(c.vc_capacity_known);
  EXPECT_EQ(c.bin_width, 3600);
  ASSERT_EQ(c.vc_series.size(), 2u);
  EXPECT_EQ(c.vc_series[0].vc, "vcB");
  EXPECT_EQ(c.vc_series[0].capacity, 8u);
  EXPECT_NEAR(c.vc_series[0].gpus[2], 8000.0 / 3600.0, 1e-9);
  EXPECT_NEAR(c.vc_series[1].gpus[0], 100.0 / 3600.0, 1e-9);
  EXPECT_NEAR(c.vc_series[1].gpus[1], 400.0 / 3600.0, 1e-9);
  // Not Acme: no job types, and that is said.
  EXPECT_TRUE(c.job_types.empty());
  bool said = false;
  for (const auto& m : c.missing) said |= m.rfind("job types", 0) == 0;
  EXPECT_TRUE(said);
}

TEST(Characterize, CdfDownsamplingKeepsEndsAndBound) {
  std::vector<double> v;
  for (int i = 1; i <= 100000; ++i) v.push_back(i);
  const auto cdf = report::Cdf(v, 200);
  EXPECT_LE(cdf.size(), 200u);
  EXPECT_DOUBLE_EQ(cdf.front().x, 1);
  EXPECT_DOUBLE_EQ(cdf.back().x, 100000);
  EXPECT_DOUBLE_EQ(cdf.back().p, 1.0);
  for (size_t i = 1; i < cdf.size(); ++i) EXPECT_GT(cdf[i].x, cdf[i - 1].x);
}

TEST(Characterize, AcmeJobTypes) {
  ImportReport rep;
  auto t = LoadTrace(ORRERY_SOURCE_DIR "/tests/fixtures/trace/acme_seren.csv", TraceFormat::kAuto, {}, &rep);
  ASSERT_TRUE(t.ok()) << t.error().message;
  const Characterization c = Characterize(*t);
  ASSERT_FALSE(c.job_types.empty());
  double share = 0;
  for (const auto& r : c.job_types) share += r.gpu_time_share;
  EXPECT_NEAR(share, 1.0, 1e-9);
  EXPECT_EQ(c.job_types.front().type, "SFT");  // 16 GPUs x 1 day: the most GPU time in the fixture
}

TEST(Characterize, PhillySmoke) {
  const std::string path = ORRERY_SHARED_DIR "/traces/philly-pollux/philly.part-A.submit-before-2017-11-01.csv";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "shared Philly trace absent: " << path;
  auto t = LoadTrace(path);
  ASSERT_TRUE(t.ok()) << t.error().message;
  const Characterization c = Characterize(*t);
  EXPECT_EQ(c.jobs, t->jobs.size());
  EXPECT_GT(c.gpu_jobs, 50000u);
  EXPECT_LE(c.duration_cdf_gpu.size(), 200u);
  EXPECT_TRUE(c.absolute_calendar);
  EXPECT_TRUE(c.queue_cdf_gpu.empty());  // Philly (Pollux) has no start times
  EXPECT_EQ(c.users, 0u);
  EXPECT_FALSE(c.vc_series.empty());
  const report::Page page = CharacterizationPage(c, "philly");
  const std::string html = report::RenderHtml(page);
  EXPECT_LT(html.size(), 3u << 20);  // bounded: downsampled CDFs and time series
}

}  // namespace
}  // namespace orrery
