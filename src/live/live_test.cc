#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <random>

#include "live/daemon.h"
#include "live/crashing_slurm_testing.h"
#include "live/fake_slurm.h"
#include "live/sleep_job_testing.h"
#include "live/journal.h"
#include "live/journal_testing.h"
#include "live/slurm_client.h"

namespace orrery::live {
namespace {

std::string TempPath(const std::string& name) { return FreshJournalPath("orrery_live_test", name); }

// ------------------------------------------------------------------ parsing

TEST(Hostlist, ExpandsRangesAndPadding) {
  auto r = ExpandHostlist("node[1-3,7],gpu-a[08-10],login");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, (std::vector<std::string>{"node1", "node2", "node3", "node7", "gpu-a08", "gpu-a09", "gpu-a10", "login"}));
  EXPECT_TRUE(ExpandHostlist("(null)")->empty());
  EXPECT_FALSE(ExpandHostlist("node[1-3").ok());
  EXPECT_FALSE(ExpandHostlist("node[3-1]").ok());
  EXPECT_FALSE(ExpandHostlist("node[a-b]").ok());
}

TEST(SlurmParse, GpuCountsTimeLimitsAndHints) {
  EXPECT_EQ(ParseGpuCount("gpu:8"), 8u);
  EXPECT_EQ(ParseGpuCount("gres:gpu:4"), 4u);
  EXPECT_EQ(ParseGpuCount("gpu:a100:4(S:0-1)"), 4u);
  EXPECT_EQ(ParseGpuCount("gpu:2,shard:64"), 2u);
  EXPECT_EQ(ParseGpuCount("N/A"), 0u);
  EXPECT_EQ(ParseGpuCount("(null)"), 0u);
  EXPECT_EQ(ParseTimeLimit("UNLIMITED"), -1);
  EXPECT_EQ(ParseTimeLimit("1:00:00"), 3600);
  EXPECT_EQ(ParseTimeLimit("2-01:00:00"), 2 * 86400 + 3600);
  EXPECT_EQ(ParseTimeLimit("30:00"), 1800);
  EXPECT_EQ(ParseTimeLimit("5"), 300);
  EXPECT_EQ(DurationHint("orrery:duration=12"), 12);
  EXPECT_EQ(DurationHint("x orrery:duration=7 y"), 7);
  EXPECT_EQ(DurationHint("duration=7"), -1);
}

// Slurm's local times, with the per-hour cache, read as mktime reads them: in UTC by hand
// (2026-11-30T17:21:26 = 20,787 days x 86,400 + 17 h 21 min 26 s = 1,796,059,286), and in
// two zones with DST (POSIX rules, no tzdata needed; Lord Howe's change is 30 min) every
// 37 min 11 s of 2026, each printed time reads back to a time localtime prints the same way
// (the repeated hour of a fall-back has two), and a time in a spring-forward gap as mktime.
TEST(SlurmParse, LocalTimesReadAsMktimeAcrossDstChanges) {
  const char* saved = std::getenv("TZ");
  const std::string old_tz = saved ? saved : "";
  auto print = FormatSlurmTime;
  setenv("TZ", "UTC0", 1);
  tzset();
  EXPECT_EQ(ParseSlurmTime("2026-11-30T17:21:26"), 1796059286);
  EXPECT_EQ(ParseSlurmTime("2026-11-30T17:21:27"), 1796059287);  // the same hour, from the cache
  EXPECT_EQ(ParseSlurmTime("N/A"), kNoTime);
  EXPECT_EQ(FormatSlurmTime(kNoTime), "N/A");
  EXPECT_EQ(FormatSlurmTime(1796059286), "2026-11-30T17:21:26");
  for (const char* tz : {"EST5EDT,M3.2.0,M11.1.0", "LHST-10:30LHDT-11,M10.1.0,M4.1.0"}) {
    SCOPED_TRACE(tz);
    setenv("TZ", tz, 1);
    tzset();
    int read_back = 0;
    for (Time t = 1767225600; t < 1767225600 + 365 * 86400; t += 37 * 60 + 11) {
      const std::string s = print(t);
      ASSERT_EQ(print(ParseSlurmTime(s)), s) << t;
      read_back += ParseSlurmTime(s) == t;
    }
    EXPECT_GT(read_back, 14000);  // all but the repeated hour's (of 14,136)
    std::tm gap{};
    gap.tm_year = 126;
    gap.tm_mon = std::string(tz).starts_with("EST") ? 2 : 9;  // 2026-03-08 / 2026-10-04, 02:30
    gap.tm_mday = std::string(tz).starts_with("EST") ? 8 : 4;
    gap.tm_hour = 2;
    gap.tm_min = 30;
    gap.tm_isdst = -1;
    const Time want = static_cast<Time>(std::mktime(&gap));
    EXPECT_EQ(ParseSlurmTime(std::string(tz).starts_with("EST") ? "2026-03-08T02:30:00" : "2026-10-04T02:30:00"), want);
  }
  if (saved) setenv("TZ", old_tz.c_str(), 1);
  else unsetenv("TZ");
  tzset();
}

TEST(SlurmParse, SqueueLines) {
  std::string text =
      "12\x1fPENDING\x1fgpu\x1froot\x1f" "1\x1fgres:gpu:4\x1fUNLIMITED\x1f" "2026-11-30T17:21:26\x1fN/A\x1fN/A\x1f"
      "JobHeldAdmin\x1f\x1f" "a|b\x1forrery:duration=3\n"
      "13\x1fRUNNING\x1fgpu\x1froot\x1f" "2\x1fgres:gpu:8\x1f" "1:00\x1f" "2026-11-30T17:21:26\x1f"
      "2026-11-30T17:21:28\x1fN/A\x1fNone\x1fnode[1-2]\x1f" "b\x1f(null)\n"
      "14_1\x1fPENDING\x1fgpu\x1froot\x1f" "1\x1fN/A\x1fUNLIMITED\x1fN/A\x1fN/A\x1fN/A\x1fNone\x1f\x1f" "c\x1f\n";
  auto r = ParseSqueue(text);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 2u);  // the array job is skipped
  const SlurmJob& a = (*r)[0];
  EXPECT_EQ(a.id, 12u);
  EXPECT_TRUE(a.held);
  EXPECT_EQ(a.state, SlurmJobState::kPending);
  EXPECT_EQ(a.gpus_per_node, 4u);
  EXPECT_EQ(a.name, "a|b");
  EXPECT_EQ(DurationHint(a.comment), 3);
  const SlurmJob& b = (*r)[1];
  EXPECT_EQ(b.state, SlurmJobState::kRunning);
  EXPECT_EQ(b.num_nodes, 2u);
  EXPECT_EQ(b.nodes, (std::vector<std::string>{"node1", "node2"}));
  EXPECT_EQ(b.time_limit, 60);
  EXPECT_EQ(b.start - b.submit, 2);
  EXPECT_EQ(b.comment, "");
  auto bad = ParseSqueue("1\x1fPENDING\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("line 1: expected 14 fields"), std::string::npos);
}

TEST(SlurmParse, SinfoStates) {
  auto r = ParseSinfo(
      "node1\x1fgpu\x1fidle\x1fgpu:8\n"
      "node2\x1fgpu\x1fidle~\x1fgpu:8\n"
      "node3\x1fgpu\x1f" "down*\x1fgpu:8\n"
      "node4\x1fgpu\x1fidle#\x1fgpu:8\n"
      "node5\x1fgpu\x1fmixed\x1fgpu:a100:4(S:0)\n"
      "node6\x1fgpu\x1f" "drained\x1fgpu:8\n"
      "node7\x1fgpu\x1f" "down~\x1fgpu:8\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 7u);
  EXPECT_EQ((*r)[6].avail, NodeAvail::kDown);  // powered off after a failed resume
  EXPECT_EQ((*r)[0].avail, NodeAvail::kUp);
  EXPECT_EQ((*r)[1].avail, NodeAvail::kPoweredDown);
  EXPECT_EQ((*r)[2].avail, NodeAvail::kDown);
  EXPECT_EQ((*r)[3].avail, NodeAvail::kPoweringUp);
  EXPECT_EQ((*r)[4].avail, NodeAvail::kUp);
  EXPECT_EQ((*r)[4].gpus, 4);
  EXPECT_EQ((*r)[5].avail, NodeAvail::kDown);
  auto unnamed = ParseSinfo("node1\x1fgpu\x1fidle\x1fgpu:8\n\x1fgpu\x1fidle\x1fgpu:8\n");
  ASSERT_FALSE(unnamed.ok());
  EXPECT_NE(unnamed.error().message.find("sinfo output line 2: expected a node name"), std::string::npos);
}

TEST(Hostlist, RefusesMoreThanAMillionNames) {
  // Each range is within the per-range bound; together they pass the total one.
  auto r = ExpandHostlist("n[0-999999],m[0-1]");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "hostlist \"n[0-999999],m[0-1]\" (18 bytes), column 13: expected at most 1000000 names, got more");
  auto ok = ExpandHostlist("n[0-999998],m1");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->size(), 1'000'000u);
  EXPECT_EQ(ok->back(), "m1");
}

// A 3,000-byte prefix before [0-999999] asked for a million names of 3,006 bytes (3 GB)
// before the bound on bytes: each name is checked before any is made.
TEST(Hostlist, BoundsNamesByBytesBeforeExpanding) {
  const std::string prefix(3000, 'p');
  auto r = ExpandHostlist(prefix + "[0-999999]");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "hostlist \"" + std::string(57, 'p') +
                                   "...\" (3010 bytes), column 1: expected node names of at most 255 bytes, got one "
                                   "of 3006");
  // 100-byte prefix: 1,000,000 names of 106 bytes = 106,000,000 > 64 MiB (67,108,864).
  auto wide = ExpandHostlist(std::string(100, 'w') + "[0-999999]");
  ASSERT_FALSE(wide.ok());
  EXPECT_NE(wide.error().message.find("column 1: expected at most 67108864 bytes of names, got more"), std::string::npos)
      << wide.error().message;
  // Padding counts: "a[0001-0003]" makes three 5-byte names.
  auto padded = ExpandHostlist("a[0001-0003]", 3);
  ASSERT_TRUE(padded.ok());
  EXPECT_EQ(*padded, (std::vector<std::string>{"a0001", "a0002", "a0003"}));
  // A range that wraps uint64 is a count beyond the bound, not an empty range.
  auto wrap = ExpandHostlist("n[0-18446744073709551615]");
  ASSERT_FALSE(wrap.ok());
  EXPECT_NE(wrap.error().message.find("expected at most 1000000 names, got more"), std::string::npos);
}

// Where the cluster is known its size bounds a job's node list: four nodes, "n[1-5]" is an
// error, at the item's column (the second item starts at offset 3: column 4).
TEST(Hostlist, ClusterSizeBoundsTheList) {
  auto ok = ExpandHostlist("n[1-4]", 4);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->size(), 4u);
  auto r = ExpandHostlist("m1,n[1-4]", 4);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "hostlist \"m1,n[1-4]\" (9 bytes), column 4: expected at most 4 names, got more");
}

// One squeue listing of 400 rows, each row n[0-999999] (47 KB in all), asked for 400 million
// names (more than 2 GB) when each row had only its own bound: the rows share one. Three rows
// of 400,000 names: the first two make 800,000; the third passes 1,000,000 at its column 1.
TEST(Hostlist, OneListingSharesOneBound) {
  auto row = [](int id) {
    std::string line = std::to_string(id);
    for (const char* f : {"RUNNING", "gpu", "alice", "1", "gpu:1", "1:00:00", "N/A", "N/A", "N/A", "None",
                          "n[0-399999]", "j", "(null)"})
      line += kFieldSep + std::string(f);
    return line + "\n";
  };
  auto two = ParseSqueue(row(1) + row(2));
  ASSERT_TRUE(two.ok()) << two.error().message;
  EXPECT_EQ((*two)[1].nodes.size(), 400'000u);
  auto three = ParseSqueue(row(1) + row(2) + row(3));
  ASSERT_FALSE(three.ok());
  EXPECT_EQ(three.error().message.rfind("squeue output line 3: the listing's hostlists together: hostlist "
                                        "\"n[0-399999]\" (11 bytes), column 1: expected at most 1000000 names, got more",
                                        0),
            0u)
      << three.error().message;
}

TEST(Exec, CapturesOutputErrorsAndTimeouts) {
  auto ok = Exec({"sh", "-c", "echo out; echo err >&2; exit 3"}, 5000);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->exit_code, 3);
  EXPECT_EQ(ok->out, "out\n");
  EXPECT_EQ(ok->err, "err\n");
  auto slow = Exec({"sleep", "5"}, 200);
  ASSERT_TRUE(slow.ok());
  EXPECT_TRUE(slow->timed_out);
  auto missing = Exec({"/nonexistent/squeue"}, 1000);
  EXPECT_FALSE(missing.ok());
  ExecSlurmClient c(ExecSlurmOptions{"/nonexistent", "", 1000});
  auto jobs = c.Jobs({"gpu"}, 0);
  ASSERT_FALSE(jobs.ok());
  EXPECT_NE(jobs.error().message.find("cannot run /nonexistent/squeue"), std::string::npos);
}

// ------------------------------------------------------------------ journal

TEST(Journal, PlanMarkDuplicateAndReopen) {
  std::string path = TempPath("j1.db");
  {
    auto j = Journal::Open(path);
    ASSERT_TRUE(j.ok()) << j.error().message;
    JournalDecision d;
    d.key = "start/5/0";
    d.kind = DecisionKind::kStart;
    d.job = 5;
    d.nodes = {{"node1", 4}, {"node2", 4}};
    ASSERT_TRUE((*j)->Plan(&d).ok());
    JournalDecision again = d;
    auto dup = (*j)->Plan(&again);
    ASSERT_FALSE(dup.ok());
    EXPECT_NE(dup.error().message.find("duplicate decision start/5/0"), std::string::npos);
    ASSERT_TRUE((*j)->SetGen(5, 2).ok());
  }
  auto j = Journal::Open(path);
  ASSERT_TRUE(j.ok());
  auto planned = (*j)->WithState(DecisionState::kPlanned);
  ASSERT_TRUE(planned.ok());
  ASSERT_EQ(planned->size(), 1u);
  EXPECT_EQ((*planned)[0].nodes.size(), 2u);
  EXPECT_EQ((*planned)[0].nodes[1].node, "node2");
  EXPECT_EQ((*j)->Gens()->at(5), 2u);
  ASSERT_TRUE((*j)->Mark("start/5/0", DecisionState::kApplied, 10, "").ok());
  EXPECT_TRUE((*j)->WithState(DecisionState::kPlanned)->empty());
  EXPECT_FALSE((*j)->Mark("start/9/0", DecisionState::kApplied, 10, "").ok());
}

TEST(Journal, CachedStatementsAndManualCheckpointKeepEveryRow) {
  std::string path = TempPath("j2.db");
  {
    auto j = Journal::Open(path, /*synchronous_full=*/false);
    ASSERT_TRUE(j.ok()) << j.error().message;
    for (int t = 0; t < 30; ++t) {  // 30 transactions of 100 decisions, every statement reused
      ASSERT_TRUE((*j)->Begin().ok());
      for (int i = 0; i < 100; ++i) {
        JournalDecision d;
        d.job = static_cast<uint32_t>(t * 100 + i);
        d.kind = DecisionKind::kStart;
        d.key = "start/" + std::to_string(d.job) + "/0";
        d.nodes = {{"node1", 1}};
        ASSERT_TRUE((*j)->Plan(&d).ok());
        if (i % 2 == 0) {
          ASSERT_TRUE((*j)->Mark(d.key, DecisionState::kApplied, t, "").ok());
        }
      }
      ASSERT_TRUE((*j)->Commit().ok());
    }
    // Automatic checkpoints are off: the log holds every page until Checkpoint() folds it.
    EXPECT_GT((*j)->wal_pages(), 20);
    ASSERT_TRUE((*j)->Checkpoint(1'000'000).ok());  // below the threshold: nothing happens
    EXPECT_GT((*j)->wal_pages(), 20);
    ASSERT_TRUE((*j)->Checkpoint(1).ok());
    EXPECT_EQ((*j)->wal_pages(), 0);
  }
  auto j = Journal::Open(path);
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)->All()->size(), 3000u);
  EXPECT_EQ((*j)->WithState(DecisionState::kPlanned)->size(), 1500u);
  EXPECT_EQ((*j)->Get("start/2999/0")->state, DecisionState::kPlanned);
  EXPECT_EQ((*j)->Get("start/2998/0")->state, DecisionState::kApplied);
}

// ------------------------------------------------------------------ daemon on FakeSlurm

struct Rig {
  SimClock clock{1000};
  FakeSlurm slurm{&clock};
  std::unique_ptr<Journal> journal;
  std::unique_ptr<Daemon> daemon;
  DaemonOptions opts;
  std::string path;

  explicit Rig(const std::string& policy, int nodes = 2) {
    path = TempPath("rig_" + policy + ".db");
    for (int i = 1; i <= nodes; ++i) slurm.AddNode("node" + std::to_string(i), 8, "gpu");
    opts.partitions = {"gpu"};
    opts.policy = policy;
    Start();
  }
  void Start() {
    daemon.reset();
    journal.reset();
    auto opened = Journal::Open(path, false);
    ASSERT_TRUE(opened.ok());
    journal = std::move(*opened);
    daemon = std::make_unique<Daemon>(&slurm, journal.get(), &clock, opts);
    ASSERT_TRUE(daemon->Recover().ok());
  }
  uint32_t Submit(uint32_t gpus, Duration d, uint32_t nodes = 1) {
    return *slurm.Submit(SleepJob(gpus, d, nodes));
  }
  // One second of time: Slurm moves, then the daemon cycles.
  void Tick() {
    clock.Set(clock.Now() + 1);
    slurm.Advance();
    auto st = daemon->Cycle();
    ASSERT_TRUE(st.ok()) << st.error().message;
    ASSERT_EQ(daemon->illegal_moves(), 0u) << "a job state change outside the tables of job_state.h";
  }
};

TEST(Daemon, SjfStartsShortestFirstAndPinsNodes) {
  Rig r("qssf:estimator=walltime");  // estimate = the declared duration (hint)
  // 16 GPUs. Jobs (gpus, duration): A(8,10) B(8,30) C(8,5) D(16,2). SJF blocking order at
  // t=1001: D(2) needs 16 → starts; then C(5), A(10), B(30).
  uint32_t a = r.Submit(8, 10), b = r.Submit(8, 30), c = r.Submit(8, 5), d = r.Submit(16, 2, 2);
  std::map<uint32_t, Time> start;
  for (int i = 0; i < 60 && r.slurm.num_done() < 4; ++i) {
    r.Tick();
    for (uint32_t id : {a, b, c, d})
      if (!start.count(id) && r.slurm.job(id).start != kNoTime) start[id] = r.slurm.job(id).start;
  }
  ASSERT_EQ(r.slurm.num_done(), 4u);
  // Released at cycle t, started by Slurm at the next Advance (t+1).
  EXPECT_EQ(start[d], 1002);
  EXPECT_EQ(start[c], 1002 + 2 + 1);   // D ends 1004, seen at cycle 1004, starts 1005
  EXPECT_EQ(start[a], 1005);           // A fits next to C (8 + 8)
  EXPECT_EQ(start[b], 1005 + 5 + 1);   // C ends 1010 → B starts 1011
  for (uint32_t id : {a, b, c, d}) {
    EXPECT_EQ(r.slurm.counters(id).starts, 1u);
    EXPECT_EQ(r.slurm.counters(id).completions, 1u);
  }
  EXPECT_EQ(r.slurm.job(d).nodes.size(), 2u);
  auto all = r.journal->All();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 4u);
  for (const auto& dec : *all) EXPECT_EQ(dec.state, DecisionState::kApplied) << dec.key;
}

TEST(Daemon, HoldsJobsSubmittedWithoutHoldAndExplainsQueue) {
  Rig r("fifo", 1);
  SubmitSpec s;
  s.partition = "gpu";
  s.gpus_per_node = 8;
  s.sleep_s = 20;
  s.hold = false;
  uint32_t a = *r.slurm.Submit(s);
  uint32_t b = *r.slurm.Submit(s);
  r.Tick();  // both held; neither is queued before Slurm shows it held
  EXPECT_EQ(r.slurm.counters(a).holds, 1u);
  EXPECT_EQ(r.slurm.counters(b).holds, 1u);
  EXPECT_EQ(r.slurm.counters(a).releases, 0u);
  r.Tick();  // 1002: a is decided and released
  r.Tick();
  EXPECT_EQ(r.slurm.job(a).state, SlurmJobState::kRunning);
  auto q = r.daemon->Queue(10);
  const QueueEntry* eb = nullptr;
  for (const auto& e : q)
    if (e.job == b) eb = &e;
  ASSERT_NE(eb, nullptr);
  EXPECT_EQ(eb->state, JobState::kQueued);
  EXPECT_EQ(eb->position, 0);
  EXPECT_NE(eb->why.find("consolidate"), std::string::npos) << eb->why;
  // a was decided at 1002 with duration 3600 (no hint, no limit): predicted start of b is
  // a's estimated end.
  EXPECT_EQ(eb->predicted_start, 1002 + 3600);
  EXPECT_EQ(eb->prediction, "predicted");  // a dry run of the policy (Scheduler::Forecast)
}

TEST(Daemon, SlurmUnreachableIsAnErrorAndRecovers) {
  Rig r("fifo", 1);
  uint32_t a = r.Submit(8, 3);
  r.slurm.set_unreachable(true);
  r.clock.Set(r.clock.Now() + 1);
  auto st = r.daemon->Cycle();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("Unable to contact slurm controller"), std::string::npos);
  EXPECT_FALSE(r.daemon->GetHealth().ok);
  EXPECT_NE(r.daemon->MetricsText().find("orrery_slurm_errors_total 1"), std::string::npos);
  r.slurm.set_unreachable(false);
  for (int i = 0; i < 10; ++i) r.Tick();
  EXPECT_EQ(r.slurm.counters(a).completions, 1u);
  EXPECT_TRUE(r.daemon->GetHealth().ok);
}

TEST(Daemon, NodeDownRequeuesAndNodeBackIsUsed) {
  Rig r("fifo", 2);
  uint32_t a = r.Submit(8, 30), b = r.Submit(8, 30);
  r.Tick();
  r.Tick();
  ASSERT_EQ(r.slurm.job(a).state, SlurmJobState::kRunning);
  std::string lost = r.slurm.job(a).nodes[0];
  r.slurm.SetNodeDown(lost, true);  // Slurm requeues a
  r.Tick();
  EXPECT_EQ(r.slurm.job(a).state, SlurmJobState::kPending);
  EXPECT_TRUE(r.slurm.job(a).held);  // the daemon held it again
  auto h = r.daemon->GetHealth();
  EXPECT_EQ(h.nodes_up, 1u);
  bool noted = false;
  for (const auto& e : h.events) noted |= e.find(lost + " up -> down") != std::string::npos;
  EXPECT_TRUE(noted);
  r.slurm.SetNodeDown(lost, false);
  for (int i = 0; i < 80 && r.slurm.num_done() < 2; ++i) r.Tick();
  EXPECT_EQ(r.slurm.counters(a).completions, 1u);
  EXPECT_EQ(r.slurm.counters(a).starts, 2u);  // once before the failure, once after
  EXPECT_EQ(r.slurm.counters(b).completions, 1u);
  EXPECT_TRUE(r.journal->Get("start/" + std::to_string(a) + "/1").ok());
}

TEST(Daemon, DecisionOnNodeThatFailsBeforeLaunchIsTakenBack) {
  Rig r("fifo", 2);
  uint32_t a = r.Submit(8, 5);
  r.Tick();  // decided and released, pinned to one node; Slurm has not started it yet
  auto dec = r.journal->Get("start/" + std::to_string(a) + "/0");
  ASSERT_TRUE(dec.ok());
  std::string first = dec->nodes[0].node;
  r.slurm.SetNodeDown(first, true);
  for (int i = 0; i < 10; ++i) r.Tick();
  EXPECT_EQ(r.slurm.counters(a).completions, 1u);
  EXPECT_EQ(r.slurm.counters(a).starts, 1u);
  EXPECT_NE(r.slurm.job(a).nodes[0], first);
  EXPECT_EQ(r.journal->Get("start/" + std::to_string(a) + "/0")->state, DecisionState::kSuperseded);
  EXPECT_EQ(r.journal->Get("start/" + std::to_string(a) + "/1")->state, DecisionState::kApplied);
}

// Nodes of 72 GPUs (a GB200 NVL72 rack exported as one Slurm node), from sinfo's GRES to the
// decisions: the scheduler's size classes go up to 73 (sched/plugins/scheduler_test.cc,
// SchedulerNodeSizes). FIFO on two such nodes: A (72 GPUs) is released at 1001 on nvl1 and
// runs 1002..1007; B (2 nodes × 72) waits for both and is released at 1007 (A's end), runs
// 1008..1013; C (1 GPU) waits behind B (FIFO blocks) and is released at 1013, on nvl1.
TEST(Daemon, NodesOf72GpusTakeWholeNodeAndTwoNodeJobs) {
  auto rows = ParseSinfo("nvl1\x1fgpu\x1fidle\x1fgpu:gb200:72(S:0-1)\n");
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  EXPECT_EQ((*rows)[0].gpus, 72);
  Rig r("fifo", 0);
  r.slurm.AddNode("nvl1", 72, "gpu");
  r.slurm.AddNode("nvl2", 72, "gpu");
  const uint32_t a = r.Submit(72, 5), b = r.Submit(144, 5, 2), c = r.Submit(1, 5);
  for (int i = 0; i < 20 && r.slurm.num_done() < 3; ++i) r.Tick();
  ASSERT_EQ(r.slurm.num_done(), 3u);
  EXPECT_EQ(r.slurm.job(a).start, 1002);
  EXPECT_EQ(r.slurm.job(a).nodes, std::vector<std::string>{"nvl1"});
  EXPECT_EQ(r.slurm.job(b).start, 1008);
  EXPECT_EQ(r.slurm.job(b).nodes, (std::vector<std::string>{"nvl1", "nvl2"}));
  EXPECT_EQ(r.slurm.job(c).start, 1014);
  EXPECT_EQ(r.slurm.job(c).nodes, std::vector<std::string>{"nvl1"});
  EXPECT_EQ(r.daemon->scheduler()->cluster_state().vc_max_node_gpus(VcId(0)), 72);
}

// A start decision pinned to a node that leaves Slurm between the listing and the release:
// the release fails ("Invalid node name specified"), and at the next cycle, which lists the
// node gone, the decision is superseded and the job re-planned on the node that is left,
// not retried at every cycle. A is decided at 1001 on node1 (consolidate: the first of two
// idle nodes), whose release fails; at 1002 it is re-planned (generation 1) on node2 and
// released; Slurm starts it at 1003, and it ends at 1008.
TEST(Daemon, StartPinnedToANodeThatLeftSlurmIsReplanned) {
  Rig r("fifo", 2);
  const uint32_t a = r.Submit(8, 5);
  r.slurm.RemoveNodeAtNextStart("node1");
  r.Tick();
  EXPECT_EQ(r.slurm.counters(a).start_calls, 1u);
  EXPECT_EQ(r.slurm.counters(a).releases, 0u);
  for (int i = 0; i < 10; ++i) r.Tick();
  EXPECT_EQ(r.slurm.counters(a).start_calls, 2u);  // the failed release, then node2's
  EXPECT_EQ(r.slurm.counters(a).completions, 1u);
  EXPECT_EQ(r.slurm.job(a).nodes, std::vector<std::string>{"node2"});
  EXPECT_EQ(r.slurm.job(a).start, 1003);
  const std::string first = "start/" + std::to_string(a) + "/0";
  EXPECT_EQ(r.journal->Get(first)->state, DecisionState::kSuperseded);
  EXPECT_EQ(r.journal->Get(first)->detail, "node1 left the managed partitions before the start was applied");
  EXPECT_EQ(r.journal->Get("start/" + std::to_string(a) + "/1")->state, DecisionState::kApplied);
  bool noted = false;
  for (const auto& e : r.daemon->GetHealth().events)
    noted |= e == "1002 requeue: job " + std::to_string(a) +
                      " back in the queue (generation 1): node1 left the managed partitions before the start was applied";
  EXPECT_TRUE(noted);
}

// The same with no other node: the job waits, held, in the policy's queue, and the queue (what
// `orrery explain` reads) says why; when a node joins, it runs there.
TEST(Daemon, StartPinnedToTheOnlyNodeThatLeftWaitsWithAReason) {
  Rig r("fifo", 1);
  const uint32_t a = r.Submit(8, 5);
  r.slurm.RemoveNodeAtNextStart("node1");
  for (int i = 0; i < 5; ++i) r.Tick();
  EXPECT_EQ(r.slurm.counters(a).start_calls, 1u);  // not retried
  EXPECT_TRUE(r.slurm.job(a).held);
  const auto q = r.daemon->Queue(10);
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0].job, a);
  EXPECT_EQ(q[0].state, JobState::kQueued);
  EXPECT_EQ(q[0].why, "consolidate: not enough free GPUs in the VC");
  r.slurm.AddNode("node3", 8, "gpu");
  for (int i = 0; i < 10; ++i) r.Tick();
  EXPECT_EQ(r.slurm.counters(a).completions, 1u);
  EXPECT_EQ(r.slurm.job(a).nodes, std::vector<std::string>{"node3"});
}

// After a restart: the daemon planned A's start on node1 and died before sending it; node1
// left meanwhile. The restarted daemon never models node1, so the planned start is not sent
// but superseded, and A runs on node2.
TEST(Daemon, PlannedStartOnANodeThatLeftDuringARestartIsReplanned) {
  Rig r("fifo", 2);
  CrashingSlurm crashing(&r.slurm);
  crashing.budget = 0;  // SleepJob submits held: the first mutating call is A's release
  crashing.lose_crossing_call = true;
  r.daemon = std::make_unique<Daemon>(&crashing, r.journal.get(), &r.clock, r.opts);
  ASSERT_TRUE(r.daemon->Recover().ok());
  const uint32_t a = r.Submit(8, 5);
  r.clock.Set(r.clock.Now() + 1);
  EXPECT_TRUE(r.daemon->Cycle().ok());  // its release failed (lost): retried at the next cycle
  ASSERT_TRUE(crashing.crashed);
  ASSERT_EQ(r.journal->Get("start/" + std::to_string(a) + "/0")->state, DecisionState::kPlanned);
  ASSERT_EQ(r.journal->Get("start/" + std::to_string(a) + "/0")->nodes[0].node, "node1");
  r.slurm.RemoveNode("node1");
  r.Start();
  for (int i = 0; i < 10; ++i) r.Tick();
  EXPECT_EQ(r.slurm.counters(a).start_calls, 1u);  // node2's: the planned one was never sent
  EXPECT_EQ(r.slurm.counters(a).completions, 1u);
  EXPECT_EQ(r.slurm.job(a).nodes, std::vector<std::string>{"node2"});
  EXPECT_EQ(r.journal->Get("start/" + std::to_string(a) + "/0")->detail,
            "node1 left the managed partitions before the start was applied");
}

TEST(Daemon, ResumeFailureIsReportedAndDaemonKeepsWorking) {
  Rig r("fifo", 2);
  r.slurm.set_power_delay(2);
  r.slurm.set_fail_resume("node2", true);
  r.Tick();
  ASSERT_TRUE(r.daemon->RequestPower("node2", false).ok());
  for (int i = 0; i < 4; ++i) r.Tick();
  EXPECT_EQ(r.slurm.node("node2").avail, NodeAvail::kPoweredDown);
  ASSERT_TRUE(r.daemon->RequestPower("node2", true).ok());
  for (int i = 0; i < 4; ++i) r.Tick();
  EXPECT_EQ(r.slurm.node("node2").avail, NodeAvail::kDown);
  bool noted = false;
  for (const auto& e : r.daemon->GetHealth().events) noted |= e.find("node2 powering-up -> down") != std::string::npos;
  EXPECT_TRUE(noted);
  uint32_t a = r.Submit(8, 2);
  for (int i = 0; i < 6; ++i) r.Tick();
  EXPECT_EQ(r.slurm.counters(a).completions, 1u);
  EXPECT_EQ(r.slurm.job(a).nodes, std::vector<std::string>{"node1"});
  EXPECT_FALSE(r.daemon->RequestPower("node9", true).ok());
}

// Crashes: the daemon dies (destroyed without its last commit) at random points, including
// right after Slurm took a decision but before the journal confirmed it.

TEST(Daemon, RandomCrashesLoseNoDecisionAndApplyNoneTwice) {
  SimClock clock(1000);
  FakeSlurm fake(&clock);
  for (int i = 1; i <= 4; ++i) fake.AddNode("node" + std::to_string(i), 8, "gpu");
  std::mt19937_64 rng(42);
  std::vector<uint32_t> ids;
  for (int i = 0; i < 300; ++i) {
    SubmitSpec s;
    s.partition = "gpu";
    s.gpus_per_node = std::array<uint32_t, 4>{1, 2, 4, 8}[rng() % 4];
    s.sleep_s = 1 + static_cast<Duration>(rng() % 6);
    s.duration_hint = s.sleep_s;
    s.hold = (rng() % 5) != 0;  // a fifth arrive unheld: the daemon must hold them
    ids.push_back(*fake.Submit(s));
  }
  std::string path = TempPath("crash.db");
  DaemonOptions opts;
  opts.partitions = {"gpu"};
  opts.policy = "qssf:estimator=walltime";
  int crashes = 0;
  for (int round = 0; round < 400 && fake.num_done() < ids.size(); ++round) {
    CrashingSlurm slurm(&fake);
    slurm.budget = static_cast<int>(rng() % 12);
    auto journal = Journal::Open(path, false);
    ASSERT_TRUE(journal.ok());
    Daemon d(&slurm, journal->get(), &clock, opts);
    ASSERT_TRUE(d.Recover().ok());
    for (int t = 0; t < 50 && !slurm.crashed; ++t) {
      clock.Set(clock.Now() + 1);
      fake.Advance();
      auto st = d.Cycle();
      if (!st.ok()) {
        ASSERT_TRUE(slurm.crashed) << st.error().message;
      }
    }
    crashes += slurm.crashed;
  }
  EXPECT_GT(crashes, 50);
  for (uint32_t id : ids)
    if (!IsTerminal(fake.job(id).state))
      ADD_FAILURE() << "job " << id << " " << fake.job(id).state_raw << " held=" << fake.job(id).held
                    << " reason=" << fake.job(id).reason << " starts=" << fake.counters(id).starts;
  ASSERT_EQ(fake.num_done(), ids.size());
  auto journal = Journal::Open(path, false);
  auto all = (*journal)->All();
  ASSERT_TRUE(all.ok());
  std::map<uint32_t, int> applied;
  for (const auto& dec : *all) {
    EXPECT_NE(dec.state, DecisionState::kPlanned) << dec.key;
    if (dec.kind == DecisionKind::kStart && dec.state == DecisionState::kApplied) ++applied[dec.job];
  }
  for (uint32_t id : ids) {
    EXPECT_EQ(fake.counters(id).starts, 1u) << id;
    EXPECT_EQ(fake.counters(id).completions, 1u) << id;
    EXPECT_LE(fake.counters(id).releases, 1u) << id;
    EXPECT_EQ(applied[id], 1) << id;
  }
}

}  // namespace
}  // namespace orrery::live

// ------------------------------------------------------------------ config and HTTP API
#include <httplib.h>

#include "live/http_api.h"
#include "live/serve_config.h"

namespace orrery::live {
namespace {

TEST(ServeConfig, ParsesAndRejectsWithLocations) {
  auto ok = ParseServeConfig(
      "[slurm]\npartitions = [\"gpu\", \"a100\"]\ntimeout_ms = 5000\n[policy]\nspec = \"qssf:estimator=walltime\"\n"
      "[daemon]\njournal = \"/tmp/j.db\"\ninterval_ms = 500\nfull_resync_cycles = 120\n[http]\nport = 9000\ntoken = \"abcdefghijklmnopq\"\n",
      "s.toml");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->daemon.partitions, (std::vector<std::string>{"gpu", "a100"}));
  EXPECT_EQ(ok->daemon.policy, "qssf:estimator=walltime");
  EXPECT_EQ(ok->listen, "127.0.0.1");  // loopback unless configured
  EXPECT_EQ(ok->port, 9000);
  EXPECT_EQ(ok->interval_ms, 500);
  EXPECT_EQ(ok->daemon.full_resync_cycles, 120);
  auto err = [](const std::string& text) {
    auto r = ParseServeConfig(text, "s.toml");
    return r.ok() ? std::string("OK") : r.error().message;
  };
  EXPECT_EQ(err("[slurm]\npartitions = [\"gpu\"]\nbogus = 1\n"),
            "s.toml:3:9: unknown key 'bogus' in [slurm]: expected one of partitions, bin_dir, slurm_conf, timeout_ms");
  EXPECT_EQ(err("[policy]\nspec = \"fifo\"\n"), "s.toml:1:1: missing table [slurm] (at least: partitions = [\"...\"])");
  EXPECT_EQ(err("[slurm]\npartitions = []\n"),
            "s.toml:2:14: 'partitions' in [slurm]: expected a non-empty array of partition names");
  EXPECT_NE(err("[slurm]\npartitions = [\"gpu\"]\n[policy]\nspec = \"nosuch\"\n").find("s.toml:4:8: 'spec' in [policy]"),
            std::string::npos);
  EXPECT_EQ(err("[slurm]\npartitions = [\"gpu\"]\n[http]\nport = 70000\n"),
            "s.toml:4:8: 'port' in [http]: expected 0..65535, got 70000");
  EXPECT_EQ(err("[slurm]\npartitions = [\"gpu\"]\n[http]\ntoken = \"short\"\n"),
            "s.toml:4:9: [http]: the token must have at least 16 characters");
  EXPECT_NE(err("[slurm\n").find("s.toml:1:"), std::string::npos);
  // Policies live mode refuses, located at the spec.
  EXPECT_EQ(err("[slurm]\npartitions = [\"gpu\"]\n[policy]\nspec = \"sjf\"\n"),
            "s.toml:4:8: 'spec' in [policy]: policy 'sjf': runs in orrery simulate only (its order reads true "
            "durations, which only the simulator knows); orrery serve runs fifo, srtf (with an estimator=..., which "
            "orders by believed remaining time), qssf (with an estimator that is not an oracle, e.g. "
            "estimator=walltime), easy, tiresias");
  EXPECT_EQ(err("[slurm]\npartitions = [\"gpu\"]\n[policy]\nspec = \"srtf\"\n"),
            "s.toml:4:8: 'spec' in [policy]: policy 'srtf': its queue order 'srtf' reads true job durations (an "
            "oracle), which only `orrery simulate` knows");
  EXPECT_EQ(err("[slurm]\npartitions = [\"gpu\"]\n[policy]\nspec = \"qssf\"\n"),
            "s.toml:4:8: 'spec' in [policy]: policy 'qssf': estimator 'noisy-oracle' reads true job durations (an "
            "oracle); choose another estimator=... for live mode");
  EXPECT_EQ(err("[slurm]\npartitions = [\"gpu\"]\n[policy]\nspec = \"qssf:estimator=walltime\"\n"), "OK");
  // Shaping live: shape=goodput needs the nodes' GPU type (a planner profile); elastic is refused.
  EXPECT_EQ(err("[slurm]\npartitions = [\"gpu\"]\n[policy]\nspec = \"fifo:shape=goodput\"\n"),
            "s.toml:4:8: 'spec' in [policy]: policy 'fifo:shape=goodput': shape=goodput times jobs with the planner: "
            "set [policy] gpu_type to the managed nodes' GPU type (e.g. \"H200\"; `orrery plan` names the known ones)");
  EXPECT_EQ(err("[slurm]\npartitions = [\"gpu\"]\n[policy]\nspec = \"fifo:shape=goodput\"\ngpu_type = \"H200\"\n"), "OK");
  EXPECT_EQ(err("[slurm]\npartitions = [\"gpu\"]\n[policy]\nspec = \"fifo:shape=goodput\"\ngpu_type = \"Z9\"\n")
                .rfind("s.toml:4:8: 'spec' in [policy]: ", 0),
            0u);
  EXPECT_NE(err("[slurm]\npartitions = [\"gpu\"]\n[policy]\nspec = \"fifo:shape=goodput\"\ngpu_type = \"Z9\"\n")
                .find("planner profile of GPU type 'Z9'"),
            std::string::npos);
  EXPECT_EQ(err("[slurm]\npartitions = [\"gpu\"]\n[policy]\nspec = \"fifo:shape=goodput,elastic=true\"\n"
                "gpu_type = \"H200\"\n"),
            "s.toml:4:8: 'spec' in [policy]: policy 'fifo:shape=goodput,elastic=true': 'elastic' resizes running jobs "
            "(a checkpoint and a restart at another GPU count), which orrery serve does not do yet; drop elastic=true: "
            "shape=goodput alone shapes the jobs that opt in when they start");
  // The shared TOML reader's input checks and typed getters (config/toml_util.h).
  EXPECT_EQ(err("[slurm]\npartitions = [\"gpu\"]\n[daemon]\nhold_unheld = 1\n"),
            "s.toml:4:15: 'hold_unheld' in [daemon]: expected true or false, got 1");
  EXPECT_EQ(err("[slurm]\npartitions = [\"gpu\"]\n[daemon]\nfull_resync_cycles = -1\n"),
            "s.toml:4:22: 'full_resync_cycles' in [daemon]: expected 0..1000000, got -1");
  EXPECT_EQ(err("[slurm]\npartitions = [\"g\xffu\"]\n"), "s.toml:2:17: expected UTF-8 text without NUL bytes, got byte 0xFF");
}

TEST(HttpApi, ServesQueueMetricsAndGuardsMutations) {
  Rig r("fifo", 1);
  uint32_t a = r.Submit(8, 30), b = r.Submit(8, 30);
  r.Tick();
  r.Tick();
  HttpApi api(r.daemon.get(), "0123456789abcdef-token");
  ASSERT_TRUE(api.Start("127.0.0.1", 0).ok());
  httplib::Client cli("127.0.0.1", api.port());
  auto h = cli.Get("/healthz");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  EXPECT_NE(h->body.find("\"ok\": true"), std::string::npos);
  auto q = cli.Get("/api/v1/queue");
  ASSERT_TRUE(q);
  EXPECT_NE(q->body.find("\"job\": " + std::to_string(b)), std::string::npos);
  EXPECT_NE(q->body.find("\"phase\": \"running\""), std::string::npos);
  EXPECT_NE(q->body.find("consolidate: "), std::string::npos) << q->body;
  EXPECT_NE(q->body.find("\"prediction\": \"predicted\""), std::string::npos) << q->body;
  EXPECT_NE(q->body.find("\"prediction\": \"running\""), std::string::npos) << q->body;
  auto d = cli.Get("/api/v1/decisions");
  ASSERT_TRUE(d);
  EXPECT_NE(d->body.find("\"key\": \"start/" + std::to_string(a) + "/0\""), std::string::npos) << d->body;
  auto m = cli.Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("orrery_decisions_start_total 1\n"), std::string::npos);
  EXPECT_NE(m->body.find("orrery_jobs_pending 1\n"), std::string::npos);
  EXPECT_NE(m->body.find("orrery_gpu_utilization 1\n"), std::string::npos);
  EXPECT_NE(m->body.find("# TYPE orrery_cycle_duration_seconds histogram"), std::string::npos);
  auto no = cli.Post("/api/v1/pause");
  ASSERT_TRUE(no);
  EXPECT_EQ(no->status, 401);
  httplib::Headers bad = {{"Authorization", "Bearer 0123456789abcdef-tokeX"}};
  EXPECT_EQ(cli.Post("/api/v1/pause", bad, "", "text/plain")->status, 401);
  httplib::Headers good = {{"Authorization", "Bearer 0123456789abcdef-token"}};
  auto yes = cli.Post("/api/v1/pause", good, "", "text/plain");
  ASSERT_TRUE(yes);
  EXPECT_EQ(yes->status, 200);
  EXPECT_TRUE(r.daemon->GetHealth().paused);
  EXPECT_EQ(cli.Post("/api/v1/nodes/node1/power-down", good, "", "text/plain")->status, 202);
  EXPECT_EQ(cli.Post("/api/v1/nodes/node7/power-down", good, "", "text/plain")->status, 400);
  api.Stop();
  HttpApi locked(r.daemon.get(), "");
  ASSERT_TRUE(locked.Start("127.0.0.1", 0).ok());
  httplib::Client cli2("127.0.0.1", locked.port());
  EXPECT_EQ(cli2.Post("/api/v1/resume", good, "", "text/plain")->status, 403);
}

}  // namespace
}  // namespace orrery::live

// ------------------------------------------------------------------ the core's verbs, live
namespace orrery::live {
namespace {

uint32_t SubmitPlain(FakeSlurm& slurm, uint32_t gpus, Duration sleep) {  // no duration hint
  SubmitSpec s;
  s.partition = "gpu";
  s.gpus_per_node = gpus;
  s.sleep_s = sleep;
  return *slurm.Submit(s);
}

// A cancelled job leaves through Withdraw: the estimator learns only from completed jobs.
// user-stats (median of the last 10 finished jobs of the same GPU count; these jobs have
// no user). A (sleep 10): released at its first cycle t, started by Slurm at t+1, seen
// completed at t+11 -> observed 11 s. B is cancelled after 5 s of running: when cancelled
// jobs were finished (Adopt(empty) + Finish), it taught 5 s (C estimated median {11, 5} = 8);
// now the window stays {11}, so C is estimated 11.
TEST(DaemonVerbs, CancelledJobsTeachNothing) {
  Rig r("qssf:estimator=user-stats", 1);
  uint32_t a = SubmitPlain(r.slurm, 1, 10);
  for (int i = 0; i < 14; ++i) r.Tick();
  ASSERT_TRUE(IsTerminal(r.slurm.job(a).state));
  uint32_t b = SubmitPlain(r.slurm, 1, 100);
  for (int i = 0; i < 4; ++i) r.Tick();
  ASSERT_EQ(r.slurm.job(b).state, SlurmJobState::kRunning);
  ASSERT_TRUE(r.slurm.Cancel(b).ok());
  r.Tick();
  uint32_t c = SubmitPlain(r.slurm, 1, 5);
  r.Tick();
  auto vc = r.daemon->JobView(c);
  ASSERT_TRUE(vc.has_value());
  EXPECT_EQ(vc->est_source, EstimateSource::kEstimator);
  EXPECT_EQ(vc->estimate, 11);
}

// Tiresias' attained service survives a node joining: the scheduler is not rebuilt.
// thresholds=40 GPU-s: A (8 GPUs) is demoted after 5 s of service; B (8 GPUs) then arrives
// in the top queue and preempts it; A waits with its attained service (> 40 GPU-s). node2
// joins: A starts there, and its attained service is what it had (a rebuild would have
// re-submitted it with none).
TEST(DaemonVerbs, NodeJoinKeepsTiresiasAttainedService) {
  Rig r("tiresias:thresholds=40,protect=0", 1);
  uint32_t a = r.Submit(8, 200);
  for (int i = 0; i < 8; ++i) r.Tick();
  uint32_t b = r.Submit(8, 200);
  for (int i = 0; i < 3; ++i) r.Tick();
  ASSERT_EQ(r.slurm.job(b).state, SlurmJobState::kRunning);
  ASSERT_EQ(r.slurm.job(a).state, SlurmJobState::kPending);
  auto before = r.daemon->JobView(a);
  ASSERT_TRUE(before.has_value());
  EXPECT_GE(before->attained, 40);
  const Scheduler* sched = r.daemon->scheduler();
  r.slurm.AddNode("node2", 8, "gpu");
  for (int i = 0; i < 3; ++i) r.Tick();
  EXPECT_EQ(r.daemon->scheduler(), sched);  // the same scheduler: nothing rebuilt
  EXPECT_EQ(r.slurm.job(a).state, SlurmJobState::kRunning);
  EXPECT_EQ(r.slurm.job(a).nodes, std::vector<std::string>{"node2"});
  auto after = r.daemon->JobView(a);
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->attained, before->attained);
  EXPECT_EQ(after->preemptions, 1u);
}

// A preempted job restarted while Slurm still completes its requeue (COMPLETING for 3 s:
// its processes checkpoint within KillWait): the restart decision waits until Slurm lists it
// pending, then its release makes it eligible now (StartTime=now) instead of at the begin
// time Slurm pushes 120 s ahead when the requeue completes. The job is never adopted while it
// completes, keeps its generation (1) and its attained service.
TEST(DaemonVerbs, PreemptedJobRestartsAsSoonAsItsRequeueCompletes) {
  Rig r("tiresias:thresholds=40,protect=0", 1);
  r.slurm.set_requeue_timing(3, 120);
  uint32_t a = r.Submit(8, 200);
  for (int i = 0; i < 8; ++i) r.Tick();
  uint32_t b = r.Submit(8, 200);
  r.Tick();  // 1009: B's arrival demotes nothing yet; A (attained 7 s × 8 GPUs > 40) is preempted for B
  ASSERT_EQ(r.slurm.job(a).state_raw, "COMPLETING");
  const Time preempted = r.clock.Now();
  r.slurm.AddNode("node2", 8, "gpu");
  for (int i = 0; i < 8; ++i) r.Tick();
  // The requeue completes at preempted + 3 (Advance), the daemon sees A pending held in that
  // cycle and releases it on node2 with StartTime=now; Slurm starts it at the next Advance.
  ASSERT_EQ(r.slurm.job(a).state, SlurmJobState::kRunning);
  EXPECT_EQ(r.slurm.job(a).nodes, std::vector<std::string>{"node2"});
  EXPECT_EQ(r.slurm.job(a).start, preempted + 3 + 1);
  EXPECT_EQ(r.slurm.job(b).nodes, std::vector<std::string>{"node1"});  // once A's requeue freed it
  EXPECT_EQ(r.slurm.counters(a).starts, 2u);
  EXPECT_EQ(r.slurm.counters(a).releases, 2u);
  auto started = r.journal->Get("start/" + std::to_string(a) + "/1");
  ASSERT_TRUE(started.ok());
  EXPECT_EQ(started->state, DecisionState::kApplied);
  EXPECT_EQ(started->nodes.at(0).node, "node2");
  EXPECT_EQ(r.journal->Get("start/" + std::to_string(a) + "/2").error().code, ErrorCode::kNotFound);
  auto view = r.daemon->JobView(a);
  ASSERT_TRUE(view.has_value());
  EXPECT_EQ(view->preemptions, 1u);
  EXPECT_NE(r.daemon->MetricsText().find("orrery_jobs_adopted_total 0\n"), std::string::npos);
}

// The core owns the cadence: tiresias:preset=lucid decides on its 60-s grid live too. The
// rig's clock starts at 1000 s; a job submitted at 1001 waits for the tick at 1020 (the
// first multiple of 60 after its arrival), although the daemon cycles every second.
TEST(DaemonVerbs, PeriodicPolicyDecidesOnItsTicks) {
  Rig r("tiresias:preset=lucid", 1);
  uint32_t a = r.Submit(1, 30);
  Time released = kNoTime;
  for (int i = 0; i < 30 && released == kNoTime; ++i) {
    r.Tick();
    if (r.slurm.counters(a).releases > 0) released = r.clock.Now();
  }
  EXPECT_EQ(released, 1020);
  auto all = r.journal->All();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].time, 1020);
}

}  // namespace
}  // namespace orrery::live
