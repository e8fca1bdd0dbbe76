// The sweep's grid, spec errors, resumable runs with retries and the collected table, with a
// runner that returns known numbers (the end-to-end run is tests/sweep_cli_test.cc).
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include "base/io.h"
#include "sweep/sweep.h"

namespace orrery::sweep {
namespace {

SweepSpec Spec(const std::string& text) {
  Result<SweepSpec> s = ParseSweepSpec(text, "spec.toml");
  EXPECT_TRUE(s.ok()) << s.error().message;
  return s.ok() ? *s : SweepSpec{};
}

TEST(SweepGrid, CountsOrderAndStableIds) {
  // 2 clusters x 2 loads x 1 placer x 2 policies x 3 seeds = 24 cells, seed fastest.
  const std::string text =
      "policies = [\"fifo\", \"easy:estimator=oracle\"]\nseeds = [1, 2, 3]\nclusters = [\"a.toml\", \"b.toml\"]\n"
      "[generate]\npreset = \"helios-venus\"\njobs = 10\n[options]\nload = [1, 2.5]\n";
  const std::vector<Cell> cells = ExpandGrid(Spec(text));
  ASSERT_EQ(cells.size(), 24u);
  EXPECT_EQ(cells[0].policy, "fifo");
  EXPECT_EQ(cells[0].seed, 1u);
  EXPECT_EQ(cells[1].seed, 2u);
  EXPECT_EQ(cells[3].policy, "easy:estimator=oracle");
  EXPECT_EQ(cells[6].load, 2.5);
  EXPECT_EQ(cells[12].cluster, "b.toml");
  std::set<std::string> ids;
  for (const Cell& c : cells) ids.insert(c.id);
  EXPECT_EQ(ids.size(), 24u);  // no two cells share a folder
  EXPECT_EQ(cells[3].id.rfind("easy_estimator_oracle-s1-", 0), 0u) << cells[3].id;
  EXPECT_EQ(cells[3].key, "policy=easy:estimator=oracle\ncluster=a.toml\nplacer=consolidate\nload=1\nseed=1");
  // The same parameters give the same id whatever else the grid holds: another seed and
  // another policy added keep every existing cell's id.
  const std::vector<Cell> more = ExpandGrid(Spec(
      "policies = [\"sjf\", \"fifo\", \"easy:estimator=oracle\"]\nseeds = [3, 2, 1, 4]\n"
      "clusters = [\"a.toml\", \"b.toml\"]\n[generate]\npreset = \"helios-venus\"\njobs = 10\n[options]\nload = [1, 2.5]\n"));
  ASSERT_EQ(more.size(), 48u);
  std::set<std::string> more_ids;
  for (const Cell& c : more) more_ids.insert(c.id);
  for (const std::string& id : ids) EXPECT_TRUE(more_ids.count(id)) << id;
}

TEST(SweepGrid, DefaultsAndRelativePaths) {
  // No seeds, clusters or options: seed 1, the default cluster, consolidate; paths are read
  // from the spec's folder.
  Result<SweepSpec> s = ParseSweepSpec("trace = \"t.csv\"\npolicies = [\"fifo\"]\n", "/x/y/spec.toml");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->workload.trace, "/x/y/t.csv");
  const std::vector<Cell> cells = ExpandGrid(*s);
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0].cluster, "");
  EXPECT_EQ(cells[0].placer, "consolidate");
  EXPECT_EQ(cells[0].seed, 1u);
  EXPECT_EQ(s->retries, 2u);
}

TEST(SweepGrid, BadSpecsAreLocated) {
  struct Case {
    std::string text, expected;
  };
  const Case cases[] = {
      {"trace = \"t.csv\"\npolices = [\"fifo\"]\n",
       "spec.toml:2:11: unknown key 'polices' in the sweep spec: expected one of trace, generate, policies, seeds, "
       "clusters, options, retries"},
      {"trace = \"t.csv\"\npolicies = [\"fifo\"]\nseeds = [1, \"two\"]\n",
       "spec.toml:3:13: 'seeds': expected non-negative integers, got a string \"two\""},
      {"trace = \"t.csv\"\npolicies = []\n", "spec.toml:2:12: 'policies': expected a non-empty array of policy specs (strings), got an empty array"},
      {"policies = [\"fifo\"]\n", "spec.toml:1:1: expected exactly one of 'trace' (a file) and [generate], got neither"},
      {"trace = \"t.csv\"\npolicies = [\"fifo\"]\n[options]\nrl_share = [0.1]\n",
       "spec.toml:4:12: unknown key 'rl_share' in [options]: expected one of load, placer"},
      {"trace = \"t.csv\"\npolicies = [\"fifo\"]\n[options]\nload = [2]\n",
       "spec.toml:4:8: 'load' in [options]: expected no load for a trace file"},
      {"policies = [\"fifo\"]\n[generate]\npreset = \"helios-venus\"\nload = 3\n",
       "spec.toml:4:1: unknown key 'load' in [generate]: expected one of preset, jobs, days"},
      {"policies = [\"fifo\"]\n[generate]\npreset = \"helios-venus\"\n[options]\nload = [0]\n",
       "spec.toml:5:9: 'load': expected arrival-rate multipliers in (0, 1000], got 0"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    Result<SweepSpec> s = ParseSweepSpec(c.text, "spec.toml");
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().message.substr(0, c.expected.size()), c.expected) << s.error().message;
  }
}

TEST(SweepStats, MeanAndConfidenceByHand) {
  // 10, 12, 14: mean 12; s = sqrt((4 + 0 + 4) / 2) = 2; half = t(0.975, 2) · 2 / sqrt(3)
  // = 4.303 · 2 / 1.7320508 = 4.968677.
  MeanCi m = MeanWithCi({10, 12, 14});
  EXPECT_EQ(m.n, 3u);
  EXPECT_DOUBLE_EQ(m.mean, 12);
  EXPECT_NEAR(m.half, 4.968677, 1e-6);
  // One seed: no spread to measure, half-width 0.
  m = MeanWithCi({7});
  EXPECT_DOUBLE_EQ(m.mean, 7);
  EXPECT_DOUBLE_EQ(m.half, 0);
  // Table values and the expansion past the table (t(0.975, 40) = 2.021, t(0.975, 120) = 1.980).
  EXPECT_DOUBLE_EQ(TQuantile975(1), 12.706);
  EXPECT_DOUBLE_EQ(TQuantile975(30), 2.042);
  EXPECT_NEAR(TQuantile975(40), 2.021, 1e-3);
  EXPECT_NEAR(TQuantile975(120), 1.980, 1e-3);
}

// A runner with known numbers: jct mean = 10 · seed (+ 1000 for sjf), makespan = 100 · seed.
// Counts its calls per cell; cells of policy "flaky" fail their first attempt, "broken" always.
struct FakeRunner {
  std::mutex mu;
  std::map<std::string, int> calls;
  Result<nlohmann::ordered_json> operator()(const SweepSpec&, const Cell& c) {
    int n;
    {
      std::lock_guard<std::mutex> lock(mu);
      n = ++calls[c.id];
    }
    if (c.policy == "broken" || (c.policy == "flaky" && n == 1)) return MakeError("simulated failure of " + c.id);
    const double s = static_cast<double>(c.seed);
    nlohmann::ordered_json j;
    j["cell"] = {{"id", c.id}, {"key", c.key}};
    j["run"] = {{"jobs", {{"finished", 8}}},
                {"preemptions", 0},
                {"jct_s", {{"mean", 10 * s + (c.policy == "sjf" ? 1000 : 0)}, {"p95", 5}}},
                {"queue_delay_s", {{"mean", 1}, {"p95", 2}}},
                {"bounded_slowdown", {{"mean", 1.5}}},
                {"makespan_s", 100 * s},
                {"gpu_utilization", 0.5},
                {"gpu_hours", 3}};
    return j;
  }
  int Total() {
    int t = 0;
    for (const auto& [id, n] : calls) t += n;
    return t;
  }
};

std::string Text(const std::string& path) {
  Result<std::string> t = ReadFile(path);
  return t.ok() ? *t : std::string();
}

std::string TempDir(const std::string& name) {
  const std::string d = (std::filesystem::temp_directory_path() / ("orrery-sweep-" + name)).string();
  std::filesystem::remove_all(d);
  return d;
}

TEST(SweepRun, CompleteCellsAreNeverRerunAndOneDeletedCellRunsAgain) {
  const SweepSpec spec = Spec("trace = \"t.csv\"\npolicies = [\"fifo\", \"sjf\"]\nseeds = [1, 2]\n");
  const std::string dir = TempDir("resume");
  FakeRunner f;
  CellRunner run = [&f](const SweepSpec& s, const Cell& c) { return f(s, c); };
  Result<SweepReport> r = RunSweep(spec, dir, 2, run);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->ran, 4u);
  EXPECT_EQ(f.Total(), 4);
  r = RunSweep(spec, dir, 2, run);  // everything complete: nothing runs
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->skipped, 4u);
  EXPECT_EQ(f.Total(), 4);
  const std::vector<Cell> cells = ExpandGrid(spec);
  std::filesystem::remove(dir + "/cells/" + cells[2].id + "/summary.json");
  r = RunSweep(spec, dir, 2, run);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ran, 1u);
  EXPECT_EQ(r->skipped, 3u);
  EXPECT_EQ(f.calls[cells[2].id], 2);
  EXPECT_EQ(f.Total(), 5);
  // A summary.json of another cell (a different key) is not this cell's output.
  ASSERT_TRUE(WriteFileAtomic(dir + "/cells/" + cells[0].id + "/summary.json", "{\"cell\":{\"key\":\"x\"},\"run\":{}}").ok());
  EXPECT_FALSE(CellComplete(dir, cells[0]));
  std::filesystem::remove_all(dir);
}

TEST(SweepRun, FailedCellsAreRetriedAndReportedOnce) {
  // retries = 2: up to 3 attempts. flaky: fails once, then runs (2 calls); broken: 3 calls, failed.
  const SweepSpec spec =
      Spec("trace = \"t.csv\"\npolicies = [\"fifo\", \"flaky\", \"broken\"]\nretries = 2\n");
  const std::string dir = TempDir("retry");
  FakeRunner f;
  CellRunner run = [&f](const SweepSpec& s, const Cell& c) { return f(s, c); };
  Result<SweepReport> r = RunSweep(spec, dir, 3, run);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const std::vector<Cell> cells = ExpandGrid(spec);
  ASSERT_EQ(r->cells.size(), 3u);
  EXPECT_EQ(r->ran, 2u);
  EXPECT_EQ(r->failed, 1u);
  EXPECT_EQ(r->cells[1].attempts, 2u);
  EXPECT_EQ(r->cells[2].state, CellOutcome::State::kFailed);
  EXPECT_EQ(r->cells[2].attempts, 3u);
  EXPECT_EQ(r->cells[2].error, "simulated failure of " + cells[2].id);
  EXPECT_EQ(Text(dir + "/cells/" + cells[2].id + "/error.txt"), r->cells[2].error + "\n");
  const std::string grid = Text(dir + "/grid.json");
  EXPECT_NE(grid.find("\"complete\": false"), std::string::npos);
  // The next invocation runs only the failed cell again.
  r = RunSweep(spec, dir, 3, run);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->skipped, 2u);
  EXPECT_EQ(r->failed, 1u);
  EXPECT_EQ(f.calls[cells[2].id], 6);
  EXPECT_EQ(f.calls[cells[1].id], 2);
  std::filesystem::remove_all(dir);
}

TEST(SweepCollect, MeansAndIntervalsOverThreeSeedsSameForAnyWorkerCount) {
  const SweepSpec spec = Spec("trace = \"t.csv\"\npolicies = [\"fifo\", \"sjf\", \"broken\"]\nseeds = [1, 2, 3]\nretries = 0\n");
  std::string tables[2];
  for (unsigned workers : {1u, 2u}) {
    const std::string dir = TempDir("collect" + std::to_string(workers));
    FakeRunner f;
    Result<SweepReport> r = RunSweep(spec, dir, workers, [&f](const SweepSpec& s, const Cell& c) { return f(s, c); });
    ASSERT_TRUE(r.ok()) << r.error().message;
    Result<std::string> t = CollectTable(dir);
    ASSERT_TRUE(t.ok()) << t.error().message;
    tables[workers - 1] = *t;
    std::filesystem::remove_all(dir);
  }
  EXPECT_EQ(tables[0], tables[1]);
  // fifo: jct 10, 20, 30 → mean 20, s = 10, half = 4.303 · 10 / sqrt(3) = 24.843382; makespan
  // 100, 200, 300 → mean 200, half 4.303 · 100 / sqrt(3) = 248.43382; constant metrics have half-width 0.
  // sjf: jct 1010, 1020, 1030 → mean 1020, the same half-width. broken: no seed completed.
  const std::string fifo = "fifo,,consolidate,0,3,20.0000,24.8434,5.0000,0.0000,1.0000,0.0000,2.0000,0.0000,"
                           "1.5000,0.0000,200.0000,248.4338,0.5000,0.0000,3.0000,0.0000,8.0000,0.0000,0.0000,0.0000\n";
  EXPECT_NE(tables[0].find(fifo), std::string::npos) << tables[0];
  EXPECT_NE(tables[0].find("\nsjf,,consolidate,0,3,1020.0000,24.8434,"), std::string::npos) << tables[0];
  EXPECT_NE(tables[0].find("\nbroken,,consolidate,0,0,,,"), std::string::npos) << tables[0];
  EXPECT_EQ(tables[0].substr(0, tables[0].find('\n')),
            "policy,cluster,placer,load,seeds,jct_mean_s_mean,jct_mean_s_ci95,jct_p95_s_mean,jct_p95_s_ci95,"
            "queue_delay_mean_s_mean,queue_delay_mean_s_ci95,queue_delay_p95_s_mean,queue_delay_p95_s_ci95,"
            "bounded_slowdown_mean_mean,bounded_slowdown_mean_ci95,makespan_s_mean,makespan_s_ci95,"
            "gpu_utilization_mean,gpu_utilization_ci95,gpu_hours_mean,gpu_hours_ci95,finished_jobs_mean,"
            "finished_jobs_ci95,preemptions_mean,preemptions_ci95");
}

}  // namespace
}  // namespace orrery::sweep
