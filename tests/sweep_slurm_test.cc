// `orrery sweep --slurm` against a real local Slurm 22.05 (tests/slurm/harness.sh, 1 node): the
// incomplete cells go out as one job array whose tasks run `orrery sweep run-cell`; the
// collected table equals a local sweep's, and a rerun submits only what is incomplete. Named
// *Slow*; shares the harness lock.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_testing.h"
#include "slurm/live_slurm.h"

namespace orrery {
namespace {

using cli_testing::CmdOut;
using cli_testing::RunOrrery;

size_t CompleteCells(const std::string& dir) {
  size_t n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/cells", ec))
    n += std::filesystem::exists(e.path() / "summary.json");
  return n;
}

// Waits up to 120 s for `want` complete cells.
bool WaitForCells(const std::string& dir, size_t want) {
  for (int i = 0; i < 240; ++i) {
    if (CompleteCells(dir) >= want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  return false;
}

TEST(SweepSlurmSlow, ArrayTasksRunEachIncompleteCellAndTheTableMatchesALocalSweep) {
  if (!testing::SlurmInstalled()) GTEST_SKIP() << "Slurm daemons not installed or not root (scripts/install-deps.sh)";
  testing::SlurmCluster cluster(1);
  ASSERT_TRUE(cluster.ok()) << cluster.log();
  const std::string spec = cluster.dir() + "/grid.toml";
  {
    std::ofstream f(spec);
    f << "policies = [\"fifo\", \"sjf\", \"easy\"]\nseeds = [1, 2]\n[generate]\npreset = \"helios-venus\"\njobs = 60\n";
  }
  const std::string local = cluster.dir() + "/local", remote = cluster.dir() + "/remote";
  CmdOut o = RunOrrery("sweep " + spec + " --out-dir " + local + " --jobs 1");
  ASSERT_EQ(o.status, 0) << o.text;
  const std::string slurm = " --slurm --jobs 2 --slurm-conf " + cluster.conf();
  o = RunOrrery("sweep " + spec + " --out-dir " + remote + slurm);
  ASSERT_EQ(o.status, 0) << o.text;
  EXPECT_NE(o.text.find("sweep: 6 cells: 0 complete before, 6 submitted as Slurm job array "), std::string::npos) << o.text;
  ASSERT_TRUE(WaitForCells(remote, 6)) << CompleteCells(remote) << " cells complete";
  const std::string want = RunOrrery("sweep collect " + local).text;
  EXPECT_EQ(RunOrrery("sweep collect " + remote).text, want);
  // One cell's outputs deleted: only that cell is submitted again.
  const nlohmann::json grid = nlohmann::json::parse(cli_testing::Slurp(remote + "/grid.json"));
  std::filesystem::remove(remote + "/cells/" + grid["cells"][3]["id"].get<std::string>() + "/summary.json");
  o = RunOrrery("sweep " + spec + " --out-dir " + remote + slurm);
  EXPECT_NE(o.text.find("sweep: 6 cells: 5 complete before, 1 submitted"), std::string::npos) << o.text;
  ASSERT_TRUE(WaitForCells(remote, 6));
  EXPECT_EQ(RunOrrery("sweep collect " + remote).text, want);
  o = RunOrrery("sweep " + spec + " --out-dir " + remote + slurm);
  EXPECT_NE(o.text.find("6 complete before, nothing to submit"), std::string::npos) << o.text;
}

}  // namespace
}  // namespace orrery
