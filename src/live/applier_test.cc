// The applier (applier.h): one row per (job record, decision, first time or met again) case,
// with the journal state the decision lands in, whether it stays planned, what it asked of its
// host and how many requests reached Slurm.
#include "live/applier.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "live/fake_slurm.h"
#include "live/journal_testing.h"

namespace orrery::live {
namespace {

using S = JobState;
using K = DecisionKind;
using D = DecisionState;

// The host: records each call, in order ("replan", "check-power", ...); the nodes Slurm lists
// and the verdict of the other owners' checks are set by the test.
class RecordingApplierHost : public ApplierHost {
 public:
  mutable std::vector<std::string> calls;  // the checks are const
  std::set<std::string> listed{"n1", "n2"};
  Verdict others_say = Verdict::kSend;  // CheckRecovery and CheckPower
  std::vector<NodeShare> placement{NodeShare{"n1", 4}};
  int64_t power_seq = 0;
  std::string last_error;

  std::vector<NodeShare> Placement(const StartDecision&) const override { return placement; }
  bool NodeListed(const std::string& node) const override { return listed.count(node) > 0; }
  Status Replan(LiveJob&, const std::string&, Time) override {
    calls.push_back("replan");
    return Status::Ok();
  }
  Verdict CheckRecovery(const JournalDecision&, std::string*) const override {
    calls.push_back("check-recovery");
    return others_say;
  }
  Verdict CheckPower(const JournalDecision&, std::string*) const override {
    calls.push_back("check-power");
    return others_say;
  }
  void RecoveryApplied(const JournalDecision&, Time, CycleStats*) override { calls.push_back("recovery-applied"); }
  void PowerActionApplied(const JournalDecision&, Time, CycleStats*) override { calls.push_back("power-applied"); }
  int64_t PowerSeq() const override { return power_seq; }
  void ApplyFailed(const std::string& message) override {
    calls.push_back("apply-failed");
    last_error = message;
  }
};

// The daemon's record of the decision's job before the apply (none: not listed).
struct Record {
  Record(S s, uint32_t g = 0, bool stop = false) : state(s), gen(g), stopping(stop) {}
  S state;
  uint32_t gen;
  bool stopping;  // a preemption Slurm has not completed
};

// How the job stands in Slurm.
enum class InSlurm { kHeld, kRunning };

struct Case {
  const char* what;
  std::optional<Record> record;
  InSlurm in_slurm;
  K kind;
  uint32_t gen;      // the decision's generation
  std::string node;  // the node it names
  bool retry;        // met again: planned earlier (next cycle, or after a restart)
  Verdict others_say;
  D lands;           // the journal's state of the decision afterwards
  std::vector<std::string> calls;
  uint64_t sent;     // requests that reached Slurm
  uint64_t starts, requeues, errors;  // the applier's counters
};

const std::vector<Case>& Cases() {
  const Verdict go = Verdict::kSend, done = Verdict::kInEffect;
  static const std::vector<Case> cases = {
      // starts
      {"start sent", Record{S::kStarting}, InSlurm::kHeld, K::kStart, 0, "n1", false, go, D::kApplied, {}, 1, 1, 0, 0},
      {"start of a later generation sent", Record{S::kStarting, 1}, InSlurm::kHeld, K::kStart, 1, "n1", false, go,
       D::kApplied, {}, 1, 1, 0, 0},
      {"start Slurm refuses (no such node): retried", Record{S::kStarting}, InSlurm::kHeld, K::kStart, 0, "n9", false,
       go, D::kPlanned, {"apply-failed"}, 1, 0, 0, 1},
      {"start while the job's requeue completes: waits", Record{S::kStarting, 1, true}, InSlurm::kHeld, K::kStart, 1,
       "n1", false, go, D::kPlanned, {}, 0, 0, 0, 0},
      {"start met again, still to send", Record{S::kStarting}, InSlurm::kHeld, K::kStart, 0, "n1", true, go,
       D::kApplied, {}, 1, 1, 0, 0},
      {"start met again, Slurm runs it", Record{S::kRunning}, InSlurm::kRunning, K::kStart, 0, "n1", true, go,
       D::kApplied, {}, 0, 0, 0, 0},
      {"start met again, the job was queued again (stale)", Record{S::kQueued}, InSlurm::kHeld, K::kStart, 0, "n1",
       true, go, D::kSuperseded, {}, 0, 0, 0, 0},
      {"start met again, of an earlier generation (stale)", Record{S::kStarting, 1}, InSlurm::kHeld, K::kStart, 0, "n1",
       true, go, D::kSuperseded, {}, 0, 0, 0, 0},
      {"start met again, its node left: re-planned", Record{S::kStarting}, InSlurm::kHeld, K::kStart, 0, "n3", true, go,
       D::kSuperseded, {"replan"}, 0, 0, 0, 0},
      {"start met again, the job is not listed yet: waits", std::nullopt, InSlurm::kHeld, K::kStart, 0, "n1", true, go,
       D::kPlanned, {}, 0, 0, 0, 0},
      // preemptions (requeue + hold)
      {"preemption sent", Record{S::kQueued, 1}, InSlurm::kRunning, K::kRequeue, 0, "n1", false, go, D::kApplied, {}, 1,
       0, 1, 0},
      {"preemption of a job Slurm no longer runs: nothing to do", Record{S::kQueued, 1}, InSlurm::kHeld, K::kRequeue, 0,
       "n1", false, go, D::kApplied, {}, 1, 0, 1, 0},
      {"preemption met again", Record{S::kQueued, 1}, InSlurm::kRunning, K::kRequeue, 0, "n1", true, go, D::kApplied,
       {}, 1, 0, 1, 0},
      // recovery's decisions: checked and booked by the host
      {"drain sent", Record{S::kRecovering}, InSlurm::kRunning, K::kDrain, 0, "n1", false, go, D::kApplied,
       {"recovery-applied"}, 1, 0, 0, 0},
      {"drain met again, Slurm shows it", Record{S::kRecovering}, InSlurm::kRunning, K::kDrain, 0, "n1", true, done,
       D::kApplied, {"check-recovery"}, 0, 0, 0, 0},
      {"restart of a failed job sent", Record{S::kRecovering}, InSlurm::kRunning, K::kRecover, 0, "n1", false, go,
       D::kApplied, {"recovery-applied"}, 1, 0, 0, 0},
      {"give-up: nothing sent", Record{S::kRecovering}, InSlurm::kRunning, K::kGiveUp, 0, "n1", false, go, D::kApplied,
       {"recovery-applied"}, 0, 0, 0, 0},
      {"undrain met again, obsolete", std::nullopt, InSlurm::kHeld, K::kUndrain, 0, "n1", true, Verdict::kObsolete,
       D::kSuperseded, {"check-recovery"}, 0, 0, 0, 0},
      // power
      {"power-up sent", std::nullopt, InSlurm::kHeld, K::kPowerUp, 0, "n2", false, go, D::kApplied, {"power-applied"}, 1,
       0, 0, 0},
      {"power-down Slurm refuses: retried", std::nullopt, InSlurm::kHeld, K::kPowerDown, 0, "n9", false, go, D::kPlanned,
       {"apply-failed"}, 1, 0, 0, 1},
      {"power-down refused again: failed", std::nullopt, InSlurm::kHeld, K::kPowerDown, 0, "n9", true, go, D::kFailed,
       {"check-power", "apply-failed"}, 1, 0, 0, 1},
      {"power-up met again, Slurm shows it", std::nullopt, InSlurm::kHeld, K::kPowerUp, 0, "n2", true, done, D::kApplied,
       {"check-power"}, 0, 0, 0, 0},
  };
  return cases;
}

// One applier over FakeSlurm (nodes n1, n2) and a fresh journal.
// The first start decision of job `id` (generation 0) on four GPUs of `node`.
JournalDecision FirstStartOn(uint32_t id, const char* node) {
  JournalDecision d;
  d.kind = K::kStart;
  d.key = StartKey(id, 0);
  d.job = id;
  d.nodes = {NodeShare{node, 4}};
  return d;
}

struct Fixture {
  explicit Fixture(const std::string& name) : slurm(&clock), ledger(10) {
    auto j = Journal::Open(FreshJournalPath("orrery_applier_test", name), false);
    EXPECT_TRUE(j.ok());
    journal = std::move(*j);
    events = std::make_unique<EventLog>(journal.get());
    book = std::make_unique<JobBook>(events.get());
    applier = std::make_unique<Applier>(book.get(), &ledger, &slurm, journal.get(), events.get(), &host);
    slurm.AddNode("n1", 4, "gpu");
    slurm.AddNode("n2", 4, "gpu");
  }
  // A job submitted held; running on n1 when asked.
  uint32_t Submit(InSlurm in) {
    SubmitSpec spec;
    spec.partition = "gpu";
    spec.gpus_per_node = 4;
    spec.hold = true;
    auto id = slurm.Submit(spec);
    EXPECT_TRUE(id.ok());
    if (in == InSlurm::kRunning) {
      EXPECT_TRUE(slurm.StartOn(*id, {NodeShare{"n1", 4}}, false).ok());
      slurm.Advance();
      EXPECT_EQ(slurm.job(*id).state, SlurmJobState::kRunning);
    }
    return *id;
  }
  LiveJob& Add(uint32_t id, const Record& r) {
    auto lj = std::make_unique<LiveJob>();
    lj->id = id;
    lj->gen = r.gen;
    lj->stopping = r.stopping;
    lj->nodes = {NodeShare{"n1", 4}};
    LiveJob& added = book->Add(std::move(lj));
    book->Enter(added, r.state, 90);
    return added;
  }
  SimClock clock{100};
  FakeSlurm slurm;
  DecisionLedger ledger;
  RecordingApplierHost host;
  std::unique_ptr<Journal> journal;
  std::unique_ptr<EventLog> events;
  std::unique_ptr<JobBook> book;
  std::unique_ptr<Applier> applier;
};

JournalDecision DecisionOf(const Case& c, uint32_t job) {
  JournalDecision d;
  d.kind = c.kind;
  d.job = job;
  d.gen = c.gen;
  d.nodes = {NodeShare{c.node, 4}};
  switch (c.kind) {
    case K::kStart:
      d.key = StartKey(job, c.gen);
      break;
    case K::kRequeue:
    case K::kDrain:
    case K::kRecover:
    case K::kGiveUp:
    case K::kUndrain:
      d.key = std::string(DecisionKindName(c.kind)) + "/" + std::to_string(job) + "/" + std::to_string(c.gen);
      break;
    case K::kPowerDown:
    case K::kPowerUp:
      d.key = std::string(DecisionKindName(c.kind)) + "/" + c.node + "/1";
      break;
  }
  return d;
}

TEST(Applier, OneRowPerCase) {
  int n = 0;
  for (const Case& c : Cases()) {
    Fixture f(std::string("case_") + std::to_string(n++) + ".db");
    f.host.others_say = c.others_say;
    const uint32_t id = f.Submit(c.in_slurm);
    if (c.record) f.Add(id, *c.record);
    JournalDecision d = DecisionOf(c, id);
    if (c.retry) {  // planned by an earlier cycle (or before a restart), not confirmed
      ASSERT_TRUE(f.journal->Plan(&d).ok()) << c.what;
      f.ledger.unapplied[d.key] = d;
    }
    const uint64_t calls_before = f.slurm.calls();
    CycleStats st;
    Status s = c.retry ? f.applier->RetryUnapplied(100, &st) : f.applier->ApplyPath({d}, false, 100, &st);
    ASSERT_TRUE(s.ok()) << c.what << ": " << s.error().message;
    auto stored = f.journal->Get(d.key);
    ASSERT_TRUE(stored.ok()) << c.what;
    EXPECT_EQ(stored->state, c.lands) << c.what << ": " << DecisionStateName(stored->state);
    EXPECT_EQ(f.ledger.unapplied.count(d.key) > 0, c.lands == D::kPlanned) << c.what;
    EXPECT_EQ(f.host.calls, c.calls) << c.what;
    EXPECT_EQ(f.slurm.calls() - calls_before, c.sent) << c.what;
    EXPECT_EQ(f.applier->starts(), c.starts) << c.what;
    EXPECT_EQ(st.starts, c.starts) << c.what;
    EXPECT_EQ(f.applier->requeues(), c.requeues) << c.what;
    EXPECT_EQ(f.applier->apply_errors(), c.errors) << c.what;
    EXPECT_EQ(st.apply_errors, c.errors) << c.what;
    EXPECT_EQ(f.book->illegal_moves(), 0u) << c.what;
  }
}

TEST(Applier, AStartReleasesTheJobOnItsNodes) {
  Fixture f("release.db");
  const uint32_t id = f.Submit(InSlurm::kHeld);
  f.Add(id, Record{S::kStarting});
  const JournalDecision d = FirstStartOn(id, "n2");
  CycleStats st;
  ASSERT_TRUE(f.applier->ApplyPath({d}, false, 100, &st).ok());
  EXPECT_EQ(f.slurm.counters(id).releases, 1u);
  f.slurm.Advance();
  EXPECT_EQ(f.slurm.job(id).state, SlurmJobState::kRunning);
  EXPECT_EQ(f.slurm.job(id).nodes, std::vector<std::string>{"n2"});
  ASSERT_EQ(f.ledger.recent.size(), 1u);  // remembered for the API
  EXPECT_EQ(f.ledger.recent.back().state, D::kApplied);
}

TEST(Applier, APreemptionMarksTheJobStoppingUntilSlurmCompletesIt) {
  Fixture f("stopping.db");
  const uint32_t id = f.Submit(InSlurm::kRunning);
  LiveJob& lj = f.Add(id, Record{S::kQueued, 1});
  JournalDecision d;
  d.kind = K::kRequeue;
  d.key = "requeue/" + std::to_string(id) + "/0";
  d.job = id;
  d.nodes = {NodeShare{"n1", 4}};
  CycleStats st;
  ASSERT_TRUE(f.applier->ApplyPath({d}, false, 100, &st).ok());
  EXPECT_TRUE(lj.stopping);
  EXPECT_EQ(st.requeues, 1u);
  EXPECT_EQ(f.slurm.counters(id).requeues, 1u);
  auto gens = f.journal->Gens();  // the next generation is journaled with the plan
  ASSERT_TRUE(gens.ok());
  EXPECT_EQ(gens->at(id), 1u);
}

TEST(Applier, PlansTheSchedulersStartAndPreemption) {
  Fixture f("plan.db");
  const uint32_t a = f.Submit(InSlurm::kHeld), b = f.Submit(InSlurm::kRunning);
  LiveJob& queued = f.Add(a, Record{S::kQueued});
  LiveJob& running = f.Add(b, Record{S::kRunning});
  f.book->Bind(queued, 0);
  f.book->Bind(running, 1);
  f.host.placement = {NodeShare{"n2", 4}};
  auto start = f.applier->Plan(StartDecision{0}, 7, 100);
  ASSERT_TRUE(start.ok());
  EXPECT_EQ(start->kind, K::kStart);
  EXPECT_EQ(start->key, StartKey(a, 0));
  EXPECT_EQ(start->cycle, 7);
  EXPECT_EQ(start->nodes.at(0).node, "n2");
  EXPECT_EQ(queued.state(), S::kStarting);  // pinned to the decision's nodes
  EXPECT_EQ(queued.nodes.at(0).node, "n2");
  EXPECT_EQ(queued.started, 100);
  auto preempt = f.applier->Plan(PreemptDecision{1}, 7, 100);
  ASSERT_TRUE(preempt.ok());
  EXPECT_EQ(preempt->kind, K::kRequeue);
  EXPECT_EQ(preempt->key, "requeue/" + std::to_string(b) + "/0");
  EXPECT_EQ(preempt->gen, 0u);
  EXPECT_EQ(preempt->nodes.at(0).node, "n1");  // where it ran
  EXPECT_EQ(running.state(), S::kQueued);      // the scheduler queued it again: a new generation
  EXPECT_EQ(running.gen, 1u);
  EXPECT_EQ(f.ledger.GenOf(b), 1u);
  EXPECT_TRUE(running.nodes.empty());
  EXPECT_EQ(f.book->illegal_moves(), 0u);
}

TEST(Applier, AFlexJobIsReshapedBeforeItsRelease) {
  Fixture f("reshape.db");
  const uint32_t id = f.Submit(InSlurm::kHeld);
  LiveJob& lj = f.Add(id, Record{S::kStarting});
  lj.flex = FlexSpec{2, 4, {}};
  lj.listed_nodes = 1;
  lj.listed_gpus_per_node = 4;
  ASSERT_TRUE(f.applier->Release(id, 0, {NodeShare{"n1", 2}, NodeShare{"n2", 2}}).ok());
  EXPECT_EQ(f.slurm.counters(id).reshapes, 1u);
  EXPECT_EQ(f.slurm.counters(id).releases, 1u);
  EXPECT_EQ(f.applier->reshapes(), 1u);
  EXPECT_EQ(lj.listed_nodes, 2u);
  EXPECT_EQ(lj.listed_gpus_per_node, 2u);
  // Slurm's request already matches: released as it is.
  ASSERT_TRUE(f.applier->Release(id, 0, {NodeShare{"n1", 2}, NodeShare{"n2", 2}}).ok());
  EXPECT_EQ(f.applier->reshapes(), 1u);
}

TEST(Applier, APowerDecisionIsPlannedWithThePowerCounter) {
  Fixture f("power.db");
  f.host.power_seq = 5;
  JournalDecision d;
  d.kind = K::kPowerDown;
  d.key = "power_down/n2/5";
  d.nodes = {NodeShare{"n2", 4}};
  CycleStats st;
  ASSERT_TRUE(f.applier->ApplyPath({d}, false, 100, &st).ok());
  auto seq = f.journal->GetCounter("power");
  ASSERT_TRUE(seq.ok());
  EXPECT_EQ(*seq, 5);
  EXPECT_EQ(st.power_downs, 1u);
  EXPECT_EQ(f.applier->power_actions(), 1u);
  EXPECT_EQ(f.slurm.power_calls("n2").downs, 1u);
}

TEST(Applier, AnUnreachableSlurmLeavesTheDecisionPlanned) {
  Fixture f("unreachable.db");
  const uint32_t id = f.Submit(InSlurm::kHeld);
  f.Add(id, Record{S::kStarting});
  const JournalDecision d = FirstStartOn(id, "n1");
  f.slurm.set_unreachable(true);
  CycleStats st;
  ASSERT_TRUE(f.applier->ApplyPath({d}, false, 100, &st).ok());  // Slurm's error is not the journal's
  EXPECT_EQ(f.ledger.unapplied.count(d.key), 1u);
  EXPECT_NE(f.host.last_error.find("Unable to contact"), std::string::npos);
  f.slurm.set_unreachable(false);
  ASSERT_TRUE(f.applier->RetryUnapplied(110, &st).ok());  // the next cycle sends it
  EXPECT_TRUE(f.ledger.unapplied.empty());
  EXPECT_EQ(f.applier->starts(), 1u);
  auto stored = f.journal->Get(d.key);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->state, D::kApplied);
  EXPECT_EQ(stored->detail, "applied after a retry");
}

}  // namespace
}  // namespace orrery::live
