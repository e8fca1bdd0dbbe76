// `orrery sweep --slurm` against a real local Slurm 22.05 (tests/slurm/harness.sh, 1 node): the
// incomplete cells go out as one job array whose tasks run `orrery sweep run-cell`; the
// collected table equals a local sweep's, and a rerun submits only what is incomplete and not
// in the queue; a task killed mid-run leaves no output and its cell runs once more. Named
// *Slow*; shares the harness lock. SweepQueue reads squeue's array rows (no Slurm needed).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_testing.h"
#include "live/batch_submit.h"
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
  EXPECT_NE(o.text.find("sweep: 6 cells: 0 complete before, 0 in the queue, 6 submitted as Slurm job array "), std::string::npos) << o.text;
  ASSERT_TRUE(WaitForCells(remote, 6)) << CompleteCells(remote) << " cells complete";
  const std::string want = RunOrrery("sweep collect " + local).text;
  EXPECT_EQ(RunOrrery("sweep collect " + remote).text, want);
  // One cell's outputs deleted: only that cell is submitted again.
  const nlohmann::json grid = nlohmann::json::parse(cli_testing::Slurp(remote + "/grid.json"));
  std::filesystem::remove(remote + "/cells/" + grid["cells"][3]["id"].get<std::string>() + "/summary.json");
  o = RunOrrery("sweep " + spec + " --out-dir " + remote + slurm);
  EXPECT_NE(o.text.find("sweep: 6 cells: 5 complete before, 0 in the queue, 1 submitted"), std::string::npos) << o.text;
  ASSERT_TRUE(WaitForCells(remote, 6));
  EXPECT_EQ(RunOrrery("sweep collect " + remote).text, want);
  o = RunOrrery("sweep " + spec + " --out-dir " + remote + slurm);
  EXPECT_NE(o.text.find("6 complete before, 0 in the queue, nothing to submit"), std::string::npos) << o.text;
}

TEST(SweepQueue, ArrayRowsOfSqueueAreParsedAndOthersRefused) {
  const std::string sep(1, live::kFieldSep);
  Result<std::vector<live::ArrayTask>> t = live::ParseArrayTasks(
      "12_0" + sep + "RUNNING" + sep + "orrery:sweep-grid=ab\n12_7" + sep + "PENDING" + sep + "orrery:sweep-grid=ab\n"
      "\n13_2" + sep + "CANCELLED" + sep + "(null)\r\n");
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->size(), 3u);
  EXPECT_EQ((*t)[0].job, 12u);
  EXPECT_EQ((*t)[0].task, 0u);
  EXPECT_EQ((*t)[0].state, live::SlurmJobState::kRunning);
  EXPECT_EQ((*t)[0].comment, "orrery:sweep-grid=ab");
  EXPECT_EQ((*t)[1].task, 7u);
  EXPECT_EQ((*t)[1].state, live::SlurmJobState::kPending);
  EXPECT_EQ((*t)[2].state, live::SlurmJobState::kCancelled);
  EXPECT_EQ((*t)[2].state_raw, "CANCELLED");
  for (const std::string bad : {"12" + sep + "RUNNING" + sep + "x", "12_[3-5%2]" + sep + "PENDING" + sep + "x",
                                std::string("12_3 RUNNING")}) {
    Result<std::vector<live::ArrayTask>> b = live::ParseArrayTasks("12_1" + sep + "RUNNING" + sep + "x\n" + bad);
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_EQ(b.error().message.rfind("squeue output line 2: expected an array task", 0), 0u) << b.error().message;
  }
}

// The sweep's tasks in the queue: {"123_4": state}.
std::map<std::string, std::string> SweepTasks(const testing::SlurmCluster& cluster) {
  live::ExecSlurmClient slurm = cluster.Client();
  std::map<std::string, std::string> out;
  Result<std::vector<live::ArrayTask>> t = live::ListArrayTasks(slurm, "");
  if (!t.ok()) return out;
  for (const live::ArrayTask& a : *t) out[std::to_string(a.job) + "_" + std::to_string(a.task)] = a.state_raw;
  return out;
}

bool AnyLive(const std::map<std::string, std::string>& tasks) {
  for (const auto& [id, state] : tasks)
    if (!live::IsTerminal(live::ParseSlurmJobState(state))) return true;
  return false;
}

// 20 cells of 2 s or so each (250,000 generated jobs), two tasks at once. Right after the
// submission a second --slurm submits nothing (every cell complete or in the queue); one task is
// cancelled while its cell runs (its claim taken, no summary yet): it leaves no summary, the next
// --slurm submits that cell alone, and the new task takes the dead task's claim over. Every
// cell then has one summary from one run, and the table is a local sweep's, byte for byte.
TEST(SweepSlurmSlow, TaskKilledMidRunIsResubmittedAloneAndEveryCellRunsOnce) {
  if (!testing::SlurmInstalled()) GTEST_SKIP() << "Slurm daemons not installed or not root (scripts/install-deps.sh)";
  testing::SlurmCluster cluster(1);
  ASSERT_TRUE(cluster.ok()) << cluster.log();
  const std::string spec = cluster.dir() + "/grid.toml";
  {
    std::ofstream f(spec);
    f << "policies = [\"fifo\", \"sjf\"]\nseeds = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n[generate]\npreset = \"helios-venus\"\n"
         "[options]\njobs = [250000]\n";
  }
  const std::string local = cluster.dir() + "/local", remote = cluster.dir() + "/remote";
  CmdOut o = RunOrrery("sweep " + spec + " --out-dir " + local + " --jobs 2");
  ASSERT_EQ(o.status, 0) << o.text;
  ASSERT_NE(o.text.find("sweep: 20 cells: 0 complete before, 20 ran, 0 failed"), std::string::npos) << o.text;
  const std::string slurm = " --slurm --jobs 2 --slurm-conf " + cluster.conf();
  o = RunOrrery("sweep " + spec + " --out-dir " + remote + slurm);
  ASSERT_EQ(o.status, 0) << o.text;
  ASSERT_NE(o.text.find("sweep: 20 cells: 0 complete before, 0 in the queue, 20 submitted as Slurm job array "),
            std::string::npos)
      << o.text;
  // Resubmitting while the array is queued: nothing goes out twice.
  o = RunOrrery("sweep " + spec + " --out-dir " + remote + slurm);
  ASSERT_EQ(o.status, 0) << o.text;
  EXPECT_NE(o.text.find("nothing to submit"), std::string::npos) << o.text;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(o.text, m, std::regex("(\\d+) complete before, (\\d+) in the queue"))) << o.text;
  EXPECT_EQ(std::stoul(m[1]) + std::stoul(m[2]), 20u) << o.text;
  EXPECT_GT(std::stoul(m[2]), 0u) << o.text;
  // Catch a cell mid-run: claimed by its task, no summary yet; cancel that task.
  const nlohmann::json grid = nlohmann::json::parse(cli_testing::Slurp(remote + "/grid.json"));
  std::string killed_cell, killed_task;
  live::ExecSlurmClient client = cluster.Client();
  for (int tries = 0; tries < 3 && killed_cell.empty(); ++tries) {
    std::string cell, task;
    ASSERT_TRUE(testing::WaitFor(
        [&] {
          for (const auto& c : grid["cells"]) {
            const std::string d = remote + "/cells/" + c["id"].get<std::string>();
            const std::string holder = cli_testing::Slurp(d + "/claim");
            if (holder.rfind("slurm:", 0) == 0 && !std::filesystem::exists(d + "/summary.json")) {
              cell = c["id"], task = holder.substr(6, holder.find('\n') - 6);
              return true;
            }
          }
          return false;
        },
        60))
        << "no cell caught running";
    ASSERT_TRUE(client.Run("scancel", {task}).ok());
    ASSERT_TRUE(testing::WaitFor([&] { return SweepTasks(cluster)[task] == "CANCELLED"; }, 30))
        << task << " " << SweepTasks(cluster)[task];
    // Cancelled before its summary: the cell was caught mid-run. Else it had just finished; try another.
    if (!std::filesystem::exists(remote + "/cells/" + cell + "/summary.json")) killed_cell = cell, killed_task = task;
  }
  ASSERT_FALSE(killed_cell.empty()) << "every cancelled task had finished its cell";
  // The other 19 run to the end; the killed cell has no summary and keeps the dead task's claim.
  ASSERT_TRUE(testing::WaitFor([&] { return !AnyLive(SweepTasks(cluster)); }, 180));
  EXPECT_EQ(CompleteCells(remote), 19u);
  const std::string kdir = remote + "/cells/" + killed_cell;
  EXPECT_FALSE(std::filesystem::exists(kdir + "/summary.json"));
  EXPECT_EQ(cli_testing::Slurp(kdir + "/claim"), "slurm:" + killed_task + "\n");
  for (const auto& e : std::filesystem::directory_iterator(kdir))  // no half-written file left behind
    EXPECT_TRUE(e.path().filename() == "claim" || e.path().filename() == "claim.lock") << e.path();
  o = RunOrrery("sweep " + spec + " --out-dir " + remote + slurm);
  ASSERT_EQ(o.status, 0) << o.text;
  EXPECT_NE(o.text.find("sweep: 20 cells: 19 complete before, 0 in the queue, 1 submitted as Slurm job array "),
            std::string::npos)
      << o.text;
  ASSERT_TRUE(WaitForCells(remote, 20)) << CompleteCells(remote) << " cells complete";
  ASSERT_TRUE(testing::WaitFor([&] { return !AnyLive(SweepTasks(cluster)); }, 60));
  EXPECT_FALSE(std::filesystem::exists(kdir + "/claim"));  // taken over, then released
  // Every cell ran exactly once to the end: one "ran" line per cell over all task outputs.
  std::map<std::string, int> ran;
  for (const auto& e : std::filesystem::directory_iterator(remote + "/slurm")) {
    if (e.path().extension() != ".out") continue;
    const std::string text = cli_testing::Slurp(e.path());
    for (const auto& c : grid["cells"])
      if (text.find(" " + c["id"].get<std::string>() + ": ran after 1 attempts") != std::string::npos) ++ran[c["id"]];
  }
  ASSERT_EQ(ran.size(), 20u);
  for (const auto& [id, n] : ran) EXPECT_EQ(n, 1) << id;
  const std::string want = RunOrrery("sweep collect " + local).text;
  EXPECT_NE(want.find("\nfifo,,consolidate,0,jobs=250000,10,"), std::string::npos) << want;
  EXPECT_EQ(RunOrrery("sweep collect " + remote).text, want);
}

}  // namespace
}  // namespace orrery
