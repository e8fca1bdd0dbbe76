// The sweep's grid, spec errors, resumable runs with retries and the collected table, with a
// runner that returns known numbers (the end-to-end run is tests/sweep_cli_test.cc).
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include "base/io.h"
#include "workload/spec.h"
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
       "spec.toml:4:12: unknown key 'rl_share' in [options]: expected one of load, placer, jobs, days, arrivals, "
       "batches, long_runs, long_run_sizes"},
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

TEST(SweepGrid, WorkloadAxesMultiplyTheGridAndKeepOtherIds) {
  // 2 job counts x 2 arrival models x 1 policy x 2 seeds = 8 cells; the axes sit between the
  // load and the placer in the order, and in the key after the load.
  const std::string base = "policies = [\"fifo\"]\nseeds = [1, 2]\n[generate]\npreset = \"helios-venus\"\n";
  const SweepSpec s = Spec(base + "[options]\njobs = [50, 80]\narrivals = [\"open-loop\", \"closed-loop\"]\n");
  ASSERT_EQ(s.workload_axes.size(), 2u);
  EXPECT_EQ(s.workload_axes[0].first, "jobs");
  EXPECT_EQ(s.workload_axes[1].second, (std::vector<std::string>{"open-loop", "closed-loop"}));
  const std::vector<Cell> cells = ExpandGrid(s);
  ASSERT_EQ(cells.size(), 8u);
  EXPECT_EQ(cells[0].workload_text, "jobs=50 arrivals=open-loop");
  EXPECT_EQ(cells[2].workload_text, "jobs=50 arrivals=closed-loop");
  EXPECT_EQ(cells[4].workload_text, "jobs=80 arrivals=open-loop");
  EXPECT_EQ(cells[5].key,
            "policy=fifo\ncluster=\nplacer=consolidate\nload=0\njobs=80\narrivals=open-loop\nseed=2");
  EXPECT_EQ(cells[5].group, "policy=fifo\ncluster=\nplacer=consolidate\nload=0\njobs=80\narrivals=open-loop");
  // Without axes the key is the one it always was, so existing sweep folders keep their cells.
  const std::vector<Cell> plain = ExpandGrid(Spec(base));
  EXPECT_EQ(plain[0].key, "policy=fifo\ncluster=\nplacer=consolidate\nload=0\nseed=1");
  EXPECT_EQ(plain[0].workload_text, "");
  // The values reach the generator's spec as `simulate --generate` flags would set them.
  Result<workload::WorkloadSpec> g = workload::GetPreset("helios-venus");
  ASSERT_TRUE(g.ok());
  for (const auto& [k, v] : cells[6].workload) ASSERT_TRUE(ApplyWorkloadAxis(k, v, &*g).ok()) << k;
  EXPECT_EQ(g->jobs, 80u);
  EXPECT_EQ(g->arrivals, workload::ArrivalModel::kClosedLoop);
  ASSERT_TRUE(ApplyWorkloadAxis("days", "2.5", &*g).ok());
  EXPECT_EQ(g->days, 2.5);
  ASSERT_TRUE(ApplyWorkloadAxis("batches", "sweeps", &*g).ok());
  EXPECT_EQ(g->batches, workload::BatchModel::kSweeps);
  ASSERT_TRUE(ApplyWorkloadAxis("long_runs", "weekly", &*g).ok());
  EXPECT_EQ(g->long_runs, workload::LongRunArrivals::kWeekly);
  EXPECT_FALSE(ApplyWorkloadAxis("jobs", "0", &*g).ok());
  EXPECT_EQ(ApplyWorkloadAxis("load", "2", &*g).error().message,
            "workload option: expected one of jobs, days, arrivals, batches, long_runs, long_run_sizes, got 'load'");
}

TEST(SweepGrid, BadWorkloadAxesAreLocated) {
  struct Case {
    std::string text, expected;
  };
  const std::string gen = "policies = [\"fifo\"]\n[generate]\npreset = \"helios-venus\"\n";
  const Case cases[] = {
      {gen + "[options]\narrivals = [\"open-loop\", \"sometimes\"]\n",
       "spec.toml:5:26: 'arrivals' in [options]: arrival model: expected open-loop, closed-loop or "
       "closed-loop-nodes, got \"sometimes\""},
      {gen + "[options]\njobs = [10, 0]\n",
       "spec.toml:5:13: 'jobs': expected job counts from 1 to 100,000,000, got 0"},
      {gen + "[options]\ndays = [\"two\"]\n",
       "spec.toml:5:9: 'days': expected numbers of days in (0, 1000], got a string \"two\""},
      {gen + "[options]\nbatches = []\n",
       "spec.toml:5:11: 'batches': expected a non-empty array of model names (strings), got an empty array"},
      {"policies = [\"fifo\"]\n[generate]\npreset = \"helios-venus\"\njobs = 10\n[options]\njobs = [20]\n",
       "spec.toml:6:8: 'jobs' in [options]: expected jobs in one place, got [generate] jobs too"},
      {gen + "[options]\njobs = [30, 60, 30]\n",
       "spec.toml:5:17: 'jobs': expected distinct values, got 30 twice"},
      {"trace = \"t.csv\"\npolicies = [\"fifo\", \"sjf\", \"fifo\"]\n",
       "spec.toml:2:28: 'policies': expected distinct values, got a string \"fifo\" twice"},
      {"trace = \"t.csv\"\npolicies = [\"fifo\"]\n[options]\nlong_runs = [\"flat\"]\n",
       "spec.toml:4:13: 'long_runs' in [options]: expected no workload option for a trace file"},
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
  const std::string fifo = "fifo,,consolidate,0,,3,20.0000,24.8434,5.0000,0.0000,1.0000,0.0000,2.0000,0.0000,"
                           "1.5000,0.0000,200.0000,248.4338,0.5000,0.0000,3.0000,0.0000,8.0000,0.0000,0.0000,0.0000\n";
  EXPECT_NE(tables[0].find(fifo), std::string::npos) << tables[0];
  EXPECT_NE(tables[0].find("\nsjf,,consolidate,0,,3,1020.0000,24.8434,"), std::string::npos) << tables[0];
  EXPECT_NE(tables[0].find("\nbroken,,consolidate,0,,0,,,"), std::string::npos) << tables[0];
  EXPECT_EQ(tables[0].substr(0, tables[0].find('\n')),
            "policy,cluster,placer,load,workload,seeds,jct_mean_s_mean,jct_mean_s_ci95,jct_p95_s_mean,jct_p95_s_ci95,"
            "queue_delay_mean_s_mean,queue_delay_mean_s_ci95,queue_delay_p95_s_mean,queue_delay_p95_s_ci95,"
            "bounded_slowdown_mean_mean,bounded_slowdown_mean_ci95,makespan_s_mean,makespan_s_ci95,"
            "gpu_utilization_mean,gpu_utilization_ci95,gpu_hours_mean,gpu_hours_ci95,finished_jobs_mean,"
            "finished_jobs_ci95,preemptions_mean,preemptions_ci95");
}

TEST(SweepPlan, OneRowPerCaseOfOutputsAndQueue) {
  // Complete cells never go out again; a pending or running task of the sweep keeps its cell
  // from a second submission; everything else (never run, failed, killed, its task gone) does.
  struct Row {
    const char* name;
    bool complete;
    QueueState queue;
    CellAction want;
  };
  const Row rows[] = {
      {"done", true, QueueState::kAbsent, CellAction::kComplete},
      {"done, its task still completing", true, QueueState::kRunning, CellAction::kComplete},
      {"failed or killed, not in the queue", false, QueueState::kAbsent, CellAction::kSubmit},
      {"pending in the queue", false, QueueState::kPending, CellAction::kQueued},
      {"running", false, QueueState::kRunning, CellAction::kQueued},
      {"absent: never run", false, QueueState::kAbsent, CellAction::kSubmit},
  };
  for (const Row& r : rows) EXPECT_EQ(PlanCell(r.complete, r.queue), r.want) << r.name;
}

TEST(SweepClaim, LiveHolderKeepsTheCellDeadHolderIsTakenOver) {
  const std::string dir = TempDir("claim");
  std::filesystem::create_directories(dir);
  std::set<std::string> alive = {"slurm:7_1"};
  const auto is_alive = [&alive](const std::string& h) { return alive.count(h) > 0; };
  const CellClaim a{"slurm:7_1", is_alive}, b{"slurm:9_1", is_alive};
  Result<std::string> r = ClaimCell(dir, a);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, "");
  EXPECT_EQ(Text(dir + "/claim"), "slurm:7_1\n");
  EXPECT_EQ(*ClaimCell(dir, b), "slurm:7_1");  // a still runs: b leaves the cell alone
  EXPECT_EQ(*ClaimCell(dir, a), "");           // its own claim (a requeued task) is its own
  alive.clear();                               // a was killed mid-run: its claim is stale
  EXPECT_EQ(*ClaimCell(dir, b), "");
  EXPECT_EQ(Text(dir + "/claim"), "slurm:9_1\n");
  ReleaseCell(dir, a);  // not a's any more: stays
  EXPECT_TRUE(std::filesystem::exists(dir + "/claim"));
  ReleaseCell(dir, b);
  EXPECT_FALSE(std::filesystem::exists(dir + "/claim"));
  // This process is alive; a pid that exited is not; another host's cannot be checked.
  EXPECT_TRUE(LocalOwnerAlive(LocalOwner()));
  const std::string host = LocalOwner().substr(0, LocalOwner().rfind(':') + 1);
  EXPECT_FALSE(LocalOwnerAlive(host + "99999999"));  // above pid_max (at most 2^22)
  EXPECT_TRUE(LocalOwnerAlive("pid:some-other-host:1"));
  std::filesystem::remove_all(dir);
}

TEST(SweepClaim, ClaimedCellIsNotRunTwiceAndAStaleClaimIsRunAndReleased) {
  const SweepSpec spec = Spec("trace = \"t.csv\"\npolicies = [\"fifo\", \"sjf\"]\n");
  const std::string dir = TempDir("claimed");
  const std::vector<Cell> cells = ExpandGrid(spec);
  const std::string c0 = dir + "/cells/" + cells[0].id;
  std::filesystem::create_directories(c0);
  ASSERT_TRUE(WriteFileAtomic(c0 + "/claim", "slurm:5_0\n").ok());
  bool holder_alive = true;
  const CellClaim me{"slurm:6_0", [&holder_alive](const std::string&) { return holder_alive; }};
  FakeRunner f;
  CellRunner run = [&f](const SweepSpec& s, const Cell& c) { return f(s, c); };
  Result<SweepReport> r = RunSweep(spec, dir, 2, run, me);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->busy, 1u);
  EXPECT_EQ(r->ran, 1u);
  EXPECT_EQ(r->cells[0].state, CellOutcome::State::kBusy);
  EXPECT_EQ(r->cells[0].holder, "slurm:5_0");
  EXPECT_EQ(f.calls.count(cells[0].id), 0u);
  EXPECT_FALSE(std::filesystem::exists(c0 + "/summary.json"));
  EXPECT_NE(Text(dir + "/grid.json").find("\"complete\": false"), std::string::npos);
  holder_alive = false;  // the holder was killed: the next run takes the cell over
  r = RunSweep(spec, dir, 2, run, me);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ran, 1u);
  EXPECT_EQ(r->skipped, 1u);
  EXPECT_EQ(f.calls[cells[0].id], 1);
  EXPECT_TRUE(CellComplete(dir, cells[0]));
  EXPECT_FALSE(std::filesystem::exists(c0 + "/claim"));  // released after the run
  std::filesystem::remove_all(dir);
}

TEST(SweepCollect, ReportHasOneChartPerMetricAndTheTable) {
  const SweepSpec spec = Spec("trace = \"t.csv\"\npolicies = [\"fifo\", \"sjf\"]\nseeds = [1, 2, 3]\n");
  const std::string dir = TempDir("report");
  FakeRunner f;
  ASSERT_TRUE(RunSweep(spec, dir, 2, [&f](const SweepSpec& s, const Cell& c) { return f(s, c); }).ok());
  ASSERT_TRUE(WriteCollectReport(dir, dir + "/report").ok());
  EXPECT_NE(Text(dir + "/report/report.html").find("<html"), std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(Text(dir + "/report/report.json"));
  ASSERT_EQ(j["sections"].size(), 1u);
  const nlohmann::json& sec = j["sections"][0];
  ASSERT_EQ(sec["charts"].size(), 10u);
  // jct_mean_s: fifo 10, 20, 30 → mean 20, interval 20 ± 24.843382.
  const nlohmann::json& jct = sec["charts"][0];
  EXPECT_EQ(jct["id"], "jct_mean_s");
  ASSERT_EQ(jct["data"].size(), 2u);
  EXPECT_EQ(jct["data"][0]["group"], "fifo");
  EXPECT_DOUBLE_EQ(jct["data"][0]["mean"].get<double>(), 20);
  EXPECT_NEAR(jct["data"][0]["hi"].get<double>(), 44.843382, 1e-5);
  EXPECT_NEAR(jct["data"][1]["lo"].get<double>(), 1020 - 24.843382, 1e-5);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace orrery::sweep
