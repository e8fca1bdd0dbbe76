// The Scheduler on its own, without the simulator: its lifecycle verbs, cadence and answers,
// driven the way a driver drives it (Submit, RunCycle, Finish / Fail / Requeue / Withdraw /
// ReportProgress / UpdateEstimate, AddNode), with readable job builders. No truth is
// attached (a live scheduler's view), except where an oracle policy is tested.
#include "sched/framework/internal/scheduler.h"

#include <deque>
#include <set>

#include <gtest/gtest.h>

#include "sched/framework/test_util.h"
#include "sched/plugins/placers.h"
#include "sched/plugins/policies.h"

namespace orrery {
namespace {

using testing::AddVc;

// ---- belief vs truth, at compile time: a plugin's view of a job is its request, which has no
// duration (the trace's truth is Job's, reachable in the core only through OracleView).
template <class T>
concept HasDuration = requires(const T& t) { t.duration; };
static_assert(!HasDuration<std::remove_pointer_t<decltype(SchedJob::job)>>, "plugins must not see the true duration");
static_assert(HasDuration<Job>);

// ---- builders

class JobBuilder {
 public:
  explicit JobBuilder(uint32_t id) { j_.id = JobId(id); }
  JobBuilder& gpus(uint32_t g) { j_.gpus = g; return *this; }
  JobBuilder& at(Time t) { j_.submit = t; return *this; }
  JobBuilder& runs(Duration d) { j_.duration = d; return *this; }
  JobBuilder& walltime(Duration w) { j_.walltime = w; return *this; }
  JobBuilder& nodes(uint16_t n) { j_.nodes = n; return *this; }
  const Job& job() const { return j_; }

 private:
  Job j_;
};
JobBuilder AJob(uint32_t id) { return JobBuilder(id).gpus(1).runs(100); }

// Records what the scheduler taught it (Observe) and estimates the walltime.
class RecordingEstimator final : public DurationEstimator {
 public:
  std::string_view name() const override { return "recording"; }
  Duration Estimate(const Job& job, Time) override { return job.walltime; }
  void Observe(const Job& job, Duration actual) override { observed.push_back({job.id.v, actual}); }
  std::vector<std::pair<uint32_t, Duration>> observed;
};

// A cluster of `nodes` nodes × `gpus` GPUs in VC "a", a policy, and the driver's side.
struct Rig {
  Cluster cluster;
  std::deque<Job> jobs;  // stable addresses
  std::unique_ptr<Scheduler> s;
  RecordingEstimator* est = nullptr;
  std::vector<Decision> out;
  CycleRun last;  // of the last Cycle

  Rig(const std::string& policy, int nodes, uint16_t gpus, bool recording_estimator = true) {
    AddVc(&cluster, "a", nodes, gpus);
    auto parts = MakePolicy(policy, 1);
    EXPECT_TRUE(parts.ok()) << parts.error().message;
    if (recording_estimator) {
      auto e = std::make_unique<RecordingEstimator>();
      est = e.get();
      parts->estimator = std::move(e);
    }
    auto placer = MakePlacer("consolidate", 1);
    s = std::make_unique<Scheduler>(cluster, false, false, std::move(*parts), std::move(*placer));
  }
  uint32_t Submit(const JobBuilder& b) {
    jobs.push_back(b.job());
    auto slot = s->Submit(&jobs.back(), VcId(0), 0, static_cast<uint32_t>(jobs.size() - 1), b.job().submit);
    EXPECT_TRUE(slot.ok());
    return *slot;
  }
  // One instant: the cycle if due; returns "S<slot>" / "P<slot>" per decision.
  std::string Cycle(Time t) {
    out.clear();
    last = s->RunCycle(t, &out);
    std::string d;
    for (const Decision& x : out)
      d += std::visit(Overloaded{[](const StartDecision& st) { return "S" + std::to_string(st.slot) + " "; },
                                 [](const PreemptDecision& p) { return "P" + std::to_string(p.slot) + " "; }},
                      x);
    return d;
  }
  const SchedJob& view(uint32_t slot) const { return s->view(slot); }
};

// ---- the pending queue's walk: size classes merged in key order, heads kept on every edit

// A Reschedule plugin that starts nothing and records, at each decision, the queue's
// smallest key (-1: empty) and the slots ForEachPending visits when the visitor returns
// `budget` (GPUs still worth visiting) after each visit.
class WalkProbe final : public ReschedulePlugin {
 public:
  std::string_view name() const override { return "walk-probe"; }
  Next Run(SchedulerHandle& h, VcId vc, PluginStatus*) override {
    SortKey min;
    min_key = h.MinPendingKey(vc, &min) ? min.k1 : -1;
    seen.clear();
    h.ForEachPending(vc, [&](const PendingEntry& e) -> int64_t {
      seen.push_back(e.slot);
      return budget;
    });
    return Next::kStop;
  }
  int64_t budget = 1000, min_key = -2;
  std::vector<uint32_t> seen;
};

// FIFO keys are the submit times. Five jobs on 2 × 8 GPUs, submitted out of key order into
// classes 1, 2, 8 and 9 (16 GPUs: larger than a node); job 4 becomes class 1's new head.
// Key order: j4 (1), j2 (5), j0 (10), j3 (20), j1 (30). A budget of 2 GPUs after the first
// visit hides classes 8 and 9: j4, j3, j1. Withdrawing the heads j4 and j2 makes j0's key
// (10) the smallest; withdrawing the rest empties the queue.
TEST(SchedulerPendingWalk, ForEachPendingMergesClassesInKeyOrderAfterEveryEdit) {
  Cluster cluster;
  AddVc(&cluster, "a", 2, 8);
  auto parts = MakePolicy("fifo", 1);
  ASSERT_TRUE(parts.ok());
  auto probe = std::make_unique<WalkProbe>();
  WalkProbe* p = probe.get();
  parts->reschedule = std::move(probe);
  auto placer = MakePlacer("consolidate", 1);
  Scheduler s(cluster, false, false, std::move(*parts), std::move(*placer));
  std::deque<Job> jobs;
  const Time submit[] = {10, 30, 5, 20, 1};
  const uint32_t gpus[] = {8, 1, 16, 2, 1};
  std::vector<uint32_t> slot;
  for (uint32_t i = 0; i < 5; ++i) {
    jobs.push_back(AJob(i).gpus(gpus[i]).at(submit[i]).job());
    auto sl = s.Submit(&jobs.back(), VcId(0), 0, i, 0);
    ASSERT_TRUE(sl.ok());
    slot.push_back(*sl);
  }
  std::vector<Decision> out;
  auto withdraw = [&](std::initializer_list<uint32_t> js, Time t) {
    for (uint32_t j : js) {
      s.Withdraw(slot[j], t);
      s.Release(slot[j]);
    }
    s.RunCycle(t, &out);
  };
  s.RunCycle(0, &out);
  EXPECT_EQ(p->min_key, 1);
  EXPECT_EQ(p->seen, (std::vector<uint32_t>{slot[4], slot[2], slot[0], slot[3], slot[1]}));
  p->budget = 2;
  s.Withdraw(slot[4], 1);  // re-submitted below as the new head of class 1: the walk runs again
  s.Release(slot[4]);
  jobs.push_back(AJob(5).gpus(1).at(1).job());
  slot[4] = *s.Submit(&jobs.back(), VcId(0), 0, 5, 1);
  s.RunCycle(1, &out);
  EXPECT_EQ(p->seen, (std::vector<uint32_t>{slot[4], slot[3], slot[1]}));
  p->budget = 1000;
  withdraw({4, 2}, 2);
  EXPECT_EQ(p->min_key, 10);
  EXPECT_EQ(p->seen, (std::vector<uint32_t>{slot[0], slot[3], slot[1]}));
  EXPECT_TRUE(out.empty());
  withdraw({0, 3}, 3);
  EXPECT_EQ(p->min_key, 30);
  EXPECT_EQ(p->seen, (std::vector<uint32_t>{slot[1]}));
}

// ---- lifecycle verbs: only a finished job teaches the estimator

struct VerbCase {
  const char* name;
  void (*verb)(Scheduler& s, uint32_t slot, Time now);
  size_t observed;    // Observe calls after the verb
  bool pending_after; // the job waits again
};

TEST(SchedulerLifecycle, OnlyFinishTeachesTheEstimator) {
  const VerbCase cases[] = {
      {"finish", [](Scheduler& s, uint32_t slot, Time t) { s.Finish(slot, t); }, 1, false},
      {"withdraw running", [](Scheduler& s, uint32_t slot, Time t) { s.Withdraw(slot, t); }, 0, false},
      {"fail, not restartable",
       [](Scheduler& s, uint32_t slot, Time t) { s.Fail(slot, t, FailureKind::kUser, false); }, 0, false},
      {"fail, restartable",
       [](Scheduler& s, uint32_t slot, Time t) { s.Fail(slot, t, FailureKind::kHardware, true); }, 0, true},
      {"requeue (node lost)", [](Scheduler& s, uint32_t slot, Time t) { s.Requeue(slot, t, EndCause::kNodeLost); }, 0,
       true},
  };
  for (const VerbCase& c : cases) {
    SCOPED_TRACE(c.name);
    Rig r("fifo", 1, 4);
    const uint32_t a = r.Submit(AJob(0).gpus(4).walltime(500));
    EXPECT_EQ(r.Cycle(0), "S0 ");
    c.verb(*r.s, a, 70);
    ASSERT_EQ(r.est->observed.size(), c.observed);
    if (c.observed) EXPECT_EQ(r.est->observed[0].second, 70);  // the attempt's run time: 70 - 0
    EXPECT_EQ(r.s->pending_total(), c.pending_after ? 1u : 0u);
    EXPECT_EQ(r.s->running_total(), 0u);
    EXPECT_EQ(r.s->cluster_state().vc_free_gpus(VcId(0)), 4u);  // the GPUs are free in every case
  }
}

// The old live path (Adopt(empty) + Finish) taught a 0-s duration for every cancelled job.
TEST(SchedulerLifecycle, WithdrawingAPendingJobFreesNothingAndTeachesNothing) {
  Rig r("fifo", 1, 4);
  const uint32_t a = r.Submit(AJob(0).gpus(4).walltime(500));
  const uint32_t b = r.Submit(AJob(1).gpus(4).walltime(500).at(5));
  EXPECT_EQ(r.Cycle(5), "S0 ");
  r.s->Withdraw(b, 6);
  r.s->Release(b);
  EXPECT_EQ(r.s->pending_total(), 0u);
  EXPECT_EQ(r.s->pending_gpu_milli(), 0u);
  r.s->Finish(a, 100);
  EXPECT_EQ(r.est->observed.size(), 1u);  // only job 0's 100 s
  EXPECT_EQ(r.Cycle(100), "");            // nothing left to start
}

// Requeue keeps attained service (Tiresias' priority input) and counts attempts:
// a 2-GPU job runs 0..50 → attained 2 × 50 = 100 GPU-s; it is not a preemption.
TEST(SchedulerLifecycle, RequeueKeepsAttainedServiceAndCountsAttempts) {
  Rig r("tiresias", 1, 4, false);
  const uint32_t a = r.Submit(AJob(0).gpus(2));
  EXPECT_EQ(r.Cycle(0), "S0 ");
  EXPECT_EQ(r.view(a).attempts, 1);
  r.s->Requeue(a, 50, EndCause::kRequeued);
  EXPECT_EQ(r.view(a).attained, 100);
  EXPECT_EQ(r.view(a).preemptions, 0u);
  EXPECT_FALSE(r.view(a).running);
  EXPECT_EQ(r.Cycle(50), "S0 ");
  EXPECT_EQ(r.view(a).attempts, 2);
  EXPECT_EQ(r.view(a).attained, 100);  // kept across the restart
}

// A restartable failure counts in `failures`, keeps the job, and its second attempt runs.
TEST(SchedulerLifecycle, RestartableFailureRequeuesTheJob) {
  Rig r("fifo", 1, 4);
  const uint32_t a = r.Submit(AJob(0).gpus(4).walltime(300));
  EXPECT_EQ(r.Cycle(0), "S0 ");
  r.s->Fail(a, 30, FailureKind::kHardware, true);
  EXPECT_EQ(r.view(a).failures, 1);
  EXPECT_EQ(r.Cycle(30), "S0 ");
  EXPECT_EQ(r.view(a).attempts, 2);
}

// ---- progress and estimates re-key EASY's reservation
//
// One 8-GPU node. A (6 GPUs, walltime 1000) runs from 0. H (8 GPUs) is the blocked head: its
// shadow time is A's believed end, 1000. B (2 GPUs, walltime 500) arrives at 110 and fits the 2
// free GPUs; it would end at 610.
//   * no report: 610 ≤ 1000, B is backfilled at 110;
//   * A reports 50 of 100 steps at t=100: 50 steps in 100 s → 50 left take 100 s → A ends at
//     200 = H's new shadow; B would end at 610 > 200 on H's reserved node: B waits.
TEST(SchedulerLifecycle, ProgressReportRekeysEasyReservation) {
  for (bool report : {false, true}) {
    SCOPED_TRACE(report ? "with report" : "without report");
    Rig r("easy", 1, 8);
    const uint32_t a = r.Submit(AJob(0).gpus(6).walltime(1000));
    EXPECT_EQ(r.Cycle(0), "S0 ");
    r.Submit(AJob(1).gpus(8).walltime(1000).at(1));
    EXPECT_EQ(r.Cycle(1), "");  // H blocked
    if (report) {
      r.s->ReportProgress(a, 100, Progress{50, 100, 100});
      EXPECT_EQ(r.view(a).est_end, 200);
      EXPECT_EQ(r.view(a).est_source, EstimateSource::kReported);
    }
    const uint32_t b = r.Submit(AJob(2).gpus(2).walltime(500).at(110));
    r.Cycle(110);
    EXPECT_EQ(r.view(b).running, !report);
  }
}

// ---- SRTF on belief (srtf:estimator=...): a progress report decides a preemption
//
// One 8-GPU node. A (8 GPUs, estimate 1000) runs from 0. B (8 GPUs, estimate 500) arrives at 110.
//   * no report: A's believed remaining is 1000 − 110 = 890 > 500: A is preempted for B, and
//     waits with its believed remaining work plus the restart it costs (PreemptionOverhead
//     of 8 GPUs, 30 s): 890 + 30 = 920, as its estimate;
//   * A reports 80 of 100 steps at t=100: 80 steps in 100 s → 20 left take 25 s → believed end
//     125, remaining 15 at 110 < 500: A keeps its GPUs, B waits.
TEST(SchedulerLifecycle, ProgressReportDecidesBelievedSrtfPreemption) {
  for (bool report : {false, true}) {
    SCOPED_TRACE(report ? "with report" : "without report");
    Rig r("srtf:estimator=walltime", 1, 8);
    const uint32_t a = r.Submit(AJob(0).gpus(8).walltime(1000));
    EXPECT_EQ(r.Cycle(0), "S0 ");
    if (report) r.s->ReportProgress(a, 100, Progress{80, 100, 100});
    const uint32_t b = r.Submit(AJob(1).gpus(8).walltime(500).at(110));
    if (report) {
      EXPECT_EQ(r.Cycle(110), "");
      EXPECT_EQ(r.view(a).est_end, 125);
    } else {
      EXPECT_EQ(r.Cycle(110), "P0 S1 ");
      EXPECT_EQ(r.view(a).estimate, 920);
      EXPECT_TRUE(r.view(b).running);
    }
  }
}

// ---- the greedy walk passes jobs that cannot fit when the PostFilter rejects them
//
// Two 4-GPU nodes. A1 (2 GPUs, estimate 1000) and A2 (2, 100) fill node 0 (consolidate), B1
// (2, 1000) and B2 (2, 100) node 1. C (4 GPUs, 500) and D (4, 600) arrive at 10: no node has
// 4 free GPUs, and preempting every longer job (A1, B1: 990 and 992 s left) frees only 2 on each node,
// so SRTF rejects both without placing them; the VC's blocking reason is still the placer's
// for the last of them (0 free GPUs < 4). At 100 A2 and B2 end: preempting B1 (the longest:
// 1002 − 100 = 902 left > 500) gives node 1 its 4 GPUs for C, then A1 (900 > 600) node 0 to D.
TEST(SchedulerLifecycle, SrtfRejectsWhatPreemptingCannotPlaceAndKeepsTheReason) {
  Rig r("srtf:estimator=walltime", 2, 4);
  const uint32_t a1 = r.Submit(AJob(0).gpus(2).walltime(1000));
  EXPECT_EQ(r.Cycle(0), "S0 ");
  const uint32_t a2 = r.Submit(AJob(1).gpus(2).walltime(100).at(1));
  EXPECT_EQ(r.Cycle(1), "S1 ");
  const uint32_t b1 = r.Submit(AJob(2).gpus(2).walltime(1000).at(2));
  EXPECT_EQ(r.Cycle(2), "S2 ");
  const uint32_t b2 = r.Submit(AJob(3).gpus(2).walltime(100).at(3));
  EXPECT_EQ(r.Cycle(3), "S3 ");
  ASSERT_EQ(r.view(a2).alloc[0].node, r.view(a1).alloc[0].node);
  ASSERT_EQ(r.view(b2).alloc[0].node, r.view(b1).alloc[0].node);
  const uint32_t c = r.Submit(AJob(4).gpus(4).walltime(500).at(10));
  const uint32_t d = r.Submit(AJob(5).gpus(4).walltime(600).at(10));
  EXPECT_EQ(r.Cycle(10), "");
  EXPECT_EQ(std::string(r.s->last_block(VcId(0)).reason), "not enough free GPUs in the VC");
  EXPECT_EQ(r.s->last_block(VcId(0)).plugin, "consolidate");
  r.s->Finish(a2, 100);
  r.s->Finish(b2, 100);
  EXPECT_EQ(r.Cycle(100), "P2 S" + std::to_string(c) + " P0 S" + std::to_string(d) + " ");
  EXPECT_EQ(r.view(c).alloc[0].node, NodeId(1));
  EXPECT_EQ(r.view(d).alloc[0].node, NodeId(0));
}

// Against the same policy whose PostFilter never rejects (every job that cannot fit goes
// through Place and the PostFilter's Run, as before Rejects existed), the decisions are the
// same, instant by instant: SRTF on walltime beliefs, 8 nodes × 8 GPUs offered about 1.5× its
// GPUs, single-node jobs of 1-8 GPUs, whole-node jobs of 2 and 4 nodes and 2 × 4-GPU jobs
// (which may fit without an idle node, so they are never passed unplaced); each running job
// ends at its believed end (the driver's truth here).
class ForwardingPostFilter final : public PostFilterPlugin {
 public:
  ForwardingPostFilter(std::unique_ptr<PostFilterPlugin> inner, bool rejects, bool settles = false)
      : inner_(std::move(inner)), rejects_(rejects), settles_(settles) {}
  std::string_view name() const override { return inner_->name(); }
  bool MayPlaceUnfitting(SchedulerHandle& h, uint32_t slot) override { return inner_->MayPlaceUnfitting(h, slot); }
  bool Rejects(SchedulerHandle& h, uint32_t slot) override {
    const bool no = rejects_ && inner_->Rejects(h, slot);
    rejected += no;
    return no;
  }
  bool rejects_along_class() const override { return rejects_ && inner_->rejects_along_class(); }
  std::optional<SortKey> UnfitKeyBound(SchedulerHandle& h, VcId vc) override {
    return rejects_ ? inner_->UnfitKeyBound(h, vc) : std::nullopt;
  }
  bool failures_persist() const override { return settles_ && inner_->failures_persist(); }
  bool needs_true_end_order() const override { return inner_->needs_true_end_order(); }
  bool reads_running_by_est_end() const override { return inner_->reads_running_by_est_end(); }
  Next Run(SchedulerHandle& h, uint32_t slot, bool* placed) override { return inner_->Run(h, slot, placed); }
  uint64_t rejected = 0;  // jobs Rejects passed (those a walk passed along a class not counted)

 private:
  std::unique_ptr<PostFilterPlugin> inner_;
  bool rejects_, settles_;
};

struct WalkRun {
  std::string decisions;  // "t:S<slot>" / "t:P<slot>", in order, and each instant's blocking reason
  uint64_t rejected = 0, preempted = 0;
};

// The truth of trace jobs for the oracle runs (SimTruth's rule for them): `duration` seconds
// of work, kept across preemptions, plus the core's restart overhead at each preemption.
class TraceTruth final : public TruthModel {
 public:
  Duration Remaining(uint32_t slot) const override { return e_.at(slot).remaining; }
  Time TrueEnd(uint32_t slot) const override { return e_.at(slot).started + e_.at(slot).remaining; }
  void Submitted(uint32_t slot, const Job& job, Time) override { At(slot) = Entry{job.duration, kNoTime, job.gpus}; }
  void Started(uint32_t slot, Time now) override { At(slot).started = now; }
  void Stopped(uint32_t slot, Time now, EndCause cause) override {
    Entry& e = At(slot);
    if (e.started != kNoTime) e.remaining -= now - e.started;
    if (cause == EndCause::kPreempted) e.remaining += PreemptionOverhead(e.gpus);
    e.started = kNoTime;
  }
  Duration RestartCost(uint32_t) const override { return 0; }

 private:
  struct Entry {
    Duration remaining = 0;
    Time started = kNoTime;
    uint32_t gpus = 0;
  };
  Entry& At(uint32_t slot) {
    if (slot >= e_.size()) e_.resize(slot + 1);
    return e_[slot];
  }
  std::vector<Entry> e_;
};

// `policy`: "srtf:estimator=walltime" (beliefs; jobs end at their believed end) or "srtf"
// (the oracle, with a TraceTruth; jobs end at their true end).
// `settles`: the walk may also pass the jobs of a settled VC (failures_persist).
WalkRun DriveSrtf(const std::string& policy, bool rejects, uint64_t seed, bool settles = false) {
  Cluster cluster;
  AddVc(&cluster, "a", 8, 8);
  auto parts = MakePolicy(policy, 1);
  EXPECT_TRUE(parts.ok());
  auto post = std::make_unique<ForwardingPostFilter>(std::move(parts->post), rejects, settles);
  ForwardingPostFilter* fwd = post.get();
  parts->post = std::move(post);
  auto placer = MakePlacer("consolidate", 1);
  Scheduler s(cluster, false, false, std::move(*parts), std::move(*placer));
  TraceTruth truth;
  const bool oracle = policy == "srtf";
  if (oracle) s.AttachTruth(&truth);
  std::deque<Job> jobs;
  uint64_t x = seed;
  auto next = [&]() { return (x = x * 6364136223846793005ULL + 1442695040888963407ULL) >> 33; };
  const uint32_t sizes[][2] = {{1, 0}, {1, 0}, {2, 0}, {4, 0}, {8, 0}, {8, 0}, {16, 2}, {32, 4}, {8, 2}};  // (GPUs, nodes)
  Time t = 0;
  for (uint32_t i = 0; i < 800; ++i) {
    t += static_cast<Time>(next() % 100);
    const auto& sz = sizes[next() % 9];
    const Duration wall = 60 + static_cast<Duration>(next() % (next() % 4 == 0 ? 20000 : 1500));
    jobs.push_back(AJob(i).gpus(sz[0]).nodes(static_cast<uint16_t>(sz[1])).walltime(wall).runs(wall).at(t).job());
  }
  WalkRun run;
  std::set<std::pair<Time, uint32_t>> ends;  // running jobs by believed end
  std::vector<Time> end_of(jobs.size(), kNoTime);
  std::vector<Decision> out;
  size_t arrived = 0;
  while (arrived < jobs.size() || !ends.empty()) {
    Time now = arrived < jobs.size() ? jobs[arrived].submit : ends.begin()->first;
    if (!ends.empty()) now = std::min(now, ends.begin()->first);
    while (!ends.empty() && ends.begin()->first == now) {
      s.Finish(ends.begin()->second, now);
      ends.erase(ends.begin());
    }
    for (; arrived < jobs.size() && jobs[arrived].submit == now; ++arrived)
      EXPECT_TRUE(s.Submit(&jobs[arrived], VcId(0), 0, static_cast<uint32_t>(arrived), now).ok());
    out.clear();
    s.RunCycle(now, &out);
    for (const Decision& dec : out) {
      std::visit(Overloaded{[&](const StartDecision& st) {
                              end_of[st.slot] = oracle ? truth.TrueEnd(st.slot) : s.view(st.slot).est_end;
                              ends.insert({end_of[st.slot], st.slot});
                              run.decisions += std::to_string(now) + ":S" + std::to_string(st.slot) + " ";
                            },
                            [&](const PreemptDecision& p) {
                              ends.erase({end_of[p.slot], p.slot});
                              ++run.preempted;
                              run.decisions += std::to_string(now) + ":P" + std::to_string(p.slot) + " ";
                            }},
                 dec);
    }
    const PluginStatus block = s.last_block(VcId(0));
    if (!block.ok()) run.decisions += std::string(block.reason) + " ";
  }
  run.rejected = fwd->rejected;
  return run;
}

TEST(SchedulerLifecycle, SrtfRejectingUnfitJobsKeepsEveryDecision) {
  for (uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const WalkRun fast = DriveSrtf("srtf:estimator=walltime", true, seed);
    const WalkRun walk = DriveSrtf("srtf:estimator=walltime", false, seed);
    EXPECT_EQ(fast.decisions, walk.decisions);
    EXPECT_EQ(walk.rejected, 0u);
    EXPECT_GT(fast.rejected, 1000u);  // the shortcut is taken, and often
    EXPECT_GT(fast.preempted, 20u);   // and the runs preempt
  }
}

// The same for the oracle SRTF, which also answers whole-node demands from the busy-node
// index (per-node true ends), caches its counts per VC version (falling counts), says which
// class heads may preempt by a key bound (UnfitKeyBound) and whose walk passes the rest of a
// single-node class once one of its jobs was rejected (rejects_along_class): every decision
// equals that of the walk that asks MayPlaceUnfitting per head and places and runs every job.
TEST(SchedulerLifecycle, OracleSrtfRejectingUnfitJobsKeepsEveryDecision) {
  for (uint64_t seed : {1, 2, 3, 4}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const WalkRun fast = DriveSrtf("srtf", true, seed);
    const WalkRun walk = DriveSrtf("srtf", false, seed);
    EXPECT_EQ(fast.decisions, walk.decisions);
    EXPECT_EQ(walk.rejected, 0u);
    EXPECT_GT(fast.rejected, 500u);
    EXPECT_GT(fast.preempted, 20u);
  }
}

// Settled walks (failures_persist): at an instant where nothing but arrivals changed the VC
// since a walk that ended without a preemption, the walk passes the jobs that waited then
// without asking Rejects, Place or Run. Against the walk that asks for each (both reject
// unfit jobs as above): the same decisions and the same blocking reason after every
// instant, on beliefs and on the oracle, with fewer jobs put to Rejects.
TEST(SchedulerLifecycle, SrtfSettledWalksKeepEveryDecisionAndReason) {
  for (const char* policy : {"srtf", "srtf:estimator=walltime"}) {
    for (uint64_t seed : {1, 2, 3, 4}) {
      SCOPED_TRACE(std::string(policy) + " seed " + std::to_string(seed));
      const WalkRun settled = DriveSrtf(policy, true, seed, true);
      const WalkRun asked = DriveSrtf(policy, true, seed, false);
      EXPECT_EQ(settled.decisions, asked.decisions);
      EXPECT_GT(settled.preempted, 20u);
      EXPECT_LT(settled.rejected * 10, asked.rejected * 9);  // > 10 % of the Rejects calls saved
    }
  }
}

// ---- blocked-head memo: a plain blocking walk does not re-place a head that failed while
// its VC's state is unchanged (Scheduler::CyclePlainBlocking)

// Forwards to the consolidating placer, counting calls; `pure` as given (false: the walk
// must ask it every time, as for the random placer).
class CountingPlacer final : public PlacePlugin {
 public:
  explicit CountingPlacer(bool pure) : inner_(Consolidating()), pure_(pure) {}
  std::string_view name() const override { return inner_->name(); }
  PluginStatus Place(const SchedJob& j, const ClusterState& st, const NodeMask* blocked, Allocation* out) override {
    ++calls;
    return inner_->Place(j, st, blocked, out);
  }
  bool pure() const override { return pure_; }
  uint64_t calls = 0;

 private:
  static std::unique_ptr<Placer> Consolidating() {
    auto p = MakePlacer("consolidate", 1);
    return std::move(*p);
  }
  std::unique_ptr<Placer> inner_;
  bool pure_;
};

// Arrivals behind a blocked head do not place it again; a drain's end (a state change that
// releases no job) does. One VC of 2 nodes × 4 GPUs, node 0 drained.
TEST(SchedulerCycle, BlockedHeadIsPlacedAgainOnlyAfterTheStateChanges) {
  Cluster cluster;
  AddVc(&cluster, "a", 2, 4);
  auto parts = MakePolicy("fifo", 1);
  ASSERT_TRUE(parts.ok());
  auto placer = std::make_unique<CountingPlacer>(true);
  CountingPlacer* counted = placer.get();
  Scheduler s(cluster, false, false, std::move(*parts), std::move(placer));
  std::deque<Job> jobs;
  std::vector<Decision> out;
  auto submit = [&](uint32_t gpus, Time t) {
    jobs.push_back(AJob(static_cast<uint32_t>(jobs.size())).gpus(gpus).at(t).job());
    return *s.Submit(&jobs.back(), VcId(0), 0, static_cast<uint32_t>(jobs.size() - 1), t);
  };
  auto cycle = [&](Time t) {
    out.clear();
    s.RunCycle(t, &out);
    return out.size();
  };
  s.SetNodeDrained(NodeId(0), true);
  submit(4, 0);
  EXPECT_EQ(cycle(0), 1u);  // on node 1: 1 placement
  const uint32_t head = submit(4, 1);
  EXPECT_EQ(cycle(1), 0u);  // node 0 drained, node 1 full: placement 2 fails
  const PluginStatus first = s.last_block(VcId(0));
  EXPECT_FALSE(first.ok());
  EXPECT_EQ(counted->calls, 2u);
  submit(1, 2);
  EXPECT_EQ(cycle(2), 0u);  // FIFO: the 1-GPU job waits behind the head, which is not placed again
  EXPECT_EQ(counted->calls, 2u);
  EXPECT_STREQ(s.last_block(VcId(0)).reason, first.reason);  // the reason is still reported
  EXPECT_EQ(s.last_block(VcId(0)).plugin, "consolidate");
  s.SetNodeDrained(NodeId(0), false);
  EXPECT_EQ(cycle(3), 1u);  // placement 3: the head fits node 0; placement 4: the 1-GPU job does not
  EXPECT_TRUE(s.view(head).running);
  EXPECT_EQ(counted->calls, 4u);
}

// Random FIFO runs (8 nodes × 8 GPUs, single-node, whole-node and 2-node jobs, drains, slots
// reused): with the memo every decision and every cycle's blocking reason is that of the same
// placer asked every time, and the memo saves at least a quarter of the placements (≈ 31 %).
struct FifoRun {
  std::string decisions;  // "t:S<slot>" and, for each instant, the VC's blocking reason
  uint64_t placements = 0;
};

FifoRun DriveFifo(bool pure, uint64_t seed) {
  Cluster cluster;
  AddVc(&cluster, "a", 8, 8);
  auto parts = MakePolicy("fifo", 1);
  EXPECT_TRUE(parts.ok());
  auto placer = std::make_unique<CountingPlacer>(pure);
  CountingPlacer* counted = placer.get();
  Scheduler s(cluster, false, false, std::move(*parts), std::move(placer));
  std::deque<Job> jobs;
  uint64_t x = seed;
  auto next = [&]() { return (x = x * 6364136223846793005ULL + 1442695040888963407ULL) >> 33; };
  const uint32_t sizes[][2] = {{1, 0}, {1, 0}, {2, 0}, {4, 0}, {8, 0}, {16, 2}, {8, 2}};  // (GPUs, nodes)
  Time t = 0;
  for (uint32_t i = 0; i < 1500; ++i) {
    t += static_cast<Time>(next() % 15);
    const auto& sz = sizes[next() % 7];
    const Duration wall = static_cast<Duration>(60 + next() % 2000);
    jobs.push_back(AJob(i).gpus(sz[0]).nodes(static_cast<uint16_t>(sz[1])).walltime(wall).at(t).job());
  }
  FifoRun run;
  std::set<std::pair<Time, uint32_t>> ends;  // running jobs by end (their walltime here)
  std::vector<Decision> out;
  size_t arrived = 0;
  while (arrived < jobs.size() || !ends.empty()) {
    Time now = arrived < jobs.size() ? jobs[arrived].submit : ends.begin()->first;
    if (!ends.empty()) now = std::min(now, ends.begin()->first);
    while (!ends.empty() && ends.begin()->first == now) {
      s.Finish(ends.begin()->second, now);
      s.Release(ends.begin()->second);
      ends.erase(ends.begin());
    }
    for (; arrived < jobs.size() && jobs[arrived].submit == now; ++arrived) {
      EXPECT_TRUE(s.Submit(&jobs[arrived], VcId(0), 0, static_cast<uint32_t>(arrived), now).ok());
      if (next() % 50 == 0) s.SetNodeDrained(NodeId(static_cast<uint32_t>(next() % 8)), next() % 2 == 0);
    }
    out.clear();
    s.RunCycle(now, &out);
    for (const Decision& dec : out) {
      const uint32_t slot = SlotOf(dec);
      ends.insert({now + s.view(slot).job->walltime, slot});
      run.decisions += std::to_string(now) + ":S" + std::to_string(slot) + " ";
    }
    run.decisions += std::string(s.last_block(VcId(0)).reason) + ";";
  }
  run.placements = counted->calls;
  return run;
}

TEST(SchedulerCycle, BlockedHeadMemoKeepsEveryDecision) {
  for (uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const FifoRun memo = DriveFifo(true, seed);
    const FifoRun asked = DriveFifo(false, seed);
    EXPECT_EQ(memo.decisions, asked.decisions);
    EXPECT_LT(memo.placements * 4, asked.placements * 3);  // a quarter of the placements saved at least
  }
}

// The believed SRTF orders pending jobs by believed remaining time: the shorter estimate
// first, whatever the arrival order.
TEST(SchedulerLifecycle, BelievedSrtfOrdersByEstimate) {
  Rig r("srtf:estimator=walltime", 1, 4);
  const uint32_t blocker = r.Submit(AJob(0).gpus(4).walltime(100));
  EXPECT_EQ(r.Cycle(0), "S0 ");  // 100 < the others: never preempted by them
  const uint32_t x = r.Submit(AJob(1).gpus(4).walltime(300).at(1));
  const uint32_t y = r.Submit(AJob(2).gpus(4).walltime(200).at(2));
  EXPECT_EQ(r.Cycle(2), "");
  r.s->Finish(blocker, 100);
  EXPECT_EQ(r.Cycle(100), "S" + std::to_string(y) + " ");
  EXPECT_FALSE(r.view(x).running);
  EXPECT_TRUE(CheckLiveSupport(r.s->policy()).ok());  // no oracle: runs live
}

// UpdateEstimate on a pending job re-sorts it (QSSF orders by estimate × GPUs).
TEST(SchedulerLifecycle, UpdateEstimateResortsAPendingJob) {
  Rig r("qssf", 1, 4);
  const uint32_t blocker = r.Submit(AJob(0).gpus(4).walltime(100));
  EXPECT_EQ(r.Cycle(0), "S0 ");
  const uint32_t x = r.Submit(AJob(1).gpus(4).walltime(300).at(1));  // key 1200
  const uint32_t y = r.Submit(AJob(2).gpus(4).walltime(200).at(2));  // key 800: first
  r.s->UpdateEstimate(x, 3, 100, EstimateSource::kReported);       // key 400: now first
  r.Cycle(3);
  r.s->Finish(blocker, 100);
  EXPECT_EQ(r.Cycle(100), "S" + std::to_string(x) + " ");
  EXPECT_FALSE(r.view(y).running);
}

// ---- cadence: decision ticks are the core's (tiresias:preset=lucid decides every 60 s)

TEST(SchedulerCadence, PeriodicPolicyCyclesOnlyAtTicks) {
  Rig r("tiresias:preset=lucid", 1, 4, false);
  r.Submit(AJob(0).gpus(1).at(7));
  EXPECT_EQ(r.s->NextDecisionTime(7), 60);  // the next multiple of 60 after 7
  EXPECT_EQ(r.Cycle(7), "");                // an arrival between ticks decides nothing
  EXPECT_EQ(r.Cycle(60), "S0 ");
  EXPECT_EQ(r.s->NextDecisionTime(60), kNoTime);  // nothing pending: no tick due
}

// Ticks that fall between two RunCycle calls (a daemon's cycles need not land on every
// tick): a due tick (jobs waiting) runs first at its own time; later ticks of the same gap
// are folded into the call; a tick with nothing pending is not due and is never caught up.
// tiresias:preset=lucid (ticks every 60 s), one node of 4 GPUs.
TEST(SchedulerCadence, DueTickBetweenTwoCallsRunsAtItsOwnTime) {
  struct Step {
    Time t;
    uint32_t submit_gpus;   // > 0: a job of that size is submitted at t (no cycle)
    const char* decisions;  // of the cycle at t
    Time caught_up;         // CycleRun::caught_up
    bool at_tick;
    Time next;              // NextDecisionTime(t) after the cycle
  };
  struct Case {
    const char* name;
    std::vector<Step> steps;
  };
  const Case cases[] = {
      {"every tick called: nothing to catch up",
       {{7, 1, "", 0, false, 0}, {7, 0, "", kNoTime, false, 60}, {60, 0, "S0 ", kNoTime, true, kNoTime}}},
      {"the tick at 60 falls between 7 and 75: it starts J0 at 60",
       {{7, 1, "", 0, false, 0}, {7, 0, "", kNoTime, false, 60}, {75, 0, "S0 ", 60, false, kNoTime}}},
      {"gap 7..150: tick 60 runs (J0 on all 4 GPUs), tick 120 is folded into 150, J1 waits for 180",
       {{7, 4, "", 0, false, 0},
        {7, 4, "", 0, false, 0},
        {7, 0, "", kNoTime, false, 60},
        {150, 0, "S0 ", 60, false, 180}}},
      {"gap 7..120 ending on a tick: tick 60 starts J0, tick 120 starts nothing new (J1 blocked)",
       {{7, 4, "", 0, false, 0},
        {7, 4, "", 0, false, 0},
        {7, 0, "", kNoTime, false, 60},
        {120, 0, "S0 ", 60, true, 180}}},
      {"nothing pending at 120: not due, a job submitted at 130 waits for 180",
       {{7, 1, "", 0, false, 0},
        {7, 0, "", kNoTime, false, 60},
        {60, 0, "S0 ", kNoTime, true, kNoTime},
        {130, 1, "", 0, false, 0},
        {130, 0, "", kNoTime, false, 180},
        {180, 0, "S1 ", kNoTime, true, kNoTime}}},
      {"nothing pending after the cycle at 60, no NextDecisionTime query: tick 120 is not due",
       {{7, 1, "", 0, false, 0},
        {60, 0, "S0 ", kNoTime, true, kNoTime},
        {100, 1, "", 0, false, 0},
        {130, 0, "", kNoTime, false, 180}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Rig r("tiresias:preset=lucid", 1, 4, false);
    uint32_t id = 0;
    for (const Step& st : c.steps) {
      SCOPED_TRACE(st.t);
      if (st.submit_gpus > 0) {
        r.Submit(AJob(id++).gpus(st.submit_gpus).at(st.t));
        continue;
      }
      EXPECT_EQ(r.Cycle(st.t), st.decisions);
      EXPECT_EQ(r.last.caught_up, st.caught_up);
      EXPECT_EQ(r.last.at_tick, st.at_tick);
      EXPECT_EQ(r.s->NextDecisionTime(st.t), st.next);
    }
  }
  // A caught-up start is dated at its tick (what attempts and the journal record).
  Rig r("tiresias:preset=lucid", 1, 4, false);
  const uint32_t j0 = r.Submit(AJob(0).gpus(1).at(7));
  EXPECT_EQ(r.Cycle(7), "");
  EXPECT_EQ(r.Cycle(75), "S0 ");
  EXPECT_EQ(r.view(j0).started, 60);
}

// ---- answers

// PredictStart: one 4-GPU node, A (4 GPUs, walltime 100) runs from 0; B (4 GPUs, walltime
// 50) and C (2 GPUs) wait in FIFO order: B at A's believed end 100, C at B's end 150.
TEST(SchedulerAnswers, PredictStartFollowsThePolicysOrderAndBeliefs) {
  Rig r("fifo", 1, 4);
  r.Submit(AJob(0).gpus(4).walltime(100));
  EXPECT_EQ(r.Cycle(0), "S0 ");
  const uint32_t b = r.Submit(AJob(1).gpus(4).walltime(50).at(1));
  const uint32_t c = r.Submit(AJob(2).gpus(2).walltime(10).at(2));
  r.Cycle(2);
  const StartPrediction pb = r.s->PredictStart(b, 2), pc = r.s->PredictStart(c, 2);
  EXPECT_EQ(pb.kind, PredictionKind::kPredicted);
  EXPECT_EQ(pb.at, 100);
  EXPECT_EQ(pb.ahead, 0u);
  EXPECT_EQ(pc.at, 150);
  EXPECT_EQ(pc.ahead, 1u);
  EXPECT_FALSE(pb.why.ok());  // the VC's blocking reason
  EXPECT_EQ(r.s->PredictStart(0, 2).kind, PredictionKind::kRunning);
}

// The predicted start is a dry run of the policy itself; the list schedule it replaced (each
// job in queue order at the first time the VC's free GPUs hold it) was wrong in each case:
struct PredictCase {
  const char* what;
  uint32_t job;       // index of the job in the scenario's submission order
  Time asked_at;      // the prediction is asked at this time (the scenario's state then)
  Time want;          // the dry run's answer
  Time list_schedule; // what the old list schedule said
};

// EASY on one 4-GPU node (walltime estimates):
//   A (2 GPUs, wt 100) runs from 0; B (4 GPUs, wt 50) arrives at 1: head, reservation at A's
//   end 100; C (2 GPUs, wt 30) arrives at 5; D (2, wt 40) at 6; E (2, wt 80) at 7.
//   * C asked at 5 before the cycle: backfilled now, 5 + 30 = 35 <= 100 (list: behind B, 150).
//   * D asked at 7: C ends at 35, then D backfills at 35 (35 + 40 = 75 <= 100) (list: 150).
//   * E asked at 7: at 75 D ends but 75 + 80 = 155 > 100 and the only node is reserved for
//     B: E waits behind the reservation; B runs 100..150; E at 150 (list: 150 too).
//   * B asked at 7: at A's believed end, 100.
TEST(SchedulerAnswers, PredictedStartIsADryRunOfEasyBackfill) {
  const PredictCase cases[] = {
      {"C backfilled now", 2, 5, 5, 150},
      {"D backfilled later", 3, 7, 35, 150},
      {"E behind the reservation", 4, 7, 150, 150},
      {"B, the head, at its reservation", 1, 7, 100, 100},
  };
  for (const PredictCase& c : cases) {
    SCOPED_TRACE(c.what);
    Rig r("easy", 1, 4);
    uint32_t slot[5];
    slot[0] = r.Submit(AJob(0).gpus(2).walltime(100));
    EXPECT_EQ(r.Cycle(0), "S0 ");
    slot[1] = r.Submit(AJob(1).gpus(4).walltime(50).at(1));
    EXPECT_EQ(r.Cycle(1), "");
    slot[2] = r.Submit(AJob(2).gpus(2).walltime(30).at(5));
    if (c.asked_at == 5) {
      const StartPrediction p = r.s->PredictStart(slot[c.job], 5);
      EXPECT_EQ(p.kind, PredictionKind::kPredicted);
      EXPECT_EQ(p.at, c.want);
      EXPECT_EQ(p.ahead, 1u);  // B is ahead of it in FIFO order, yet it starts first
      continue;
    }
    EXPECT_EQ(r.Cycle(5), "S2 ");
    slot[3] = r.Submit(AJob(3).gpus(2).walltime(40).at(6));
    slot[4] = r.Submit(AJob(4).gpus(2).walltime(80).at(7));
    EXPECT_EQ(r.Cycle(7), "");
    const StartPrediction p = r.s->PredictStart(slot[c.job], 7);
    EXPECT_EQ(p.kind, PredictionKind::kPredicted);
    EXPECT_EQ(p.at, c.want) << "the list schedule said " << c.list_schedule;
  }
}

// Tiresias (thresholds=100 GPU-s, no estimator: walltimes are the beliefs) on one 4-GPU
// node: A (4 GPUs, wt 100) runs from 0; B (4 GPUs, wt 20) arrives at 10. A reaches 100 GPU-s
// at 100 / 4 = 25 and is demoted to Q1, so B (Q0) preempts it at 25 and ends at 45; A
// restarts at 45 with its believed remaining 100 − 25 plus the 40-s restart overhead of
// Tiresias (LucidPreemptionOverhead, 4 GPUs) = 115, ending at 160. The list schedule put B
// at A's believed end, 100.
TEST(SchedulerAnswers, PredictedStartFollowsTiresiasDemotionsAndPreemptions) {
  Rig r("tiresias:thresholds=100", 1, 4, /*recording_estimator=*/false);
  const uint32_t a = r.Submit(AJob(0).gpus(4).walltime(100));
  EXPECT_EQ(r.Cycle(0), "S0 ");
  const uint32_t b = r.Submit(AJob(1).gpus(4).walltime(20).at(10));
  EXPECT_EQ(r.Cycle(10), "");
  const StartPrediction p = r.s->PredictStart(b, 10);
  EXPECT_EQ(p.kind, PredictionKind::kPredicted);
  EXPECT_EQ(p.at, 25);
  // The real run: the demotion at 25 preempts A for B, as predicted.
  EXPECT_EQ(r.s->NextDecisionTime(10), 25);
  EXPECT_EQ(r.Cycle(25), "P0 S1 ");
  // A, now pending, restarts when B ends (its believed end 25 + 20 = 45).
  const StartPrediction pa = r.s->PredictStart(a, 25);
  EXPECT_EQ(pa.kind, PredictionKind::kPredicted);
  EXPECT_EQ(pa.at, 45);
  EXPECT_EQ(r.view(a).estimate, -1);  // the dry run froze beliefs in its copy only
}

// One dry run serves every job until the next verb or cycle; a verb invalidates it.
TEST(SchedulerAnswers, ForecastIsCachedUntilTheNextVerb) {
  Rig r("fifo", 1, 4);
  const uint32_t a = r.Submit(AJob(0).gpus(4).walltime(100));
  EXPECT_EQ(r.Cycle(0), "S0 ");
  const uint32_t b = r.Submit(AJob(1).gpus(4).walltime(50).at(1));
  r.Cycle(1);
  const std::vector<StartPrediction>* f = &r.s->Forecast(1);
  EXPECT_EQ(f, &r.s->Forecast(1));
  EXPECT_EQ((*f)[b].at, 100);
  r.s->UpdateEstimate(a, 2, 30, EstimateSource::kReported);  // A now believed to end at 30
  EXPECT_EQ(r.s->PredictStart(b, 2).at, 30);
  r.s->Withdraw(a, 3);
  r.s->Release(a);
  EXPECT_EQ(r.s->PredictStart(b, 3).at, 3);  // the next cycle (at 3, none ran yet) starts it
}

// The closed set of "no time": a job that can never start on what is known, and a policy
// whose plugin cannot copy its state (an explicit answer, never another rule).
class UncopyableSort final : public QueueSortPlugin {
 public:
  std::string_view name() const override { return "uncopyable"; }
  SortKey Key(const SchedJob& j, Time) override { return {j.job->submit, 0}; }
};

TEST(SchedulerAnswers, NoPredictionIsSaidExplicitly) {
  {
    SCOPED_TRACE("never: the only node is powered down");
    Rig r("fifo", 1, 4);
    r.s->SetNodePowered(NodeId(0), false);
    const uint32_t a = r.Submit(AJob(0).gpus(4).walltime(100));
    EXPECT_EQ(r.Cycle(0), "");
    const StartPrediction p = r.s->PredictStart(a, 0);
    EXPECT_EQ(p.kind, PredictionKind::kNever);
    EXPECT_EQ(p.at, kNoTime);
    EXPECT_EQ(PredictionKindName(p.kind), "never");
  }
  {
    SCOPED_TRACE("not copyable");
    Cluster cluster;
    AddVc(&cluster, "a", 1, 4);
    auto parts = MakePolicy("fifo", 1);
    ASSERT_TRUE(parts.ok());
    parts->sort = std::make_unique<UncopyableSort>();
    auto placer = MakePlacer("consolidate", 1);
    Scheduler s(cluster, false, false, std::move(*parts), std::move(*placer));
    Job big;
    big.gpus = 4;
    big.walltime = 10;
    std::vector<Decision> out;
    ASSERT_TRUE(s.Submit(&big, VcId(0), 0, 0, 0).ok());
    Job other = big;
    auto slot = s.Submit(&other, VcId(0), 0, 1, 0);
    s.RunCycle(0, &out);
    const StartPrediction p = s.PredictStart(*slot, 0);
    EXPECT_EQ(p.kind, PredictionKind::kNotCopyable);
    EXPECT_EQ(p.blocker, "uncopyable");
    EXPECT_EQ(DescribePrediction(p), "no prediction: plugin 'uncopyable' cannot copy its state for a dry run");
  }
}

TEST(SchedulerAnswers, LiveModeRefusesOraclePoliciesAndTheProfiler) {
  struct Case {
    const char* policy;
    const char* message;  // empty = accepted
  };
  const Case cases[] = {
      {"fifo", ""},
      {"easy", ""},
      {"tiresias", ""},
      {"lucid:estimator=user-stats,pack=false,profiler=false", ""},
      {"sjf", "policy 'sjf': its queue order 'sjf' reads true job durations (an oracle), which only `orrery simulate` knows"},
      {"srtf", "policy 'srtf': its queue order 'srtf' reads true job durations (an oracle), which only `orrery simulate` knows"},
      {"fifo:backfill=easy",
       "policy 'fifo:backfill=easy': 'easy-backfill' reserves by believed durations and the policy has no estimator, "
       "so they are the true remaining work (an oracle), which only `orrery simulate` knows; use policy 'easy' (the "
       "same backfill with walltime estimates) for live mode"},
      {"qssf", "policy 'qssf': estimator 'noisy-oracle' reads true job durations (an oracle); choose another estimator=... for live mode"},
      {"lucid:estimator=user-stats,pack=false",
       "policy 'lucid:estimator=user-stats,pack=false': Lucid's profiler stage needs a staging partition only the simulator models; add profiler=false to run it live"},
      {"easy:eval_share=0.1",
       "policy 'easy:eval_share=0.1': eval_share reserves GPUs for evaluation jobs, but live mode does not know which "
       "Slurm jobs are evaluations (no job kind): it would only cap every job; drop eval_share for live mode"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.policy);
    auto parts = MakePolicy(c.policy, 1);
    ASSERT_TRUE(parts.ok()) << parts.error().message;
    const Status st = CheckLiveSupport(*parts);
    // The simulator labels exactly the policies live mode refuses for reading the truth.
    EXPECT_EQ(parts->reads_oracle(), *c.message != 0 && std::string(c.message).find("oracle") != std::string::npos);
    if (*c.message == 0) {
      EXPECT_TRUE(st.ok()) << st.error().message;
    } else {
      ASSERT_FALSE(st.ok());
      EXPECT_EQ(st.error().message, c.message);
    }
  }
}

// ---- nodes join without a rebuild: queue, running jobs and the estimator's knowledge stay

TEST(SchedulerNodes, AddNodeKeepsQueueRunningJobsAndLearning) {
  Rig r("fifo", 1, 4);
  const uint32_t a = r.Submit(AJob(0).gpus(4).walltime(100));
  EXPECT_EQ(r.Cycle(0), "S0 ");
  const uint32_t b = r.Submit(AJob(1).gpus(4).walltime(100).at(1));
  EXPECT_EQ(r.Cycle(1), "");  // no room
  Node n = r.cluster.nodes[0];
  n.id = NodeId(1);
  n.name = "a-new";
  ASSERT_TRUE(r.s->AddNode(n).ok());
  EXPECT_EQ(r.s->cluster_state().vc_total_gpus(VcId(0)), 8u);
  EXPECT_EQ(r.s->cluster_state().vc_free_gpus(VcId(0)), 4u);  // A still holds node 0
  EXPECT_EQ(r.Cycle(2), "S" + std::to_string(b) + " ");
  EXPECT_EQ(r.view(b).alloc[0].node, NodeId(1));
  r.s->Finish(a, 100);
  EXPECT_EQ(r.est->observed.size(), 1u);
  Node bad = n;
  bad.id = NodeId(7);
  EXPECT_EQ(r.s->AddNode(bad).error().message, "AddNode: node id 7 is not the next id 2");
}

// ---- nodes of any size: size classes 0..G+1 for G = 8, 63, 64, 72 GPUs per node (a GB200
// NVL72 rack exported as one Slurm node has 72) and 65,535 (the most a node's uint16_t holds:
// class G + 1 = 65,536 is past uint16_t, which the greedy walk's class list once was). The
// classes that could fit were once a 64-bit mask shifted by the class (undefined from class 64
// on: G ≥ 63), and a ClusterState refused nodes of more than 32 GPUs.

struct NodeSizeCase {
  uint16_t g;  // GPUs per node; the VC has two such nodes
};
const NodeSizeCase kNodeSizes[] = {{8}, {63}, {64}, {72}, {65535}};

// EASY, bf_max_job_test=2 (the backfill looks at the 2 next pending jobs that could fit). At 0,
// J0 (1 GPU) and J1 (G GPUs) start, walltime 1000: node 0 has G − 1 free GPUs, node 1 none.
// At 1 arrive H, B1, B2 (2 nodes × G, class G + 1) and S (1 GPU, walltime 10). H waits for
// its reservation at 1000 (both nodes). No node is idle, so B1 and B2 cannot fit and are not
// candidates: the only one is S, which ends at 11 ≤ 1000 and starts now on node 0. (With class
// G + 1 taken for fitting, B1 and B2 fill both candidate places and S waits for 1000: main's
// 64-bit mask shifted by class 64 did so at G = 63, and UBSan reports the shift.) At 1000 J0 and
// J1 end (S ended at 11): H takes both nodes.
TEST(SchedulerNodeSizes, EasyBackfillSeesOnlyTheClassesThatFit) {
  for (const NodeSizeCase& c : kNodeSizes) {
    SCOPED_TRACE("G = " + std::to_string(c.g));
    Rig r("easy:bf_max_job_test=2", 2, c.g);
    const uint32_t j0 = r.Submit(AJob(0).gpus(1).walltime(1000));
    const uint32_t j1 = r.Submit(AJob(1).gpus(c.g).walltime(1000));
    EXPECT_EQ(r.Cycle(0), "S0 S1 ");
    const uint32_t h = r.Submit(AJob(2).gpus(2u * c.g).nodes(2).walltime(100).at(1));
    r.Submit(AJob(3).gpus(2u * c.g).nodes(2).walltime(100).at(1));
    r.Submit(AJob(4).gpus(2u * c.g).nodes(2).walltime(100).at(1));
    const uint32_t s = r.Submit(AJob(5).gpus(1).walltime(10).at(1));
    ASSERT_EQ(r.Cycle(1), "S" + std::to_string(s) + " ");
    EXPECT_EQ(r.view(s).alloc[0].node, NodeId(0));
    r.s->Finish(s, 11);
    r.s->Finish(j0, 1000);
    r.s->Finish(j1, 1000);
    EXPECT_EQ(r.Cycle(1000), "S" + std::to_string(h) + " ");
    EXPECT_EQ(r.view(h).alloc.size(), 2u);
  }
}

// Greedy FIFO (blocking=false) on two idle G-GPU nodes: A (2 nodes × G, class G + 1) fits only
// while both are idle and starts at 0; B (G GPUs, class G) and C (1 GPU) then fit nowhere and
// are not tried (nothing blocks). At 100 A ends: B takes one node whole, C the other.
TEST(SchedulerNodeSizes, GreedyWalkStartsWholeNodeAndMultiNodeJobs) {
  for (const NodeSizeCase& c : kNodeSizes) {
    SCOPED_TRACE("G = " + std::to_string(c.g));
    Rig r("fifo:blocking=false", 2, c.g);
    const uint32_t a = r.Submit(AJob(0).gpus(2u * c.g).nodes(2).walltime(100));
    r.Submit(AJob(1).gpus(c.g).walltime(100));
    r.Submit(AJob(2).gpus(1).walltime(100));
    ASSERT_EQ(r.Cycle(0), "S0 ");
    EXPECT_TRUE(r.s->last_block(VcId(0)).ok()) << r.s->last_block(VcId(0)).reason;
    r.s->Finish(a, 100);
    EXPECT_EQ(r.Cycle(100), "S1 S2 ");
    EXPECT_EQ(r.s->cluster_state().vc_free_gpus(VcId(0)), c.g - 1u);
  }
}

// A G-GPU node joins a VC of one busy 8-GPU node (the live daemon's AddNode): the classes grow
// to G + 2, and a G-GPU job (class G, admitted now that a node has G GPUs) starts on it.
TEST(SchedulerNodeSizes, ALargeNodeJoiningTakesJobsOfItsSize) {
  for (const NodeSizeCase& c : kNodeSizes) {
    SCOPED_TRACE("G = " + std::to_string(c.g));
    Rig r("fifo:blocking=false", 1, 8);
    r.Submit(AJob(0).gpus(8).walltime(100));
    EXPECT_EQ(r.Cycle(0), "S0 ");
    Node n = r.cluster.nodes[0];
    n.id = NodeId(1);
    n.name = "a-large";
    n.gpus = c.g;
    ASSERT_TRUE(r.s->AddNode(n).ok());
    EXPECT_EQ(r.s->cluster_state().vc_max_node_gpus(VcId(0)), c.g);
    const uint32_t big = r.Submit(AJob(1).gpus(c.g).walltime(100).at(1));
    EXPECT_EQ(r.Cycle(1), "S" + std::to_string(big) + " ");
    EXPECT_EQ(r.view(big).alloc[0].node, NodeId(1));
  }
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

// Shape: a plugin that halves a job's GPUs when its request does not fit the free GPUs.
class HalveWhenFull final : public ShapePlugin {
 public:
  const char* name() const override { return "halve-when-full"; }
  Shape Choose(const SchedJob& j, const ClusterState& st) override {
    Shape s = RequestedShape(*j.job);
    if (st.vc_free_gpus(j.vc) < s.gpus) s.gpus /= 2;
    return s;
  }
};

// One 8-GPU node; A (4 GPUs) runs; B asks for 8: shaped to 4, it starts now on the 4 free
// GPUs. Requeued, it asks for 8 again (pending GPUs count its request).
TEST(SchedulerShape, ShapePluginChoosesTheDemandBeforePlacement) {
  Cluster c;
  AddVc(&c, "a", 1, 8);
  auto parts = MakePolicy("fifo", 1);
  ASSERT_TRUE(parts.ok());
  parts->shape = std::make_unique<HalveWhenFull>();
  auto placer = MakePlacer("consolidate", 1);
  Scheduler s(c, false, false, std::move(*parts), std::move(*placer));
  Job a = AJob(0).gpus(4).job(), b = AJob(1).gpus(8).job();
  const uint32_t sa = *s.Submit(&a, VcId(0), 0, 0, 0);
  std::vector<Decision> out;
  s.RunCycle(0, &out);
  const uint32_t sb = *s.Submit(&b, VcId(0), 0, 1, 1);
  s.RunCycle(1, &out);
  ASSERT_TRUE(s.view(sb).running);
  EXPECT_EQ(s.view(sb).job->gpus, 4u);
  EXPECT_EQ(s.cluster_state().vc_free_gpus(VcId(0)), 0u);
  s.Requeue(sb, 10, EndCause::kRequeued);
  EXPECT_EQ(s.view(sb).job, &b);
  EXPECT_EQ(s.pending_gpu_milli(), 8000u);
  s.Finish(sa, 20);
  s.RunCycle(20, &out);  // all 8 free: B runs as asked
  EXPECT_EQ(s.view(sb).job->gpus, 8u);
}

}  // namespace
}  // namespace orrery
