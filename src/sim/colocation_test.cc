// GPU sharing in the simulator and Lucid's packing rules: hand-computed schedules with a
// hand-made interference context (no shared data needed), and a property test over a
// generated workload.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "base/rng.h"
#include "predict/xgb.h"
#include "sched/framework/internal/scheduler.h"
#include "sched/framework/test_util.h"
#include "sched/plugins/lucid.h"
#include "sched/plugins/placers.h"
#include "sim/simulator.h"

namespace orrery {
namespace {

using testing::AddVc;
using testing::JobSpec;
using testing::MakeTrace;

struct Wl {
  float gmem = 1000;
  uint8_t ss = 0;
};

// A context with the given workloads; truth[a][b] = predicted[a][b] = speed(a, b).
std::shared_ptr<ColocationContext> Ctx(const std::vector<Wl>& wl, const std::map<std::pair<int, int>, float>& speed,
                                       std::vector<uint8_t> job_workload,
                                       const std::map<std::pair<int, int>, float>& predicted = {}) {
  auto c = std::make_shared<ColocationContext>();
  std::vector<Workload> w(wl.size());
  for (size_t i = 0; i < wl.size(); ++i) {
    w[i].model = "W" + std::to_string(i);
    w[i].gmem = wl[i].gmem;
  }
  c->table = ColocationTable::FromParts(std::move(w), {});
  const size_t n = wl.size();
  c->truth.assign(n * n, 1.0f);
  std::vector<float> pred(n * n, 1.0f);
  for (const auto& [k, v] : speed) {
    c->truth[k.first * n + k.second] = v;
    pred[k.first * n + k.second] = v;
  }
  for (const auto& [k, v] : predicted) pred[k.first * n + k.second] = v;
  c->model = InterferenceModel::FromMatrix(n, pred);
  for (const Wl& x : wl) c->sharing_score.push_back(x.ss);
  c->mean_speed.assign(n, 1.0f);
  c->job_workload = std::move(job_workload);
  c->source = "test";
  return c;
}

SimResult RunShared(const Cluster& cl, const Trace& t, std::shared_ptr<ColocationContext> ctx,
              const std::string& spec = "lucid:estimator=oracle,pas=false,profiler=false") {
  SimConfig cfg;
  cfg.policy = spec;
  auto parts = MakeLucidPolicy(spec, 1, &t, ctx);
  EXPECT_TRUE(parts.ok()) << (parts.ok() ? "" : parts.error().message);
  auto r = Simulate(t, cl, cfg, std::move(*parts));
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  Status cons = CheckConservation(t, *r);
  EXPECT_TRUE(cons.ok()) << (cons.ok() ? "" : cons.error().message);
  return std::move(*r);
}

std::string ExplainOf(const SimResult& r, uint32_t job) {
  for (const auto& [j, s] : r.explain)
    if (j == job) return s;
  return "";
}

Cluster OneNode(uint16_t gpus) {
  Cluster c;
  AddVc(&c, "a", 1, gpus);
  return c;
}

// The policy decides on predicted speeds (0.9 / 0.9 here: admitted); the simulator runs the
// true ones (0.5 / 0.8).
const std::map<std::pair<int, int>, float> kPredictOk = {{{0, 1}, 0.9f}, {{1, 0}, 0.9f}};

TEST(ColocationTest, PartnerArrivalAndDepartureRetimeBothJobs) {
  // One GPU. A (1000 s of work, w0) starts at 0. B (1000 s, w1) arrives at 100 and packs onto
  // A's GPU: A runs at 0.5, B at 0.8. B needs 1000/0.8 = 1250 s → ends 1350. A did 100 s alone
  // plus 1250 × 0.5 = 625 s shared: 275 s left, alone → ends 1625.
  Trace t = MakeTrace({{0, 1000, 1}, {100, 1000, 1}});
  SimResult r = RunShared(OneNode(1), t, Ctx({{}, {}}, {{{0, 1}, 0.5f}, {{1, 0}, 0.8f}}, {0, 1}, kPredictOk));
  ASSERT_EQ(r.outcomes.size(), 2u);
  EXPECT_EQ(r.outcomes[0].start, 0);
  EXPECT_EQ(r.outcomes[0].end, 1625);
  EXPECT_EQ(r.outcomes[1].start, 100);
  EXPECT_EQ(r.outcomes[1].end, 1350);
  EXPECT_EQ(r.outcomes[1].wait, 0);
  EXPECT_EQ(r.shared_run[0], 1250);
  EXPECT_EQ(r.shared_run[1], 1250);
  EXPECT_EQ(r.packed_starts, 1u);
  ASSERT_EQ(r.packs.size(), 1u);
  EXPECT_EQ(r.packs[0], (std::pair<uint32_t, uint32_t>{1, 0}));
  // The GPU is busy once over [0, 1625].
  EXPECT_DOUBLE_EQ(r.gpu_seconds_busy, 1625.0);
  EXPECT_NE(ExplainOf(r, 1).find("packed with job 0"), std::string::npos) << ExplainOf(r, 1) << " / " << ExplainOf(r, 0);
}

TEST(ColocationTest, TwoSuccessivePartnersAndRoundingUp) {
  // A (1000 s, w0) at 0; B (200 s, w1) at 100 packs: B ends 100 + 200/0.8 = 350; A did 100 +
  // 125 → 775 left at 350. C (100 s, w1) at 500 packs: A has 625 left; C ends 500 + 125 = 625;
  // A did 62.5 more → 562.5 left, alone → ends 625 + ⌈562.5⌉ = 1188.
  Trace t = MakeTrace({{0, 1000, 1}, {100, 200, 1}, {500, 100, 1}});
  SimResult r = RunShared(OneNode(1), t, Ctx({{}, {}}, {{{0, 1}, 0.5f}, {{1, 0}, 0.8f}}, {0, 1, 1}, kPredictOk));
  EXPECT_EQ(r.outcomes[1].end, 350);
  EXPECT_EQ(r.outcomes[2].start, 500);
  EXPECT_EQ(r.outcomes[2].end, 625);
  EXPECT_EQ(r.outcomes[0].end, 1188);
  EXPECT_EQ(r.shared_run[0], 250 + 125);
  EXPECT_EQ(r.packed_starts, 2u);
}

// Rule scenarios: A (1 GPU unless stated, 1000 s, w0) runs from 0 on a 1-node VC whose other
// GPUs (if any) are taken; B arrives at 10. Packed ⇔ B starts at 10.
struct RuleCase {
  Wl a, b;
  float speed_ab = 0.9f, speed_ba = 0.9f;
  Duration b_duration = 1000;
};
SimResult RunRule(const RuleCase& c, double min_speed = 0.8) {
  Trace t = MakeTrace({{0, 1000, 1}, {10, c.b_duration, 1}});
  char spec[128];
  std::snprintf(spec, sizeof spec, "lucid:estimator=oracle,pas=false,profiler=false,min_speed=%g", min_speed);
  return RunShared(OneNode(1), t, Ctx({c.a, c.b}, {{{0, 1}, c.speed_ab}, {{1, 0}, c.speed_ba}}, {0, 1}), spec);
}
bool Packed(const SimResult& r) { return r.outcomes[1].start == 10; }

TEST(LucidRulesTest, MemoryLimitIsStrict) {
  // (iii) P.gmem < 24576 − J.gmem: 12000 < 24576 − 12575 = 12001 packs; with 12576 it is equal: no.
  EXPECT_TRUE(Packed(RunRule({{12000, 0}, {12575, 0}})));
  SimResult r = RunRule({{12000, 0}, {12576, 0}});
  EXPECT_FALSE(Packed(r));
  EXPECT_EQ(r.outcomes[1].start, 1000);
  EXPECT_NE(ExplainOf(r, 1).find("1 GPU memory over the limit"), std::string::npos) << ExplainOf(r, 1);
}

TEST(LucidRulesTest, SharingScoresMustSumToAtMostTwo) {
  // (iv) SS(J) + SS(P) ≤ 2.
  EXPECT_TRUE(Packed(RunRule({{1000, 1}, {1000, 1}})));
  EXPECT_TRUE(Packed(RunRule({{1000, 0}, {1000, 2}})));
  SimResult r = RunRule({{1000, 2}, {1000, 1}});
  EXPECT_FALSE(Packed(r));
  EXPECT_NE(ExplainOf(r, 1).find("sharing scores sum > 2"), std::string::npos) << ExplainOf(r, 1);
}

TEST(LucidRulesTest, PriorityAtMostTwiceThePartners) {
  // (v) J.priority ≤ 2 × P.priority; priority = duration × GPUs (oracle): P = 1000.
  EXPECT_TRUE(Packed(RunRule({{}, {}, 0.9f, 0.9f, 2000})));
  SimResult r = RunRule({{}, {}, 0.9f, 0.9f, 2001});
  EXPECT_FALSE(Packed(r));
  EXPECT_NE(ExplainOf(r, 1).find("priority more than ratio"), std::string::npos) << ExplainOf(r, 1);
}

TEST(LucidRulesTest, InterferenceModelRejectionIsNeverOverridden) {
  // (vi) both predicted speeds ≥ min_speed (0.8): 0.8 / 0.8 packs; 0.79 for either side does not.
  EXPECT_TRUE(Packed(RunRule({{}, {}, 0.8f, 0.8f})));
  SimResult r = RunRule({{}, {}, 0.8f, 0.79f});
  EXPECT_FALSE(Packed(r));
  EXPECT_NE(ExplainOf(r, 1).find("predicted speeds 0.790 / 0.800 < 0.80"), std::string::npos) << ExplainOf(r, 1);
  EXPECT_FALSE(Packed(RunRule({{}, {}, 0.79f, 0.8f})));
  // With the limit at 0.7 the same pair packs.
  EXPECT_TRUE(Packed(RunRule({{}, {}, 0.8f, 0.79f}, 0.7)));
}

TEST(LucidRulesTest, AtMostTwoJobsPerGpuAndSameGpuCount) {
  // (i) A and B share the only GPU from 10; C (1 GPU) at 20 finds no unshared partner and
  // waits until B ends (B: 100 s at 0.9 → ends 10 + ⌈111.1⌉ = 122), then packs onto A at 122.
  Trace t = MakeTrace({{0, 1000, 1}, {10, 100, 1}, {20, 100, 1}});
  SimResult r = RunShared(OneNode(1), t, Ctx({{}, {}}, {{{0, 1}, 0.9f}, {{1, 0}, 0.9f}}, {0, 1, 1}));
  EXPECT_EQ(r.outcomes[1].start, 10);
  EXPECT_EQ(r.outcomes[1].end, 122);
  EXPECT_EQ(r.outcomes[2].start, 122);
  EXPECT_NE(ExplainOf(r, 2).find("packed with job 0"), std::string::npos);
  // (ii) A takes both GPUs of the node; B (1 GPU) may not share A's 2 GPUs: it waits for A.
  Trace t2 = MakeTrace({{0, 1000, 2}, {10, 100, 1}});
  SimResult r2 = RunShared(OneNode(2), t2, Ctx({{}, {}}, {}, {0, 1}));
  EXPECT_EQ(r2.outcomes[1].start, 1000);
  EXPECT_EQ(r2.packed_starts, 0u);
  // Jobs over 8 GPUs never pack.
  Cluster two;
  AddVc(&two, "a", 2, 8);
  Trace t3 = MakeTrace({{0, 1000, 16}, {10, 100, 16}});
  SimResult r3 = RunShared(two, t3, Ctx({{}, {}}, {}, {0, 1}));
  EXPECT_EQ(r3.outcomes[1].start, 1000);
  EXPECT_NE(ExplainOf(r3, 1).find("more than 8 GPUs"), std::string::npos);
}

TEST(LucidRulesTest, PackingOffBlocksAtTheHeadLikeLucid) {
  // pack=false: exclusive placement in priority order, stopping at the first job that does not
  // fit. One GPU: B waits for A; nothing is shared.
  Trace t = MakeTrace({{0, 1000, 1}, {10, 100, 1}});
  SimResult r = RunShared(OneNode(1), t, Ctx({{}, {}}, {}, {0, 1}), "lucid:estimator=oracle,pack=false,profiler=false");
  EXPECT_EQ(r.outcomes[1].start, 1000);
  EXPECT_EQ(r.packed_starts, 0u);
  EXPECT_TRUE(r.shared_run.empty());
}

TEST(LucidPolicyTest, DefaultEstimatorIsXgboostOnAWindowAndFullRetrainingStaysAvailable) {
  Trace t = MakeTrace({{0, 1000, 1}});
  auto scheme = [&](const std::string& spec) {
    auto parts = MakeLucidPolicy(spec, 1, &t, Ctx({{}, {}}, {}, {0}, kPredictOk));  // kPredictOk names two workloads
    EXPECT_TRUE(parts.ok()) << spec << ": " << (parts.ok() ? "" : parts.error().message);
    auto* x = parts.ok() ? dynamic_cast<const XgbEstimator*>(parts->estimator.get()) : nullptr;
    EXPECT_NE(x, nullptr) << spec;
    return x ? std::make_pair(x->options().retrain, x->options().max_rows) : std::make_pair(XgbEstimator::Retrain{}, 0u);
  };
  EXPECT_EQ(scheme("lucid"), std::make_pair(XgbEstimator::Retrain::kWindow, 10000u));
  EXPECT_EQ(scheme("lucid:estimator=xgboost:retrain=full"), std::make_pair(XgbEstimator::Retrain::kFull, 200000u));
  EXPECT_EQ(scheme("lucid:estimator=xgboost"), std::make_pair(XgbEstimator::Retrain::kFull, 200000u));
}

TEST(LucidExplainTest, WatchedJobGetsPackingNotesAndDescription) {
  // Driving the scheduler directly: A starts at 0; B (watched) arrives at 10 and is packed
  // onto A; the note names the partner and the predicted speeds, Describe the priority and
  // the profile.
  Cluster c = OneNode(1);
  Trace t = MakeTrace({{0, 1000, 1}, {10, 1000, 1}});
  auto parts = MakeLucidPolicy("lucid:estimator=oracle,pas=false,profiler=false", 1, &t,
                               Ctx({{}, {}}, {}, {0, 1}, kPredictOk));
  ASSERT_TRUE(parts.ok()) << parts.error().message;
  auto placer = MakePlacer("consolidate", 1);
  ASSERT_TRUE(placer.ok());
  Scheduler sched(c, false, false, std::move(*parts), std::move(*placer));
  std::vector<ExplainNote> notes;
  sched.Watch(&t.jobs[1], &notes);
  std::vector<Decision> d;
  auto a = sched.Submit(&t.jobs[0], VcId(0), 0, 0, 0);
  ASSERT_TRUE(a.ok());
  sched.Schedule(0, &d);
  auto b = sched.Submit(&t.jobs[1], VcId(0), 0, 1, 10);
  ASSERT_TRUE(b.ok());
  sched.Schedule(10, &d);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(sched.view(*b).partner, *a);
  EXPECT_FALSE(sched.view(*b).owns_gpus);
  bool packed = false;
  for (const ExplainNote& n : notes)
    if (n.kind == "packed" && n.text.find("packed with job 0") != std::string::npos && n.t == 10) packed = true;
  EXPECT_TRUE(packed);
  std::vector<ExplainNote> desc;
  sched.Describe(*b, 10, &desc);
  std::string all;
  for (const ExplainNote& n : desc) all += n.kind + ": " + n.text + "\n";
  EXPECT_NE(all.find("priority: priority 1000 = estimated duration 1000 s x 1 GPU(s)"), std::string::npos) << all;
  EXPECT_NE(all.find("profile: workload W1"), std::string::npos) << all;
  EXPECT_NE(all.find("sharing: shares its GPUs"), std::string::npos) << all;
  // A finishes first: B keeps the GPU and now holds it.
  sched.Finish(*a, 500);
  EXPECT_EQ(sched.view(*b).partner, kNoSlot);
  EXPECT_TRUE(sched.view(*b).owns_gpus);
  EXPECT_EQ(sched.cluster_state().free_gpus(NodeId(0)), 0);
  sched.Finish(*b, 900);
  EXPECT_EQ(sched.cluster_state().free_gpus(NodeId(0)), 1);
}

TEST(LucidProfilerTest, ShortJobsFinishThereOthersAreHandedOverKeepingTheirWork) {
  // VC a: 2 nodes × 1 GPU; the profiler takes one (a keeps a-0). Limit 200 s.
  // J0 (100 s) and J1 (500 s) arrive at 0 and queue in the profiler (least-GPU-first, then
  // submit, then trace order): J0 runs 0..100 there and is done. J1 runs 100..300 there, is
  // handed over with 300 s left and runs on a-0 300..600. J2 (16 GPUs) skips the profiler and
  // is rejected: a has 1 GPU left. J3 (1 GPU, 50 s) at 10 waits behind J1 in the profiler:
  // 300..350.
  Cluster c;
  AddVc(&c, "a", 2, 1);
  Trace t = MakeTrace({{0, 100, 1}, {0, 500, 1}, {0, 10, 16}, {10, 50, 1}});
  SimResult r = RunShared(c, t, nullptr, "lucid:estimator=oracle,pack=false,profiler_nodes=1,profiler_limit=200");
  EXPECT_EQ(r.outcomes[0].start, 0);
  EXPECT_EQ(r.outcomes[0].end, 100);
  EXPECT_EQ(r.outcomes[1].start, 100);
  EXPECT_EQ(r.outcomes[1].end, 600);
  EXPECT_EQ(r.outcomes[1].wait, 100);
  EXPECT_EQ(r.outcomes[1].run, 500);
  EXPECT_EQ(r.outcomes[2].status, OutcomeStatus::kRejected);
  EXPECT_EQ(r.outcomes[3].start, 300);
  EXPECT_EQ(r.outcomes[3].end, 350);
  EXPECT_EQ(r.profiled, 3u);
  EXPECT_EQ(r.done_in_profiler, 2u);
}

TEST(LucidRulesTest, PasSwitchesPackingOffWhenFewSubmissionsAreForecast) {
  // PAS (threshold 2 jobs per 10 min, checked every 100 s). A (VC a, 1 GPU) at 0, B at 10.
  // Alone, the forecast at t = 0 is the current bin's count (1): packing off, B waits for A.
  // With 10 more jobs submitted at 0 in VC b the forecast is 11 > 2: B packs onto A at 10.
  Cluster c;
  AddVc(&c, "a", 1, 1);
  AddVc(&c, "b", 1, 8);
  const std::string spec = "lucid:estimator=oracle,profiler=false,tune=false";
  Trace quiet = MakeTrace({{0, 1000, 1}, {10, 1000, 1}});
  SimResult r1 = RunShared(c, quiet, Ctx({{}, {}}, {}, {0, 1}), spec);
  EXPECT_EQ(r1.outcomes[1].start, 1000);
  EXPECT_EQ(r1.packed_starts, 0u);
  std::vector<JobSpec> busy = {{0, 1000, 1}, {10, 1000, 1}};
  std::vector<uint8_t> w = {0, 1};
  for (int i = 0; i < 10; ++i) {
    busy.push_back({0, 50, 1, "b"});
    w.push_back(0);
  }
  SimResult r2 = RunShared(c, MakeTrace(busy), Ctx({{}, {}}, {}, w), spec);
  EXPECT_EQ(r2.outcomes[1].start, 10);
  EXPECT_GE(r2.packed_starts, 1u);
}

TEST(LucidForecastTest, LevelTimeOfDayAndPercentile) {
  SubmissionForecaster f;
  // Day 0: 6 jobs in bin 0 (t 0..599), 3 in bin 1. Day 1 at the same bins: 2 and 1.
  for (int i = 0; i < 6; ++i) f.Observe(10);
  for (int i = 0; i < 3; ++i) f.Observe(700);
  for (int i = 0; i < 2; ++i) f.Observe(86400 + 5);
  f.Observe(86400 + 601);
  bool known = false;
  EXPECT_DOUBLE_EQ(f.TimeOfDay(2 * 86400, &known), (6 + 2) / 2.0);
  EXPECT_TRUE(known);
  // Level at t = 86400 + 1200: bins 144..145 (counts 2, 1) and the 4 empty bins before them.
  EXPECT_DOUBLE_EQ(f.Level(86400 + 1200), 3 / 6.0);
  // Forecast at 2 days + 0: ½ level + ½ time of day for each of 5 bins.
  double level = f.Level(2 * 86400);
  double expect = 0;
  for (int k = 0; k < 5; ++k) {
    double tod = f.TimeOfDay(2 * 86400 + k * 600, &known);
    expect += known ? 0.5 * level + 0.5 * tod : level;
  }
  EXPECT_DOUBLE_EQ(f.PredictMean(2 * 86400, 5), expect / 5);
  EXPECT_DOUBLE_EQ(f.CountPercentile(86400 + 1200, 1.0), 6);
  EXPECT_DOUBLE_EQ(f.CountPercentile(86400 + 1200, 0.0), 0);
}

// TimeOfDay reads per-slot totals; it must equal the plain mean over the past days' bins
// (b − 144, b − 288, … ≥ 0) for submissions in and out of order and queries before, at and
// after the newest bin.
TEST(LucidForecastTest, TimeOfDayEqualsTheMeanOverPastDays) {
  SubmissionForecaster f;
  Rng rng(7, "forecast-test");
  std::vector<uint32_t> counts;  // per bin from the first one (t = 0)
  f.Observe(0);
  counts.push_back(1);
  for (int step = 0; step < 3000; ++step) {
    const Time t = static_cast<Time>(rng.NextU64() % (9 * 86400));  // any order, within 9 days
    f.Observe(t);
    const size_t b = static_cast<size_t>(t / 600);
    if (counts.size() <= b) counts.resize(b + 1, 0);
    ++counts[b];
    if (step % 10) continue;
    const Time q = static_cast<Time>(rng.NextU64() % (11 * 86400));
    const int64_t qb = q / 600;
    double s = 0;
    int n = 0;
    for (int64_t i = qb - 144; i >= 0; i -= 144, ++n) s += static_cast<size_t>(i) < counts.size() ? counts[static_cast<size_t>(i)] : 0;
    bool known = false;
    const double tod = f.TimeOfDay(q, &known);
    ASSERT_EQ(known, n > 0) << "query " << q;
    ASSERT_EQ(tod, n > 0 ? s / n : 0.0) << "query " << q;
  }
}

TEST(ColocationPropertyTest, NoRejectedPackingIsEverTakenOverAGeneratedWorkload) {
  // 12 random workloads, random (asymmetric) speeds in [0.4, 1], memory and scores; 600 jobs of
  // 1..4 GPUs on 2 nodes × 4 GPUs. Every packed start must satisfy every rule.
  Rng rng(42, "coloc-property");
  const int n = 12;
  std::vector<Wl> wl(n);
  std::map<std::pair<int, int>, float> speed;
  for (int i = 0; i < n; ++i) wl[i] = {static_cast<float>(2000 + rng.Below(16000)), static_cast<uint8_t>(rng.Below(3))};
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) speed[{a, b}] = static_cast<float>(0.4 + 0.6 * rng.Uniform());
  std::vector<JobSpec> specs;
  std::vector<uint8_t> jw;
  Time t = 0;
  for (int i = 0; i < 600; ++i) {
    t += static_cast<Time>(rng.Below(120));
    specs.push_back({t, static_cast<Duration>(60 + rng.Below(3000)), static_cast<uint32_t>(1u << rng.Below(3))});
    jw.push_back(static_cast<uint8_t>(rng.Below(n)));
  }
  Trace tr = MakeTrace(specs);
  Cluster cl;
  AddVc(&cl, "a", 2, 4);
  auto ctx = Ctx(wl, speed, jw);
  SimResult r = RunShared(cl, tr, ctx, "lucid:estimator=oracle,pas=false,profiler=false,min_speed=0.7");
  ASSERT_GT(r.packed_starts, 20u);
  for (const auto& [j, p] : r.packs) {
    const uint16_t a = ctx->workload(JobId(j)), b = ctx->workload(JobId(p));
    EXPECT_GE(ctx->PredictedSpeed(a, b), 0.7f);
    EXPECT_GE(ctx->PredictedSpeed(b, a), 0.7f);
    EXPECT_EQ(tr.jobs[j].gpus, tr.jobs[p].gpus);
    EXPECT_LT(wl[b].gmem, 24576 - wl[a].gmem);
    EXPECT_LE(wl[a].ss + wl[b].ss, 2);
    // The partner was running and not yet finished when j started.
    EXPECT_LE(r.outcomes[p].start, r.outcomes[j].start);
    EXPECT_GT(r.outcomes[p].end, r.outcomes[j].start);
  }
  // At most two jobs on any GPU: the partner of a packed start is never itself packed-with at
  // an overlapping time by a third job (checked structurally by the scheduler) — here: no job
  // is the partner of two packed starts whose runs overlap.
  std::map<uint32_t, std::vector<uint32_t>> by_partner;
  for (const auto& [j, p] : r.packs) by_partner[p].push_back(j);
  for (const auto& [p, js] : by_partner)
    for (size_t x = 0; x < js.size(); ++x)
      for (size_t y = x + 1; y < js.size(); ++y) {
        const auto &ox = r.outcomes[js[x]], &oy = r.outcomes[js[y]];
        EXPECT_TRUE(ox.end <= oy.start || oy.end <= ox.start) << "jobs " << js[x] << " and " << js[y] << " shared " << p;
      }
  // Determinism: the same inputs give the same schedule.
  SimResult r2 = RunShared(cl, tr, ctx, "lucid:estimator=oracle,pas=false,profiler=false,min_speed=0.7");
  for (size_t i = 0; i < r.outcomes.size(); ++i) EXPECT_EQ(r.outcomes[i].end, r2.outcomes[i].end);
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

TEST(FragmentationTest, HandComputedFgdRatio) {
  // One node, 2 GPUs. J0 (0.6 GPU) and J1 (1 GPU) run 0..1000: GPU0 has 400 milli free, GPU1 none.
  // Demand mix: (1 × 600), (1 × 1000), (1 × 300), each 1/3 (J2, 0.3 GPU, comes at 2000).
  // Whole-GPU task: no wholly free GPU → all 400 free is a fragment; 600-milli task: 400 < 600 →
  // 400; 300-milli task: fits → 0. Expected fragment = 800/3 milli = 0.2667 GPUs of 0.4 free.
  Cluster c;
  testing::AddVc(&c, "a", 1, 2);
  Trace t = testing::MakeTrace({{0, 1000, 1, "a", 600}, {0, 1000, 1}, {2000, 10, 1, "a", 300}});
  SimConfig cfg;
  cfg.policy = "fifo";
  cfg.frag_interval = 500;
  auto r = Simulate(t, c, cfg);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_GE(r->fragmentation.size(), 3u);
  EXPECT_EQ(r->fragmentation[0].t, 0);
  EXPECT_NEAR(r->fragmentation[0].free_gpus, 0.4, 1e-9);
  EXPECT_NEAR(r->fragmentation[0].fragmented_gpus, 0.8 / 3, 1e-9);
  EXPECT_NEAR(r->fragmentation[1].ratio(), 2.0 / 3, 1e-9);
  // From 1000 the node is idle: 2 GPUs free, wholly free, nothing fragmented.
  EXPECT_EQ(r->fragmentation[2].t, 1000);
  EXPECT_NEAR(r->fragmentation[2].free_gpus, 2.0, 1e-9);
  EXPECT_NEAR(r->fragmentation[2].ratio(), 0.0, 1e-9);
  // Whole-GPU traces skip the measure.
  Trace w = testing::MakeTrace({{0, 1000, 1}});
  auto r2 = Simulate(w, c, cfg);
  ASSERT_TRUE(r2.ok());
  EXPECT_TRUE(r2->fragmentation.empty());
}

}  // namespace
}  // namespace orrery
