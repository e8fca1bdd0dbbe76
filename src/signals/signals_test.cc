// Semantic signals in the simulator: the log the tracker reads is consistent with the truth,
// a reading changes an EASY reservation end to end, runs are deterministic, and a run whose
// signals never fire is the run without them.
#include <gtest/gtest.h>

#include "logs/progress.h"
#include "sched/framework/test_util.h"
#include "semantic/payload.h"
#include "signals/log_signals.h"
#include "signals/signal_set.h"
#include "sim/simulator.h"

namespace orrery::signals {
namespace {

using orrery::testing::AddVc;
using orrery::testing::JobSpec;
using orrery::testing::MakeTrace;

Job AJob(uint32_t id, Duration d, uint32_t gpus) {
  Job j;
  j.id = JobId(id);
  j.duration = d;
  j.gpus = gpus;
  return j;
}

TEST(LogSignalsTest, TruthMatchesThePayload) {
  const Job j = AJob(7, 20000, 8);
  const semantic::SemanticPayload p = semantic::GeneratePayload(j, 1);
  const LogTruth t = TruthOf(j, 1, LogSignalOptions{});
  EXPECT_EQ(t.steps, static_cast<int64_t>(p.steps));
  EXPECT_DOUBLE_EQ(t.step_s, p.step_s);
  // The planned run is start-up + steps × step time = the recorded duration (a completed job).
  EXPECT_NEAR(t.startup_s + static_cast<double>(t.steps) * t.step_s, 20000, 1e-6 + t.step_s);
  EXPECT_EQ(t.StepsAt(0), 0);
  EXPECT_EQ(t.StepsAt(20000), t.steps);
  EXPECT_GE(static_cast<double>(t.log_every) * t.step_s, 10.0 - 1e-9);  // a line every ≥ 10 s
}

// Without jitter the tracker's ETA at a read is the truth's remaining step time up to one log
// interval: remaining = (steps − step) × step_s, step the last multiple of log_every reached.
TEST(LogSignalsTest, EtaFollowsTheTruthThroughTheRealTracker) {
  LogSignalOptions o;
  o.jitter = 0;
  LogSignals s(1, o);
  const Job j = AJob(3, 36000, 8);
  const LogTruth t = TruthOf(j, 1, o);
  s.AttemptStarted(3, j, 0, 0, 0);
  const SignalReading r = s.Read(3, 18000, 18000);
  const int64_t reached = t.StepsAt(18000);
  const int64_t printed = reached / t.log_every * t.log_every;
  EXPECT_EQ(r.step, printed);
  EXPECT_EQ(r.total, t.steps);
  EXPECT_NEAR(r.eta_s, static_cast<double>(t.steps - printed) * t.step_s, 0.001 * 36000);
  EXPECT_LE(s.lines_written(), o.max_lines);  // only the tail is read
}

// A resumed attempt's log starts after its checkpoint: its first line is past the step reached.
TEST(LogSignalsTest, ResumedAttemptPrintsFromItsCheckpoint) {
  LogSignals s(1, LogSignalOptions{});
  const Job j = AJob(4, 36000, 8);
  const LogTruth t = TruthOf(j, 1, LogSignalOptions{});
  s.AttemptStarted(4, j, 1, 50000, 30000);
  EXPECT_EQ(s.Read(4, 50000, 30000).step, -1);  // nothing new yet
  const SignalReading r = s.Read(4, 52000, 32000);
  EXPECT_GT(r.step, t.StepsAt(30000));
  EXPECT_LE(r.step, t.StepsAt(32000));
}

TEST(LogSignalsTest, OptionsAndSignalSetsAreValidated) {
  EXPECT_EQ(ParseLogSignalOptions("interval=60,jitter=0.1")->interval, 60);
  EXPECT_EQ(ParseLogSignalOptions("interval=0").error().message,
            "tracker option 'interval': expected seconds in [1, 86400], got \"0\"");
  EXPECT_EQ(ParseLogSignalOptions("speed=2").error().message,
            "tracker options: unknown key 'speed' (expected interval, jitter, max_lines, min_line_s)");
  EXPECT_TRUE(ParseSignalSet("advisor,tracker")->advisor);
  EXPECT_EQ(ParseSignalSet("advisor,oracle").error().message,
            "--signals: expected a list of advisor, tracker (or none), got \"oracle\"");
  EXPECT_EQ(*WithAdvisor("qssf"), "qssf:estimator=semantic");
  EXPECT_EQ(*WithAdvisor("easy:bf_max_job_test=10"), "easy:bf_max_job_test=10,estimator=semantic");
  EXPECT_EQ(*WithAdvisor("tiresias:preset=lucid"), "tiresias:preset=lucid");
  EXPECT_EQ(WithAdvisor("qssf:estimator=oracle").error().message,
            "--signals advisor: policy 'qssf:estimator=oracle' already names estimator=oracle (the advisor is "
            "estimator=semantic; drop one of them)");
}

// ---- end to end through the simulator
//
// One 8-GPU node, EASY with walltime estimates. A (6 GPUs) runs 0..2000 but asked for 10000 s;
// H (8 GPUs, 500 s) arrives at 1 and is blocked; B (2 GPUs, 3000 s, walltime 3000) arrives at
// 1000 and fits the 2 free GPUs.
//   * signals off: H's shadow time is A's believed end, 10000; B ends at 4000 ≤ 10000 and is
//     backfilled at 1000; H starts when B's GPUs free at 4000.
//   * tracker (reads every 600 s): at 600 A's log says ~1/3 done, ETA ≈ 1400 s, so A's
//     believed end is ≈ 2000 = H's shadow; B would end at 4000 > 2000 on H's reserved node:
//     B waits; H starts at A's end 2000, B after H at 2500.
struct Outcome {
  Time h_start, b_start;
};
Outcome RunEasy(JobSignals* signals) {
  Cluster c;
  AddVc(&c, "a", 1, 8);
  Trace t = MakeTrace({JobSpec{0, 2000, 6, "a", 1000, 0, 10000}, JobSpec{1, 500, 8, "a", 1000, 0, 10000},
                       JobSpec{1000, 3000, 2, "a", 1000, 0, 3000}});
  SimConfig cfg;
  cfg.policy = "easy";
  cfg.signals = signals;
  auto r = Simulate(t, c, cfg);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return {r->outcomes[1].start, r->outcomes[2].start};
}

TEST(SignalsSimTest, TrackerEtaChangesTheEasyReservation) {
  const Outcome off = RunEasy(nullptr);
  EXPECT_EQ(off.b_start, 1000);
  EXPECT_EQ(off.h_start, 4000);
  LogSignals tracker(1, LogSignalOptions{});
  const Outcome on = RunEasy(&tracker);
  EXPECT_EQ(on.h_start, 2000);
  EXPECT_EQ(on.b_start, 2500);
  EXPECT_GT(tracker.lines_written(), 0u);
}

Trace Mixed(uint32_t n) {
  std::vector<JobSpec> specs;
  for (uint32_t i = 0; i < n; ++i)
    specs.push_back(JobSpec{static_cast<Time>(i * 97), static_cast<Duration>(300 + (i * 7919) % 20000),
                            1u << (i % 4), "a", 1000, 0, 30000});
  return MakeTrace(specs);
}

std::vector<std::pair<Time, Time>> Timeline(const Trace& t, const std::string& policy, JobSignals* s) {
  Cluster c;
  AddVc(&c, "a", 2, 8);
  SimConfig cfg;
  cfg.policy = policy;
  cfg.signals = s;
  auto r = Simulate(t, c, cfg);
  EXPECT_TRUE(r.ok()) << r.error().message;
  std::vector<std::pair<Time, Time>> out;
  for (const JobOutcome& o : r->outcomes) out.emplace_back(o.start, o.end);
  return out;
}

TEST(SignalsSimTest, SameSeedSameRun) {
  const Trace t = Mixed(300);
  for (const char* policy : {"easy", "srtf:estimator=walltime", "tiresias"}) {
    SCOPED_TRACE(policy);
    LogSignals a(5, LogSignalOptions{}), b(5, LogSignalOptions{});
    EXPECT_EQ(Timeline(t, policy, &a), Timeline(t, policy, &b));
    EXPECT_EQ(a.bytes_written(), b.bytes_written());
  }
}

// Jobs shorter than the read interval are never read: the run is the run without signals.
TEST(SignalsSimTest, SignalsThatNeverFireChangeNothing) {
  Trace t = Mixed(200);
  for (Job& j : t.jobs) j.duration = 100 + j.duration % 400;
  LogSignals s(1, LogSignalOptions{});
  EXPECT_EQ(Timeline(t, "easy", &s), Timeline(t, "easy", nullptr));
  EXPECT_EQ(s.lines_written(), 0u);
}

TEST(SignalsSimTest, SharingPoliciesAreRefused) {
  Cluster c;
  AddVc(&c, "a", 1, 8);
  LogSignals s(1, LogSignalOptions{});
  SimConfig cfg;
  cfg.policy = "lucid";
  cfg.signals = &s;
  auto r = Simulate(Mixed(4), c, cfg);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "policy 'lucid': semantic signals are not modelled for GPU-sharing policies (re-timed progress)");
}

}  // namespace
}  // namespace orrery::signals
