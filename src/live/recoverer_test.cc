// The recoverer (recoverer.h) over FakeSlurm, a real Applier and a recording host: one row per
// failed job (the log its output holds, where it ran, the drains already this hour) with the
// decisions journaled, what reached Slurm, what it asked of its host and where the job ends;
// first sight of a failed job; hangs; drains awaiting an operator.
#include "live/recoverer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "live/fake_slurm.h"
#include "live/journal_testing.h"

namespace orrery::live {
namespace {

using S = JobState;
using K = DecisionKind;
using D = DecisionState;

// A PyTorch NCCL watchdog timeout: the NCCL debug prefix names n2 (infrastructure: acme drains
// the node the log names, then requeues).
const char* const kNcclOnN2 =
    "step 120 loss 2.31\n"
    "n2:2201:2250 [0] NCCL INFO comm 0x5581 rank 0 nranks 8 cudaDev 0 busId 1b000 - Init COMPLETE\n"
    "[rank0]:[E ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=1201, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600324 milliseconds "
    "before timing out.\n";
// The same timeout naming no host.
const char* const kNcclUnnamed = "Watchdog caught collective operation timeout\n";
// A script error: never retried.
const char* const kMissingModule =
    "Traceback (most recent call last):\n"
    "  File \"/home/u/train.py\", line 3, in <module>\n"
    "    import flash_attn_v9\n"
    "ModuleNotFoundError: No module named 'flash_attn_v9'\n";

// The host: records each call, in order ("show n2 draining", "sync", ...); the node records
// are set by the test.
class RecordingRecovererHost : public RecovererHost {
 public:
  std::vector<std::string> calls;
  std::map<std::string, SlurmNode> nodes;
  Time progress_at = kNoTime;
  JobBook* book = nullptr;

  Time ProgressAt(const LiveJob&) const override { return progress_at; }
  void GiveUpInCore(LiveJob&, FailureKind, Time) override { calls.push_back("give-up-in-core"); }
  const SlurmNode* NodeOf(const std::string& node) const override {
    auto it = nodes.find(node);
    return it == nodes.end() ? nullptr : &it->second;
  }
  void ShowLocally(const std::string& node, NodeAvail avail, const char* state_raw) override {
    calls.push_back("show " + node + " " + state_raw);
    nodes[node].avail = avail;
    nodes[node].state_raw = state_raw;
  }
  Status SyncNodes(Time) override {
    calls.push_back("sync");
    return Status::Ok();
  }
  LiveJob& AddRecord(const SlurmJob& sj) override {
    calls.push_back("add");
    auto lj = std::make_unique<LiveJob>();
    lj->id = sj.id;
    return book->Add(std::move(lj));
  }
  Status NewGeneration(LiveJob&, Time, const std::string&) override {
    calls.push_back("new-generation");
    return Status::Ok();
  }
  Status SettleUnapplied(const SlurmJob&, Time) override {
    calls.push_back("settle");
    return Status::Ok();
  }
  int64_t CycleNumber() const override { return 7; }
};

// The applier's host: recovery's checks and bookkeeping are the recoverer's.
class RecoveryApplierHost : public ApplierHost {
 public:
  Recoverer* recoverer = nullptr;
  std::vector<NodeShare> Placement(const StartDecision&) const override { return {}; }
  bool NodeListed(const std::string&) const override { return true; }
  Status Replan(LiveJob&, const std::string&, Time) override { return Status::Ok(); }
  Verdict CheckRecovery(const JournalDecision& d, std::string* why) const override { return recoverer->Check(d, why); }
  Verdict CheckPower(const JournalDecision&, std::string*) const override { return Verdict::kSend; }
  void RecoveryApplied(const JournalDecision& d, Time now, CycleStats* st) override { recoverer->Applied(d, now, st); }
  void PowerActionApplied(const JournalDecision&, Time, CycleStats*) override {}
  int64_t PowerSeq() const override { return 0; }
  void ApplyFailed(const std::string&) override {}
};

SlurmNode Idle(const std::string& name) {
  SlurmNode n;
  n.name = name;
  n.gpus = 4;
  n.avail = NodeAvail::kUp;
  n.state_raw = "idle";
  return n;
}

// A recoverer over FakeSlurm (nodes n1, n2, 4 GPUs each) and a fresh journal, at t=1000.
struct Fixture {
  explicit Fixture(const std::string& name, int max_drains_per_hour = 2) : slurm(&clock), ledger(10) {
    path = FreshJournalPath("orrery_recoverer_test", name);
    auto j = Journal::Open(path, false);
    EXPECT_TRUE(j.ok());
    journal = std::move(*j);
    events = std::make_unique<EventLog>(journal.get());
    book = std::make_unique<JobBook>(events.get());
    applier = std::make_unique<Applier>(book.get(), &ledger, &slurm, journal.get(), events.get(), &applier_host);
    RecoveryOptions opts;
    opts.max_drains_per_hour = max_drains_per_hour;
    recoverer = std::make_unique<Recoverer>(book.get(), &ledger, &slurm, journal.get(), events.get(), applier.get(),
                                            &host, opts);
    applier_host.recoverer = recoverer.get();
    host.book = book.get();
    for (const char* n : {"n1", "n2"}) {
      slurm.AddNode(n, 4, "gpu");
      host.nodes[n] = Idle(n);
    }
  }
  // A drain of `node` journaled `ago` seconds before now and applied (the hourly limit counts it).
  void DrainedBefore(const std::string& node, Duration ago) {
    JournalDecision d;
    d.kind = K::kDrain;
    d.key = "drain/" + node + "/900/" + std::to_string(ago);
    d.time = clock.Now() - ago;
    d.nodes = {NodeShare{node, 4}};
    ASSERT_TRUE(journal->Plan(&d).ok());
    ASSERT_TRUE(journal->Mark(d.key, D::kApplied, d.time, "").ok());
  }
  // A job Slurm runs on `nodes` (4 GPUs each).
  uint32_t Running(const std::vector<std::string>& nodes) {
    SubmitSpec spec;
    spec.partition = "gpu";
    spec.gpus_per_node = 4;
    spec.nodes = static_cast<uint32_t>(nodes.size());
    auto id = slurm.Submit(spec);
    EXPECT_TRUE(id.ok());
    std::vector<NodeShare> on;
    for (const std::string& n : nodes) on.push_back(NodeShare{n, 4});
    EXPECT_TRUE(slurm.StartOn(*id, on, false).ok());
    slurm.Advance();
    EXPECT_EQ(slurm.job(*id).state, SlurmJobState::kRunning);
    return *id;
  }
  // A job that ran on `nodes` and failed with `log` as its StdOut.
  uint32_t Failed(const std::vector<std::string>& nodes, const std::string& log) {
    const uint32_t id = Running(nodes);
    slurm.FailJob(id, "FAILED");
    const std::string out = path + "." + std::to_string(id) + ".out";
    std::ofstream(out, std::ios::trunc) << log;
    slurm.SetJobFiles(id, JobFiles{out, out, "/tmp"}, "");
    return id;
  }
  // The daemon's record of it: recovering, after the reconciler read the failure.
  LiveJob& Recovering(uint32_t id, const std::vector<std::string>& nodes) {
    auto lj = std::make_unique<LiveJob>();
    lj->id = id;
    lj->started = 500;
    for (const std::string& n : nodes) lj->nodes.push_back(NodeShare{n, 4});
    LiveJob& added = book->Add(std::move(lj));
    book->Enter(added, S::kRecovering, 900);
    return added;
  }
  SimClock clock{1000};
  FakeSlurm slurm;
  DecisionLedger ledger;
  RecordingRecovererHost host;
  RecoveryApplierHost applier_host;
  std::string path;
  std::unique_ptr<Journal> journal;
  std::unique_ptr<EventLog> events;
  std::unique_ptr<JobBook> book;
  std::unique_ptr<Applier> applier;
  std::unique_ptr<Recoverer> recoverer;
};

struct StepCase {
  const char* what;
  const char* log;
  std::vector<std::string> ran_on;
  int drains_this_hour;  // applied drains journaled in the last hour (the limit is 2)
  // expected
  const char* drained;  // the node whose drain is journaled ("" none)
  D drain_lands;        // its journal state
  K verdict;            // the recover/<job>/0 decision's kind (applied)
  S job_after;
  uint32_t gen_after;
  std::vector<std::string> calls;
  uint32_t drains_sent, restarts_sent;  // reached Slurm
  uint64_t give_ups, awaiting;
};

const std::vector<StepCase>& StepCases() {
  static const std::vector<StepCase> cases = {
      // NCCL timeout naming n2 of {n1, n2}: n2 drained (shown draining locally), then the job
      // is restarted held; the requeue Slurm took is the next generation, still recovering
      // until a listing shows it held.
      {"node fault named in the log: drain + requeue", kNcclOnN2, {"n1", "n2"}, 0, "n2", D::kApplied, K::kRecover,
       S::kRecovering, 1, {"show n2 draining", "sync"}, 1, 1, 0, 0},
      // One node, none named: the job's only node is the suspect.
      {"node fault on the only node: drained", kNcclUnnamed, {"n1"}, 0, "n1", D::kApplied, K::kRecover,
       S::kRecovering, 1, {"show n1 draining", "sync"}, 1, 1, 0, 0},
      // Two nodes, none named: requeued, nothing drained.
      {"node fault, suspect unknown: requeue only", kNcclUnnamed, {"n1", "n2"}, 0, "", D::kApplied, K::kRecover,
       S::kRecovering, 1, {"sync"}, 0, 1, 0, 0},
      // Two drains in the last hour (the limit): the third awaits an operator; the requeue goes.
      {"drain over the hourly limit: awaits an operator", kNcclOnN2, {"n1", "n2"}, 2, "n2", D::kAwaiting, K::kRecover,
       S::kRecovering, 1, {"sync"}, 0, 1, 0, 1},
      // A drain older than an hour does not count.
      {"drains older than an hour do not count", kNcclOnN2, {"n1", "n2"}, -1, "n2", D::kApplied, K::kRecover,
       S::kRecovering, 1, {"show n2 draining", "sync"}, 1, 1, 0, 0},
      // A script error: given up, out of the core, nothing sent.
      {"script error: given up", kMissingModule, {"n1"}, 0, "", D::kApplied, K::kGiveUp, S::kFailed, 0,
       {"give-up-in-core", "sync"}, 0, 0, 1, 0},
  };
  return cases;
}

TEST(Recoverer, StepOneRowPerFailure) {
  int n = 0;
  for (const StepCase& c : StepCases()) {
    Fixture f("step_" + std::to_string(n++) + ".db");
    if (c.drains_this_hour < 0) f.DrainedBefore("n1", 3700);
    for (int i = 0; i < c.drains_this_hour; ++i) f.DrainedBefore("n1", 600 + i);
    ASSERT_TRUE(f.recoverer->Load(f.clock.Now()).ok()) << c.what;
    const uint32_t id = f.Failed(c.ran_on, c.log);
    f.Recovering(id, c.ran_on);
    f.recoverer->Later(id, Trigger::kFailed);
    CycleStats st;
    Status s = f.recoverer->Step(f.clock.Now(), &st);
    ASSERT_TRUE(s.ok()) << c.what << ": " << s.error().message;

    const std::string drain_key = std::string("drain/") + c.drained + "/" + std::to_string(id) + "/0";
    if (*c.drained) {
      auto drain = f.journal->Get(drain_key);
      ASSERT_TRUE(drain.ok()) << c.what;
      EXPECT_EQ(drain->state, c.drain_lands) << c.what;
      EXPECT_EQ(drain->cycle, 7) << c.what;
    }
    auto verdict = f.journal->Get("recover/" + std::to_string(id) + "/0");
    ASSERT_TRUE(verdict.ok()) << c.what;
    EXPECT_EQ(verdict->kind, c.verdict) << c.what;
    EXPECT_EQ(verdict->state, D::kApplied) << c.what;
    auto failure = f.journal->FailureOf(id, 0);  // the failure record, journaled first
    ASSERT_TRUE(failure.ok()) << c.what;
    EXPECT_EQ(failure->step, c.verdict == K::kGiveUp ? RecoveryStep::kGiveUp
                             : *c.drained          ? RecoveryStep::kDrainRequeue
                                                   : RecoveryStep::kRequeue)
        << c.what;

    const LiveJob& lj = *f.book->Find(id);
    EXPECT_EQ(lj.state(), c.job_after) << c.what;
    EXPECT_EQ(lj.gen, c.gen_after) << c.what;
    EXPECT_EQ(f.ledger.GenOf(id), c.gen_after) << c.what;
    EXPECT_EQ(f.host.calls, c.calls) << c.what;
    EXPECT_EQ(f.slurm.drain_calls(c.drained).drains, c.drains_sent) << c.what;
    EXPECT_EQ(f.slurm.counters(id).requeues, c.restarts_sent) << c.what;
    EXPECT_EQ(f.recoverer->recoveries(), 1u) << c.what;
    EXPECT_EQ(st.recoveries, 1u) << c.what;
    EXPECT_EQ(f.recoverer->drains(), c.drains_sent) << c.what;
    EXPECT_EQ(st.drains, c.drains_sent) << c.what;
    EXPECT_EQ(f.recoverer->give_ups(), c.give_ups) << c.what;
    EXPECT_EQ(f.recoverer->awaiting(), c.awaiting) << c.what;
    const size_t journaled_before = c.drains_this_hour < 0 ? 1 : static_cast<size_t>(c.drains_this_hour);
    EXPECT_EQ(f.recoverer->Drains(f.clock.Now()).size(), c.awaiting + c.drains_sent + journaled_before) << c.what;
    EXPECT_TRUE(f.ledger.unapplied.empty()) << c.what;
    EXPECT_EQ(f.book->illegal_moves(), 0u) << c.what;
  }
}

// A failed job the daemon sees for the first time (after a restart): what the journal says of
// its generation decides.
struct AdoptCase {
  const char* what;
  bool start_journaled;   // this generation ran under the daemon
  bool recover_decided;   // its recovery is journaled
  bool recover_unapplied;  // ... and not confirmed
  S enters;
  bool recovered_next_step;  // listed for the next Step
};

TEST(Recoverer, AdoptFailedOneRowPerJournal) {
  const AdoptCase cases[] = {
      {"never started by the daemon: failed, not recovered", false, false, false, S::kFailed, false},
      {"started here, no recovery yet: recovered", true, false, false, S::kRecovering, true},
      {"recovery planned, not confirmed: the apply path sends it", true, true, true, S::kRecovering, false},
      {"recovery applied: shown failed", true, true, false, S::kFailed, false},
  };
  int n = 0;
  for (const AdoptCase& c : cases) {
    Fixture f("adopt_" + std::to_string(n++) + ".db");
    ASSERT_TRUE(f.recoverer->Load(f.clock.Now()).ok()) << c.what;
    const uint32_t id = f.Failed({"n1"}, kNcclUnnamed);
    if (c.start_journaled) {
      JournalDecision start;
      start.kind = K::kStart;
      start.key = StartKey(id, 0);
      start.job = id;
      start.nodes = {NodeShare{"n1", 4}};
      ASSERT_TRUE(f.journal->Plan(&start).ok());
    }
    if (c.recover_decided) {
      JournalDecision r;
      r.kind = K::kRecover;
      r.key = "recover/" + std::to_string(id) + "/0";
      r.job = id;
      r.detail = "nccl_timeout: requeued";
      ASSERT_TRUE(f.journal->Plan(&r).ok());
      if (c.recover_unapplied) f.ledger.unapplied[r.key] = r;
    }
    ASSERT_TRUE(f.recoverer->AdoptFailed(f.slurm.job(id), f.clock.Now()).ok()) << c.what;
    const LiveJob* lj = f.book->Find(id);
    ASSERT_NE(lj, nullptr) << c.what;
    EXPECT_EQ(lj->state(), c.enters) << c.what;
    EXPECT_EQ(lj->nodes.size(), 1u) << c.what;  // where the failed attempt ran
    EXPECT_EQ(f.host.calls, (std::vector<std::string>{"add", "settle"})) << c.what;
    CycleStats st;
    ASSERT_TRUE(f.recoverer->Step(f.clock.Now(), &st).ok()) << c.what;
    EXPECT_EQ(st.recoveries, c.recovered_next_step ? 1u : 0u) << c.what;
    EXPECT_EQ(f.book->illegal_moves(), 0u) << c.what;
  }
}

// A watched job is hung once the core has heard no progress for hang_after (600 s): moved to
// kRecovering and recovered with the hang trigger (requeued).
TEST(Recoverer, AWatchedJobWithoutProgressIsRecoveredAsHung) {
  struct Row {
    const char* what;
    Time last_report;  // the core's last progress report (kNoTime: none: not watched)
    bool hung;
  };
  const Row rows[] = {
      {"reported 850 s ago: hung", 150, true},
      {"reported 100 s ago: running", 900, false},
      {"never reported: not watched", kNoTime, false},
  };
  int n = 0;
  for (const Row& r : rows) {
    Fixture f("hang_" + std::to_string(n++) + ".db");
    ASSERT_TRUE(f.recoverer->Load(f.clock.Now()).ok()) << r.what;
    const uint32_t id = f.Running({"n1"});
    auto lj = std::make_unique<LiveJob>();
    lj->id = id;
    lj->started = 100;
    lj->nodes = {NodeShare{"n1", 4}};
    f.book->Enter(f.book->Add(std::move(lj)), S::kRunning, 100);
    f.recoverer->Watch(id);
    f.host.progress_at = r.last_report;
    CycleStats st;
    ASSERT_TRUE(f.recoverer->Step(f.clock.Now(), &st).ok()) << r.what;
    EXPECT_EQ(f.recoverer->hangs(), r.hung ? 1u : 0u) << r.what;
    EXPECT_EQ(f.book->Find(id)->state(), r.hung ? S::kRecovering : S::kRunning) << r.what;
    if (r.hung) {
      auto rec = f.journal->FailureOf(id, 0);
      ASSERT_TRUE(rec.ok()) << r.what;
      EXPECT_EQ(rec->trigger, Trigger::kHang) << r.what;
      EXPECT_EQ(rec->subtype, "hang") << r.what;
      EXPECT_EQ(f.slurm.counters(id).requeues, 1u) << r.what;
    }
    EXPECT_EQ(f.book->illegal_moves(), 0u) << r.what;
  }
}

// An awaiting drain: confirmed, it is planned for the next cycle's apply path; released, it is
// superseded and the node stays in service.
TEST(Recoverer, AnAwaitingDrainIsConfirmedOrReleasedByAnOperator) {
  for (const bool confirm : {true, false}) {
    Fixture f(confirm ? "confirm.db" : "release.db", /*max_drains_per_hour=*/0);
    ASSERT_TRUE(f.recoverer->Load(f.clock.Now()).ok());
    const uint32_t id = f.Failed({"n1", "n2"}, kNcclOnN2);
    f.Recovering(id, {"n1", "n2"});
    f.recoverer->Later(id, Trigger::kFailed);
    CycleStats st;
    ASSERT_TRUE(f.recoverer->Step(f.clock.Now(), &st).ok());
    ASSERT_EQ(f.recoverer->awaiting(), 1u);
    const std::string key = "drain/n2/" + std::to_string(id) + "/0";
    EXPECT_EQ(f.recoverer->ConfirmDrain("n1", 1010).error().code, ErrorCode::kNotFound);  // nothing awaits on n1
    Status s = confirm ? f.recoverer->ConfirmDrain("n2", 1010) : f.recoverer->ReleaseDrain("n2", 1010);
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_EQ(f.recoverer->awaiting(), 0u);
    auto stored = f.journal->Get(key);
    ASSERT_TRUE(stored.ok());
    EXPECT_EQ(stored->state, confirm ? D::kPlanned : D::kSuperseded);
    EXPECT_EQ(f.ledger.unapplied.count(key), confirm ? 1u : 0u);
    if (!confirm) continue;
    ASSERT_TRUE(f.applier->RetryUnapplied(1020, &st).ok());  // the next cycle sends it
    EXPECT_EQ(f.slurm.drain_calls("n2").drains, 1u);
    EXPECT_EQ(f.recoverer->drains(), 1u);
    EXPECT_EQ(f.host.nodes["n2"].state_raw, "draining");
  }
}

// A decision met again: a drain or undrain Slurm shows is in effect (never sent twice).
TEST(Recoverer, ChecksADecisionMetAgainAgainstTheNodesSlurmShows) {
  Fixture f("check.db");
  f.host.nodes["n2"].state_raw = "drained";
  JournalDecision drain;
  drain.kind = K::kDrain;
  drain.nodes = {NodeShare{"n2", 4}};
  std::string why;
  EXPECT_EQ(f.recoverer->Check(drain, &why), Verdict::kInEffect);
  drain.nodes = {NodeShare{"n1", 4}};
  EXPECT_EQ(f.recoverer->Check(drain, &why), Verdict::kSend);
  JournalDecision undrain = drain;
  undrain.kind = K::kUndrain;
  EXPECT_EQ(f.recoverer->Check(undrain, &why), Verdict::kInEffect);  // n1 shows idle already
  undrain.nodes = {NodeShare{"n2", 4}};
  EXPECT_EQ(f.recoverer->Check(undrain, &why), Verdict::kSend);
  JournalDecision recover;
  recover.kind = K::kRecover;
  recover.job = 4242;  // not listed
  EXPECT_EQ(f.recoverer->Check(recover, &why), Verdict::kObsolete);
}

}  // namespace
}  // namespace orrery::live
