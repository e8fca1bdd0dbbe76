// Golden schedules for Tiresias (sched/plugins/tiresias.h), worked out by hand in the
// comments. One VC "a" of one node with 4 GPUs unless said otherwise; restart overhead
// 40 s (≤ 8 GPUs) / 60 s (> 8 GPUs).
#include <gtest/gtest.h>

#include "base/rng.h"
#include "sched/framework/test_util.h"
#include "sim/simulator.h"

namespace orrery {
namespace {

using testing::AddVc;
using testing::MakeTrace;
using SE = std::vector<std::pair<Time, Time>>;

struct TRun {
  SE se;
  std::vector<uint16_t> preemptions;
};

TRun Sim(const Cluster& c, const Trace& t, const std::string& policy) {
  SimConfig cfg;
  cfg.policy = policy;
  auto r = Simulate(t, c, cfg);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  TRun out;
  if (!r.ok()) return out;
  Status cons = CheckConservation(t, *r);
  EXPECT_TRUE(cons.ok()) << (cons.ok() ? "" : cons.error().message);
  for (const auto& o : r->outcomes) {
    out.se.emplace_back(o.start, o.end);
    out.preemptions.push_back(o.preemptions);
  }
  return out;
}

Cluster OneByFour() {
  Cluster c;
  AddVc(&c, "a", 1, 4);
  return c;
}

TEST(TiresiasGolden, DemotionAtThresholdPreemptsWithOverhead) {
  // Event-driven, one threshold at 100 GPU-s. J0 (4 GPUs, 100 s) starts at 0 in Q0 and
  // reaches 100 GPU-s at 0 + ceil(100/4) = 25 → Q1. J1 (4 GPUs, 20 s) arrives at 10 in Q0
  // behind J0 (same queue, FIFO: J0 first), waits. At the demotion (25) J1 precedes J0:
  // J0 is preempted after 25 s, remaining 75 + 40 = 115; J1 runs 25..45; J0 45..160.
  Trace t = MakeTrace({{0, 100, 4}, {10, 20, 4}});
  TRun r = Sim(OneByFour(), t, "tiresias:thresholds=100");
  EXPECT_EQ(r.se, (SE{{0, 160}, {25, 45}}));
  EXPECT_EQ(r.preemptions, (std::vector<uint16_t>{1, 0}));
  // A 10-GPU job pays 60 s: two 8-GPU nodes; J0 (10 GPUs, 100 s) demotes at ceil(100/10) = 10;
  // J1 (16 GPUs, 5 s = 80 GPU-s, stays in Q0) arrives at 5, preempts J0 at 10 (remaining
  // 90 + 60 = 150): J1 10..15, J0 15..165.
  Cluster two;
  AddVc(&two, "a", 2, 8);
  Trace t2 = MakeTrace({{0, 100, 10}, {5, 5, 16}});
  EXPECT_EQ(Sim(two, t2, "tiresias:thresholds=100").se, (SE{{0, 165}, {10, 15}}));
  // With J1 of 20 s (320 GPU-s) J1 itself reaches 100 GPU-s at 10 + ceil(100/16) = 17 and
  // then follows J0 in Q1 (FIFO by submit): preempted at 17 after 7 s (remaining 13 + 60),
  // J0 17..167, J1 167..240.
  Trace t3 = MakeTrace({{0, 100, 10}, {5, 20, 16}});
  EXPECT_EQ(Sim(two, t3, "tiresias:thresholds=100").se, (SE{{0, 167}, {10, 240}}));
}

TEST(TiresiasGolden, PeriodicDecisionsEvery60s) {
  // Same jobs, decisions only at multiples of 60 s. 0: J0 starts. 10: J1 arrives, no
  // decision. 60: J0 has 240 GPU-s → Q1; J1 (Q0) is admitted, J0 preempted after 60 s
  // (remaining 40 + 40 = 80). J1 60..80. J0 waits for the 120 tick: 120..200.
  Trace t = MakeTrace({{0, 100, 4}, {10, 20, 4}});
  EXPECT_EQ(Sim(OneByFour(), t, "tiresias:thresholds=100,interval=60").se, (SE{{0, 200}, {60, 80}}));
  // Lucid's preset: one threshold at 18,000 GPU-s: J0 (4 GPUs) demotes after 4,500 s.
  // J0 (4 GPUs, 5000 s) at 0; J1 (4 GPUs, 100 s) at 30 waits for the tick after 4,500:
  // 4,500 is a multiple of 60 → J0 preempted at 4500 (remaining 500 + 40), J1 4500..4600,
  // J0 restarts at the 4620 tick and ends 4620 + 540 = 5160.
  Trace t2 = MakeTrace({{0, 5000, 4}, {30, 100, 4}});
  EXPECT_EQ(Sim(OneByFour(), t2, "tiresias:preset=lucid").se, (SE{{0, 5160}, {4500, 4600}}));
}

TEST(TiresiasGolden, CountBasedFitLetsSmallerJobsPass) {
  // J0 2 GPUs 0..100. J1 (4 GPUs) at 1 does not fit the 2 GPUs left and is skipped; J2
  // (2 GPUs, 10 s) at 2 fits and runs 2..12 (FIFO blocks it behind J1: 110..120). J1 100..110.
  Trace t = MakeTrace({{0, 100, 2}, {1, 10, 4}, {2, 10, 2}});
  EXPECT_EQ(Sim(OneByFour(), t, "tiresias").se, (SE{{0, 100}, {100, 110}, {2, 12}}));
  EXPECT_EQ(Sim(OneByFour(), t, "fifo").se, (SE{{0, 100}, {100, 110}, {110, 120}}));
}

TEST(TiresiasGolden, TheFullWalkTakesUpWherePhaseOneStopped) {
  // Two 8-GPU nodes, threshold 100 GPU-s. J0 (12 GPUs, 1000 s) starts at 0, Q1 at ceil(100/12)
  // = 9. At 30 J1 (1 GPU, 10 s) and J2 (8 GPUs, 10 s) arrive in Q0. Phase 1 (free count 4,
  // J0 kept): J1 admitted (3 left); J2 needs 8 ≤ 3 + J0's 12: J0 must go, so the full walk
  // takes up at J2 with budget 15 and J1 already admitted: J2 admitted (7 left), J0 (12 > 7)
  // preempted after 30 s. (A walk from the start decides the same: 16, J1 → 15, J2 → 7, J0
  // out.) J1 and J2 run 30..40; J0 restarts at 40 with 970 s left + 60 s overhead: 40..1070.
  Cluster two;
  AddVc(&two, "a", 2, 8);
  Trace t = MakeTrace({{0, 1000, 12}, {30, 10, 1}, {30, 10, 8}});
  TRun r = Sim(two, t, "tiresias:thresholds=100");
  EXPECT_EQ(r.se, (SE{{0, 1070}, {30, 40}, {30, 40}}));
  EXPECT_EQ(r.preemptions, (std::vector<uint16_t>{1, 0, 0}));
  // With J2' (16 GPUs, 5 s) between them, phase 1 leaves J2' unadmitted (16 > 3 + 12) before
  // the stop; the full walk's bound stays ≥ 15 GPUs > a node's 8 up to J2, so it too visits
  // and skips J2' and takes up at J2 (from the start: 16, J1 → 15, J2' skipped, J2 → 7, J0
  // out). At 40 J2' (Q0) precedes J0 (Q1) and takes both nodes 40..45; J0 restarts at 45:
  // 45..1075. (Both stops have 15 GPUs > 8 in view: the walk takes up in both.)
  Trace t2 = MakeTrace({{0, 1000, 12}, {30, 10, 1}, {30, 5, 16}, {30, 10, 8}});
  TRun r2 = Sim(two, t2, "tiresias:thresholds=100");
  EXPECT_EQ(r2.se, (SE{{0, 1075}, {30, 40}, {40, 45}, {30, 40}}));
  EXPECT_EQ(r2.preemptions, (std::vector<uint16_t>{1, 0, 0, 0}));
}

TEST(TiresiasGolden, StarvationPromotion) {
  // Threshold 200 GPU-s. J0 (4 GPUs, 100 s) at 0 → Q1 at 50. J1 (1 GPU, 150 s) at 60 in Q0:
  // admitted (3 GPUs left), J0 (needs 4) preempted after 60 s: remaining 40 + 40 = 80.
  //  * knob=0: J1 60..210, J0 210..290.
  //  * knob=2: J0 was preempted at 60 having executed 60 s → promoted at 60 + 2×60 = 180:
  //    service reset, Q0 with submit 0, ahead of J1 → J1 preempted (ran 120 of 150,
  //    remaining 30 + 40 = 70). J0 runs from 180, reaches 200 GPU-s again at 230 → Q1;
  //    J1 (Q0, 120 GPU-s) preempts it (J0 ran 50 of 80: remaining 30 + 40 = 70); J1 230..300.
  //    J0's next promotion would be at 230 + 2×50 = 330; it restarts at 300: 300..370.
  //    (That is with protect=0. By default a restarted job keeps its GPUs for 2 × 40 s: J0,
  //    restarted at 180, is not preempted at 230 and ends at 260; J1 (remaining 70) 260..330.)
  Trace t = MakeTrace({{0, 100, 4}, {60, 150, 1}});
  TRun off = Sim(OneByFour(), t, "tiresias:thresholds=200");
  EXPECT_EQ(off.se, (SE{{0, 290}, {60, 210}}));
  TRun on = Sim(OneByFour(), t, "tiresias:thresholds=200,knob=2,protect=0");
  EXPECT_EQ(on.se, (SE{{0, 370}, {60, 300}}));
  EXPECT_EQ(on.preemptions, (std::vector<uint16_t>{2, 1}));
  TRun prot = Sim(OneByFour(), t, "tiresias:thresholds=200,knob=2");
  EXPECT_EQ(prot.se, (SE{{0, 260}, {60, 330}}));
  EXPECT_EQ(prot.preemptions, (std::vector<uint16_t>{1, 1}));
}

TEST(TiresiasGolden, RestartProtectionEndsWithAWakeUp) {
  // One 8-GPU node, threshold 100 GPU-s (an 8-GPU job is demoted after 13 s, less than its 40 s
  // restart overhead), knob=1, default protect=2 (a restarted job keeps its GPUs 80 s).
  //  0: A (8 GPUs, 100 s) starts. 20: B (8 GPUs, 100 s) arrives in Q0; A is in Q1 (160 GPU-s)
  //     → A preempted after 20 s (remaining 80 + 40 = 120).
  // 33: B reaches 104 GPU-s → Q1, behind A (same queue, A submitted first) → B preempted after
  //     13 s (remaining 87 + 40 = 127); A restarts, protected until 113.
  // 46: B (pending since 33, executed 13 s) is promoted to Q0, but A is protected.
  // 113: A's protection ends (a wake-up): B (Q0) preempts A (ran 80 of 120: remaining 40 + 40);
  //     B restarts, protected until 193; B is back in Q1 at 126 (104 GPU-s since promotion).
  // 193: B's protection ends: A (Q1, submitted first) preempts B (ran 80 of 127: remaining
  //     47 + 40 = 87); A restarts with 80 s left, ends at 273; B, promoted at 193 + 80 = 273,
  //     runs 273..360.
  // Without protection the pair never finishes: every restart is preempted after 13 s < 40 s.
  Cluster c;
  AddVc(&c, "a", 1, 8);
  Trace t = MakeTrace({{0, 100, 8}, {20, 100, 8}});
  TRun r = Sim(c, t, "tiresias:thresholds=100,knob=1");
  EXPECT_EQ(r.se, (SE{{0, 273}, {20, 360}}));
  EXPECT_EQ(r.preemptions, (std::vector<uint16_t>{2, 2}));
}

TEST(TiresiasGolden, ProtectedJobsCountOnceWhenNothingCanBePreempted) {
  // Threshold 100 GPU-s, event-driven, protect=2 (80 s).
  //   7: J0 (1 GPU, 200 s) starts. 30: J1 (2 GPUs, 100 s) starts. 40: J2 (2 GPUs, 200 s) waits
  //      in Q0 (1 GPU free).
  //  80: J1 reaches 100 GPU-s → Q1: J0 (Q0) kept, J2 (Q0) admitted, J1 preempted (50 s left).
  // 130: J2 reaches 100 GPU-s → Q1 behind J0 (submitted 7) and J1 (30): J1 restarts (50 + 40 s,
  //      ends 220, protected until 210), J2 preempted (150 s left).
  // 207: J0 ends. J2 (Q1, submitted 40) follows the only running job J1 (Q1, 30): nothing can
  //      be preempted, and J2 takes the 2 free GPUs: 150 + 40 s, ends 397. (The protected J1's
  //      GPUs are taken off the free count once: counting them twice held J2 until 210.)
  Trace t = MakeTrace({{7, 200, 1}, {30, 100, 2}, {40, 200, 2}});
  TRun r = Sim(OneByFour(), t, "tiresias:thresholds=100");
  EXPECT_EQ(r.se, (SE{{7, 207}, {30, 220}, {80, 397}}));
  EXPECT_EQ(r.preemptions, (std::vector<uint16_t>{0, 1, 1}));
}

// Restart protections of both lengths at once (protect=2: 80 s for <= 8 GPUs, 120 s above;
// the plugin keeps one end-ordered list per length): on two 8-GPU nodes with a demotion
// threshold small enough to preempt constantly, no restarted attempt is preempted before its
// protection ends, and of each length some are preempted exactly at its end (the wake-up of
// that list's entry), so the protection neither ends late nor early.
TEST(TiresiasGolden, RestartProtectionsOfTwoLengthsEndOnTime) {
  Cluster c;
  AddVc(&c, "a", 2, 8);
  Rng rng(7, "test/tiresias-protection");
  std::vector<testing::JobSpec> specs;
  const uint32_t sizes[] = {2, 4, 8, 12, 16};
  for (Time at = 0; specs.size() < 120; at += 20)
    specs.push_back({at, 200 + static_cast<Duration>(rng.Uniform() * 1800), sizes[specs.size() % 5]});
  SimConfig cfg;
  cfg.policy = "tiresias:thresholds=400,knob=1";
  cfg.record_attempts = true;
  auto r = Simulate(MakeTrace(specs), c, cfg);
  ASSERT_TRUE(r.ok()) << r.error().message;
  int at_end_small = 0, at_end_large = 0, restarted_preempted = 0;
  for (const Attempt& a : r->attempts.attempts) {
    if (a.index == 0 || a.cause != EndCause::kPreempted) continue;
    ++restarted_preempted;
    const Duration protection = a.gpus <= 8 ? 80 : 120;
    EXPECT_GE(a.end - a.start, protection) << "job " << a.job.v << " attempt " << int{a.index};
    if (a.end - a.start == protection) ++(a.gpus <= 8 ? at_end_small : at_end_large);
  }
  EXPECT_GT(restarted_preempted, 20);
  EXPECT_GT(at_end_small, 0);
  EXPECT_GT(at_end_large, 0);
}

TEST(TiresiasGolden, TimeServiceVariantIgnoresGpuCount) {
  // service=time: threshold 100 s regardless of GPUs. J0 (4 GPUs, 300 s) demotes at 100;
  // J1 (4 GPUs, 50 s) at 10 then preempts it: J0 remaining 200 + 40: J1 100..150, J0 150..390.
  Trace t = MakeTrace({{0, 300, 4}, {10, 50, 4}});
  EXPECT_EQ(Sim(OneByFour(), t, "tiresias:thresholds=100,service=time").se, (SE{{0, 390}, {100, 150}}));
}

TEST(TiresiasGolden, GittinsRanksByIndexFromFinishedJobs) {
  // One effective queue (threshold 10^6), Δ = 100 GPU-s. A (4 GPUs, 10 s) runs 0..10; B
  // (4 GPUs, 200 s) at 5 and C (4 GPUs, 20 s = 80 GPU-s, inside one quantum) at 20. A's
  // 40 GPU-s is the whole history from t=10: index(a) = P/E with P = Pr[S ≤ a+Δ | S > a],
  // E = E[min(S−a, Δ) | S > a]: index(0) = 1/40, index(100) = 0 (no finished job above 100).
  // B starts at 10 (index 1/40, ahead of C by submit order); at 35 it completes its first
  // quantum (4 × 25 = 100 GPU-s) → index 0 → C (index 1/40) preempts it: B remaining
  // 175 + 40 = 215. C 35..55, B 55..270.
  // 2D-LAS with the same single queue keeps FIFO: B 10..210, C 210..230.
  Trace t = MakeTrace({{0, 10, 4}, {5, 200, 4}, {20, 20, 4}});
  EXPECT_EQ(Sim(OneByFour(), t, "tiresias:thresholds=1000000,gittins=true,delta=100").se,
            (SE{{0, 10}, {10, 270}, {35, 55}}));
  EXPECT_EQ(Sim(OneByFour(), t, "tiresias:thresholds=1000000").se, (SE{{0, 10}, {10, 210}, {210, 230}}));
  // With C of 30 s (120 GPU-s) C itself reaches index 0 after its first quantum (at 60) and
  // then follows B (both index 0, B submitted first): C preempted after 25 s (remaining
  // 5 + 40), B 60..275, C 275..320.
  Trace t2 = MakeTrace({{0, 10, 4}, {5, 200, 4}, {20, 30, 4}});
  EXPECT_EQ(Sim(OneByFour(), t2, "tiresias:thresholds=1000000,gittins=true,delta=100").se,
            (SE{{0, 10}, {10, 275}, {35, 320}}));
}

TEST(TiresiasGolden, GittinsRunsAndConserves) {
  // 2D-Gittins without history behaves as 2D-LAS (all indices 0 → FIFO inside a queue).
  Trace t = MakeTrace({{0, 100, 4}, {10, 20, 4}});
  EXPECT_EQ(Sim(OneByFour(), t, "tiresias:thresholds=100,gittins=true").se, (SE{{0, 160}, {25, 45}}));
  // A longer random-ish mix conserves work and finishes every job under every variant.
  std::vector<testing::JobSpec> specs;
  for (int i = 0; i < 200; ++i)
    specs.push_back({i * 7, 10 + (i * 37) % 400, static_cast<uint32_t>(1u << (i % 4)), i % 3 ? "a" : "b"});
  Cluster c;
  AddVc(&c, "a", 2, 4);
  AddVc(&c, "b", 1, 8);
  Trace mix = MakeTrace(specs);
  for (const char* p : {"tiresias", "tiresias:preset=lucid", "tiresias:gittins=true,delta=500", "tiresias:knob=1",
                        "tiresias:preset=lucid,gittins=true,knob=0.5"}) {
    TRun r = Sim(c, mix, p);
    ASSERT_EQ(r.se.size(), 200u) << p;
    for (auto [s, e] : r.se) EXPECT_GE(e, s) << p;
  }
}

TEST(TiresiasGolden, RejectsBadParameters) {
  Cluster c = OneByFour();
  Trace t = MakeTrace({{0, 10, 1}});
  for (const char* p : {"tiresias:thresholds=7200/3250", "tiresias:interval=-1", "tiresias:knob=x",
                        "tiresias:preset=foo", "tiresias:service=gpus", "tiresias:bogus=1", "tiresias:protect=-1"}) {
    SimConfig cfg;
    cfg.policy = p;
    EXPECT_FALSE(Simulate(t, c, cfg).ok()) << p;
  }
}

}  // namespace
}  // namespace orrery
