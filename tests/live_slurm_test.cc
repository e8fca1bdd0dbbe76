// Live mode against a real local Slurm 22.05 (tests/slurm/harness.sh: munged, slurmctld,
// several slurmd -N nodeK with Gres=gpu:8). Named *Slow*: the Release stage of CI runs
// them, the sanitizer stage skips them. They skip only when the Slurm daemons are not
// installed (scripts/install-deps.sh installs them; CI runs as root).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <sys/socket.h>

#include "live/journal.h"
#include "model/cluster.h"
#include "model/trace.h"
#include "sim/simulator.h"
#include "slurm/live_slurm.h"

namespace orrery {
namespace {

using testing::ServeProcess;
using testing::SlurmCluster;


std::string Config(const SlurmCluster& c, const std::string& policy, int port = 0, int timeout_ms = 15000) {
  std::string cfg = "[slurm]\npartitions = [\"gpu\"]\ntimeout_ms = " + std::to_string(timeout_ms) + "\nslurm_conf = \"" + c.conf() +
                    "\"\n[policy]\nspec = \"" + policy + "\"\n[daemon]\njournal = \"" + c.dir() +
                    "/journal.db\"\ninterval_ms = 200\n[http]\nport = " + std::to_string(port) +
                    "\ntoken = \"" + testing::kTestToken + "\"\n";
  std::string path = c.dir() + "/serve.toml";
  testing::WriteFile(path, cfg);
  return path;
}

// Scenario 1: a burst of sleep jobs under shortest-GPU-time-first; completion order and
// queueing delays as `orrery simulate` predicts for the same workload on the same (2 × 8
// GPU) cluster. Live mode refuses oracle policies (sjf), so the daemon runs
// qssf:estimator=walltime, whose belief of each job is its declared duration (the comment's
// hint, reported to the core as the job's estimate); the simulator runs
// qssf:estimator=oracle, whose belief is the true duration: here the same numbers.
TEST(LiveSlurmSlow, ShortestFirstOrderAndDelaysMatchSimulator) {
  REQUIRE_SLURM();
  SlurmCluster cluster(2);
  ASSERT_TRUE(cluster.ok()) << cluster.log();
  auto slurm = cluster.Client();
  struct Spec {
    uint32_t gpus;
    Duration d;
  };
  // Hand-computed QSSF (key = duration × GPUs, ties by GPUs; blocking, consolidate)
  // schedule, t = 0 when the daemon starts. Keys: A 48, B 16, C 16, D 48, E 36, F 80, so the
  // order is C(4) B(8) E(4) A(8) D(16) F(8):
  //   0: C(4,4) and E(4,9) on one node, B(8,2) on the other | 2: A(8,6) | 8: A ends, D(16)
  //   waits for E | 9: D | 12: F(8,10)
  //   ends: A 8, B 2, C 4, D 12, E 9, F 22.
  const std::vector<Spec> specs = {{8, 6}, {8, 2}, {4, 4}, {16, 3}, {4, 9}, {8, 10}};
  std::vector<uint32_t> ids;
  for (const Spec& s : specs) {
    live::SubmitSpec sub;
    sub.partition = "gpu";
    sub.nodes = s.gpus > 8 ? 2 : 1;
    sub.gpus_per_node = s.gpus / sub.nodes;
    sub.sleep_s = s.d;
    sub.duration_hint = s.d;
    sub.workdir = cluster.dir();
    auto id = slurm.Submit(sub);
    ASSERT_TRUE(id.ok()) << id.error().message;
    ids.push_back(*id);
  }
  // The simulator's prediction for the same workload.
  Trace trace;
  for (size_t i = 0; i < specs.size(); ++i) {
    Job j;
    j.id = JobId(static_cast<uint32_t>(i));
    j.submit = 0;
    j.duration = specs[i].d;
    j.gpus = specs[i].gpus;
    j.nodes = specs[i].gpus > 8 ? 2 : 0;
    trace.jobs.push_back(j);
  }
  Cluster cl;
  cl.name = "local";
  cl.vcs.push_back(VirtualCluster{VcId(0), "gpu", {}, 16});
  for (uint32_t n = 0; n < 2; ++n) {
    Node node;
    node.id = NodeId(n);
    node.vc = VcId(0);
    node.gpus = 8;
    node.name = "node" + std::to_string(n + 1);
    cl.nodes.push_back(node);
    cl.vcs[0].nodes.push_back(NodeId(n));
  }
  SimConfig sc;
  sc.policy = "qssf:estimator=oracle";
  auto sim = Simulate(trace, cl, sc);
  ASSERT_TRUE(sim.ok()) << sim.error().message;
  const std::vector<Time> want_end = {8, 2, 4, 12, 9, 22};
  for (size_t i = 0; i < specs.size(); ++i) ASSERT_EQ(sim->outcomes[i].end, want_end[i]) << i;

  std::string log = cluster.dir() + "/serve.log";
  {
    ServeProcess serve(Config(cluster, "qssf:estimator=walltime"), log, cluster.conf());
    ASSERT_TRUE(serve.running());
    ASSERT_TRUE(testing::WaitFor([&] { return cluster.CompletedJobs() >= ids.size(); }, 90)) << testing::LogTail(log);
    EXPECT_EQ(serve.Kill(SIGTERM), 0) << testing::LogTail(log);
  }
  auto done = cluster.Completions();
  Time t0 = INT64_MAX;
  for (const auto& [id, c] : done) t0 = std::min(t0, c.start);
  // Completion order.
  std::vector<size_t> measured(ids.size()), predicted(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) measured[i] = predicted[i] = i;
  auto end_of = [&](size_t i) { return done.find(ids[i])->second.end; };
  std::stable_sort(measured.begin(), measured.end(), [&](size_t a, size_t b) { return end_of(a) < end_of(b); });
  std::stable_sort(predicted.begin(), predicted.end(),
                   [&](size_t a, size_t b) { return sim->outcomes[a].end < sim->outcomes[b].end; });
  EXPECT_EQ(measured, predicted);
  // Queueing delays: each dependency wave (a start that waits for completions) costs the
  // live system up to ~1.5 s (completion seen by squeue at the next 200 ms cycle, release,
  // Slurm's launch; measured ≈ 1.3 s on an idle 2-core machine). Allow 1 s + 2 s per
  // earlier wave, for loaded CI machines.
  std::set<Time> waves;
  for (const auto& o : sim->outcomes) waves.insert(o.start);
  double abs_err = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    auto it = done.find(ids[i]);
    ASSERT_NE(it, done.end());
    EXPECT_EQ(it->second.state, "COMPLETED");
    Duration got = it->second.start - t0, want = sim->outcomes[i].wait;
    double tol = 1.0 + 2.0 * static_cast<double>(std::distance(waves.begin(), waves.find(sim->outcomes[i].start)));
    EXPECT_LE(std::abs(static_cast<double>(got - want)), tol) << "job " << i << " waited " << got << " s, predicted " << want;
    abs_err += std::abs(static_cast<double>(got - want));
    std::printf("[ qssf-live ] job %zu: gpus %u dur %lld: wait measured %lld s, predicted %lld s\n", i, specs[i].gpus,
                static_cast<long long>(specs[i].d), static_cast<long long>(got), static_cast<long long>(want));
  }
  std::printf("[ qssf-live ] mean |wait error| %.2f s over %zu jobs\n", abs_err / static_cast<double>(ids.size()), ids.size());
}

// Scenario 2: kill -9 the daemon at random moments during a run of 200 jobs and restart it
// each time: every job completes exactly once, on the nodes its one applied start
// decision chose; no decision is left planned or recorded twice.
TEST(LiveSlurmSlow, KillNineDuringRunEveryJobOnceNoDecisionLostOrDoubled) {
  REQUIRE_SLURM();
  SlurmCluster cluster(4);
  ASSERT_TRUE(cluster.ok()) << cluster.log();
  auto slurm = cluster.Client();
  std::mt19937_64 rng(7);
  std::vector<uint32_t> ids;
  std::set<uint32_t> unheld;
  for (int i = 0; i < 200; ++i) {
    live::SubmitSpec sub;
    sub.partition = "gpu";
    sub.gpus_per_node = std::array<uint32_t, 6>{1, 1, 2, 2, 4, 8}[rng() % 6];
    sub.sleep_s = 1;
    sub.duration_hint = 1 + static_cast<Duration>(rng() % 3);
    sub.hold = (rng() % 4) != 0;  // a quarter arrive unheld: the daemon must hold them
    sub.workdir = cluster.dir();
    auto id = slurm.Submit(sub);
    ASSERT_TRUE(id.ok()) << id.error().message;
    ids.push_back(*id);
    if (!sub.hold) unheld.insert(*id);
  }
  std::string cfg = Config(cluster, "qssf:estimator=walltime"), log = cluster.dir() + "/serve.log";
  int kills = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(150);
  while (cluster.CompletedJobs() < ids.size() && std::chrono::steady_clock::now() < deadline) {
    ServeProcess serve(cfg, log, cluster.conf());
    ASSERT_TRUE(serve.running());
    std::this_thread::sleep_for(std::chrono::milliseconds(300 + rng() % 2500));
    if (cluster.CompletedJobs() < ids.size()) {
      EXPECT_EQ(serve.Kill(SIGKILL), 128 + SIGKILL);
      ++kills;
    }
  }
  // A last clean daemon run confirms what the killed ones left unconfirmed.
  {
    ServeProcess serve(cfg, log, cluster.conf());
    ASSERT_TRUE(testing::WaitFor([&] { return cluster.CompletedJobs() >= ids.size(); }, 60)) << testing::LogTail(log);
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    EXPECT_EQ(serve.Kill(SIGTERM), 0);
  }
  EXPECT_GE(kills, 5);
  auto done = cluster.Completions();
  EXPECT_EQ(done.size(), ids.size());
  auto journal = live::Journal::Open(cluster.dir() + "/journal.db");
  ASSERT_TRUE(journal.ok()) << journal.error().message;
  auto all = (*journal)->All();
  ASSERT_TRUE(all.ok());
  std::map<uint32_t, std::vector<live::JournalDecision>> starts;
  for (const auto& d : *all) {
    EXPECT_NE(d.state, live::DecisionState::kPlanned) << d.key;
    if (d.kind == live::DecisionKind::kStart && d.state == live::DecisionState::kApplied) starts[d.job].push_back(d);
  }
  size_t adopted = 0;
  Time first = INT64_MAX, last = 0;
  for (const auto& [id, c] : done) {
    first = std::min(first, c.start);
    last = std::max(last, c.end);
  }
  for (uint32_t id : ids) {
    EXPECT_EQ(done.count(id), 1u) << "job " << id;
    auto it = done.find(id);
    if (it == done.end()) continue;
    EXPECT_EQ(it->second.state, "COMPLETED") << id;
    // Unheld jobs may have been started by Slurm's own scheduler before the daemon held
    // them (Slurm wins: adopted, no decision); every other job has exactly one.
    if (unheld.count(id) && starts[id].empty()) {
      ++adopted;
      continue;
    }
    ASSERT_EQ(starts[id].size(), 1u) << "job " << id << " has " << starts[id].size() << " applied start decisions";
    EXPECT_EQ(starts[id][0].nodes.size(), 1u);
    EXPECT_EQ(it->second.nodes, starts[id][0].nodes[0].node) << "job " << id << " ran elsewhere than decided";
  }
  std::printf("[ crash ] %d kill -9 of the daemon, %zu jobs completed once each (%zu started by Slurm before the "
              "daemon held them), %zu decisions, first start to last end %lld s\n",
              kills, done.size(), adopted, all->size(), static_cast<long long>(last - first));
}

std::pair<int, std::string> RunOrrery(const std::string& args) {
  std::string cmd = std::string(ORRERY_BINARY) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

// No Slurm needed: config errors and missing Slurm tools stop `orrery serve` with exit 2
// and a located message, before anything is touched.
TEST(LiveServeCli, BadConfigAndMissingSlurmToolsExitTwo) {
  auto dir = std::filesystem::temp_directory_path() / ("orrery-serve-cli-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string bad = (dir / "bad.toml").string();
  testing::WriteFile(bad, "[slurm]\npartitions = [\"gpu\"]\n[daemon]\ninterval_ms = \"fast\"\n");
  auto [rc, out] = RunOrrery("serve --config " + bad);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find(bad + ":4:15: 'interval_ms' in [daemon]: expected an integer"), std::string::npos) << out;
  std::string nobin = (dir / "nobin.toml").string();
  testing::WriteFile(nobin, "[slurm]\npartitions = [\"gpu\"]\nbin_dir = \"/nonexistent\"\n[daemon]\njournal = \"" +
                                (dir / "j.db").string() + "\"\n[http]\nport = 0\n");
  auto [rc2, out2] = RunOrrery("serve --config " + nobin);
  EXPECT_EQ(rc2, 2);
  EXPECT_NE(out2.find("cannot run /nonexistent/sinfo"), std::string::npos) << out2;
  std::filesystem::remove_all(dir);
}

using testing::FreePort;

// Every event the daemon journaled whose text contains `what` (the journal keeps them all;
// /healthz shows only the last 100, which a loaded machine's retried errors can push a node
// change out of). Read-only, beside the running daemon (WAL).
size_t JournalEvents(const std::string& db, const std::string& what) {
  sqlite3* h = nullptr;
  size_t n = 0;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(h, 5000);
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(h, "SELECT COUNT(*) FROM events WHERE instr(detail, ?) > 0", -1, &st, nullptr) == SQLITE_OK) {
      sqlite3_bind_text(st, 1, what.c_str(), -1, SQLITE_TRANSIENT);
      if (sqlite3_step(st) == SQLITE_ROW) n = static_cast<size_t>(sqlite3_column_int64(st, 0));
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(h);
  return n;
}

// Decisions of the journal in `state` whose key starts with `prefix`.
size_t JournalDecisions(const std::string& db, const std::string& prefix, const std::string& state) {
  sqlite3* h = nullptr;
  size_t n = 0;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(h, 5000);
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(h, "SELECT COUNT(*) FROM decisions WHERE substr(key, 1, ?) = ? AND state = ?", -1, &st,
                           nullptr) == SQLITE_OK) {
      sqlite3_bind_int(st, 1, static_cast<int>(prefix.size()));
      sqlite3_bind_text(st, 2, prefix.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(st, 3, state.c_str(), -1, SQLITE_TRANSIENT);
      if (sqlite3_step(st) == SQLITE_ROW) n = static_cast<size_t>(sqlite3_column_int64(st, 0));
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(h);
  return n;
}

// Scenario 3: faults. slurmctld restarts mid-run, a node goes DOWN and comes back, a node
// is powered down through the API and its resume fails (ResumeProgram does not start its
// slurmd: the node misses ResumeTimeout and goes DOWN). The daemon reports each and keeps
// scheduling: every job completes exactly once.
TEST(LiveSlurmSlow, FaultsControllerRestartNodeDownFailedResume) {
  REQUIRE_SLURM();
  SlurmCluster cluster(3);
  ASSERT_TRUE(cluster.ok()) << cluster.log();
  auto slurm = cluster.Client();
  std::vector<uint32_t> ids;
  for (int i = 0; i < 24; ++i) {
    live::SubmitSpec sub;
    sub.partition = "gpu";
    sub.gpus_per_node = i % 3 == 0 ? 8 : 4;
    sub.sleep_s = 3;
    sub.duration_hint = 3;
    sub.workdir = cluster.dir();
    auto id = slurm.Submit(sub);
    ASSERT_TRUE(id.ok()) << id.error().message;
    ids.push_back(*id);
  }
  int port = FreePort();
  ASSERT_GT(port, 0);
  std::string log = cluster.dir() + "/serve.log";
  // Slurm's clients keep retrying while the controller is away; the daemon's command
  // timeout (2.5 s here) turns that into failed cycles, which it reports and survives.
  ServeProcess serve(Config(cluster, "fifo", port, 2500), log, cluster.conf());
  httplib::Client api("127.0.0.1", port);
  httplib::Headers auth = {{"Authorization", std::string("Bearer ") + testing::kTestToken}};
  ASSERT_TRUE(testing::WaitFor([&] { return static_cast<bool>(api.Get("/healthz")); }, 10)) << testing::LogTail(log);
  // Power node3 down through the API (journaled), with its resume set up to fail.
  testing::WriteFile(cluster.dir() + "/fail-resume-node3", "");
  auto pd = api.Post("/api/v1/nodes/node3/power-down", auth, "", "text/plain");
  ASSERT_TRUE(pd);
  EXPECT_EQ(pd->status, 202) << pd->body;
  ASSERT_TRUE(testing::WaitFor([&] { return cluster.CompletedJobs() >= 3; }, 60)) << testing::LogTail(log);
  // 1. slurmctld restarts (state kept in StateSaveLocation).
  ASSERT_EQ(cluster.Harness("restart-ctld " + cluster.dir() + " 6"), 0) << cluster.log();
  // 2. node2 goes DOWN (its running jobs are requeued by Slurm) and comes back.
  ASSERT_TRUE(testing::WaitFor([&] { return cluster.CompletedJobs() >= 6; }, 60)) << testing::LogTail(log);
  auto down = live::Exec({"scontrol", "update", "NodeName=node2", "State=DOWN", "Reason=orrery-test"}, 10000,
                         {"SLURM_CONF=" + cluster.conf()});
  ASSERT_TRUE(down.ok() && down->exit_code == 0) << (down.ok() ? down->err : down.error().message);
  std::this_thread::sleep_for(std::chrono::seconds(3));
  std::string why;
  ASSERT_TRUE(testing::WaitFor([&] {  // RESUME may be refused while the node is still completing its killed jobs
    auto up = live::Exec({"scontrol", "update", "NodeName=node2", "State=RESUME"}, 10000,
                         {"SLURM_CONF=" + cluster.conf()});
    auto st = live::Exec({"sinfo", "-h", "-n", "node2", "-o", "%T"}, 10000, {"SLURM_CONF=" + cluster.conf()});
    why = (up.ok() ? up->err : up.error().message) + " state " + (st.ok() ? st->out : "?");
    // With ReturnToService=2 the node may already be back on its own (state idle/mixed).
    bool back = st.ok() && st->out.rfind("down", 0) != 0 && st->out.rfind("drain", 0) != 0;
    return (up.ok() && up->exit_code == 0) || back;
  }, 40)) << why;
  // 3. node3 (powered down by now) is asked back; its resume fails.
  ASSERT_TRUE(testing::WaitFor([&] {
    auto n = slurm.Nodes({"gpu"});
    if (!n.ok()) return false;
    for (const auto& x : *n)
      if (x.name == "node3") return x.avail == live::NodeAvail::kPoweredDown && x.state_raw.back() == '~';
    return false;
  }, 40)) << testing::LogTail(log);
  auto pu = api.Post("/api/v1/nodes/node3/power-up", auth, "", "text/plain");
  ASSERT_TRUE(pu);
  EXPECT_EQ(pu->status, 202);
  const std::string journal = cluster.dir() + "/journal.db";
  ASSERT_TRUE(testing::WaitFor([&] { return JournalEvents(journal, "node3 powering-up -> down") > 0; }, 45))
      << testing::LogTail(log) << api.Get("/healthz")->body;
  ASSERT_TRUE(testing::WaitFor([&] {
    std::set<uint32_t> ok;
    for (const auto& [id, c] : cluster.Completions())
      if (c.state == "COMPLETED") ok.insert(id);
    return ok.size() >= ids.size();
  }, 90)) << testing::LogTail(log);
  EXPECT_GT(JournalEvents(journal, "node2 up -> down"), 0u) << api.Get("/healthz")->body;
  EXPECT_GT(JournalEvents(journal, "node2 down -> up"), 0u) << api.Get("/healthz")->body;
  auto metrics = api.Get("/metrics");
  ASSERT_TRUE(metrics);
  // The outage is seen either as failed cycles (squeue/sinfo timed out) or, when it falls
  // in the apply phase, as refused scontrol calls that are retried.
  bool seen = metrics->body.find("orrery_slurm_errors_total 0\n") == std::string::npos ||
              metrics->body.find("orrery_apply_errors_total 0\n") == std::string::npos;
  EXPECT_TRUE(seen) << "the controller restart should have been seen as failed cycles or apply errors\n"
                    << metrics->body;
  // Both power actions took effect, each once: journaled applied, and Slurm ran its suspend
  // program once and its resume program once for node3. (Not orrery_power_actions_total: a
  // scontrol call that times out on a loaded machine after Slurm took it is confirmed from
  // sinfo at the next cycle, in effect but not counted as sent by this process.)
  EXPECT_EQ(JournalDecisions(journal, "power-down/node3/", "applied"), 1u) << metrics->body;
  EXPECT_EQ(JournalDecisions(journal, "power-up/node3/", "applied"), 1u) << metrics->body;
  std::ifstream power_log(cluster.dir() + "/log/power.log");
  const std::string power((std::istreambuf_iterator<char>(power_log)), std::istreambuf_iterator<char>());
  auto count = [&](const std::string& s) {
    size_t n = 0;
    for (size_t p = power.find(s); p != std::string::npos; p = power.find(s, p + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(" suspend node3\n"), 1u) << power;
  EXPECT_EQ(count(" resume-fail node3\n"), 1u) << power;
  EXPECT_EQ(serve.Kill(SIGTERM), 0);
  std::map<uint32_t, int> completed;
  for (const auto& [id, c] : cluster.Completions())
    if (c.state == "COMPLETED") ++completed[id];
  for (uint32_t id : ids) EXPECT_EQ(completed[id], 1) << "job " << id;
  std::string out = testing::LogTail(log);
  bool reported = (out.find("cycle failed: observing Slurm: slurm: `") != std::string::npos && out.find("recovered") != std::string::npos) ||
                  metrics->body.find("orrery_apply_errors_total 0\n") == std::string::npos;
  EXPECT_TRUE(reported) << out;
}

// `orrery replay --slurm`: a 16-job Philly-format fixture (tests/fixtures/trace/
// replay_philly.csv, arrivals over 140 trace seconds, 1-16 GPUs, 40-200 s) at speedup 20
// under SJF on 2 × 8 GPUs: every job runs exactly once (jobcomp), the replay measures all
// of them, and the live run matches Simulate() on the same scaled segment.
// Bound: a job that starts without waiting is at most 1 s late (Slurm's whole-second
// stamps; with the harness's batch_sched_delay=0 a released job starts in the same
// second). A job that waits for completions pays, per dependency wave, the completion
// being seen at the next cycle (≤ 200 ms + the cycle), `scontrol update` + `release` and
// Slurm's launch: ≈ 0.5 s measured on an idle machine (docs/validation/live.md §I), so 1 s per
// wave is allowed, counting as waves the distinct predicted start times between its
// arrival and its predicted start. Average JCT: within 1 s + the mean of those allowances.
TEST(LiveSlurmSlow, ReplayTraceSegmentEveryJobOnceAndMatchesSimulator) {
  REQUIRE_SLURM();
  SlurmCluster cluster(2);
  ASSERT_TRUE(cluster.ok()) << cluster.log();
  std::string out = cluster.dir() + "/replay", log = cluster.dir() + "/replay.log";
  // A partition Slurm does not have: refused (exit 2) before anything is submitted.
  std::string bad = std::string(ORRERY_BINARY) + " replay --slurm " ORRERY_SOURCE_DIR
                    "/tests/fixtures/trace/replay_philly.csv --speedup 20 --partition nosuch --slurm-conf " +
                    cluster.conf() + " --out " + out + " > " + log + " 2>&1";
  int brc = std::system(bad.c_str());
  EXPECT_TRUE(WIFEXITED(brc) && WEXITSTATUS(brc) == 2) << testing::LogTail(log);
  EXPECT_NE(testing::LogTail(log).find("partition 'nosuch' not found"), std::string::npos) << testing::LogTail(log);
  // Ctrl-C in the middle: exit 130, every job it submitted has ended (cancelled), no output.
  std::string intr = "timeout --preserve-status -s INT 8 " + std::string(ORRERY_BINARY) + " replay --slurm " ORRERY_SOURCE_DIR
                     "/tests/fixtures/trace/replay_philly.csv --speedup 20 --partition gpu --slurm-conf " + cluster.conf() +
                     " --out " + out + "-int > " + log + " 2>&1";
  int irc = std::system(intr.c_str());
  EXPECT_TRUE(WIFEXITED(irc) && WEXITSTATUS(irc) == 130) << testing::LogTail(log);
  EXPECT_NE(testing::LogTail(log).find(" cancelled"), std::string::npos) << testing::LogTail(log);
  {
    auto slurm = cluster.Client();
    auto left = slurm.Jobs({"gpu"}, 0);
    ASSERT_TRUE(left.ok()) << left.error().message;
    for (const auto& j : left->jobs) EXPECT_TRUE(live::IsTerminal(j.state)) << "job " << j.id << " left " << j.state_raw;
  }
  EXPECT_FALSE(std::filesystem::exists(out + "-int/summary.json"));
  std::string cmd = std::string(ORRERY_BINARY) + " replay --slurm " ORRERY_SOURCE_DIR
                    "/tests/fixtures/trace/replay_philly.csv --speedup 20 --policy fifo --partition gpu --slurm-conf " +
                    cluster.conf() + " --out " + out + " --max-wall 120 > " + log + " 2>&1";
  int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << testing::LogTail(log);
  std::ifstream sj(out + "/summary.json");
  nlohmann::json summary = nlohmann::json::parse(sj);
  EXPECT_EQ(summary["jobs"], 16);
  EXPECT_EQ(summary["measured"], 16);
  EXPECT_EQ(summary["not_completed"], 0);
  // Every Slurm job of the replay completed exactly once.
  std::ifstream csv(out + "/replay_jobs.csv");
  std::string line;
  std::getline(csv, line);
  std::vector<uint32_t> ids;
  while (std::getline(csv, line)) {
    std::stringstream ls(line);
    std::string f;
    for (int k = 0; k < 3; ++k) std::getline(ls, f, ',');
    ids.push_back(static_cast<uint32_t>(std::stoul(f)));
  }
  ASSERT_EQ(ids.size(), 16u);
  std::map<uint32_t, int> completed;
  std::set<uint32_t> mine(ids.begin(), ids.end());
  for (const auto& [id, c] : cluster.Completions()) {
    if (!mine.count(id)) continue;  // the warm-up jobs, the interrupted run's cancelled ones
    EXPECT_EQ(c.state, "COMPLETED") << "job " << id;
    ++completed[id];
  }
  for (uint32_t id : ids) EXPECT_EQ(completed[id], 1) << "job " << id;
  // The prediction is Simulate() on the scaled segment with the default 1-s wave latency (39 s
  // makespan on the planned arrivals; 33 s and 15.12 s with --wave-latency 0).
  EXPECT_EQ(summary["wave_latency_s"], 1);
  EXPECT_EQ(summary["planned_arrivals"]["predicted_makespan_s"], 39);
  EXPECT_NEAR(summary["planned_arrivals"]["avg_jct_predicted_s"].get<double>(), 17.94, 0.01);  // fifo (`orrery replay --dry-run --nodes 2`)
  const double m = summary["avg_jct_measured_s"], p = summary["avg_jct_predicted_s"];
  // Per-job waves (columns: 10 m_submit, 11 m_start, 14 m_jct, 15 p_start, 18 p_jct).
  std::vector<std::vector<double>> rows;
  std::ifstream csv2(out + "/replay_jobs.csv");
  std::getline(csv2, line);
  while (std::getline(csv2, line)) {
    std::stringstream ls(line);
    std::string f;
    std::vector<double> r;
    for (int k = 0; k < 19; ++k) {
      std::getline(ls, f, ',');
      r.push_back(k >= 10 && !f.empty() ? std::stod(f) : 0);
    }
    rows.push_back(r);
  }
  std::set<double> starts;
  for (const auto& r : rows) starts.insert(r[15]);
  double allowance = 0;
  for (const auto& r : rows) {
    double waves = static_cast<double>(std::count_if(starts.begin(), starts.end(), [&](double s) { return s > r[10] && s <= r[15]; }));
    allowance += waves;
    EXPECT_LE(std::abs(r[14] - r[18]), 2.0 + waves) << "job submitted at " << r[10] << " predicted start " << r[15] << " measured " << r[11];
  }
  allowance = 1.0 + allowance / static_cast<double>(rows.size());
  EXPECT_LE(std::abs(m - p), allowance) << testing::LogTail(log);
  EXPECT_GE(summary["order_agreement"].get<double>(), 0.8) << testing::LogTail(log);
  std::printf("[ replay ] avg JCT measured %.2f s, predicted %.2f s (%+.1f %%, bound %.2f s); wait %.2f vs %.2f s; order %.3f\n", m, p,
              100 * (m - p) / p, allowance, summary["avg_wait_measured_s"].get<double>(),
              summary["avg_wait_predicted_s"].get<double>(), summary["order_agreement"].get<double>());
}

// Scenario 4: the CES energy policy driven by `orrery serve` on 3 real nodes (harness power
// saving: SuspendProgram stops the node's slurmd, ResumeProgram starts it, both log to
// DIR/log/power.log). CES with second-scale timings: control step every 2 s, one spare node,
// per-node keep-alive 3 s. From the CES rules: the step at +4 s powers node3 and node2 down
// (idle >= 3 s, target = used 0 + buffer 1); a burst of three 8-GPU jobs (8 s) then starts one job on
// node1 and wakes exactly node2 and node3 for the two others (demand), which run there once
// booted. Every job completes once; every power decision is journaled and applied. Prints the
// wake-up cost seen by the jobs (POWER_UP -> node idle -> job start), docs/validation/energy.md §I1.
// serve.toml for scenario 4: fifo with CES at second-scale timings.
std::string WriteCesConfig(const SlurmCluster& cluster, int port) {
  std::string cfg_path = cluster.dir() + "/serve.toml";
  testing::WriteFile(cfg_path,
                     "[slurm]\npartitions = [\"gpu\"]\nslurm_conf = \"" + cluster.conf() +
                         "\"\n[policy]\nspec = \"fifo\"\nenergy = \"ces:period=2,history=1,buffer=1,buffer_frac=0,"
                         "min_spare=0,keep=0,de_thr=1,idle=3,forecaster=last\"\n[daemon]\njournal = \"" +
                         cluster.dir() + "/journal.db\"\ninterval_ms = 200\n[http]\nport = " + std::to_string(port) + "\n");
  return cfg_path;
}

// The burst: three 8-GPU jobs of 8 s.
void SubmitBurst(live::ExecSlurmClient& slurm, const SlurmCluster& cluster, std::vector<uint32_t>* ids) {
  for (int i = 0; i < 3; ++i) {
    live::SubmitSpec sub;
    sub.partition = "gpu";
    sub.gpus_per_node = 8;
    // 8 s: node1 stays busy until both woken nodes are up (the harness resumes a batch of
    // nodes one after the other, 2 s each), so each job runs on its own node.
    sub.sleep_s = 8;
    sub.duration_hint = 8;
    sub.workdir = cluster.dir();
    auto id = slurm.Submit(sub);
    ASSERT_TRUE(id.ok()) << id.error().message;
    ids->push_back(*id);
  }
}

// The daemon's power metrics, and when it saw each woken node up (idle): events "TIME node:
// nodeK powering-up -> up (...)" in /healthz.
void ReadPowerMetricsAndEvents(httplib::Client& api, std::map<std::string, Time>* seen_up) {
  auto metrics = api.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("orrery_power_decisions_total{source=\"demand\",kind=\"power-up\"} 2\n"),
            std::string::npos) << metrics->body;
  EXPECT_NE(metrics->body.find("orrery_failed_resumes_total 0\n"), std::string::npos);
  auto health = api.Get("/healthz");
  ASSERT_TRUE(health);
  auto events = nlohmann::json::parse(health->body)["events"];
  std::printf("[ ces-live ] %zu daemon events in /healthz\n", events.size());
  for (const auto& ev : events) {
    std::string e = ev.get<std::string>();
    for (const char* n : {"node2", "node3"})
      if (e.find(std::string("node: ") + n + " powering-up -> up") != std::string::npos && !seen_up->count(n))
        (*seen_up)[n] = std::stoll(e.substr(0, e.find(' ')));
  }
  if (seen_up->size() < 2)
    for (const auto& ev : events) std::printf("[ ces-live ] event %s\n", ev.get<std::string>().c_str());
}

// The journal: node3 and node2 powered down by the policy, then woken for the queue; each
// decision applied, none left planned, node1 never touched. *power: each node's power decisions.
void ExpectPowerJournal(const SlurmCluster& cluster, std::map<std::string, std::vector<live::JournalDecision>>* power) {
  auto journal = live::Journal::Open(cluster.dir() + "/journal.db");
  ASSERT_TRUE(journal.ok()) << journal.error().message;
  auto all = (*journal)->All();
  ASSERT_TRUE(all.ok());
  for (const auto& d : *all) {
    EXPECT_NE(d.state, live::DecisionState::kPlanned) << d.key;
    if (d.kind != live::DecisionKind::kPowerUp && d.kind != live::DecisionKind::kPowerDown) continue;
    EXPECT_EQ(d.state, live::DecisionState::kApplied) << d.key << " " << d.detail;
    EXPECT_NE(d.nodes[0].node, "node1") << d.key;
    (*power)[d.nodes[0].node].push_back(d);
  }
  for (const char* n : {"node2", "node3"}) {
    ASSERT_GE((*power)[n].size(), 2u) << n;
    EXPECT_EQ((*power)[n][0].kind, live::DecisionKind::kPowerDown) << n;
    EXPECT_EQ((*power)[n][0].detail, "ces") << n;
    EXPECT_EQ((*power)[n][1].kind, live::DecisionKind::kPowerUp) << n;
    EXPECT_EQ((*power)[n][1].detail, "demand") << n;
  }
}

// power.log (harness programs): suspend then resume, once each before the burst ran; prints
// the wake-up cost seen by each job.
void ExpectWakeUps(const SlurmCluster& cluster, std::map<std::string, std::vector<live::JournalDecision>>& power,
                   std::map<std::string, Time>& started_on, std::map<std::string, Time>& seen_up) {
  std::ifstream pl(cluster.dir() + "/log/power.log");
  std::map<std::string, std::vector<std::pair<std::string, Time>>> plog;
  std::string what, node;
  long long ts;
  while (pl >> ts >> what >> node) plog[node].push_back({what, ts});
  for (const char* n : {"node2", "node3"}) {
    ASSERT_GE(plog[n].size(), 2u) << n;
    EXPECT_EQ(plog[n][0].first, "suspend") << n;
    EXPECT_EQ(plog[n][1].first, "resume") << n;
    // The wake-up cost seen by the job: POWER_UP (journal, applied) -> ResumeProgram done
    // (slurmd started; the node turns idle at its registration) -> job start (jobcomp).
    Time up = power[n][1].applied_time, resumed = plog[n][1].second, start = started_on[n];
    // (The daemon's "powering-up -> up" event is informational: on the real cluster it was not
    // found among /healthz's last 100 events in one run; not understood yet, see docs/live.md.)
    std::string seen = seen_up.count(n) ? "+" + std::to_string(seen_up[n] - up) + " s" : "n/a";
    EXPECT_GE(start, up) << n;
    EXPECT_LE(start - up, 20) << n << ": a job waited more than 20 s for its node to boot";
    std::printf("[ ces-live ] %s: POWER_UP at %lld; resume program done +%lld s; node seen up by the daemon %s; job "
                "started +%lld s\n", n, static_cast<long long>(up), static_cast<long long>(resumed - up), seen.c_str(),
                static_cast<long long>(start - up));
  }
  EXPECT_EQ(plog["node1"].size(), 0u);
}

TEST(LiveSlurmSlow, CesPowersIdleNodesDownAndWakesThemForABurst) {
  REQUIRE_SLURM();
  SlurmCluster cluster(3);
  ASSERT_TRUE(cluster.ok()) << cluster.log();
  auto slurm = cluster.Client();
  int port = FreePort();
  ASSERT_GT(port, 0);
  std::string cfg_path = WriteCesConfig(cluster, port);
  std::string log = cluster.dir() + "/serve.log";
  ServeProcess serve(cfg_path, log, cluster.conf());
  ASSERT_TRUE(serve.running());
  auto state_of = [&](const std::string& node) {
    auto n = slurm.Nodes({"gpu"});
    if (n.ok())
      for (const auto& x : *n)
        if (x.name == node) return x.state_raw;
    return std::string("?");
  };
  // 1. node2 and node3 are powered down by the policy (SuspendProgram ran: slurmd stopped).
  ASSERT_TRUE(testing::WaitFor([&] { return state_of("node2") == "idle~" && state_of("node3") == "idle~"; }, 30))
      << testing::LogTail(log) << testing::LogTail(cluster.dir() + "/log/power.log");
  EXPECT_EQ(state_of("node1"), "idle");
  // 2. The burst.
  std::vector<uint32_t> ids;
  ASSERT_NO_FATAL_FAILURE(SubmitBurst(slurm, cluster, &ids));
  ASSERT_TRUE(testing::WaitFor([&] { return cluster.CompletedJobs() >= ids.size(); }, 40))
      << testing::LogTail(log) << testing::LogTail(cluster.dir() + "/log/power.log");
  httplib::Client api("127.0.0.1", port);
  std::map<std::string, Time> seen_up;
  ASSERT_NO_FATAL_FAILURE(ReadPowerMetricsAndEvents(api, &seen_up));
  EXPECT_EQ(serve.Kill(SIGTERM), 0) << testing::LogTail(log);

  // Every job completed exactly once; the first on node1, the two others on the woken nodes.
  auto done = cluster.Completions();
  std::map<std::string, Time> started_on;
  for (uint32_t id : ids) {
    ASSERT_EQ(done.count(id), 1u) << id;
    const auto& c = done.find(id)->second;
    EXPECT_EQ(c.state, "COMPLETED") << id;
    started_on[c.nodes] = c.start;
  }
  ASSERT_EQ(started_on.size(), 3u) << "the three jobs should run on three different nodes";
  ASSERT_TRUE(started_on.count("node2") && started_on.count("node3"));
  std::map<std::string, std::vector<live::JournalDecision>> power;
  ASSERT_NO_FATAL_FAILURE(ExpectPowerJournal(cluster, &power));
  ExpectWakeUps(cluster, power, started_on, seen_up);
}

}  // namespace
}  // namespace orrery
