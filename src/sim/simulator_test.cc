// Golden scenarios: tiny traces whose schedules are worked out by hand in the comments.
#include "sim/simulator.h"

#include <gtest/gtest.h>

#include "sched/framework/test_util.h"

namespace orrery {
namespace {

using testing::AddVc;
using testing::JobSpec;
using testing::MakeTrace;

struct SimRun {
  std::vector<std::pair<Time, Time>> se;  // (start, end) per job
  SimResult r;
};

SimRun Sim(const Cluster& c, const Trace& t, const std::string& policy, const std::string& placer = "consolidate") {
  SimConfig cfg;
  cfg.policy = policy;
  cfg.placer = placer;
  auto r = Simulate(t, c, cfg);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  SimRun out;
  if (!r.ok()) return out;
  EXPECT_TRUE(CheckConservation(t, *r).ok());
  for (const auto& o : r->outcomes) out.se.emplace_back(o.start, o.end);
  out.r = std::move(*r);
  return out;
}
using SE = std::vector<std::pair<Time, Time>>;

Cluster TwoByFour() {
  Cluster c;
  AddVc(&c, "a", 2, 4);
  return c;
}

TEST(GoldenTest, FifoBlocksBehindHeadSjfReorders) {
  // J0 4 GPUs 0..100 (node0), J1 4 GPUs 0..50 (node1). J2 (4 GPUs, 30 s) at 10 and J3
  // (4 GPUs, 10 s) at 20 wait. At 50 node1 frees.
  //   FIFO: J2 50..80, then J3 at 80 (node1 frees before node0) → 80..90.
  //   SJF : J3 first 50..60, then J2 60..90.
  Trace t = MakeTrace({{0, 100, 4}, {0, 50, 4}, {10, 30, 4}, {20, 10, 4}});
  EXPECT_EQ(Sim(TwoByFour(), t, "fifo").se, (SE{{0, 100}, {0, 50}, {50, 80}, {80, 90}}));
  EXPECT_EQ(Sim(TwoByFour(), t, "sjf").se, (SE{{0, 100}, {0, 50}, {60, 90}, {50, 60}}));
}

TEST(GoldenTest, FifoHeadOfLineBlockingHoldsSmallJobs) {
  // J2 (4 GPUs) blocks J3 (1 GPU) although node1 has 2 free GPUs from t=20.
  // J0 4 GPUs on node0 0..100; J1 2 GPUs node1 0..100; J2 4 GPUs at 10; J3 1 GPU at 20.
  // At 100 both free: J2 → node0 (best fit, lowest index) 100..110; J3 → node1 100..105.
  Trace t = MakeTrace({{0, 100, 4}, {0, 100, 2}, {10, 10, 4}, {20, 5, 1}});
  EXPECT_EQ(Sim(TwoByFour(), t, "fifo").se, (SE{{0, 100}, {0, 100}, {100, 110}, {100, 105}}));
  // Greedy (non-blocking) FIFO starts J3 at 20 on node1.
  EXPECT_EQ(Sim(TwoByFour(), t, "fifo:blocking=false").se, (SE{{0, 100}, {0, 100}, {100, 110}, {20, 25}}));
}

TEST(GoldenTest, EasyBackfillsAroundTheReservation) {
  // J0 4 GPUs node0 0..100, J1 2 GPUs node1 0..100 (oracle estimates).
  // J2 (4 GPUs, 10 s) at 1 cannot start: shadow = 100, reserved = {node0}.
  // J3 (2 GPUs, 500 s) at 2 ends after the shadow but fits on node1, which the
  // reservation does not need → backfilled at 2..502. J2 runs 100..110 on node0.
  Trace t = MakeTrace({{0, 100, 4}, {0, 100, 2}, {1, 10, 4}, {2, 500, 2}});
  EXPECT_EQ(Sim(TwoByFour(), t, "easy:estimator=oracle").se, (SE{{0, 100}, {0, 100}, {100, 110}, {2, 502}}));
  // FIFO: J3 waits for J2: at 100 J2 → node0, J3 → node1 100..600.
  EXPECT_EQ(Sim(TwoByFour(), t, "fifo").se, (SE{{0, 100}, {0, 100}, {100, 110}, {100, 600}}));
}

TEST(GoldenTest, EasyNeverDelaysTheHead) {
  // J0 4 GPUs node0 0..100; J1 4 GPUs node1 0..50. J2 (8 GPUs) at 1 needs both nodes:
  // shadow 100, reserved {0,1}. At 50 node1 is idle.
  //  * J3 (4 GPUs, 60 s) at 2: 50 + 60 = 110 > 100 and every node is reserved → waits;
  //    J2 100..110, J3 110..170.
  //  * with J3 of 40 s: 50 + 40 = 90 ≤ 100 → backfilled 50..90; J2 still 100..110.
  Trace slow = MakeTrace({{0, 100, 4}, {0, 50, 4}, {1, 10, 8}, {2, 60, 4}});
  EXPECT_EQ(Sim(TwoByFour(), slow, "easy:estimator=oracle").se, (SE{{0, 100}, {0, 50}, {100, 110}, {110, 170}}));
  Trace fast = MakeTrace({{0, 100, 4}, {0, 50, 4}, {1, 10, 8}, {2, 40, 4}});
  EXPECT_EQ(Sim(TwoByFour(), fast, "easy:estimator=oracle").se, (SE{{0, 100}, {0, 50}, {100, 110}, {50, 90}}));
}

TEST(GoldenTest, EasyUsesWalltimeEstimates) {
  // Same as the fast case but J3's walltime says 70 s (it really runs 40 s):
  // 50 + 70 > 100 → not backfilled; J3 runs after J2: 110..150.
  Trace t = MakeTrace({{0, 100, 4, "a", 1000, 0, 100}, {0, 50, 4, "a", 1000, 0, 50}, {1, 10, 8, "a", 1000, 0, 10},
                       {2, 40, 4, "a", 1000, 0, 70}});
  EXPECT_EQ(Sim(TwoByFour(), t, "easy").se, (SE{{0, 100}, {0, 50}, {100, 110}, {110, 150}}));
}

TEST(GoldenTest, SrtfPreemptsWithCheckpointOverhead) {
  // One 4-GPU node. J0 (4 GPUs, 100 s) runs from 0. At 10 J1 (4 GPUs, 20 s) arrives:
  // J0 has 90 s left > 20 → preempted, remaining 90 + 30 s overhead (≤ 8 GPUs) = 120.
  // J1 10..30; J0 resumes 30..150: run 10 + 120 = 130, wait 20, one preemption.
  Cluster c;
  AddVc(&c, "a", 1, 4);
  Trace t = MakeTrace({{0, 100, 4}, {10, 20, 4}});
  SimRun r = Sim(c, t, "srtf");
  EXPECT_EQ(r.se, (SE{{0, 150}, {10, 30}}));
  EXPECT_EQ(r.r.outcomes[0].preemptions, 1u);
  EXPECT_EQ(r.r.outcomes[0].run, 130);
  EXPECT_EQ(r.r.outcomes[0].wait, 20);
  // 1-GPU jobs pay 7 s: J0 (1 GPU, 100 s) preempted at 10 by J1 (1 GPU, 5 s) on a 1-GPU node.
  Cluster one;
  AddVc(&one, "a", 1, 1);
  Trace t1 = MakeTrace({{0, 100, 1}, {10, 5, 1}});
  EXPECT_EQ(Sim(one, t1, "srtf").se, (SE{{0, 112}, {10, 15}}));  // 15 + 90 + 7
  // >8 GPUs pay 60 s: two 8-GPU nodes, J0 16 GPUs 100 s, J1 16 GPUs 10 s at 10.
  Cluster big;
  AddVc(&big, "a", 2, 8);
  Trace t2 = MakeTrace({{0, 100, 16}, {10, 10, 16}});
  EXPECT_EQ(Sim(big, t2, "srtf").se, (SE{{0, 170}, {10, 20}}));  // 20 + 90 + 60
}

TEST(GoldenTest, SrtfPreemptsOnlyWhatIsNeeded) {
  // Two 4-GPU nodes: J0 (4 GPUs, 200 s) node0, J1 (4 GPUs, 100 s) node1. J2 (4 GPUs, 10 s)
  // at 5 preempts the longest-remaining job only (J0), not J1.
  Trace t = MakeTrace({{0, 200, 4}, {0, 100, 4}, {5, 10, 4}});
  SimRun r = Sim(TwoByFour(), t, "srtf");
  // J0 resumes at 15 (J2 ends) with 195 + 30 s left → ends 240.
  EXPECT_EQ(r.se, (SE{{0, 240}, {0, 100}, {5, 15}}));
  EXPECT_EQ(r.r.outcomes[1].preemptions, 0u);
}

TEST(GoldenTest, QssfOrdersByEstimatedGpuTime) {
  // One 4-GPU node; J0 4 GPUs 0..100. J1 (3 GPUs, 50 s) and J2 (2 GPUs, 50 s) wait.
  // Oracle estimates: J1 key 150, J2 key 100 → J2 first at 100 (2 GPUs), J1 needs 3 of
  // the 2 left → waits for J2: 150..200. FIFO: J1 100..150, J2 150..200.
  Cluster c;
  AddVc(&c, "a", 1, 4);
  Trace t = MakeTrace({{0, 100, 4}, {1, 50, 3}, {2, 50, 2}});
  EXPECT_EQ(Sim(c, t, "qssf:estimator=oracle").se, (SE{{0, 100}, {150, 200}, {100, 150}}));
  EXPECT_EQ(Sim(c, t, "fifo").se, (SE{{0, 100}, {100, 150}, {150, 200}}));
}

TEST(GoldenTest, BackfillEasyBehindAnyOrder) {
  // J0 4 GPUs node0 0..100; J1 2 GPUs node1 0..100. J2 (8 GPUs, 10 s) at 1: QSSF key 80;
  // J3 (2 GPUs, 50 s) at 2: key 100, so J2 heads the queue and cannot start before 100.
  //   qssf (blocking): J3 waits behind J2: J2 100..110, J3 110..160.
  //   qssf + backfill=easy: shadow 100, both nodes reserved; J3 ends at 52 <= 100, so it is
  //   backfilled onto node1's 2 free GPUs at 2..52; J2 still starts at 100.
  Trace t = MakeTrace({{0, 100, 4}, {0, 100, 2}, {1, 10, 8}, {2, 50, 2}});
  EXPECT_EQ(Sim(TwoByFour(), t, "qssf:estimator=oracle").se, (SE{{0, 100}, {0, 100}, {100, 110}, {110, 160}}));
  EXPECT_EQ(Sim(TwoByFour(), t, "qssf:estimator=oracle,backfill=easy").se,
            (SE{{0, 100}, {0, 100}, {100, 110}, {2, 52}}));
  // SJF orders J2 (10 s) first too; its backfill reads the true remaining times.
  EXPECT_EQ(Sim(TwoByFour(), t, "sjf:backfill=easy").se, (SE{{0, 100}, {0, 100}, {100, 110}, {2, 52}}));
  // easy = fifo + backfill=easy; backfill=none turns it off.
  EXPECT_EQ(Sim(TwoByFour(), t, "easy:estimator=oracle,backfill=none").se,
            (SE{{0, 100}, {0, 100}, {100, 110}, {110, 160}}));
  EXPECT_EQ(Sim(TwoByFour(), t, "fifo:backfill=easy").se, Sim(TwoByFour(), t, "easy:estimator=oracle").se);
}

TEST(GoldenTest, BackfillParameterErrors) {
  Trace t = MakeTrace({{0, 10, 1}});
  SimConfig cfg;
  for (const char* bad : {"srtf:backfill=easy", "tiresias:backfill=easy", "fifo:backfill=conservative", "qssf:bf_max_job_test=5"}) {
    cfg.policy = bad;
    auto r = Simulate(t, TwoByFour(), cfg);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message.find(bad), std::string::npos) << r.error().message;
  }
}

TEST(GoldenTest, VirtualClustersArePartitions) {
  // VC a: one 4-GPU node; VC b: one 4-GPU node. Two 4-GPU jobs of VC a run one after
  // the other although VC b is idle; a job of VC c (not in the cluster) is rejected;
  // a job larger than its VC is rejected, never lost.
  Cluster c;
  AddVc(&c, "a", 1, 4);
  AddVc(&c, "b", 1, 4);
  Trace t = MakeTrace({{0, 10, 4, "a"}, {0, 10, 4, "a"}, {0, 10, 4, "c"}, {0, 10, 8, "b"}});
  SimRun r = Sim(c, t, "fifo");
  EXPECT_EQ(r.se[0], (std::pair<Time, Time>{0, 10}));
  EXPECT_EQ(r.se[1], (std::pair<Time, Time>{10, 20}));
  EXPECT_EQ(r.r.outcomes[2].status, OutcomeStatus::kRejected);
  EXPECT_EQ(r.r.reasons[r.r.outcomes[2].reject_reason], "job's VC is not in the cluster");
  EXPECT_EQ(r.r.outcomes[3].status, OutcomeStatus::kRejected);
  EXPECT_EQ(r.r.reasons[r.r.outcomes[3].reject_reason], "job needs more GPUs than its VC has");
}

TEST(GoldenTest, GangJobsStartAllOrNothing) {
  // Two 4-GPU nodes; J0 (2 GPUs) on node0 0..50. J1 (8 GPUs) needs two idle nodes:
  // although 6 GPUs are free at 1, it starts only at 50, on both nodes.
  Trace t = MakeTrace({{0, 50, 2}, {1, 10, 8}});
  SimRun r = Sim(TwoByFour(), t, "fifo");
  EXPECT_EQ(r.se, (SE{{0, 50}, {50, 60}}));
}

TEST(GoldenTest, FractionalJobsShareAGpu) {
  // One node with 1 GPU: two 500-milli jobs run together, a third waits.
  Cluster c;
  AddVc(&c, "a", 1, 1);
  Trace t = MakeTrace({{0, 100, 1, "a", 500}, {0, 100, 1, "a", 500}, {0, 10, 1, "a", 400}});
  EXPECT_EQ(Sim(c, t, "fifo").se, (SE{{0, 100}, {0, 100}, {100, 110}}));
}

TEST(GoldenTest, RenegeWithdrawsCancelledJobsStillPendingAtTheirRecordedEnd) {
  // One node of 4 GPUs. J0 4 GPUs 0..100. J1 (CANCELLED, 30 s) at 10: its user gives up at
  // 10 + 30 = 40, still pending -> withdrawn at 40 (wait 30, run 0). J2 (CANCELLED, 200 s)
  // at 20: patience ends at 220, but it starts at 100 when J0 ends and runs its 200 s
  // (100..300). J3 (COMPLETED, 5 s) at 30 waits behind J2 (FIFO): 300..305.
  // Without reneging J1 runs 100..130, J2 130..330, J3 330..335.
  Cluster c;
  AddVc(&c, "a", 1, 4);
  Trace t = MakeTrace({{0, 100, 4}, {10, 30, 4}, {20, 200, 4}, {30, 5, 4}});
  t.jobs[1].state = t.jobs[2].state = JobState::kCancelled;
  t.jobs[0].state = t.jobs[3].state = JobState::kCompleted;
  EXPECT_EQ(Sim(c, t, "fifo").se, (SE{{0, 100}, {100, 130}, {130, 330}, {330, 335}}));
  SimConfig cfg;
  cfg.policy = "fifo";
  cfg.renege = true;
  auto r = Simulate(t, c, cfg);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(CheckConservation(t, *r).ok());
  SE se;
  for (const auto& o : r->outcomes) se.emplace_back(o.start, o.end);
  EXPECT_EQ(se, (SE{{0, 100}, {40, 40}, {100, 300}, {300, 305}}));
  EXPECT_EQ(r->outcomes[1].status, OutcomeStatus::kWithdrawn);
  EXPECT_EQ(r->outcomes[1].wait, 30);
  EXPECT_EQ(r->outcomes[1].run, 0);
  EXPECT_EQ(r->outcomes[2].status, OutcomeStatus::kFinished);
  EXPECT_EQ(r->outcomes[2].wait, 80);
}

// Cluster::start_latency: each job reaches the scheduler L s after its submission, and L is
// queueing delay. sigma 0: L = median_s = 10 s for every job.
TEST(GoldenTest, StartLatencyDelaysEveryJobAndCountsAsWait) {
  // One node of 4 GPUs, FIFO. J0 (4 GPUs, 100 s) at 0 reaches the scheduler at 10: 10..110,
  // wait 10. J1 (4 GPUs, 50 s) at 5 arrives at 15 and waits for J0: 110..160, wait 105. J2
  // (CANCELLED, 5 s) at 20 arrives at 30: 160..165, wait 140. With reneging its user gave up at
  // 20 + 5 = 25, before it reached the scheduler: withdrawn on arrival at 30, wait 10, run 0.
  // Without the latency: 0..100, 100..150, 150..155.
  Cluster c;
  AddVc(&c, "a", 1, 4);
  Trace t = MakeTrace({{0, 100, 4}, {5, 50, 4}, {20, 5, 4}});
  t.jobs[2].state = JobState::kCancelled;
  EXPECT_EQ(Sim(c, t, "fifo").se, (SE{{0, 100}, {100, 150}, {150, 155}}));
  c.start_latency = {0, 10, 0};
  SimRun late = Sim(c, t, "fifo");
  EXPECT_EQ(late.se, (SE{{10, 110}, {110, 160}, {160, 165}}));
  EXPECT_EQ(late.r.outcomes[0].wait, 10);
  EXPECT_EQ(late.r.outcomes[1].wait, 105);
  EXPECT_EQ(late.r.outcomes[2].wait, 140);
  EXPECT_EQ(late.r.first_submit, 0);  // the run still begins at the first submission
  SimConfig cfg;
  cfg.policy = "fifo";
  cfg.renege = true;
  auto r = Simulate(t, c, cfg);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(CheckConservation(t, *r).ok());
  EXPECT_EQ(r->outcomes[2].status, OutcomeStatus::kWithdrawn);
  EXPECT_EQ(r->outcomes[2].start, 30);
  EXPECT_EQ(r->outcomes[2].wait, 10);
  EXPECT_EQ(r->outcomes[1].end, 160);
}

// Latencies of different jobs reorder arrivals: the scheduler sees jobs in (submit + L) order.
TEST(GoldenTest, StartLatencyOrdersArrivalsBySubmitPlusLatency) {
  // DrawStartLatency with sigma 0 gives median_s for all; with min_s = median_s too. Draw the
  // run's latencies the way the simulator does (stream "sim/start-latency", trace order) and
  // check that every job starts no sooner than submit + L, and on an empty cluster exactly then.
  Cluster c;
  AddVc(&c, "a", 4, 8);
  c.start_latency = {4.5, 16.75, 0.709};
  std::vector<JobSpec> specs;
  for (int i = 0; i < 200; ++i) specs.push_back({i * 3, 2, 1});  // 1 GPU, 2 s: never more than 12 run
  Trace t = MakeTrace(specs);
  SimRun run = Sim(c, t, "fifo");
  Rng rng(1, "sim/start-latency");
  bool reordered = false;
  Time prev = -1;
  for (size_t i = 0; i < specs.size(); ++i) {
    const Duration l = DrawStartLatency(c.start_latency, rng);
    EXPECT_GE(l, 5) << i;  // > 4.5 s, rounded
    EXPECT_EQ(run.se[i].first, specs[i].submit + l) << i;
    EXPECT_EQ(run.r.outcomes[i].wait, l) << i;
    reordered |= run.se[i].first < prev;
    prev = run.se[i].first;
  }
  EXPECT_TRUE(reordered);  // jobs 3 s apart with latencies of 5..60 s overtake each other
}

TEST(StartLatency, DrawsTheShiftedLognormal) {
  Rng rng(7, "test");
  EXPECT_EQ(DrawStartLatency({0, 10, 0}, rng), 10);
  EXPECT_EQ(DrawStartLatency({3, 3, 2}, rng), 3);        // min = median: no spread
  EXPECT_EQ(DrawStartLatency({0, 16.75, 0}, rng), 17);  // rounded to whole seconds
  // Kalos (presets.cc): P(L <= 8 s) = P(excess < 4) = Phi((ln 4 - ln 12.25) / 0.709) =
  // Phi(-1.579) = 0.057; P(L <= 16 s) = P(excess < 12) = Phi((ln 12 - ln 12.25) / 0.709) =
  // Phi(-0.029) = 0.488; P(L <= 4 s) = 0. 20,000 draws: sd of a share <= 0.0036.
  const StartLatency kalos{4.5, 16.75, 0.709};
  int le4 = 0, le8 = 0, le16 = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const Duration l = DrawStartLatency(kalos, rng);
    le4 += l <= 4;
    le8 += l <= 8;
    le16 += l <= 16;
  }
  EXPECT_EQ(le4, 0);
  EXPECT_NEAR(le8 / double(n), 0.057, 0.012);
  EXPECT_NEAR(le16 / double(n), 0.488, 0.015);
}

TEST(GoldenTest, SameInputsGiveIdenticalOutcomes) {
  Cluster c;
  AddVc(&c, "a", 3, 8);
  std::vector<JobSpec> specs;
  for (int i = 0; i < 300; ++i)
    specs.push_back({i * 7, 50 + (i * 37) % 400, static_cast<uint32_t>(1u << (i % 5))});
  Trace t = MakeTrace(specs);
  for (const char* p : {"fifo", "sjf", "srtf", "qssf", "easy:estimator=oracle"}) {
    for (const char* pl : {"consolidate", "first-fit", "spread", "random"}) {
      SimRun a = Sim(c, t, p, pl), b = Sim(c, t, p, pl);
      EXPECT_EQ(a.se, b.se) << p << " " << pl;
      EXPECT_EQ(a.r.samples.size(), b.r.samples.size());
    }
  }
}

}  // namespace
}  // namespace orrery
