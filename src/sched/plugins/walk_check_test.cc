// The cycle's contract (docs/design/components.md): the optimised queue walk decides what the
// plain reference walk decides. With walk checks on, every walk also runs the plain walk on a
// copy and compares; a pruner that changes a decision is reported, small scenarios agree.
#include <deque>

#include <gtest/gtest.h>

#include "sched/framework/internal/scheduler.h"
#include "sched/framework/test_util.h"
#include "sched/plugins/placers.h"
#include "sched/plugins/policies.h"

namespace orrery {
namespace {

using testing::AddVc;

// Estimates each job's walltime (the believed durations of EASY and SRTF on belief).
class WalltimeEstimator final : public DurationEstimator {
 public:
  std::string_view name() const override { return "walltime"; }
  Duration Estimate(const Job& job, Time) override { return job.walltime; }
  void Observe(const Job&, Duration) override {}
};

// The truth of trace jobs: `duration` seconds of work, kept across preemptions. Copyable, so
// the walk check runs oracle policies too.
class ListTruth final : public TruthModel {
 public:
  Duration Remaining(uint32_t slot) const override { return e_.at(slot).remaining; }
  Time TrueEnd(uint32_t slot) const override { return e_.at(slot).started + e_.at(slot).remaining; }
  void Submitted(uint32_t slot, const Job& job, Time) override { At(slot) = Entry{job.duration, kNoTime}; }
  void Started(uint32_t slot, Time now) override { At(slot).started = now; }
  void Stopped(uint32_t slot, Time now, EndCause) override {
    Entry& e = At(slot);
    if (e.started != kNoTime) e.remaining -= now - e.started;
    e.started = kNoTime;
  }
  Duration RestartCost(uint32_t) const override { return 0; }
  std::unique_ptr<TruthModel> Clone() const override { return std::make_unique<ListTruth>(*this); }

 private:
  struct Entry {
    Duration remaining = 0;
    Time started = kNoTime;
  };
  Entry& At(uint32_t slot) {
    if (slot >= e_.size()) e_.resize(slot + 1);
    return e_[slot];
  }
  std::vector<Entry> e_;
};

// A PostFilter that makes room by preempting the running job that ends last, then places the
// job; its hints are what the test says, true or not.
class PreemptLast final : public PostFilterPlugin {
 public:
  PreemptLast(bool may_place_unfitting, bool rejects) : may_(may_place_unfitting), rejects_(rejects) {}
  std::string_view name() const override { return "preempt-last"; }
  bool MayPlaceUnfitting(SchedulerHandle&, uint32_t) override { return may_; }
  bool Rejects(SchedulerHandle&, uint32_t) override { return rejects_; }
  std::unique_ptr<PostFilterPlugin> Clone(PluginCopies&) const override { return std::make_unique<PreemptLast>(*this); }
  Next Run(SchedulerHandle& h, uint32_t slot, bool* placed) override {
    *placed = false;
    uint32_t victim = kNoSlot;
    h.ForEachRunningByEstEndDesc(h.job(slot).vc, [&](uint32_t r, Time) {
      victim = r;
      return false;
    });
    if (victim == kNoSlot) return Next::kContinue;
    h.Preempt(victim);
    Allocation alloc;
    if (!h.placer().Place(h.job(slot), h.state(), nullptr, &alloc).ok()) return Next::kContinue;
    h.Start(slot, std::move(alloc));
    *placed = true;
    return Next::kContinue;
  }

 private:
  bool may_, rejects_;
};

struct JobRow {
  Time submit;
  uint32_t gpus;
  Duration duration;  // the truth (oracle runs) and, as walltime, the belief
  JobKind kind = JobKind::kUnknown;
};

// One VC of `nodes` × `gpus` GPUs under `parts`, every walk checked (differences recorded).
struct CheckedRig {
  Cluster cluster;
  std::deque<Job> jobs;
  ListTruth truth;
  std::unique_ptr<Scheduler> s;

  CheckedRig(PolicyParts parts, int nodes, uint16_t gpus, bool oracle = false) {
    AddVc(&cluster, "a", nodes, gpus);
    auto placer = MakePlacer("consolidate", 1);
    s = std::make_unique<Scheduler>(cluster, false, false, std::move(parts), std::move(*placer));
    if (oracle) s->AttachTruth(&truth);
    s->CheckWalks(Scheduler::WalkCheck{1, false});
  }
  void Submit(const JobRow& r) {
    Job j;
    j.id = JobId(static_cast<uint32_t>(jobs.size()));
    j.submit = r.submit;
    j.gpus = r.gpus;
    j.duration = r.duration;
    j.walltime = r.duration;
    j.kind = r.kind;
    jobs.push_back(j);
    ASSERT_TRUE(s->Submit(&jobs.back(), VcId(0), 0, static_cast<uint32_t>(jobs.size() - 1), r.submit).ok());
  }
  // The decisions of the cycle at t: "S<slot>" / "P<slot>".
  std::string Cycle(Time t) {
    std::vector<Decision> out;
    s->RunCycle(t, &out);
    std::string d;
    for (const Decision& x : out)
      d += std::visit(Overloaded{[](const StartDecision& st) { return "S" + std::to_string(st.slot) + " "; },
                                 [](const PreemptDecision& p) { return "P" + std::to_string(p.slot) + " "; }},
                      x);
    return d;
  }
};

PolicyParts Policy(const std::string& spec, bool walltime_estimates) {
  auto parts = MakePolicy(spec, 1);
  EXPECT_TRUE(parts.ok()) << spec;
  if (walltime_estimates) parts->estimator = std::make_unique<WalltimeEstimator>();
  return std::move(*parts);
}

// Greedy, preemptive: PreemptLast with the given hints.
PolicyParts PreemptLastPolicy(bool may_place_unfitting, bool rejects) {
  PolicyParts parts = Policy("fifo", true);
  parts.post = std::make_unique<PreemptLast>(may_place_unfitting, rejects);
  parts.blocking = false;
  parts.preemptive = true;
  return parts;
}

// ---- a pruner that changes a decision is reported

// 1 node × 4 GPUs. t=0: job 0 (4 GPUs) starts. t=10: job 1 (2 GPUs) cannot fit (no free GPU,
// so class 2 is not among the fitting classes). The plain walk places it, fails, and runs the
// PostFilter, which preempts job 0 and starts job 1: "preempt slot 0, start slot 1". The
// PostFilter's Rejects says, wrongly, that Run would leave job 1 pending, so the optimised
// walk (pruner "rejects") passes it: no decision.
TEST(WalkCheck, AWrongRejectsHintIsReportedWithThePrunersActive) {
  CheckedRig r(PreemptLastPolicy(/*may_place_unfitting=*/true, /*rejects=*/true), 1, 4);
  r.Submit({0, 4, 1000});
  EXPECT_EQ(r.Cycle(0), "S0 ");
  EXPECT_EQ(r.s->walk_difference(), "");
  r.Submit({10, 2, 100});
  EXPECT_EQ(r.Cycle(10), "");
  EXPECT_EQ(r.s->walk_difference(),
            "walk check: VC 0 at t=10: decision 1 differs: optimised walk none, plain walk preempt slot 0 (job 0) "
            "(0 vs 2 decisions); pruners active: fitting-classes, unfit-key-bound, rejects");
  EXPECT_EQ(r.s->walk_check_counts().compared, 2u);
}

// The same, with the other hint wrong: MayPlaceUnfitting says Run could never place a job that
// does not fit, so the optimised walk (pruner "fitting-classes") never visits job 1.
TEST(WalkCheck, AWrongMayPlaceUnfittingHintIsReported) {
  CheckedRig r(PreemptLastPolicy(/*may_place_unfitting=*/false, /*rejects=*/false), 1, 4);
  r.Submit({0, 4, 1000});
  EXPECT_EQ(r.Cycle(0), "S0 ");
  r.Submit({10, 2, 100});
  EXPECT_EQ(r.Cycle(10), "");
  EXPECT_EQ(r.s->walk_difference(),
            "walk check: VC 0 at t=10: decision 1 differs: optimised walk none, plain walk preempt slot 0 (job 0) "
            "(0 vs 2 decisions); pruners active: fitting-classes, unfit-key-bound, rejects");
}

// With the pruners the hints feed switched off (SchedulerOptions::pruners), the walk visits
// job 1, and the decisions are the plain walk's.
TEST(WalkCheck, WithoutThePrunersTheWrongHintsChangeNothing) {
  PolicyParts parts = PreemptLastPolicy(false, true);
  Cluster cluster;
  AddVc(&cluster, "a", 1, 4);
  SchedulerOptions opts;
  opts.pruners = kAllPruners & ~(PrunerBit(Pruner::kFittingClasses) | PrunerBit(Pruner::kRejects));
  auto placer = MakePlacer("consolidate", 1);
  Scheduler s(cluster, false, false, std::move(parts), std::move(*placer), opts);
  s.CheckWalks(Scheduler::WalkCheck{1, false});
  std::deque<Job> jobs(2);
  jobs[0].id = JobId(0), jobs[0].gpus = 4, jobs[0].walltime = 1000;
  jobs[1].id = JobId(1), jobs[1].gpus = 2, jobs[1].walltime = 100, jobs[1].submit = 10;
  ASSERT_TRUE(s.Submit(&jobs[0], VcId(0), 0, 0, 0).ok());
  std::vector<Decision> out;
  s.RunCycle(0, &out);
  ASSERT_TRUE(s.Submit(&jobs[1], VcId(0), 0, 1, 10).ok());
  out.clear();
  s.RunCycle(10, &out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(SlotOf(out[0]), 0u);  // preempt job 0
  EXPECT_EQ(SlotOf(out[1]), 1u);  // start job 1
  EXPECT_EQ(s.walk_difference(), "");
}

// In a dev-checks build the difference aborts the process with the same message.
TEST(WalkCheckDeathTest, ADifferenceAbortsWhenAsked) {
  EXPECT_DEATH(
      {
        CheckedRig r(PreemptLastPolicy(true, true), 1, 4);
        r.s->CheckWalks(Scheduler::WalkCheck{1, true});
        r.Submit({0, 4, 1000});
        r.Cycle(0);
        r.Submit({10, 2, 100});
        r.Cycle(10);
      },
      "walk check: VC 0 at t=10: decision 1 differs: optimised walk none, plain walk preempt slot 0");
}

// ---- small scenarios where the optimised and the plain walk agree

struct Scenario {
  const char* name;
  std::string policy;
  bool estimates;  // walltime estimator
  bool oracle;     // truth attached
  int nodes;
  uint16_t gpus;
  std::vector<JobRow> jobs;  // submitted at their submit time, before that instant's cycle
  std::vector<std::pair<Time, std::string>> cycles;  // instant, expected decisions
};

std::vector<Scenario> Scenarios() {
  return {
      // 8 GPUs: job 0 (4) starts; job 1 (8) does not fit and blocks job 2 (2).
      {"fifo-blocks", "fifo", false, false, 1, 8, {{0, 4, 100}, {0, 8, 100}, {0, 2, 100}}, {{0, "S0 "}}},
      // 8 GPUs: job 0 (6, 100 s) starts; job 1 (4) waits for t=100 (its shadow time); job 2
      // (2, 50 s) ends by then on the 2 free GPUs: backfilled.
      {"easy-backfills", "easy", true, false, 1, 8, {{0, 6, 100}, {0, 4, 100}, {0, 2, 50}}, {{0, "S0 S2 "}}},
      // 4 GPUs, SRTF on walltime beliefs: job 0 (4, 1000 s) starts; at 10, job 1 (2, 100 s) is
      // shorter than job 0's 990 s left: job 0 is preempted, job 1 starts; job 0 (requeued,
      // 990 + 30 s believed) does not fit the 2 GPUs left and preempts nothing shorter.
      {"srtf-preempts", "srtf:estimator=walltime", false, false, 1, 4, {{0, 4, 1000}, {10, 2, 100}},
       {{0, "S0 "}, {10, "P0 S1 "}}},
      // The same on the truth (oracle SRTF): job 0 has 990 s of work left at 10.
      {"srtf-oracle-preempts", "srtf", false, true, 1, 4, {{0, 4, 1000}, {10, 2, 100}}, {{0, "S0 "}, {10, "P0 S1 "}}},
      // 2 × 4 GPUs, greedy SRTF: jobs 0 and 1 (4 GPUs, 1000 s) fill both nodes; at 10 job 2 (4,
      // 2000 s) is longer than both: rejected without a placement; job 3 (1, 10 s) preempts the
      // last-ending running job (job 1, the later key) and starts.
      {"srtf-rejects-then-preempts", "srtf", false, true, 2, 4, {{0, 4, 1000}, {0, 4, 1000}, {10, 4, 2000}, {10, 1, 10}},
       {{0, "S0 S1 "}, {10, "P1 S3 "}}},
      // 8 GPUs, 2 reserved for evaluation jobs: job 0 (other, 6) starts; job 1 (other, 2) would
      // exceed the others' 6 and waits; behind it the lane starts job 2 (eval, 2) in the
      // reserve, which is then full.
      {"eval-lane", "fifo:eval_share=0.25", false, false, 1, 8,
       {{0, 6, 100}, {0, 2, 100}, {0, 2, 100, JobKind::kEval}, {0, 1, 100, JobKind::kEval}},
       {{0, "S0 S2 "}}},
  };
}

TEST(WalkCheck, SmallScenariosAgree) {
  for (const Scenario& sc : Scenarios()) {
    SCOPED_TRACE(sc.name);
    CheckedRig r(Policy(sc.policy, sc.estimates), sc.nodes, sc.gpus, sc.oracle);
    size_t next = 0;
    for (const auto& [t, want] : sc.cycles) {
      while (next < sc.jobs.size() && sc.jobs[next].submit <= t) r.Submit(sc.jobs[next++]);
      EXPECT_EQ(r.Cycle(t), want) << "at t=" << t;
    }
    EXPECT_EQ(r.s->walk_difference(), "");
    EXPECT_EQ(r.s->walk_check_counts().not_copyable, 0u);
    EXPECT_GT(r.s->walk_check_counts().compared, 0u);
  }
}

// A loaded oracle SRTF run, every walk checked: the greedy walk's pruners (fitting classes, the
// key bound, rejections along a class, settled walks) all apply, and no walk differs. 8 nodes ×
// 8 GPUs, 400 jobs of 1-8 GPUs arriving every 0-59 s with 100-5099 s of work (a linear
// congruential stream, seed 7); each instant first ends the jobs due by then.
TEST(WalkCheck, ALoadedSrtfRunAgreesWalkByWalk) {
  CheckedRig r(Policy("srtf", false), 8, 8, /*oracle=*/true);
  uint64_t x = 7;
  auto next = [&]() { return (x = x * 6364136223846793005ULL + 1442695040888963407ULL) >> 33; };
  const uint32_t sizes[] = {1, 1, 2, 4, 8};
  Time t = 0;
  std::vector<std::pair<Time, uint32_t>> ends;  // (true end, slot) of the jobs started
  for (uint32_t i = 0; i < 400; ++i) {
    t += static_cast<Time>(next() % 60);
    for (auto it = ends.begin(); it != ends.end();) {
      const SchedJob& j = r.s->view(it->second);
      if (j.running && it->first <= t && r.s->view(it->second).started + r.truth.Remaining(it->second) <= t) {
        r.s->Finish(it->second, t);
        r.s->Release(it->second);
        it = ends.erase(it);
      } else {
        ++it;
      }
    }
    r.Submit({t, sizes[next() % 5], 100 + static_cast<Duration>(next() % 5000)});
    std::vector<Decision> out;
    r.s->RunCycle(t, &out);
    for (const Decision& d : out)
      if (std::holds_alternative<StartDecision>(d)) ends.push_back({t + r.truth.Remaining(SlotOf(d)), SlotOf(d)});
  }
  EXPECT_EQ(r.s->walk_difference(), "");
  EXPECT_EQ(r.s->walk_check_counts().compared, 400u);
}

}  // namespace
}  // namespace orrery
