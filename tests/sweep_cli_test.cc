// `orrery sweep` end to end: every cell's summary equals `orrery simulate`'s for the same
// parameters, the collected table's means are those runs' means, the table is the same bytes
// for --jobs 1 and --jobs 2, reruns are resumable and bad specs are located errors
// (docs/formats/sweep.md, docs/design/sweep.md).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_testing.h"

namespace {

using orrery::cli_testing::CmdOut;
using orrery::cli_testing::RunOrrery;
using orrery::cli_testing::Slurp;

const std::string kFixtures = std::string(ORRERY_SOURCE_DIR) + "/tests/fixtures/sweep";

std::string Tmp(const std::string& name) {
  const std::string d = (std::filesystem::temp_directory_path() / ("orrery-sweep-cli-" + name)).string();
  std::filesystem::remove_all(d);
  return d;
}

// The CSV field `col` (0-based) of the row starting with `prefix`.
std::string Field(const std::string& csv, const std::string& prefix, size_t col) {
  size_t at = csv.find("\n" + prefix);
  if (at == std::string::npos) return "";
  std::string line = csv.substr(at + 1, csv.find('\n', at + 1) - at - 1);
  for (size_t i = 0; i < col; ++i) line = line.substr(line.find(',') + 1);
  return line.substr(0, line.find(','));
}

std::string Fixed(double x) {
  char b[48];
  std::snprintf(b, sizeof b, "%.4f", x);
  return b;
}

// tiny.toml: fifo, sjf x seeds 1, 2 on tiny.csv (8 jobs) and two-nodes.toml.
TEST(SweepCli, CellsEqualSimulateAndTableHoldsTheirMeans) {
  const std::string dir = Tmp("tiny");
  CmdOut o = RunOrrery("sweep " + kFixtures + "/tiny.toml --out-dir " + dir + " --jobs 2");
  ASSERT_EQ(o.status, 0) << o.text;
  EXPECT_NE(o.text.find("sweep: 4 cells: 0 complete before, 4 ran, 0 failed"), std::string::npos) << o.text;
  const nlohmann::json grid = nlohmann::json::parse(Slurp(dir + "/grid.json"));
  ASSERT_EQ(grid["cells"].size(), 4u);
  double jct_sum[2] = {0, 0};
  for (const auto& c : grid["cells"]) {
    const std::string policy = c["policy"], id = c["id"];
    const uint64_t seed = c["seed"];
    SCOPED_TRACE(id);
    const std::string sim = Tmp("sim-" + id);
    CmdOut s = RunOrrery("simulate " + kFixtures + "/tiny.csv --cluster " + kFixtures + "/two-nodes.toml --policy " +
                         policy + " --seed " + std::to_string(seed) + " -q --out-dir " + sim);
    ASSERT_EQ(s.status, 0) << s.text;
    const nlohmann::json want = nlohmann::json::parse(Slurp(sim + "/summary.json"))["runs"][0];
    const nlohmann::json got = nlohmann::json::parse(Slurp(dir + "/cells/" + id + "/summary.json"));
    EXPECT_EQ(got["run"], want);
    jct_sum[policy == "sjf"] += want["jct_s"]["mean"].get<double>();
    std::filesystem::remove_all(sim);
  }
  CmdOut t = RunOrrery("sweep collect " + dir);
  ASSERT_EQ(t.status, 0) << t.text;
  // Columns: policy, cluster, placer, load, workload, seeds, jct_mean_s_mean (6), jct_mean_s_ci95 (7).
  EXPECT_EQ(Field(t.text, "fifo,", 5), "2");
  EXPECT_EQ(Field(t.text, "fifo,", 6), Fixed(jct_sum[0] / 2));
  EXPECT_EQ(Field(t.text, "sjf,", 6), Fixed(jct_sum[1] / 2));
  EXPECT_NE(Field(t.text, "fifo,", 6), Field(t.text, "sjf,", 6));  // the fixture separates the policies
  // The seed changes nothing on a recorded trace with the consolidate placer: no spread.
  EXPECT_EQ(Field(t.text, "fifo,", 7), "0.0000");
  // collect also writes the HTML report, by default into DIR/report.
  EXPECT_NE(Slurp(dir + "/report/report.html").find("Collected table"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// Without a cluster, an SWF log runs on its header's machine, as in `orrery simulate`.
TEST(SweepCli, SwfLogWithoutClusterRunsOnItsHeaderMachineAsSimulateDoes) {
  const std::string dir = Tmp("swf");
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir + "/grid.toml");
    f << "trace = \"" << ORRERY_SOURCE_DIR << "/tests/fixtures/swf/tiny.swf\"\npolicies = [\"easy\"]\n";
  }
  CmdOut o = RunOrrery("sweep " + dir + "/grid.toml --out-dir " + dir + "/out");
  ASSERT_EQ(o.status, 0) << o.text;
  CmdOut s = RunOrrery("simulate " + std::string(ORRERY_SOURCE_DIR) + "/tests/fixtures/swf/tiny.swf --policy easy -q --out-dir " +
                       dir + "/sim");
  ASSERT_EQ(s.status, 0) << s.text;
  const nlohmann::json grid = nlohmann::json::parse(Slurp(dir + "/out/grid.json"));
  const nlohmann::json got =
      nlohmann::json::parse(Slurp(dir + "/out/cells/" + grid["cells"][0]["id"].get<std::string>() + "/summary.json"));
  const nlohmann::json want = nlohmann::json::parse(Slurp(dir + "/sim/summary.json"));
  EXPECT_EQ(got["run"], want["runs"][0]);
  EXPECT_EQ(got["cluster"], want["cluster"]);
  std::filesystem::remove_all(dir);
}

TEST(SweepCli, ResumesAndTableIsTheSameForOneAndTwoWorkers) {
  // A generated workload, where seeds differ: 2 policies x 3 seeds of 40 jobs.
  const std::string spec_dir = Tmp("spec");
  std::filesystem::create_directories(spec_dir);
  {
    std::ofstream f(spec_dir + "/grid.toml");
    f << "policies = [\"fifo\", \"sjf\"]\nseeds = [1, 2, 3]\n[generate]\npreset = \"helios-venus\"\njobs = 40\n";
  }
  std::string tables[2];
  for (int w : {1, 2}) {
    const std::string dir = Tmp("w" + std::to_string(w));
    CmdOut o = RunOrrery("sweep " + spec_dir + "/grid.toml --out-dir " + dir + " --jobs " + std::to_string(w));
    ASSERT_EQ(o.status, 0) << o.text;
    CmdOut t = RunOrrery("sweep collect " + dir + " --out " + dir + "/table.csv");
    ASSERT_EQ(t.status, 0) << t.text;
    tables[w - 1] = Slurp(dir + "/table.csv");
    if (w == 2) {
      // The seeds differ: a non-zero interval. A rerun runs nothing; one deleted cell runs again.
      EXPECT_NE(Field(tables[1], "fifo,", 7), "0.0000") << tables[1];
      o = RunOrrery("sweep " + spec_dir + "/grid.toml --out-dir " + dir);
      EXPECT_NE(o.text.find("sweep: 6 cells: 6 complete before, 0 ran, 0 failed"), std::string::npos) << o.text;
      const nlohmann::json grid = nlohmann::json::parse(Slurp(dir + "/grid.json"));
      std::filesystem::remove(dir + "/cells/" + grid["cells"][4]["id"].get<std::string>() + "/summary.json");
      o = RunOrrery("sweep " + spec_dir + "/grid.toml --out-dir " + dir);
      EXPECT_NE(o.text.find("sweep: 6 cells: 5 complete before, 1 ran, 0 failed"), std::string::npos) << o.text;
      EXPECT_EQ(RunOrrery("sweep collect " + dir).text, tables[1]);
    }
    std::filesystem::remove_all(dir);
  }
  EXPECT_EQ(tables[0], tables[1]);
  std::filesystem::remove_all(spec_dir);
}

// Workload axes: for each, two values are two cells, each equal to `simulate --generate` with
// that flag, with different summaries and two rows of the table.
TEST(SweepCli, EachWorkloadAxisGivesOneCellPerValueAsSimulateGenerateDoes) {
  struct Axis {
    std::string key, a, b, flag, base;  // base: [generate] besides the preset
  };
  const Axis axes[] = {
      {"jobs", "30", "60", "--jobs", ""},
      {"days", "1", "2", "--days", ""},
      {"arrivals", "\"open-loop\"", "\"closed-loop\"", "--arrivals", "jobs = 300\n"},
      {"batches", "\"single\"", "\"sweeps\"", "--batches", "jobs = 300\n"},
      {"long_runs", "\"weekly\"", "\"flat\"", "--long-runs", "jobs = 300\n"},
      {"long_run_sizes", "\"class\"", "\"lone\"", "--long-run-sizes", "jobs = 300\n"},
  };
  for (const Axis& x : axes) {
    SCOPED_TRACE(x.key);
    const std::string dir = Tmp("axis-" + x.key);
    std::filesystem::create_directories(dir);
    {
      std::ofstream f(dir + "/grid.toml");
      f << "policies = [\"fifo\"]\n[generate]\npreset = \"helios-venus\"\n" << x.base << "[options]\n"
        << x.key << " = [" << x.a << ", " << x.b << "]\n";
    }
    CmdOut o = RunOrrery("sweep " + dir + "/grid.toml --out-dir " + dir + "/out --jobs 2");
    ASSERT_EQ(o.status, 0) << o.text;
    EXPECT_NE(o.text.find("sweep: 2 cells: 0 complete before, 2 ran, 0 failed"), std::string::npos) << o.text;
    const nlohmann::json grid = nlohmann::json::parse(Slurp(dir + "/out/grid.json"));
    ASSERT_EQ(grid["cells"].size(), 2u);
    nlohmann::json runs[2];
    const std::string jobs = x.base.empty() ? "" : " --jobs 300";
    for (int i = 0; i < 2; ++i) {
      std::string v = i == 0 ? x.a : x.b;
      if (v.front() == '"') v = v.substr(1, v.size() - 2);
      EXPECT_EQ(grid["cells"][i]["workload"], x.key + "=" + v);
      CmdOut sim = RunOrrery("simulate --generate helios-venus" + jobs + " " + x.flag + " " + v +
                             " --policy fifo -q --out-dir " + dir + "/sim" + std::to_string(i));
      ASSERT_EQ(sim.status, 0) << sim.text;
      runs[i] = nlohmann::json::parse(
          Slurp(dir + "/out/cells/" + grid["cells"][i]["id"].get<std::string>() + "/summary.json"))["run"];
      EXPECT_EQ(runs[i], nlohmann::json::parse(Slurp(dir + "/sim" + std::to_string(i) + "/summary.json"))["runs"][0]);
      const std::string table = RunOrrery("sweep collect " + dir + "/out").text;
      EXPECT_NE(table.find("\nfifo,,consolidate,0," + x.key + "=" + v + ",1,"), std::string::npos) << table;
    }
    EXPECT_NE(runs[0]["jct_s"], runs[1]["jct_s"]);
    std::filesystem::remove_all(dir);
  }
}

// A cell claimed by a live process (this test's) is left alone and counted busy; once the
// claim names a process that has exited, the next run takes the cell over and runs it.
TEST(SweepCli, CellClaimedByALiveProcessIsBusyAndADeadOnesClaimIsTakenOver) {
  const std::string dir = Tmp("busy");
  CmdOut o = RunOrrery("sweep " + kFixtures + "/tiny.toml --out-dir " + dir + " --jobs 1");
  ASSERT_EQ(o.status, 0) << o.text;
  const nlohmann::json grid = nlohmann::json::parse(Slurp(dir + "/grid.json"));
  const std::string id = grid["cells"][1]["id"], cdir = dir + "/cells/" + id;
  std::filesystem::remove(cdir + "/summary.json");
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof host - 1), 0);
  const std::string me = "pid:" + std::string(host) + ":" + std::to_string(getpid());
  { std::ofstream(cdir + "/claim") << me << "\n"; }
  o = RunOrrery("sweep " + kFixtures + "/tiny.toml --out-dir " + dir + " --jobs 1");
  EXPECT_EQ(o.status, 1) << o.text;
  EXPECT_NE(o.text.find("sweep: 4 cells: 3 complete before, 0 ran, 0 failed, 1 busy"), std::string::npos) << o.text;
  EXPECT_NE(o.text.find("busy: " + id + " claimed by " + me + "\n"), std::string::npos) << o.text;
  EXPECT_FALSE(std::filesystem::exists(cdir + "/summary.json"));
  // A pid above the kernel's limit (pid_max is at most 2^22) names no process.
  { std::ofstream(cdir + "/claim") << "pid:" << host << ":99999999\n"; }
  o = RunOrrery("sweep " + kFixtures + "/tiny.toml --out-dir " + dir + " --jobs 1");
  EXPECT_EQ(o.status, 0) << o.text;
  EXPECT_NE(o.text.find("sweep: 4 cells: 3 complete before, 1 ran, 0 failed\n"), std::string::npos) << o.text;
  EXPECT_TRUE(std::filesystem::exists(cdir + "/summary.json"));
  EXPECT_FALSE(std::filesystem::exists(cdir + "/claim"));
  std::filesystem::remove_all(dir);
}

TEST(SweepCli, FailedCellIsReportedAndBadSpecLocated) {
  const std::string spec_dir = Tmp("bad");
  std::filesystem::create_directories(spec_dir);
  {
    std::ofstream f(spec_dir + "/grid.toml");
    f << "trace = \"" << kFixtures << "/tiny.csv\"\nclusters = [\"" << kFixtures
      << "/two-nodes.toml\"]\npolicies = [\"fifo\", \"no-such-policy\"]\nretries = 1\n";
  }
  CmdOut o = RunOrrery("sweep " + spec_dir + "/grid.toml --out-dir " + spec_dir + "/out");
  EXPECT_EQ(o.status, 1) << o.text;
  EXPECT_NE(o.text.find("sweep: 2 cells: 0 complete before, 1 ran, 1 failed"), std::string::npos) << o.text;
  EXPECT_NE(o.text.find("failed: no-such-policy-s1-"), std::string::npos) << o.text;
  EXPECT_NE(o.text.find("after 2 attempts"), std::string::npos) << o.text;
  {
    std::ofstream f(spec_dir + "/typo.toml");
    f << "trace = \"x.csv\"\npolicies = [\"fifo\"]\n[options]\nrl-share = [0.1]\n";
  }
  o = RunOrrery("sweep " + spec_dir + "/typo.toml --out-dir " + spec_dir + "/out2");
  EXPECT_EQ(o.status, 2) << o.text;
  EXPECT_EQ(o.text, "orrery sweep: " + spec_dir +
                        "/typo.toml:4:12: unknown key 'rl-share' in [options]: expected one of load, placer, jobs, "
                        "days, arrivals, batches, long_runs, long_run_sizes\n");
  std::filesystem::remove_all(spec_dir);
}

}  // namespace
