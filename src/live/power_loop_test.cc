// The power loop (power_loop.h) over FakeSlurm, a real Applier and a recording host (two
// 4-GPU nodes n1, n2 in one VC): one row per energy-policy case (idle time, work on a node)
// and per wake-up case (pending work, node power states), with the decisions journaled, what
// reached Slurm and what the loop asked of its host; operators' actions, decisions met again,
// and a POWER_UP Slurm does not show yet.
#include "live/power_loop.h"

#include <gtest/gtest.h>

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

// Powers down every node on, without work, idle for at least a minute; every 10 s.
class IdleForAMinuteDown final : public PowerPlugin {
 public:
  std::string_view name() const override { return "idle-minute"; }
  Duration period() const override { return 10; }
  void Decide(const PowerSnapshot& s, std::vector<PowerDecision>* out) override {
    for (size_t n = 0; n < s.nodes.size(); ++n) {
      const NodePowerView& v = s.nodes[n];
      if (v.state == PowerState::kOn && !v.busy && s.now - v.idle_since >= 60)
        out->push_back({PowerDecision::kPowerDown, NodeId(static_cast<uint32_t>(n))});
    }
  }
};

SlurmNode NodeIn(const std::string& name, NodeAvail avail, const char* state_raw) {
  SlurmNode n;
  n.name = name;
  n.gpus = 4;
  n.avail = avail;
  n.state_raw = state_raw;
  return n;
}

// The host: the scheduler's cluster (n1, n2 in VC 0), the allocations and free GPUs the test
// sets, the node records; records each call that changes something ("powering-down n1").
class RecordingPowerHost : public PowerLoopHost {
 public:
  RecordingPowerHost() {
    cluster.vcs.push_back(VirtualCluster{VcId(0), "gpu", {}, 8});
    for (uint32_t i = 0; i < 2; ++i) {
      Node n;
      n.id = NodeId(i);
      n.vc = VcId(0);
      n.gpus = 4;
      n.name = "n" + std::to_string(i + 1);
      cluster.nodes.push_back(n);
      cluster.vcs[0].nodes.push_back(n.id);
      nodes[n.name] = NodeIn(n.name, NodeAvail::kUp, "idle");
    }
  }
  const Cluster* ModelCluster() const override { return &cluster; }
  void AllocatedNodes(std::vector<std::string>* out) const override {
    out->insert(out->end(), allocated.begin(), allocated.end());
  }
  uint64_t VcFreeGpus(VcId) const override { return free_gpus; }
  void PoweringDown(const std::string& node) override { calls.push_back("powering-down " + node); }
  const SlurmNode* NodeOf(const std::string& node) const override {
    auto it = nodes.find(node);
    return it == nodes.end() ? nullptr : &it->second;
  }
  SlurmNode* MirrorLocally(const std::string& node) override {
    auto it = nodes.find(node);
    return it == nodes.end() ? nullptr : &it->second;
  }
  int64_t CycleNumber() const override { return 3; }

  Cluster cluster;
  std::map<std::string, SlurmNode> nodes;
  std::vector<std::string> allocated;
  uint64_t free_gpus = 8;
  std::vector<std::string> calls;
};

// The applier's host: power's checks and bookkeeping are the power loop's.
class PowerApplierHost : public ApplierHost {
 public:
  PowerLoop* power = nullptr;
  std::vector<NodeShare> Placement(const StartDecision&) const override { return {}; }
  bool NodeListed(const std::string&) const override { return true; }
  Status Replan(LiveJob&, const std::string&, Time) override { return Status::Ok(); }
  Verdict CheckRecovery(const JournalDecision&, std::string*) const override { return Verdict::kSend; }
  Verdict CheckPower(const JournalDecision& d, std::string* why) const override { return power->Check(d, why); }
  void RecoveryApplied(const JournalDecision&, Time, CycleStats*) override {}
  void PowerActionApplied(const JournalDecision& d, Time now, CycleStats* st) override { power->Applied(d, now, st); }
  int64_t PowerSeq() const override { return power->seq(); }
  void ApplyFailed(const std::string&) override {}
};

struct Fixture {
  explicit Fixture(const std::string& name) : slurm(&clock), ledger(10) {
    auto j = Journal::Open(FreshJournalPath("orrery_power_loop_test", name), false);
    EXPECT_TRUE(j.ok());
    journal = std::move(*j);
    events = std::make_unique<EventLog>(journal.get());
    book = std::make_unique<JobBook>(events.get());
    applier = std::make_unique<Applier>(book.get(), &ledger, &slurm, journal.get(), events.get(), &applier_host);
    PowerLoopOptions opts;
    opts.vcs = 1;
    opts.energy = "idle-minute";
    opts.factory = [] { return std::unique_ptr<PowerPlugin>(std::make_unique<IdleForAMinuteDown>()); };
    power = std::make_unique<PowerLoop>(book.get(), &ledger, journal.get(), &clock, events.get(), applier.get(), &host,
                                        opts);
    applier_host.power = power.get();
    slurm.AddNode("n1", 4, "gpu");
    slurm.AddNode("n2", 4, "gpu");
    EXPECT_TRUE(power->Load().ok());
    EXPECT_TRUE(power->MakePolicy().ok());
  }
  // A record of job `id` in `state` (4 GPUs of VC 0), on `node` unless it is queued.
  LiveJob& Add(uint32_t id, S state, const char* node) {
    auto lj = std::make_unique<LiveJob>();
    lj->id = id;
    lj->job.gpus = 4;
    lj->job.gpu_milli = 1000;
    lj->job.vc = VcId(0);
    if (*node) lj->nodes = {NodeShare{node, 4}};
    LiveJob& added = book->Add(std::move(lj));
    book->Enter(added, state, 900);
    if (state == S::kQueued) book->Bind(added, id);  // in the policy's queue
    return added;
  }
  Status StepAt(Time t, CycleStats* st) {
    clock.Set(t);
    return power->Step(t, st);
  }
  SimClock clock{1000};
  FakeSlurm slurm;
  DecisionLedger ledger;
  RecordingPowerHost host;
  PowerApplierHost applier_host;
  std::unique_ptr<Journal> journal;
  std::unique_ptr<EventLog> events;
  std::unique_ptr<JobBook> book;
  std::unique_ptr<Applier> applier;
  std::unique_ptr<PowerLoop> power;
};

// The energy policy: a first step at 1000 (both nodes idle from then; the first control tick
// is due at 1010), then one at `at`.
struct PolicyCase {
  const char* what;
  Time at;
  const char* running_on;   // a running job's node ("" none)
  const char* allocated;    // a node the snapshot holds an allocation on ("" none)
  const char* start_pinned;  // a start decision not yet applied pins a job there ("" none)
  std::vector<std::string> powered_down;  // power-down/<node>/<n> applied, in this order
  std::vector<std::string> calls;
};

TEST(PowerLoop, PolicyOneRowPerCase) {
  const PolicyCase cases[] = {
      // Idle 30 s < 60: nothing.
      {"idle under a minute: kept on", 1030, "", "", "", {}, {}},
      // Idle 60 s at the tick of 1060: both down, numbered 1 and 2 in node order.
      {"idle past the minute: powered down", 1060, "", "", "", {"n1", "n2"}, {"powering-down n1", "powering-down n2"}},
      // A job runs on n1: busy, never idle; n2 goes.
      {"a running job keeps its node on", 1060, "n1", "", "", {"n2"}, {"powering-down n2"}},
      // The snapshot holds GPUs of n2: busy.
      {"an allocation keeps its node on", 1060, "", "n2", "", {"n1"}, {"powering-down n1"}},
      // A start planned on n1, not yet applied: n1 has work.
      {"a pinned start keeps its node on", 1060, "", "", "n1", {"n2"}, {"powering-down n2"}},
  };
  int n = 0;
  for (const PolicyCase& c : cases) {
    Fixture f("policy_" + std::to_string(n++) + ".db");
    if (*c.running_on) f.Add(7, S::kRunning, c.running_on);
    if (*c.allocated) f.host.allocated.push_back(c.allocated);
    if (*c.start_pinned) {
      JournalDecision start;
      start.kind = K::kStart;
      start.key = StartKey(8, 0);
      start.job = 8;
      start.nodes = {NodeShare{c.start_pinned, 4}};
      f.ledger.unapplied[start.key] = start;
    }
    CycleStats st;
    ASSERT_TRUE(f.StepAt(1000, &st).ok()) << c.what;
    ASSERT_TRUE(f.StepAt(c.at, &st).ok()) << c.what;
    int64_t seq = 0;
    for (const std::string& node : c.powered_down) {
      auto d = f.journal->Get("power-down/" + node + "/" + std::to_string(++seq));
      ASSERT_TRUE(d.ok()) << c.what << ": " << node;
      EXPECT_EQ(d->state, D::kApplied) << c.what;
      EXPECT_EQ(d->detail, "ces") << c.what;
      EXPECT_EQ(d->cycle, 3) << c.what;
      EXPECT_EQ(f.slurm.power_calls(node).downs, 1u) << c.what;
      EXPECT_EQ(f.host.nodes[node].state_raw, "idle%") << c.what;  // mirrored until Slurm shows it
    }
    EXPECT_EQ(f.power->seq(), seq) << c.what;
    EXPECT_EQ(f.power->ces_downs(), c.powered_down.size()) << c.what;
    EXPECT_EQ(st.power_downs, c.powered_down.size()) << c.what;
    EXPECT_EQ(f.power->refused(), 0u) << c.what;
    EXPECT_EQ(f.host.calls, c.calls) << c.what;
  }
}

// Wake-ups for pending work (DemandWakeups): n2 is powered down unless the row says otherwise;
// one 4-GPU job queued; hand-computed by the rule: need = pending nodes (1) - (idle on + booting).
struct WakeCase {
  const char* what;
  const char* running_on;  // a running job's node ("" none)
  uint64_t free_gpus;      // free GPUs on powered nodes
  NodeAvail n2;
  const char* n2_raw;
  bool planned_already;  // a power-up of n2 is planned and not yet applied
  bool woken;
};

TEST(PowerLoop, DemandWakeOneRowPerCase) {
  const WakeCase cases[] = {
      // n1 busy, 0 free: need 1, have 0: wake n2.
      {"pending job, no room: the powered-down node is woken", "n1", 0, NodeAvail::kPoweredDown, "idle~", false, true},
      // n1 idle with 4 free GPUs: have 1 >= need 1.
      {"pending job fits an idle node: none woken", "", 4, NodeAvail::kPoweredDown, "idle~", false, false},
      // n2 still powering down ("%"): not wakeable.
      {"a node powering down is not woken", "n1", 0, NodeAvail::kPoweredDown, "idle%", false, false},
      // Already planned: never twice.
      {"a power-up already planned: not again", "n1", 0, NodeAvail::kPoweredDown, "idle~", true, false},
      // n2 booting: nothing is powered down.
      {"a node already booting counts", "n1", 0, NodeAvail::kPoweringUp, "idle#", false, false},
  };
  int n = 0;
  for (const WakeCase& c : cases) {
    Fixture f("wake_" + std::to_string(n++) + ".db");
    if (*c.running_on) f.Add(7, S::kRunning, c.running_on);
    f.Add(9, S::kQueued, "");
    f.host.free_gpus = c.free_gpus;
    f.host.nodes["n2"] = NodeIn("n2", c.n2, c.n2_raw);
    if (c.planned_already) {
      JournalDecision up;
      up.kind = K::kPowerUp;
      up.key = "power-up/n2/0";
      up.nodes = {NodeShare{"n2", 4}};
      f.ledger.unapplied[up.key] = up;
    }
    CycleStats st;
    ASSERT_TRUE(f.StepAt(1000, &st).ok()) << c.what;  // no control tick yet: the wake-up rule only
    EXPECT_EQ(f.slurm.power_calls("n2").ups, c.woken ? 1u : 0u) << c.what;
    EXPECT_EQ(f.power->demand_ups(), c.woken ? 1u : 0u) << c.what;
    EXPECT_EQ(st.power_ups, c.woken ? 1u : 0u) << c.what;
    if (!c.woken) continue;
    auto d = f.journal->Get("power-up/n2/1");
    ASSERT_TRUE(d.ok()) << c.what;
    EXPECT_EQ(d->state, D::kApplied) << c.what;
    EXPECT_EQ(d->detail, "demand") << c.what;
    EXPECT_EQ(f.host.nodes["n2"].avail, NodeAvail::kPoweringUp) << c.what;  // mirrored: booting
    // Slurm's next listing may still say idle~ for a moment: the node stays booting for 10 s.
    const SlurmNode listed = NodeIn("n2", NodeAvail::kPoweredDown, "idle~");
    EXPECT_TRUE(f.power->StillBooting(listed, f.host.nodes["n2"], 1005)) << c.what;
    EXPECT_FALSE(f.power->StillBooting(listed, f.host.nodes["n2"], 1010)) << c.what;
    EXPECT_FALSE(f.power->StillBooting(listed, f.host.nodes["n2"], 1005)) << c.what;  // forgotten once shown
  }
}

TEST(PowerLoop, AnOperatorsActionIsPlannedWithTheNextNumber) {
  Fixture f("operator.db");
  EXPECT_EQ(f.power->Request("n9", true, 1000).error().code, ErrorCode::kNotFound);
  ASSERT_TRUE(f.power->Request("n2", false, 1000).ok());
  EXPECT_EQ(f.power->seq(), 1);
  auto counter = f.journal->GetCounter("power");
  ASSERT_TRUE(counter.ok());
  EXPECT_EQ(*counter, 1);
  auto d = f.journal->Get("power-down/n2/1");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->state, D::kPlanned);
  EXPECT_EQ(f.ledger.unapplied.count("power-down/n2/1"), 1u);  // sent at the next cycle
  CycleStats st;
  ASSERT_TRUE(f.applier->RetryUnapplied(1001, &st).ok());
  EXPECT_EQ(f.slurm.power_calls("n2").downs, 1u);
  EXPECT_EQ(f.power->ces_downs(), 0u);  // an operator's, not the policy's
}

TEST(PowerLoop, ADecisionMetAgainIsCheckedAgainstSlurmAndTheWork) {
  struct Row {
    const char* what;
    K kind;
    NodeAvail shows;
    const char* raw;
    bool busy;
    Verdict verdict;
  };
  const Row rows[] = {
      {"power-up, Slurm shows it booting", K::kPowerUp, NodeAvail::kPoweringUp, "idle#", false, Verdict::kInEffect},
      {"power-up, still powered down", K::kPowerUp, NodeAvail::kPoweredDown, "idle~", false, Verdict::kSend},
      {"power-down, Slurm shows it", K::kPowerDown, NodeAvail::kPoweredDown, "idle%", false, Verdict::kInEffect},
      {"power-down of a node that has work now", K::kPowerDown, NodeAvail::kUp, "mixed", true, Verdict::kObsolete},
      {"power-down of an idle node", K::kPowerDown, NodeAvail::kUp, "idle", false, Verdict::kSend},
  };
  int n = 0;
  for (const Row& r : rows) {
    Fixture f("check_" + std::to_string(n++) + ".db");
    f.host.nodes["n1"] = NodeIn("n1", r.shows, r.raw);
    if (r.busy) f.Add(7, S::kRunning, "n1");
    JournalDecision d;
    d.kind = r.kind;
    d.nodes = {NodeShare{"n1", 4}};
    std::string why;
    EXPECT_EQ(f.power->Check(d, &why), r.verdict) << r.what << ": " << why;
  }
}

}  // namespace
}  // namespace orrery::live
