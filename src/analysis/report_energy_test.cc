// `orrery report` on energy-saving runs: the powered-nodes series is read and charted.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "analysis/report.h"
#include "analysis/sim_output.h"

namespace orrery {
namespace {

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

TEST(ReportEnergy, PoweredNodesSeriesIsAveragedAndCharted) {
  const std::string dir = ::testing::TempDir() + "/orrery-report-energy-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/fifo");
  std::filesystem::create_directories(dir + "/sjf");
  RunSummary a, b;
  a.policy = "fifo";
  a.has_energy = true;
  a.energy.spec = "ces";
  b.policy = "sjf";
  nlohmann::ordered_json sum = {{"scenario", "s"}, {"cluster", "c"}, {"seed", 1}, {"jobs", 1}};
  sum["runs"] = nlohmann::ordered_json::array({SummaryToJson(a), SummaryToJson(b)});
  Write(dir + "/summary.json", sum.dump());
  const std::string jobs = "job_id,gpus,jct,queue_delay,status\n0,1,10,0,finished\n";
  Write(dir + "/fifo/jobs.csv", jobs);
  Write(dir + "/sjf/jobs.csv", jobs);
  Write(dir + "/fifo/timeseries.csv",
        "time,busy_gpus,utilization,running_jobs,pending_jobs,pending_gpus,powered_nodes\n"
        "0,1,0.5,1,0,0,4\n60,1,0.5,1,0,0,2\n120,0,0,0,0,0,1\n");
  Write(dir + "/sjf/timeseries.csv", "time,busy_gpus,utilization,running_jobs,pending_jobs,pending_gpus\n0,1,0.5,1,0,0\n");
  RunReportOptions opt;
  opt.max_time_points = 2;  // 3 samples → bins of 2: (4 + 2) / 2 = 3, then 1
  auto runs = LoadRuns({dir}, opt);
  ASSERT_TRUE(runs.ok()) << runs.error().message;
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].powered, (std::vector<std::pair<double, double>>{{0, 3}, {120, 1}}));
  EXPECT_TRUE((*runs)[1].powered.empty());  // no energy object: the column is not read
  report::Page page = RunReportPage(*runs, opt);
  bool charted = false;
  for (const auto& s : page.sections)
    for (const auto& c : s.charts) charted |= c.id == "powered_nodes_over_time" && c.data.size() == 2;
  EXPECT_TRUE(charted);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace orrery
