// Recovery policies (sched/plugins/recovery.h): parsing with exact messages, and the decision
// per fault cause.
#include "sched/plugins/recovery.h"

#include <gtest/gtest.h>

namespace orrery {
namespace {

RecoveryPolicy Make(const std::string& spec) {
  Result<RecoveryPolicy> p = MakeRecovery(spec);
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
  return p.ok() ? *p : RecoveryPolicy{};
}

TEST(Recovery, ParsesNamesAndKeys) {
  EXPECT_EQ(RecoveryName(Make("none")), "none");
  EXPECT_EQ(RecoveryName(Make("requeue:from=scratch")), "requeue");
  const RecoveryPolicy a = Make("acme:spares=16,detect=5s,diagnose=2m");
  ASSERT_TRUE(std::holds_alternative<RecoveryAcme>(a));
  EXPECT_EQ(std::get<RecoveryAcme>(a).spares, 16u);
  EXPECT_EQ(std::get<RecoveryAcme>(a).detect, 5);
  EXPECT_EQ(std::get<RecoveryAcme>(a).diagnose, 120);
  EXPECT_FALSE(std::get<RecoveryRequeue>(Make("requeue:from=scratch")).from_checkpoint);
}

TEST(Recovery, BadSpecsSayWhatIsExpected) {
  EXPECT_EQ(MakeRecovery("slurm").error().message, "unknown recovery policy 'slurm' (choices: none, requeue, acme)");
  EXPECT_EQ(MakeRecovery("acme:spare=2").error().message,
            "recovery policy 'acme': unknown key 'spare' (keys: spares, detect, hang_detect, diagnose, swap, "
            "reschedule, human, restart, reinit, overlap)");
  EXPECT_EQ(MakeRecovery("acme:restart=pod").error().message,
            "recovery key 'restart': expected job or in-job, got \"pod\"");
  EXPECT_EQ(MakeRecovery("acme:overlap=1").error().message,
            "recovery key 'overlap': expected true or false, got \"1\"");
  EXPECT_EQ(MakeRecovery("requeue:from=disk").error().message,
            "recovery key 'from': expected scratch or checkpoint, got \"disk\"");
  EXPECT_EQ(MakeRecovery("acme:detect=5x").error().message,
            "recovery key 'detect': expected a duration such as 90, 30s, 5m, 3h or 2d, got \"5x\"");
  EXPECT_EQ(MakeRecovery("acme:spares=-1").error().message,
            "recovery key 'spares': expected an integer in [0, 100000], got \"-1\"");
}

TEST(Recovery, DurationsTakeUnits) {
  EXPECT_EQ(*ParseDurationText("90"), 90);
  EXPECT_EQ(*ParseDurationText("1.5h"), 5400);
  EXPECT_EQ(*ParseDurationText("2d"), 172800);
  EXPECT_FALSE(ParseDurationText("").ok());
  EXPECT_FALSE(ParseDurationText("m").ok());
}

TEST(Recovery, AcmeDoesNotRetryScriptErrors) {
  const RecoveryAction a = Decide(Make("acme"), FaultCause::kScript);
  EXPECT_FALSE(a.retry);
  EXPECT_FALSE(a.automatic);
  EXPECT_FALSE(a.cordon);
  EXPECT_EQ(a.diagnose, 60 + 3600);  // diagnosis, then the user's fix
  // requeue retries a script error blindly, max_requeues (3) times in a row, then a person acts.
  const RecoveryPolicy rq = Make("requeue");
  EXPECT_TRUE(Decide(rq, FaultCause::kScript, 2).automatic);
  EXPECT_FALSE(Decide(rq, FaultCause::kScript, 3).automatic);
}

TEST(Recovery, AcmeCordonsNodeFaultsOnly) {
  const RecoveryPolicy acme = Make("acme:spares=4");
  for (FaultCause c : {FaultCause::kGpu, FaultCause::kHbm, FaultCause::kNvlink, FaultCause::kNic, FaultCause::kHost}) {
    const RecoveryAction a = Decide(acme, c);
    EXPECT_TRUE(a.cordon && a.use_spare && a.retry && a.automatic) << FaultCauseName(c);
    EXPECT_EQ(a.reschedule, 30);  // hot spare swap
  }
  EXPECT_FALSE(Decide(acme, FaultCause::kFramework).cordon);
  // Without spares a cold node is rescheduled (600 s).
  EXPECT_EQ(Decide(Make("acme"), FaultCause::kGpu).reschedule, 600);
  // requeue and none never cordon: they do not remember the node.
  EXPECT_FALSE(Decide(Make("requeue"), FaultCause::kGpu).cordon);
  EXPECT_FALSE(Decide(Make("none"), FaultCause::kGpu).cordon);
}

TEST(Recovery, InJobRestartNeedsAWarmSpareForNodeFaults) {
  const RecoveryPolicy warm = Make("acme:spares=4,restart=in-job,reinit=2m,overlap=true");
  const RecoveryAction g = Decide(warm, FaultCause::kGpu);
  EXPECT_TRUE(g.in_job && g.overlap && g.use_spare);
  EXPECT_EQ(g.reinit, 120);
  EXPECT_EQ(g.reschedule_cold, 600);  // if the spares are used up
  EXPECT_TRUE(Decide(warm, FaultCause::kFramework).in_job);  // same nodes, processes kept
  EXPECT_FALSE(Decide(warm, FaultCause::kScript).in_job);    // fixed code: a new launch
  // No spares: no warm standby takes the node's ranks; the job is relaunched on a cold node.
  const RecoveryAction cold = Decide(Make("acme:restart=in-job"), FaultCause::kHbm);
  EXPECT_FALSE(cold.in_job);
  EXPECT_EQ(cold.reschedule, 600);
  // HeldFor: the attempt's nodes stay allocated from the fault to the decision: 10 + 60; a
  // trace's recorded end is the detection already: the diagnosis only.
  EXPECT_EQ(Decide(Make("acme"), FaultCause::kGpu).HeldFor(false), 70);
  EXPECT_EQ(Decide(Make("acme"), FaultCause::kGpu).HeldFor(true), 60);
  // none: a hang holds its nodes until the watchdog (1800 s); the user's hour does not.
  EXPECT_EQ(Decide(Make("none"), FaultCause::kHang).HeldFor(false), 1800);
  // acme does not retry a script error: detection only (10 s).
  EXPECT_EQ(Decide(Make("acme"), FaultCause::kScript).HeldFor(false), 10);
}

TEST(Recovery, HangsAndLossSpikesAreNoticedLate) {
  // A hang: acme sees no progress for 300 s; requeue waits for the collective timeout (1800 s)
  // plus its exit detection (60 s); none for the same timeout.
  EXPECT_EQ(Decide(Make("acme"), FaultCause::kHang).detect, 300);
  EXPECT_EQ(Decide(Make("requeue"), FaultCause::kHang).detect, 1860);
  EXPECT_EQ(Decide(Make("none"), FaultCause::kHang).detect, 1800);
  // A loss spike: acme's metric watch (10 s) vs a person (3600 s) for requeue.
  EXPECT_EQ(Decide(Make("acme"), FaultCause::kLossSpike).detect, 10);
  EXPECT_EQ(Decide(Make("requeue"), FaultCause::kLossSpike).detect, 3600);
  EXPECT_FALSE(Decide(Make("requeue"), FaultCause::kLossSpike).automatic);
}

}  // namespace
}  // namespace orrery
