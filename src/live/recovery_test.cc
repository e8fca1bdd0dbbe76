// Recovery of failed and hung jobs (live/recovery.h, recoverer.h): the verdict rule on
// diagnosed logs, the restart contract's comment keys, the tail read, and the daemon on
// FakeSlurm (drain + requeue, give-up shown in the queue, hangs, the drain limit and the
// operator's confirmation, kill -9 at every mutating call).
#include "live/recovery.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "live/crashing_slurm_testing.h"
#include "live/daemon.h"
#include "live/fake_slurm.h"
#include "live/log_tail.h"
#include "live/journal.h"

namespace orrery::live {
namespace {

std::string TempDir() {
  auto dir = std::filesystem::temp_directory_path() / ("orrery_recovery_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string Fresh(const std::string& name) {
  std::string p = TempDir() + "/" + name;
  for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(p + s);
  return p;
}

void Write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

// A PyTorch NCCL watchdog timeout on node2 (the NCCL debug prefix names the host).
const char* const kNcclLog =
    "step 120 loss 2.31\n"
    "node2:2201:2250 [0] NCCL INFO comm 0x5581 rank 0 nranks 8 cudaDev 0 busId 1b000 - Init COMPLETE\n"
    "[rank0]:[E ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=1201, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600324 milliseconds "
    "before timing out.\n";
const char* const kModuleLog =
    "Traceback (most recent call last):\n"
    "  File \"/home/u/train.py\", line 3, in <module>\n"
    "    import flash_attn_v9\n"
    "ModuleNotFoundError: No module named 'flash_attn_v9'\n";

logs::Diagnosis Diagnose(const std::string& text) { return logs::Diagnoser().Diagnose(text); }

// ------------------------------------------------------------------ the rule

struct JudgeRow {
  const char* what;
  const char* log;
  Trigger trigger;
  std::vector<std::string> nodes;
  int restarts;
  const char* policy;
  RecoveryStep step;
  FaultCause cause;
  const char* suspect;
};

TEST(Recovery, JudgeTable) {
  const JudgeRow rows[] = {
      // nccl_timeout is infrastructure (kNic, a node fault): acme cordons the node the log names.
      {"nccl on node2 of two", kNcclLog, Trigger::kFailed, {"node1", "node2"}, 0, "acme", RecoveryStep::kDrainRequeue,
       FaultCause::kNic, "node2"},
      // Named nowhere but the job's only node: that node.
      {"nccl, one node", "Watchdog caught collective operation timeout\n", Trigger::kFailed, {"node7"}, 0, "acme",
       RecoveryStep::kDrainRequeue, FaultCause::kNic, "node7"},
      // Two nodes and none named: requeued, nothing drained.
      {"nccl, unnamed of two", "Watchdog caught collective operation timeout\n", Trigger::kFailed, {"node1", "node3"}, 0,
       "acme", RecoveryStep::kRequeue, FaultCause::kNic, ""},
      {"script error", kModuleLog, Trigger::kFailed, {"node1"}, 0, "acme", RecoveryStep::kGiveUp, FaultCause::kScript,
       "node1"},
      // Slurm-like requeue retries a script error until max_requeues (3) in a row...
      {"requeue policy, script", kModuleLog, Trigger::kFailed, {"node1"}, 0, "requeue", RecoveryStep::kRequeue,
       FaultCause::kScript, "node1"},
      // ... and never drains (it does not cordon).
      {"requeue policy, nccl", kNcclLog, Trigger::kFailed, {"node2"}, 0, "requeue", RecoveryStep::kRequeue,
       FaultCause::kNic, "node2"},
      {"none policy", kNcclLog, Trigger::kFailed, {"node2"}, 0, "none", RecoveryStep::kGiveUp, FaultCause::kNic, "node2"},
      {"restart limit", kNcclLog, Trigger::kFailed, {"node2"}, 3, "acme", RecoveryStep::kGiveUp, FaultCause::kNic,
       "node2"},
      // A hang: restarted, no node blamed (acme does not cordon hangs).
      {"hang", "step 5 loss 3.1\n", Trigger::kHang, {"node1"}, 0, "acme", RecoveryStep::kRequeue, FaultCause::kHang,
       "node1"},
      // NODE_FAIL with nothing in the log: the node's fault.
      {"node fail", "step 5 loss 3.1\n", Trigger::kNodeFail, {"node4"}, 0, "acme", RecoveryStep::kDrainRequeue,
       FaultCause::kHost, "node4"},
      // The rules say a retry fails again (cuda_oom, retry = false): given up under acme.
      {"cuda oom", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n", Trigger::kFailed,
       {"node1"}, 0, "acme", RecoveryStep::kGiveUp, FaultCause::kFramework, "node1"},
      // Nothing matched, FAILED: a framework error, retried.
      {"unknown", "bye\n", Trigger::kFailed, {"node1"}, 0, "acme", RecoveryStep::kRequeue, FaultCause::kFramework,
       "node1"},
  };
  for (const JudgeRow& r : rows) {
    auto policy = MakeRecovery(r.policy);
    ASSERT_TRUE(policy.ok());
    Incident inc{r.trigger, r.nodes, r.restarts, r.log};
    RecoveryVerdict v = Judge(*policy, Diagnose(r.log), inc, 3);
    EXPECT_EQ(v.step, r.step) << r.what << ": " << v.reason;
    EXPECT_EQ(v.cause, r.cause) << r.what;
    EXPECT_EQ(v.suspect, r.suspect) << r.what;
  }
}

TEST(Recovery, ReasonsAndKinds) {
  auto acme = MakeRecovery("acme");
  ASSERT_TRUE(acme.ok());
  RecoveryVerdict nccl = Judge(*acme, Diagnose(kNcclLog), Incident{Trigger::kFailed, {"node1", "node2"}, 1, kNcclLog}, 3);
  EXPECT_EQ(nccl.kind, FailureKind::kHardware);
  EXPECT_EQ(nccl.reason.substr(0, 38), "infrastructure/nccl_timeout on node2: ");
  EXPECT_NE(nccl.reason.find("; node2 drained, requeued (restart 2)"), std::string::npos) << nccl.reason;
  RecoveryVerdict mod = Judge(*acme, Diagnose(kModuleLog), Incident{Trigger::kFailed, {"node1"}, 0}, 3);
  EXPECT_EQ(mod.kind, FailureKind::kUser);
  EXPECT_EQ(mod.reason,
            "script/module_not_found on node1: ModuleNotFoundError: No module named 'flash_attn_v9'; not retried: a "
            "script error fails again (the user fixes it)");
  RecoveryVerdict limit = Judge(*acme, Diagnose(kNcclLog), Incident{Trigger::kFailed, {"node2"}, 3}, 3);
  EXPECT_NE(limit.reason.find("not retried: 3 restart(s), the limit"), std::string::npos) << limit.reason;
  // Slurm's own states when the log says nothing: TIMEOUT -> kTimeout, OUT_OF_MEMORY -> kOom.
  EXPECT_EQ(Judge(*acme, Diagnose(""), Incident{Trigger::kTimeout, {"n"}, 0}, 3).kind, FailureKind::kTimeout);
  EXPECT_EQ(Judge(*acme, Diagnose(""), Incident{Trigger::kOutOfMemory, {"n"}, 0}, 3).kind, FailureKind::kOom);
  EXPECT_EQ(FailureKindOf(SlurmFailure::kNodeFail), FailureKind::kHardware);
  EXPECT_EQ(FailureKindOf(SlurmFailure::kExit), FailureKind::kUser);
}

TEST(Recovery, SlurmFailureStatesAreTyped) {
  std::string text;
  const char* states[] = {"FAILED", "NODE_FAIL", "TIMEOUT", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "COMPLETED"};
  for (int i = 0; i < 7; ++i)
    text += std::to_string(i + 1) + "\x1f" + states[i] +
            "\x1fgpu\x1froot\x1f" "1\x1fgres:gpu:8\x1fUNLIMITED\x1fN/A\x1fN/A\x1fN/A\x1fNone\x1fnode1\x1fj\x1f\n";
  auto jobs = ParseSqueue(text);
  ASSERT_TRUE(jobs.ok()) << jobs.error().message;
  const SlurmFailure want[] = {SlurmFailure::kExit,    SlurmFailure::kNodeFail, SlurmFailure::kTimeout,
                               SlurmFailure::kOutOfMemory, SlurmFailure::kBootFail, SlurmFailure::kTimeout,
                               SlurmFailure::kNone};
  for (int i = 0; i < 7; ++i) EXPECT_EQ((*jobs)[i].failure, want[i]) << states[i];
  // The held state of a job requeued held ("job requeued in held state").
  auto held = ParseSqueue("9\x1fPENDING\x1fgpu\x1froot\x1f" "1\x1fgres:gpu:8\x1fUNLIMITED\x1fN/A\x1fN/A\x1fN/A\x1f"
                          "job requeued in held state\x1f\x1fj\x1f\n");
  ASSERT_TRUE(held.ok());
  EXPECT_TRUE((*held)[0].held);
}

TEST(Recovery, CommentKeysAndJobFiles) {
  EXPECT_EQ(CommentValue("orrery:duration=60 orrery:heartbeat=/ckpt/%j/hb,orrery:hang=2m", "heartbeat"), "/ckpt/%j/hb");
  EXPECT_EQ(HeartbeatPath("orrery:heartbeat=/ckpt/%j/hb-%j", 42), "/ckpt/42/hb-42");
  EXPECT_EQ(HangAfter("orrery:hang=2m"), 120);
  EXPECT_EQ(HangAfter("orrery:hang=zero"), -1);
  EXPECT_EQ(HangAfter("xorrery:hang=5"), -1);  // a key must start a word
  EXPECT_EQ(CommentValue("", "heartbeat"), "");
  // The paths themselves: ParseJobFiles (job_files.cc), tested in live_signals_test.cc.
  auto p = ParseJobFiles(
      "JobId=7 JobName=train UserId=root(0) StdErr=/data/run 1/err-7.log StdIn=/dev/null "
      "StdOut=/data/run 1/out-7.log Power=\n");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->stdout_path, "/data/run 1/out-7.log");
  EXPECT_EQ(p->stderr_path, "/data/run 1/err-7.log");
}

// The tail read is LogTail's ReadLastLines (log_tail_test.cc).
TEST(Recovery, TailReadStartsAtALineAndHeartbeatIsTheMtime) {
  std::string path = Fresh("tail.log");
  Write(path, "first line\nsecond line\nthird\n");
  auto all = ReadLastLines(path, 1 << 20);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, "first line\nsecond line\nthird\n");
  // The last 15 bytes are "nd line\nthird\n" plus one: the cut line is dropped.
  auto tail = ReadLastLines(path, 15);
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(*tail, "third\n");
  EXPECT_FALSE(ReadLastLines(Fresh("absent.log"), 10).ok());
  EXPECT_FALSE(ReadLastLines(TempDir(), 10).ok());  // a directory
  struct timespec t[2] = {{1234, 0}, {1234, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), t, 0), 0);
  EXPECT_EQ(LastBeat(path), 1234);
  EXPECT_EQ(LastBeat(Fresh("nobeat")), kNoTime);
}

// A failure record round-trips through the journal with its typed fields; a row whose names
// are none of the enums' (a newer or damaged journal) is a located error, not a default.
TEST(Recovery, FailureRecordsRoundTripAndForeignNamesAreRefused) {
  const std::string path = Fresh("failures.db");
  {
    auto j = Journal::Open(path, false);
    ASSERT_TRUE(j.ok()) << j.error().message;
    FailureRecord f{7, 1, 100, Trigger::kNodeFail, logs::Category::kInfrastructure, "nccl_timeout", "node2",
                    RecoveryStep::kDrainRequeue, "drained node2", "NCCL timeout", "/tmp/out-7.log"};
    ASSERT_TRUE((*j)->RecordFailure(f).ok());
    auto back = (*j)->Failures(10);
    ASSERT_TRUE(back.ok()) << back.error().message;
    ASSERT_EQ(back->size(), 1u);
    EXPECT_EQ((*back)[0].trigger, Trigger::kNodeFail);
    EXPECT_EQ((*back)[0].category, logs::Category::kInfrastructure);
    EXPECT_EQ((*back)[0].step, RecoveryStep::kDrainRequeue);
    EXPECT_EQ((*back)[0].suspect, "node2");
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE failures SET trigger='meteor' WHERE job=7", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto j = Journal::Open(path, false);
  ASSERT_TRUE(j.ok()) << j.error().message;
  auto bad = (*j)->Failures(10);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, path + ": failures row of job 7: expected a trigger, category and step, got "
                                        "\"meteor\", \"infrastructure\", \"drain-requeue\"");
}

// ------------------------------------------------------------------ the daemon on FakeSlurm

struct Rig {
  SimClock clock{100000};
  FakeSlurm slurm{&clock};
  std::unique_ptr<Journal> journal;
  std::unique_ptr<Daemon> daemon;
  DaemonOptions opts;
  std::string path;

  explicit Rig(const std::string& name, int nodes = 3) {
    path = Fresh(name + ".db");
    for (int i = 1; i <= nodes; ++i) slurm.AddNode("node" + std::to_string(i), 8, "gpu");
    opts.partitions = {"gpu"};
    opts.policy = "fifo";
    opts.recovery.hang_after = 30;
  }
  void Start(SlurmClient* client = nullptr) {
    daemon.reset();
    journal.reset();
    auto opened = Journal::Open(path, false);
    ASSERT_TRUE(opened.ok());
    journal = std::move(*opened);
    daemon = std::make_unique<Daemon>(client ? client : &slurm, journal.get(), &clock, opts);
    ASSERT_TRUE(daemon->Recover().ok());
  }
  uint32_t Submit(Duration d, const std::string& log) {
    SubmitSpec s;
    s.partition = "gpu";
    s.gpus_per_node = 8;
    s.sleep_s = d;
    s.duration_hint = d;
    uint32_t id = *slurm.Submit(s);
    if (!log.empty()) slurm.SetJobFiles(id, JobFiles{log, log, ""}, "");
    return id;
  }
  Status Tick() {
    clock.Set(clock.Now() + 1);
    slurm.Advance();
    auto st = daemon->Cycle();
    EXPECT_EQ(daemon->illegal_moves(), 0u) << "a job state change outside the tables of job_state.h";
    return st.ok() ? Status::Ok() : Status(st.error());
  }
  void Run(int seconds) {
    for (int i = 0; i < seconds; ++i) ASSERT_TRUE(Tick().ok());
  }
  std::string NodeOf(uint32_t job) const {
    const SlurmJob& j = slurm.job(job);
    return j.nodes.empty() ? "" : j.nodes[0];
  }
};

// The job's log names the node it ran on (as the real-Slurm test's job script does).
std::string NcclLogOn(const std::string& node) {
  std::string s = kNcclLog;
  s.replace(s.find("node2"), 5, node);
  return s;
}

TEST(RecoveryDaemon, InfrastructureFailureDrainsTheNodeAndTheJobCompletesElsewhere) {
  Rig r("infra");
  r.Start();
  const std::string log = Fresh("infra.log");
  const uint32_t job = r.Submit(20, log);
  r.Run(2);
  ASSERT_EQ(r.slurm.job(job).state, SlurmJobState::kRunning);
  const std::string first = r.NodeOf(job);
  Write(log, NcclLogOn(first));
  r.slurm.FailJob(job, "FAILED");
  r.Run(1);  // seen failed, diagnosed, drained and requeued in this cycle
  EXPECT_EQ(r.slurm.drain_calls(first).drains, 1u);
  EXPECT_EQ(r.slurm.drain_calls(first).reason, "orrery: nccl_timeout");
  EXPECT_EQ(r.slurm.counters(job).requeues, 1u);
  r.Run(1);  // Slurm lists it pending, held: the core's Fail (restartable), and the policy starts it
  auto view = r.daemon->JobView(job);
  ASSERT_TRUE(view.has_value());
  EXPECT_EQ(view->failures, 1u);
  r.Run(25);
  EXPECT_EQ(r.slurm.job(job).state, SlurmJobState::kFinished);
  EXPECT_NE(r.NodeOf(job), first);
  EXPECT_EQ(r.slurm.counters(job).starts, 2u);
  EXPECT_EQ(r.slurm.drain_calls(first).drains, 1u);  // never twice
  auto failures = r.daemon->Failures(10);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].job, job);
  EXPECT_EQ(failures[0].trigger, Trigger::kFailed);
  EXPECT_EQ(failures[0].category, logs::Category::kInfrastructure);
  EXPECT_EQ(failures[0].subtype, "nccl_timeout");
  EXPECT_EQ(failures[0].suspect, first);
  EXPECT_EQ(failures[0].step, RecoveryStep::kDrainRequeue);
  EXPECT_EQ(failures[0].logs, log);
  EXPECT_NE(r.daemon->MetricsText().find("orrery_drains_total 1\n"), std::string::npos);
}

TEST(RecoveryDaemon, ScriptErrorIsNotRetriedAndItsReasonIsInTheQueue) {
  Rig r("script");
  r.Start();
  const std::string log = Fresh("script.log");
  Write(log, kModuleLog);
  const uint32_t job = r.Submit(20, log);
  r.Run(2);
  r.slurm.FailJob(job, "FAILED");
  r.Run(3);
  EXPECT_EQ(r.slurm.job(job).state, SlurmJobState::kFailed);
  EXPECT_EQ(r.slurm.counters(job).requeues, 0u);
  for (int i = 1; i <= 3; ++i) EXPECT_EQ(r.slurm.drain_calls("node" + std::to_string(i)).drains, 0u);
  bool seen = false;
  for (const QueueEntry& e : r.daemon->Queue(100)) {
    if (e.job != job) continue;
    seen = true;
    EXPECT_EQ(e.state, JobState::kFailed);
    EXPECT_NE(e.why.find("script/module_not_found"), std::string::npos) << e.why;
    EXPECT_NE(e.why.find("not retried"), std::string::npos) << e.why;
    EXPECT_EQ(e.failure.subtype, "module_not_found");
  }
  EXPECT_TRUE(seen);
  // The same after a restart (the give-up decision and the record are journaled).
  r.Start();
  r.Run(1);
  seen = false;
  for (const QueueEntry& e : r.daemon->Queue(100))
    if (e.job == job)
      seen = e.state == JobState::kFailed && e.why.find("module_not_found") != std::string::npos &&
             e.failure.subtype == "module_not_found";
  EXPECT_TRUE(seen);
  EXPECT_EQ(r.slurm.counters(job).requeues, 0u);
}

TEST(RecoveryDaemon, HangIsDetectedFromTheHeartbeatWithinTheConfiguredTime) {
  Rig r("hang");
  r.opts.recovery.hang_after = 30;
  r.Start();
  const std::string hb = Fresh("hb");
  Write(hb, "");
  SubmitSpec s;
  s.partition = "gpu";
  s.gpus_per_node = 8;
  s.sleep_s = 500;
  s.comment = "orrery:heartbeat=" + hb;  // the restart contract's heartbeat
  const uint32_t job = *r.slurm.Submit(s);
  r.Run(2);
  ASSERT_EQ(r.slurm.job(job).state, SlurmJobState::kRunning);
  const Time started = r.slurm.job(job).start;
  // Beats every second for 10 s, then none.
  Time last = 0;
  for (int i = 0; i < 10; ++i) {
    last = r.clock.Now();
    struct timespec t[2] = {{last, 0}, {last, 0}};
    ASSERT_EQ(utimensat(AT_FDCWD, hb.c_str(), t, 0), 0);
    r.Run(1);
  }
  EXPECT_EQ(r.slurm.counters(job).requeues, 0u);
  Time detected = kNoTime;
  for (int i = 0; i < 40 && detected == kNoTime; ++i) {
    r.Run(1);
    if (r.slurm.counters(job).requeues > 0) detected = r.clock.Now();
  }
  ASSERT_NE(detected, kNoTime);
  // Detected at the first cycle with now - last beat >= 30 s.
  EXPECT_EQ(detected - last, 30);
  EXPECT_GT(last, started);
  auto failures = r.daemon->Failures(1);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].trigger, Trigger::kHang);
  EXPECT_EQ(failures[0].step, RecoveryStep::kRequeue);
  r.Run(3);
  EXPECT_EQ(r.slurm.job(job).state, SlurmJobState::kRunning);  // restarted
  EXPECT_EQ(r.slurm.counters(job).starts, 2u);
}

TEST(RecoveryDaemon, DrainsOverTheHourlyLimitWaitForAnOperator) {
  Rig r("limit");
  r.opts.recovery.max_drains_per_hour = 1;
  r.Start();
  std::vector<uint32_t> jobs;
  std::vector<std::string> logs;
  for (int i = 0; i < 2; ++i) {
    logs.push_back(Fresh("limit" + std::to_string(i) + ".log"));
    jobs.push_back(r.Submit(100, logs.back()));
  }
  r.Run(2);
  std::vector<std::string> nodes;
  for (int i = 0; i < 2; ++i) {
    nodes.push_back(r.NodeOf(jobs[i]));
    Write(logs[i], NcclLogOn(nodes[i]));
    r.slurm.FailJob(jobs[i], "FAILED");
  }
  ASSERT_NE(nodes[0], nodes[1]);
  r.Run(1);
  EXPECT_EQ(r.slurm.drain_calls(nodes[0]).drains + r.slurm.drain_calls(nodes[1]).drains, 1u);
  const std::string waiting = r.slurm.drain_calls(nodes[0]).drains ? nodes[1] : nodes[0];
  auto drains = r.daemon->Drains();
  ASSERT_EQ(drains.size(), 2u);
  EXPECT_EQ(drains[0].state, DecisionState::kAwaiting);
  EXPECT_EQ(drains[0].nodes[0].node, waiting);
  EXPECT_NE(r.daemon->MetricsText().find("orrery_drains_awaiting 1\n"), std::string::npos);
  // Both jobs are requeued anyway.
  EXPECT_EQ(r.slurm.counters(jobs[0]).requeues + r.slurm.counters(jobs[1]).requeues, 2u);
  // Still waiting after a restart; confirmed, it is applied at the next cycle, once.
  r.Start();
  r.Run(1);
  EXPECT_EQ(r.slurm.drain_calls(waiting).drains, 0u);
  EXPECT_EQ(r.daemon->ConfirmDrain("node9").error().code, ErrorCode::kNotFound);
  ASSERT_TRUE(r.daemon->ConfirmDrain(waiting).ok());
  r.Run(2);
  EXPECT_EQ(r.slurm.drain_calls(waiting).drains, 1u);
  EXPECT_EQ(r.slurm.node(waiting).avail, NodeAvail::kDown);
  // Released: back to service (State=RESUME), journaled, once.
  ASSERT_TRUE(r.daemon->ReleaseDrain(waiting).ok());
  r.Run(2);
  EXPECT_EQ(r.slurm.drain_calls(waiting).undrains, 1u);
  EXPECT_EQ(r.slurm.node(waiting).avail, NodeAvail::kUp);
  EXPECT_EQ(r.daemon->ReleaseDrain(waiting).error().code, ErrorCode::kNotFound);
}

// kill -9 at every mutating call of the recovery (CrashingSlurm: the drain, the requeue, the
// restarted job's start), the call reaching Slurm or lost: the node is drained exactly once,
// the job requeued exactly once and it completes once, on another node, whatever the point.
TEST(RecoveryDaemon, CrashAtEveryCallNeverDrainsTwiceNorLosesTheRequeue) {
  for (int budget = 0; budget < 3; ++budget) {
    for (bool lost : {false, true}) {
      const std::string name = "crash" + std::to_string(budget) + (lost ? "l" : "");
      SCOPED_TRACE(name);
      Rig r(name);
      CrashingSlurm crashing(&r.slurm);
      crashing.lose_crossing_call = lost;
      r.Start(&crashing);
      const std::string log = Fresh(name + ".log");
      const uint32_t job = r.Submit(10, log);
      r.Run(2);
      ASSERT_EQ(r.slurm.job(job).state, SlurmJobState::kRunning);
      const std::string first = r.NodeOf(job);
      Write(log, NcclLogOn(first));
      r.slurm.FailJob(job, "FAILED");
      crashing.budget = budget;  // mutating calls left from the failure on
      for (int t = 0; t < 5 && !crashing.crashed; ++t) {
        Status s = r.Tick();
        if (!s.ok()) {
          ASSERT_TRUE(crashing.crashed) << s.error().message;
        }
      }
      ASSERT_TRUE(crashing.crashed);
      r.Start();  // restarted on the same journal, talking to Slurm again
      r.Run(20);
      EXPECT_EQ(r.slurm.drain_calls(first).drains, 1u);
      EXPECT_EQ(r.slurm.counters(job).requeues, 1u);
      EXPECT_EQ(r.slurm.job(job).state, SlurmJobState::kFinished);
      EXPECT_EQ(r.slurm.counters(job).completions, 1u);
      EXPECT_NE(r.NodeOf(job), first);
      auto all = r.journal->All();
      ASSERT_TRUE(all.ok());
      for (const JournalDecision& d : *all) EXPECT_NE(d.state, DecisionState::kPlanned) << d.key;
      EXPECT_EQ(r.daemon->Failures(10).size(), 1u);
    }
  }
}

// Killed after the failure was seen and before anything was planned: the restarted daemon
// finds the failed job in Slurm's listing and recovers it (its start decision is journaled).
TEST(RecoveryDaemon, FailureSeenOnlyAfterARestartIsRecovered) {
  Rig r("late");
  r.Start();
  const std::string log = Fresh("late.log");
  const uint32_t job = r.Submit(10, log);
  r.Run(2);
  const std::string first = r.NodeOf(job);
  Write(log, NcclLogOn(first));
  r.slurm.FailJob(job, "NODE_FAIL");
  r.Start();
  r.Run(15);
  EXPECT_EQ(r.slurm.drain_calls(first).drains, 1u);
  EXPECT_EQ(r.slurm.counters(job).requeues, 1u);
  EXPECT_EQ(r.slurm.job(job).state, SlurmJobState::kFinished);
  auto f = r.daemon->Failures(1);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].trigger, Trigger::kNodeFail);
}

}  // namespace
}  // namespace orrery::live

// ------------------------------------------------------------------ config and HTTP API
#include <httplib.h>

#include "live/http_api.h"
#include "live/serve_config.h"

namespace orrery::live {
namespace {

TEST(RecoveryConfig, ParsesAndRejectsWithLocations) {
  const std::string head = "[slurm]\npartitions = [\"gpu\"]\n[recovery]\n";
  auto ok = ParseServeConfig(head + "policy = \"requeue:from=scratch\"\nhang_after_s = 90\nmax_drains_per_hour = 0\n"
                                    "max_restarts = 5\nlog_tail_kib = 64\n",
                             "serve.toml");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  const RecoveryOptions& r = ok->daemon.recovery;
  EXPECT_EQ(r.policy, "requeue:from=scratch");
  EXPECT_EQ(r.hang_after, 90);
  EXPECT_EQ(r.max_drains_per_hour, 0);
  EXPECT_EQ(r.max_restarts, 5);
  EXPECT_EQ(r.log_tail_bytes, 64u * 1024);
  auto defaults = ParseServeConfig("[slurm]\npartitions = [\"gpu\"]\n", "serve.toml");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->daemon.recovery.policy, "acme");
  EXPECT_EQ(defaults->daemon.recovery.max_drains_per_hour, 2);
  auto bad = ParseServeConfig(head + "policy = \"retry-forever\"\n", "serve.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.rfind("serve.toml:4:10: 'policy' in [recovery]: ", 0), 0u) << bad.error().message;
  auto range = ParseServeConfig(head + "max_restarts = -1\n", "serve.toml");
  ASSERT_FALSE(range.ok());
  EXPECT_NE(range.error().message.find("serve.toml:4:16:"), std::string::npos) << range.error().message;
  auto key = ParseServeConfig(head + "drains = 3\n", "serve.toml");
  ASSERT_FALSE(key.ok());
  EXPECT_NE(key.error().message.find("serve.toml:4:"), std::string::npos) << key.error().message;
}

// The drain endpoints: an awaiting drain listed, confirmed through the API (token-guarded),
// applied at the next cycle; released; 404 when there is nothing to confirm.
TEST(RecoveryHttp, DrainsAreListedConfirmedAndReleased) {
  Rig r("http");
  r.opts.recovery.max_drains_per_hour = 0;  // every drain waits for an operator
  r.Start();
  const std::string log = Fresh("http.log");
  const uint32_t job = r.Submit(100, log);
  r.Run(2);
  const std::string node = r.NodeOf(job);
  Write(log, NcclLogOn(node));
  r.slurm.FailJob(job, "FAILED");
  r.Run(1);
  HttpApi api(r.daemon.get(), "0123456789abcdef-token");
  ASSERT_TRUE(api.Start("127.0.0.1", 0).ok());
  httplib::Client cli("127.0.0.1", api.port());
  auto drains = cli.Get("/api/v1/drains");
  ASSERT_TRUE(drains);
  EXPECT_NE(drains->body.find("\"state\": \"awaiting-confirmation\""), std::string::npos) << drains->body;
  auto failures = cli.Get("/api/v1/failures");
  ASSERT_TRUE(failures);
  EXPECT_NE(failures->body.find("\"subtype\": \"nccl_timeout\""), std::string::npos) << failures->body;
  httplib::Headers good = {{"Authorization", "Bearer 0123456789abcdef-token"}};
  EXPECT_EQ(cli.Post("/api/v1/drains/" + node + "/confirm")->status, 401);
  EXPECT_EQ(cli.Post("/api/v1/drains/node9/confirm", good, "", "text/plain")->status, 404);
  EXPECT_EQ(cli.Post("/api/v1/drains/" + node + "/confirm", good, "", "text/plain")->status, 202);
  r.Run(1);
  EXPECT_EQ(r.slurm.drain_calls(node).drains, 1u);
  EXPECT_EQ(cli.Post("/api/v1/drains/" + node + "/release", good, "", "text/plain")->status, 202);
  r.Run(1);
  EXPECT_EQ(r.slurm.drain_calls(node).undrains, 1u);
  EXPECT_EQ(cli.Post("/api/v1/drains/" + node + "/release", good, "", "text/plain")->status, 404);
  api.Stop();
}

}  // namespace
}  // namespace orrery::live
