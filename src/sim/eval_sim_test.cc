// Evaluation work in the simulator (docs/design/eval.md, "In the simulator"): trials whose
// load phase is timed by the storage model (shared bandwidth, node caches), CPU metric jobs
// that wait for their trials (Trace::after) and queue for CPU capacity, and the evaluation
// reservation (sched/framework/api/reserve.h). Every expected time is hand arithmetic.
#include <gtest/gtest.h>

#include "config/cluster_config.h"
#include "sched/plugins/policies.h"
#include "sim/simulator.h"

namespace orrery {
namespace {

// VC "gpu": one node of 8 GPUs; VC "cpu": one CPU-only node of 4 cores.
Cluster Tiny() {
  auto c = ParseClusterConfigString(R"(
name = "tiny"
[[vc]]
name = "gpu"
nodes = 1
gpus_per_node = 8
[[vc]]
name = "cpu"
nodes = 1
gpus_per_node = 0
cpu_milli = 4000
)",
                                    "tiny.toml");
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
  return *c;
}

// A trace under construction: jobs with phases and dependencies.
struct Builder {
  Trace t;
  Builder() {
    t.vcs.Intern("gpu");
    t.vcs.Intern("cpu");
  }
  static Phase P(PhaseKind k, int64_t secs, uint32_t gpus) {
    Phase p;
    p.kind = k;
    p.steps = secs;
    p.demand.gpus = gpus;
    p.checkpoint.on_preempt = false;
    p.checkpoint.durable_at_end = false;
    return p;
  }
  uint32_t Add(Job j, WorkSpec w, std::vector<uint32_t> after = {}) {
    j.id = JobId(static_cast<uint32_t>(t.jobs.size()));
    j.duration = w.phases.empty() ? j.duration : w.total_steps();
    t.jobs.push_back(j);
    t.work.push_back(std::move(w));
    t.after.push_back(std::move(after));
    return j.id.v;
  }
  uint32_t Train(Time submit, uint32_t gpus, Duration d) {
    Job j;
    j.vc = VcId(0);
    j.submit = submit;
    j.gpus = gpus;
    j.duration = d;
    j.kind = JobKind::kPretrain;
    return Add(j, {});
  }
  // startup 30 s, a 14 GB checkpoint (7B in bf16), `infer` s of inference, on one GPU.
  uint32_t Trial(Time submit, Duration infer, bool cacheable) {
    Job j;
    j.vc = VcId(0);
    j.submit = submit;
    j.gpus = 1;
    j.nodes = 1;
    j.kind = JobKind::kEval;
    Phase load = P(PhaseKind::kLoad, 2, 1);  // nominal: 14 GB at 10 GB/s from a cache
    load.load = LoadSpec{14e9, 7, cacheable};
    return Add(j, WorkSpec{{P(PhaseKind::kEvalTrial, 30, 1), load, P(PhaseKind::kEvalTrial, infer, 1)}});
  }
  uint32_t Metric(Time submit, Duration secs, std::vector<uint32_t> after) {
    Job j;
    j.vc = VcId(1);
    j.submit = submit;
    j.gpus = 0;
    j.gpu_milli = 0;
    j.cpu_milli = 4000;
    j.kind = JobKind::kEval;
    return Add(j, WorkSpec{{P(PhaseKind::kMetric, secs, 0)}}, std::move(after));
  }
};

SimResult RunSim(const Trace& t, const std::string& policy = "fifo") {
  SimConfig cfg;
  cfg.policy = policy;
  cfg.run_cpu_jobs = true;
  cfg.model_cpu_mem = true;
  cfg.sample_interval = 0;
  auto r = Simulate(t, Tiny(), cfg);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  EXPECT_TRUE(CheckConservation(t, *r).ok()) << CheckConservation(t, *r).error().message;
  return *r;
}

TEST(EvalSim, GoldenTrainingJobAndOneCachedRequest) {
  Builder b;
  const uint32_t train = b.Train(0, 4, 1000);
  const uint32_t t0 = b.Trial(100, 100, /*cacheable=*/true);
  const uint32_t t1 = b.Trial(100, 50, true);
  const uint32_t m0 = b.Metric(100, 20, {t0});
  const uint32_t m1 = b.Metric(100, 60, {t1});
  const SimResult r = RunSim(b.t);
  const auto& o = r.outcomes;
  // The training job holds 4 of the 8 GPUs from 0 to 1000.
  EXPECT_EQ(o[train].start, 0);
  EXPECT_EQ(o[train].end, 1000);
  // Both trials start at 100 on the 4 free GPUs; startup ends at 130. t0 (joined first) reads
  // 14 GB from shared storage alone at its node's link, 3 GB/s: 4.67 s -> ends at 135 and fills
  // the node's cache; t1 waits for it, then reads the cache at 10 GB/s: 1.4 s -> 137.
  EXPECT_EQ(o[t0].start, 100);
  EXPECT_EQ(o[t1].start, 100);
  EXPECT_EQ(o[t0].end, 135 + 100);  // + inference
  EXPECT_EQ(o[t1].end, 137 + 50);
  EXPECT_EQ(r.load_seconds[t0], 5);  // 130 -> 135
  EXPECT_EQ(r.load_seconds[t1], 7);  // 130 -> 137 (5 s waiting for the fill, 2 s reading)
  EXPECT_DOUBLE_EQ(r.storage_bytes, 14e9);  // one read from shared storage
  // Metric jobs use the whole 4-core CPU node: m1 is released at 187 and runs to 247; m0 is
  // released at 235 and waits for the cores until 247, then runs 20 s.
  EXPECT_EQ(r.released[m1], 187);
  EXPECT_EQ(o[m1].start, 187);
  EXPECT_EQ(o[m1].end, 247);
  EXPECT_EQ(r.released[m0], 235);
  EXPECT_EQ(o[m0].start, 247);
  EXPECT_EQ(o[m0].wait, 12);
  EXPECT_EQ(o[m0].end, 267);
}

TEST(EvalSim, UncachedReadersShareTheirNodesLink) {
  Builder b;
  const uint32_t t0 = b.Trial(0, 100, /*cacheable=*/false);
  const uint32_t t1 = b.Trial(0, 100, false);
  const SimResult r = RunSim(b.t);
  // Two readers on one node split its 3 GB/s: 14 GB at 1.5 GB/s = 9.33 s, from 30 -> 40.
  EXPECT_EQ(r.outcomes[t0].end, 40 + 100);
  EXPECT_EQ(r.outcomes[t1].end, 40 + 100);
  EXPECT_DOUBLE_EQ(r.storage_bytes, 28e9);
  EXPECT_EQ(r.max_concurrent_reads, 2u);
}

TEST(EvalSim, MetricJobOfATrialThatCannotRunIsRejectedNotLost) {
  Builder b;
  Job big;
  big.vc = VcId(0);
  big.gpus = 16;  // larger than the VC: rejected
  big.kind = JobKind::kEval;
  const uint32_t t = b.Add(big, WorkSpec{{Builder::P(PhaseKind::kEvalTrial, 10, 16)}});
  const uint32_t m = b.Metric(0, 5, {t});
  b.Train(0, 1, 10);  // something runs
  const SimResult r = RunSim(b.t);
  EXPECT_EQ(r.outcomes[t].status, OutcomeStatus::kRejected);
  EXPECT_EQ(r.outcomes[m].status, OutcomeStatus::kRejected);
  EXPECT_EQ(r.reasons[r.outcomes[m].reject_reason], "a job it depends on did not finish");
}

TEST(EvalSim, DependencyOnALaterJobIsRefused) {
  Builder b;
  b.Metric(0, 5, {1});
  b.Train(0, 1, 10);
  SimConfig cfg;
  cfg.run_cpu_jobs = true;
  auto r = Simulate(b.t, Tiny(), cfg);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "job 0 depends on job 1: a job may depend only on jobs before it in the trace");
}

// The reservation (eval_share): FIFO on the 8-GPU VC. A: other, 6 GPUs, 0..100. B: other,
// 2 GPUs, submitted at 1, runs 500 s. C: evaluation, 2 GPUs, submitted at 2, runs 10 s.
Trace ReservationCase() {
  Builder b;
  b.Train(0, 6, 100);
  b.Train(1, 2, 500);
  Job c;
  c.vc = VcId(0);
  c.submit = 2;
  c.gpus = 2;
  c.duration = 10;
  c.kind = JobKind::kEval;
  b.Add(c, {});
  return b.t;
}

TEST(EvalSim, ReservationLetsEvaluationPassABlockedHead) {
  const Trace t = ReservationCase();
  // Without it: B takes the last 2 GPUs at 1; C waits for A's end at 100 (wait 98).
  const SimResult off = RunSim(t, "fifo");
  EXPECT_EQ(off.outcomes[1].start, 1);
  EXPECT_EQ(off.outcomes[2].start, 100);
  EXPECT_EQ(off.outcomes[2].wait, 98);
  // eval_share=0.25 keeps 2 of 8 GPUs for evaluation: other jobs may hold 6. B (6 + 2 > 6)
  // waits at the head; C passes it inside the reserve at 2 (wait 0) and ends at 12; B starts
  // when A ends at 100 (wait 99): the cost to the other jobs.
  const SimResult on = RunSim(t, "fifo:eval_share=0.25");
  EXPECT_EQ(on.outcomes[2].start, 2);
  EXPECT_EQ(on.outcomes[2].wait, 0);
  EXPECT_EQ(on.outcomes[1].start, 100);
  EXPECT_EQ(on.outcomes[1].wait, 99);
}

TEST(EvalSim, ReservationLaneNeverTakesTheBlockedHeadsGpus) {
  // Same, but C asks for 3 GPUs: more than the reserve (2) while B waits at the head, so C
  // does not pass; at 100 A ends, B (the head) starts first, then C fits (2 + 3 <= 8).
  Trace t = ReservationCase();
  t.jobs[2].gpus = 3;
  const SimResult on = RunSim(t, "fifo:eval_share=0.25");
  EXPECT_EQ(on.outcomes[1].start, 100);
  EXPECT_EQ(on.outcomes[2].start, 100);
}

TEST(EvalSim, ReservationLaneFollowsEasyBackfill) {
  // EASY (oracle estimates): B waits at the head, over the other jobs' share; the backfill pass
  // has nothing to start, then the lane starts C inside the reserve at 2.
  const SimResult on = RunSim(ReservationCase(), "easy:estimator=oracle,eval_share=0.25");
  EXPECT_EQ(on.outcomes[2].start, 2);
  EXPECT_EQ(on.outcomes[1].start, 100);
  const SimResult off = RunSim(ReservationCase(), "easy:estimator=oracle");
  EXPECT_EQ(off.outcomes[1].start, 1);
  EXPECT_EQ(off.outcomes[2].start, 100);
}

TEST(EvalSim, GreedyPolicyWithReservationKeepsOtherJobsUnderTheirShare) {
  // blocking=false: B is skipped (over the other jobs' share), C starts at 2.
  const SimResult on = RunSim(ReservationCase(), "fifo:eval_share=0.25,blocking=false");
  EXPECT_EQ(on.outcomes[2].start, 2);
  EXPECT_EQ(on.outcomes[1].start, 100);
}

TEST(EvalSim, ReservationShareIsValidated) {
  auto bad = MakePolicy("fifo:eval_share=1", 1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "policy 'fifo:eval_share=1': parameter 'eval_share': expected a share of the GPUs in [0, 1), got \"1\"");
  EXPECT_TRUE(MakePolicy("tiresias:eval_share=0.1", 1).ok());
}

}  // namespace
}  // namespace orrery
