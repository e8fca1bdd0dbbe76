// The job reconciler (reconciler.h): one row per (job record, Slurm row) case, with the state
// it lands in, what it asked of its host (the scheduler port and the other owners) and what it
// sent to Slurm.
#include "live/reconciler.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "live/fake_slurm.h"
#include "live/journal_testing.h"

namespace orrery::live {
namespace {

using S = JobState;

// The host: records each call, in order ("attach", "leave", ...).
class RecordingHost : public ReconcilerHost {
 public:
  explicit RecordingHost(JobBook* book) : book_(book) {}
  std::vector<std::string> calls;

  bool Rebuilding() const override { return false; }
  void Attach(LiveJob&, Time) override { calls.push_back("attach"); }
  void Withdraw(LiveJob&, Time) override { calls.push_back("withdraw"); }
  void Leave(LiveJob&, const SlurmJob*, Time) override { calls.push_back("leave"); }
  void BackToQueue(LiveJob&, bool held, Time) override { calls.push_back(held ? "back-to-queue(held)" : "back-to-queue"); }
  void RunsWhereSlurmRuns(LiveJob&, bool, Time) override { calls.push_back("runs-where-slurm-runs"); }
  bool PendingInSnapshot(const LiveJob&) const override { return true; }
  LiveJob& AddRecord(const SlurmJob& sj) override {
    calls.push_back("add");
    auto lj = std::make_unique<LiveJob>();
    lj->id = sj.id;
    return book_->Add(std::move(lj));
  }
  void EraseRecord(uint32_t id) override {
    calls.push_back("erase");
    book_->Erase(id);
  }
  void Introduce(LiveJob&, Time) override { calls.push_back("introduce"); }
  Status MakeEligible(const LiveJob&) override {
    calls.push_back("make-eligible");
    return Status::Ok();
  }
  void RequeuedAfterRecovery(LiveJob&, Time) override { calls.push_back("requeued-after-recovery"); }
  void RecoverLater(uint32_t, Trigger) override { calls.push_back("recover-later"); }
  Status AdoptFailed(const SlurmJob&, Time) override {
    calls.push_back("adopt-failed");
    return Status::Ok();
  }

 private:
  JobBook* book_;
};

// Slurm rows.
SlurmJob Row(SlurmJobState st, bool held, std::vector<std::string> nodes = {}, std::string reason = "None") {
  SlurmJob sj;
  sj.partition = "gpu";
  sj.state = st;
  sj.state_raw = st == SlurmJobState::kRunning ? "RUNNING" : st == SlurmJobState::kPending ? "PENDING" : "ENDED";
  sj.held = held;
  sj.gpus_per_node = 4;
  sj.num_nodes = static_cast<uint32_t>(nodes.empty() ? 1 : nodes.size());
  sj.nodes = std::move(nodes);
  sj.reason = std::move(reason);
  if (st == SlurmJobState::kRunning) sj.start = 50;
  return sj;
}
SlurmJob Held() { return Row(SlurmJobState::kPending, true, {}, "JobHeldAdmin"); }
SlurmJob Released() { return Row(SlurmJobState::kPending, false); }
SlurmJob Delayed() { return Row(SlurmJobState::kPending, false, {}, "BeginTime"); }
SlurmJob RunningOn(const std::string& node) { return Row(SlurmJobState::kRunning, false, {node}); }
SlurmJob Ended() { return Row(SlurmJobState::kFinished, false); }
SlurmJob FailedRow() {
  SlurmJob sj = Row(SlurmJobState::kFailed, false);
  sj.failure = SlurmFailure::kExit;
  return sj;
}

// The daemon's record before the row (none: a job seen for the first time).
struct Known {
  Known(S s, std::vector<std::string> on = {}, uint32_t g = 0) : state(s), nodes(std::move(on)), gen(g) {}
  S state;
  std::vector<std::string> nodes;
  uint32_t gen;
};

struct Case {
  const char* what;
  std::optional<Known> known;
  SlurmJob row;
  std::optional<S> lands;  // nullopt: the record is gone
  uint32_t gen;
  std::vector<std::string> calls;
  uint32_t holds;  // hold requests sent to Slurm
};

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {"queued, still held", Known{S::kQueued}, Held(), S::kQueued, 0, {"attach"}, 0},
      {"queued, released by someone else", Known{S::kQueued}, Released(), S::kUnheld, 0, {"withdraw", "attach"}, 1},
      {"our hold shows", Known{S::kUnheld}, Held(), S::kQueued, 0, {"attach"}, 0},
      {"the decision took effect", Known{S::kStarting, {"n1"}}, RunningOn("n1"), S::kRunning, 0, {"attach"}, 0},
      {"started without a decision", Known{S::kQueued}, RunningOn("n2"), S::kRunning, 0,
       {"runs-where-slurm-runs", "attach"}, 0},
      {"Slurm chose other nodes", Known{S::kStarting, {"n1"}}, RunningOn("n2"), S::kRunning, 0,
       {"runs-where-slurm-runs", "attach"}, 0},
      {"requeued by Slurm, held", Known{S::kRunning, {"n1"}}, Held(), S::kQueued, 1, {"back-to-queue(held)", "attach"}, 0},
      {"requeued by Slurm, released", Known{S::kRunning, {"n1"}}, Released(), S::kQueued, 1,
       {"back-to-queue(held)", "attach"}, 1},
      {"held again after the start", Known{S::kStarting, {"n1"}}, Held(), S::kQueued, 1,
       {"back-to-queue(held)", "attach"}, 0},
      {"delayed after a requeue", Known{S::kStarting, {"n1"}, 1}, Delayed(), S::kStarting, 1,
       {"make-eligible", "attach"}, 0},
      {"failed while running", Known{S::kRunning, {"n1"}}, FailedRow(), S::kRecovering, 0, {"recover-later", "attach"}, 0},
      {"the recovery's requeue shows", Known{S::kRecovering, {"n1"}, 1}, Held(), S::kQueued, 1,
       {"requeued-after-recovery", "attach"}, 0},
      {"ended", Known{S::kRunning, {"n1"}}, Ended(), std::nullopt, 0, {"leave", "erase"}, 0},
      {"new, held", std::nullopt, Held(), S::kQueued, 0, {"add", "introduce", "attach"}, 0},
      {"new, released", std::nullopt, Released(), S::kUnheld, 0, {"add", "introduce", "attach"}, 1},
      {"new, running", std::nullopt, RunningOn("n1"), S::kRunning, 0, {"add", "introduce", "attach"}, 0},
      {"new, failed", std::nullopt, FailedRow(), std::nullopt, 0, {"adopt-failed"}, 0},
      {"new, ended", std::nullopt, Ended(), std::nullopt, 0, {}, 0},
  };
  return cases;
}

// One reconciler over FakeSlurm (the job submitted there, so that a hold reaches it) and a
// fresh journal.
struct Fixture {
  explicit Fixture(const std::string& name) : slurm(&clock), ledger(10) {
    auto j = Journal::Open(FreshJournalPath("orrery_reconciler_test", name), false);
    EXPECT_TRUE(j.ok());
    journal = std::move(*j);
    events = std::make_unique<EventLog>(journal.get());
    book = std::make_unique<JobBook>(events.get());
    host = std::make_unique<RecordingHost>(book.get());
    reconciler = std::make_unique<Reconciler>(book.get(), &ledger, &slurm, journal.get(), events.get(), host.get(),
                                              ReconcilerOptions{});
    slurm.AddNode("n1", 4, "gpu");
    slurm.AddNode("n2", 4, "gpu");
  }
  SimClock clock{100};
  FakeSlurm slurm;
  DecisionLedger ledger;
  std::unique_ptr<Journal> journal;
  std::unique_ptr<EventLog> events;
  std::unique_ptr<JobBook> book;
  std::unique_ptr<RecordingHost> host;
  std::unique_ptr<Reconciler> reconciler;
};

TEST(Reconciler, OneRowPerCase) {
  int n = 0;
  for (const Case& c : Cases()) {
    Fixture f(std::string("case_") + std::to_string(n++) + ".db");
    SubmitSpec spec;
    spec.partition = "gpu";
    spec.gpus_per_node = 4;
    spec.hold = false;  // pending and released in Slurm: a hold the reconciler sends takes
    auto id = f.slurm.Submit(spec);
    ASSERT_TRUE(id.ok());
    if (c.known) {
      auto lj = std::make_unique<LiveJob>();
      lj->id = *id;
      lj->gen = c.known->gen;
      for (const std::string& node : c.known->nodes) lj->nodes.push_back(NodeShare{node, 4});
      f.book->Enter(f.book->Add(std::move(lj)), c.known->state, 90);
    }
    SlurmJob row = c.row;
    row.id = *id;
    const uint32_t holds_before = f.slurm.counters(*id).holds;
    ASSERT_TRUE(f.reconciler->Reconcile(row, 100).ok()) << c.what;
    const LiveJob* lj = f.book->Find(*id);
    EXPECT_EQ(lj != nullptr, c.lands.has_value()) << c.what;
    if (lj && c.lands) {
      EXPECT_EQ(lj->state(), *c.lands) << c.what << ": " << JobStateName(lj->state());
      EXPECT_EQ(lj->gen, c.gen) << c.what;
    }
    EXPECT_EQ(f.host->calls, c.calls) << c.what;
    EXPECT_EQ(f.slurm.counters(*id).holds - holds_before, c.holds) << c.what;
    EXPECT_EQ(f.book->illegal_moves(), 0u) << c.what;
  }
}

TEST(Reconciler, CountsAdoptionsAndSlurmRequeues) {
  Fixture f("counts.db");
  SubmitSpec spec;
  spec.partition = "gpu";
  auto a = f.slurm.Submit(spec), b = f.slurm.Submit(spec);
  ASSERT_TRUE(a.ok() && b.ok());
  SlurmJob run = RunningOn("n1");
  run.id = *a;
  ASSERT_TRUE(f.reconciler->Reconcile(run, 100).ok());  // new and running: adopted
  SlurmJob back = Held();
  back.id = *a;
  ASSERT_TRUE(f.reconciler->Reconcile(back, 110).ok());  // requeued by Slurm
  SlurmJob held = Held();
  held.id = *b;
  ASSERT_TRUE(f.reconciler->Reconcile(held, 110).ok());
  EXPECT_EQ(f.reconciler->adopted(), 1u);
  EXPECT_EQ(f.reconciler->slurm_requeued(), 1u);
  EXPECT_EQ(f.ledger.GenOf(*a), 1u);
  auto gens = f.journal->Gens();
  ASSERT_TRUE(gens.ok());
  EXPECT_EQ(gens->at(*a), 1u);  // the generation is journaled
}

TEST(Reconciler, ARefusedHoldIsRetriedAtTheNextListing) {
  Fixture f("retry.db");
  SlurmJob unknown = Released();
  unknown.id = 999;  // FakeSlurm refuses to hold a job it does not have
  ASSERT_TRUE(f.reconciler->Reconcile(unknown, 100).ok());
  EXPECT_TRUE(f.reconciler->retry_row());
  EXPECT_EQ(f.book->Find(999)->state(), S::kUnheld);
  f.reconciler->ClearRetry();
  EXPECT_FALSE(f.reconciler->retry_row());
}

TEST(Reconciler, AStartDecisionSettlesWhenTheJobEnds) {
  Fixture f("settle.db");
  JournalDecision d;
  d.key = StartKey(7, 0);
  d.job = 7;
  d.nodes = {NodeShare{"n1", 4}};
  ASSERT_TRUE(f.journal->Plan(&d).ok());
  f.ledger.unapplied[d.key] = d;
  SlurmJob ended = Ended();
  ended.id = 7;
  ended.start = 50;
  ended.nodes = {"n1"};
  ASSERT_TRUE(f.reconciler->Reconcile(ended, 100).ok());  // ended before it was seen: settled
  EXPECT_TRUE(f.ledger.unapplied.empty());
  ASSERT_EQ(f.ledger.recent.size(), 1u);
  EXPECT_EQ(f.ledger.recent.back().state, DecisionState::kApplied);  // it ran where the decision put it
  auto stored = f.journal->Get(d.key);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->state, DecisionState::kApplied);
}

}  // namespace
}  // namespace orrery::live
