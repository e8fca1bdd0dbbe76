// The slurm policy driven like the simulator drives it: priority order from the site's
// files, limits that hold jobs although GPUs are free, backfill behind a reservation.
#include "sched/plugins/slurm_policy.h"

#include <deque>
#include <fstream>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

#include "sched/framework/internal/scheduler.h"
#include "sched/framework/test_util.h"
#include "sched/plugins/placers.h"
#include "sched/plugins/policies.h"

namespace orrery {
namespace {

// Under the process id: ctest runs tests (and the sanitized build's copies) side by side, and
// they write files of the same names.
std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/orrery_slurm_policy_" + std::to_string(::getpid()) + "_" + name;
  std::ofstream(path) << text;
  return path;
}

// ann (account a, QOS normal) and bob (account b, QOS high: priority 100); normal lets a user
// hold at most 8 GPUs. PriorityWeightQOS=1000: bob's jobs have priority 1000, ann's 1.
const char* kAccounts =
    "Account|User|Share|QOS|Def QOS\n"
    "root||1|normal,high|normal\n"
    " a||1|normal|normal\n"
    "  a|ann|1|normal|normal\n"
    " b||1|normal,high|high\n"
    "  b|bob|1|normal,high|high\n"
    "\n"
    "Name|Priority|MaxTRESPU\n"
    "normal|0|gres/gpu=8\n"
    "high|100|\n";

struct SlurmRig {
  Cluster cluster;
  Trace trace;
  std::unique_ptr<Scheduler> s;
  std::vector<Decision> out;

  SlurmRig(int nodes, const std::string& scheduler, const std::string& partition_extra = "",
           const std::string& accounts = kAccounts) {
    testing::AddVc(&cluster, "batch", nodes, 8);
    trace.users.Intern("ann");
    trace.users.Intern("bob");
    trace.users.Intern("carl");  // no association: no limits, priority 1
    const std::string conf = WriteFile(
        "slurm-" + scheduler + ".conf",
        "PriorityType=priority/multifactor\nPriorityWeightQOS=1000\nSchedulerType=sched/" + scheduler +
            "\nNodeName=n[1-" + std::to_string(nodes) + "] CPUs=64 Gres=gpu:8\nPartitionName=batch Nodes=ALL Default=YES " +
            partition_extra + "\n");
    const std::string acc = WriteFile("slurm-accounts.txt", accounts);
    PolicyEnv env{&trace, &cluster, nullptr, {}};
    auto parts = MakePolicyFor("slurm:conf=" + conf + ",accounts=" + acc, 1, &env);
    EXPECT_TRUE(parts.ok()) << parts.error().message;
    auto placer = MakePlacer("consolidate", 1);
    s = std::make_unique<Scheduler>(cluster, false, false, std::move(*parts), std::move(*placer));
  }
  // Jobs are added before any is submitted (their addresses stay put).
  void Add(uint32_t user, Time submit, uint32_t gpus, Duration walltime) {
    Job j;
    j.id = JobId(static_cast<uint32_t>(trace.jobs.size()));
    j.user = UserId(user);
    j.submit = submit;
    j.gpus = gpus;
    j.walltime = walltime;
    trace.jobs.push_back(j);
  }
  uint32_t Submit(uint32_t i, Time now) {
    auto slot = s->Submit(&trace.jobs[i], VcId(0), 0, i, now);
    EXPECT_TRUE(slot.ok()) << slot.error().message;
    return slot.ok() ? *slot : kNoSlot;
  }
  std::string Refusal(uint32_t i, Time now) {
    auto slot = s->Submit(&trace.jobs[i], VcId(0), 0, i, now);
    return slot.ok() ? "admitted" : slot.error().message;
  }
  std::string Cycle(Time t) {
    out.clear();
    s->RunCycle(t, &out);
    std::string d;
    for (const Decision& x : out)
      if (const auto* st = std::get_if<StartDecision>(&x)) d += "S" + std::to_string(st->slot) + " ";
    return d;
  }
};

// One node of 8 GPUs. ann's job 0 runs; ann's job 1 (t=1) and bob's job 2 (t=2) wait. When
// job 0 ends, bob's job starts first: priority 1000 (QOS 100/100 × 1000) against ann's 1,
// although ann submitted earlier (FIFO would start job 1).
TEST(SlurmPolicy, PriorityOrdersTheQueue) {
  SlurmRig r(1, "builtin");
  r.Add(0, 0, 8, 100);
  r.Add(0, 1, 8, 100);
  r.Add(1, 2, 8, 100);
  const uint32_t j0 = r.Submit(0, 0);
  EXPECT_EQ(r.Cycle(0), "S" + std::to_string(j0) + " ");
  const uint32_t j1 = r.Submit(1, 1);
  const uint32_t j2 = r.Submit(2, 2);
  EXPECT_EQ(r.Cycle(2), "");
  r.s->Finish(j0, 100);
  EXPECT_EQ(r.Cycle(100), "S" + std::to_string(j2) + " ");
  r.s->Finish(j2, 200);
  EXPECT_EQ(r.Cycle(200), "S" + std::to_string(j1) + " ");
}

// Two nodes. normal's MaxTRESPU of 8 GPUs holds ann's second job although a node is free;
// bob (QOS high, no such limit) takes it. ann's job runs once her first one ends.
TEST(SlurmPolicy, QosLimitHoldsAJobWhileGpusAreFree) {
  SlurmRig r(2, "builtin");
  r.Add(0, 0, 8, 100);
  r.Add(0, 0, 8, 100);
  r.Add(1, 5, 8, 100);
  const uint32_t j0 = r.Submit(0, 0);
  const uint32_t j1 = r.Submit(1, 0);
  std::vector<ExplainNote> before;
  r.s->policy().reschedule->Describe(r.s->view(j1), 0, &before);
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0].text, "pending, not yet considered by a scheduling pass, priority 1");
  EXPECT_EQ(r.Cycle(0), "S" + std::to_string(j0) + " ");  // j1: QOSMaxGRESPerUser
  std::vector<ExplainNote> notes;
  r.s->policy().reschedule->Describe(r.s->view(j1), 0, &notes);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].text, "pending, reason QOSMaxGRESPerUser, priority 1");
  const uint32_t j2 = r.Submit(2, 5);
  EXPECT_EQ(r.Cycle(5), "S" + std::to_string(j2) + " ");
  r.s->Finish(j0, 100);
  EXPECT_EQ(r.Cycle(100), "S" + std::to_string(j1) + " ");
}

// One node. ann's job 0 (4 GPUs, time limit 1000 s) runs. bob's job 1 (8 GPUs) cannot start:
// its reservation is the node at 1020 (1000 rounded up to bf_resolution 60). ann's job 2
// (4 GPUs, 500 s -> 540 s) ends before it and is backfilled; her job 3 (4 GPUs, 2000 s)
// would delay it and waits. Under sched/builtin nothing passes job 1.
TEST(SlurmPolicy, BackfillRespectsTheReservation) {
  for (const std::string sched : {"backfill", "builtin"}) {
    SlurmRig r(1, sched);
    r.Add(0, 0, 4, 1000);
    r.Add(1, 1, 8, 1000);
    r.Add(0, 2, 4, 500);
    r.Add(0, 3, 4, 2000);
    const uint32_t j0 = r.Submit(0, 0);
    EXPECT_EQ(r.Cycle(0), "S" + std::to_string(j0) + " ");
    r.Submit(1, 3);
    const uint32_t j2 = r.Submit(2, 3);
    r.Submit(3, 3);
    EXPECT_EQ(r.Cycle(3), sched == "backfill" ? "S" + std::to_string(j2) + " " : "") << sched;
  }
}

// Reservations by earlier jobs of the same size do not hide an earlier gap from a shorter
// job. Three nodes; carl (no association: no limits) runs A (8 GPUs, limit 1000) and B (8,
// 3000) from t=0. At t=3, times from now rounded up to bf_resolution 60: A frees 8 GPUs at
// +1020 and B 8 more at +3000. bob's C (24 GPUs, 1000 s -> 1020) is reserved at +3000 until
// +4020. carl's D (16 GPUs, 2500 -> 2520) does not fit the 16-GPU gap [+1020, +3000) (1980 s)
// and is reserved at +4020; E (16 GPUs, 1000 -> 1020) fits that gap and is reserved there,
// which leaves no GPU free at +1020. F (8 GPUs, 1500 s) fits the 8 free GPUs now but would
// still hold them at +1020: with E it waits, without E it is backfilled now.
TEST(SlurmPolicy, AnEarlierGapStaysOpenToAShorterJobOfTheSameSize) {
  for (const bool with_e : {true, false}) {
    SlurmRig r(3, "backfill");
    r.Add(2, 0, 8, 1000);   // A
    r.Add(2, 0, 8, 3000);   // B
    r.Add(1, 3, 24, 1000);  // C
    r.Add(2, 3, 16, 2500);  // D
    r.Add(2, 3, 16, 1000);  // E
    r.Add(2, 3, 8, 1500);   // F
    r.Submit(0, 0);
    r.Submit(1, 0);
    r.Cycle(0);
    EXPECT_EQ(r.out.size(), 2u);  // A and B start
    for (uint32_t i = 2; i < 6; ++i)
      if (with_e || i != 4) r.Submit(i, 3);
    const std::string started = r.Cycle(3);
    EXPECT_EQ(started.empty(), with_e) << "with E: " << with_e << ", started: " << started;
  }
}

// The backfill pass runs at most every bf_interval (30 s by default), as Slurm's backfill
// thread does. One node: ann's job 0 (4 GPUs) runs; bob's job 1 (8 GPUs, t=3) blocks the main
// pass, and the backfill pass of t=3 (the first) reserves the node for it at 1020. ann's job 2
// (4 GPUs, 500 s, t=10) would fit now and ends before 1020, but the next pass is due at
// 3 + 30 = 33: it starts then, at the wakeup the policy asks for. With bf_interval=1 the pass
// of t=10 is due (3 + 1 <= 10) and starts it at once.
TEST(SlurmPolicy, BackfillRunsEveryBfInterval) {
  for (const std::string interval : {"", "\nSchedulerParameters=bf_interval=1"}) {
    SlurmRig r(1, "backfill", interval);
    r.Add(0, 0, 4, 1000);
    r.Add(1, 1, 8, 1000);
    r.Add(0, 2, 4, 500);
    const uint32_t j0 = r.Submit(0, 0);
    EXPECT_EQ(r.Cycle(0), "S" + std::to_string(j0) + " ");
    r.Submit(1, 3);
    EXPECT_EQ(r.Cycle(3), "") << interval;
    const uint32_t j2 = r.Submit(2, 10);
    if (interval.empty()) {
      EXPECT_EQ(r.Cycle(10), "");
      EXPECT_EQ(r.s->NextDecisionTime(10), 33);  // before the priority recalculation at 300
      EXPECT_EQ(r.Cycle(33), "S" + std::to_string(j2) + " ");
    } else {
      EXPECT_EQ(r.Cycle(10), "S" + std::to_string(j2) + " ");
    }
  }
}

// Admission: ann may have one job in the system (MaxSubmit 1); a time limit over the
// partition's MaxTime of 1 hour would keep a job pending forever, so it is counted as not run.
// bf_window: bob's job 1 (8 GPUs) can start at 1020 at the earliest. Within the default window
// (1440 minutes) it is reserved there and ann's 2000-second job 2 would delay it, so it
// waits; with bf_window=10 (600 s) job 1 gets no reservation and job 2 is backfilled.
TEST(SlurmPolicy, NoReservationBeyondTheBackfillWindow) {
  for (const std::string window : {"", "\nSchedulerParameters=bf_window=10"}) {
    SlurmRig r(1, "backfill", window);
    r.Add(0, 0, 4, 1000);
    r.Add(1, 1, 8, 1000);
    r.Add(0, 2, 4, 2000);
    const uint32_t j0 = r.Submit(0, 0);
    EXPECT_EQ(r.Cycle(0), "S" + std::to_string(j0) + " ");
    r.Submit(1, 3);
    const uint32_t j2 = r.Submit(2, 3);
    EXPECT_EQ(r.Cycle(3), window.empty() ? "" : "S" + std::to_string(j2) + " ") << window;
  }
}

// bf_max_job_user=1: the backfill pass tests one job per user. bob's 8-GPU job 1 waits for ann's
// job 0; bob's job 2 (1 GPU) would fit the free GPUs now but is his second job in the pass.
TEST(SlurmPolicy, BackfillTestsAtMostBfMaxJobUserJobsPerUser) {
  for (const std::string per_user : {"", "\nSchedulerParameters=bf_max_job_user=1"}) {
    SlurmRig r(1, "backfill", per_user);
    r.Add(0, 0, 4, 1000);
    r.Add(1, 1, 8, 1000);
    r.Add(1, 2, 1, 100);
    const uint32_t j0 = r.Submit(0, 0);
    EXPECT_EQ(r.Cycle(0), "S" + std::to_string(j0) + " ");
    r.Submit(1, 3);
    const uint32_t j2 = r.Submit(2, 3);
    EXPECT_EQ(r.Cycle(3), per_user.empty() ? "S" + std::to_string(j2) + " " : "") << per_user;
  }
}

TEST(SlurmPolicy, AdmissionAppliesSubmissionAndPerJobLimits) {
  SlurmRig r(1, "builtin", "MaxTime=1:00:00",
             "Account|User|MaxSubmit\nroot||\n a||\n  a|ann|1\n b||\n  b|bob|\n");
  r.Add(0, 0, 8, 3600);
  r.Add(0, 0, 8, 3600);
  r.Add(1, 0, 8, 7200);
  r.Add(1, 0, 8, -1);  // no walltime: the partition's MaxTime is its limit
  EXPECT_EQ(r.Refusal(0, 0), "admitted");
  EXPECT_EQ(r.Refusal(1, 0), "refused at submission by Slurm's limit AssocMaxSubmitJobLimit");
  EXPECT_EQ(r.Refusal(2, 0), "kept pending forever by Slurm's per-job limit PartitionTimeLimit");
  EXPECT_EQ(r.Refusal(3, 0), "admitted");
}

// The trace's account, QOS and nice value (canonical v2, sacct's Account and QOS) choose the
// association and QOS; sbatch would refuse an account the user has no association in and a
// QOS the association may not use.
TEST(SlurmPolicy, TheTracesAccountQosAndNice) {
  SlurmRig r(1, "builtin");
  r.Add(0, 0, 8, 100);  // ann, account b: she has no association there
  r.Add(0, 0, 8, 100);  // ann, QOS high: a allows normal only
  r.Add(1, 0, 8, 100);  // bob, QOS normal (not his default high), nice 0: priority 1
  r.Add(1, 1, 8, 100);  // bob, default QOS high (1000), nice 400: priority 600
  r.Add(0, 2, 8, 100);  // runs first and holds the node
  r.trace.accounting = {JobAccount{"b", "", 0}, JobAccount{"a", "high", 0}, JobAccount{"b", "normal", 0},
                        JobAccount{"", "", 400}, JobAccount{}};
  EXPECT_EQ(r.Refusal(0, 0), "refused at submission by Slurm's limit InvalidAccount");
  EXPECT_EQ(r.Refusal(1, 0), "refused at submission by Slurm's limit InvalidQOS");
  const uint32_t busy = r.Submit(4, 0);
  EXPECT_EQ(r.Cycle(0), "S" + std::to_string(busy) + " ");
  const uint32_t normal = r.Submit(2, 0);
  const uint32_t nice = r.Submit(3, 1);
  std::vector<ExplainNote> notes;
  r.Cycle(1);
  r.s->policy().reschedule->Describe(r.s->view(normal), 1, &notes);
  r.s->policy().reschedule->Describe(r.s->view(nice), 1, &notes);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0].text, "pending, reason Priority, priority 1");
  EXPECT_EQ(notes[1].text, "pending, reason Resources, priority 600");  // 1000 - 400
  r.s->Finish(busy, 100);
  EXPECT_EQ(r.Cycle(100), "S" + std::to_string(nice) + " ");
}

// Two nodes. ann's job 0 runs; her job 1 is held by QOSMaxGRESPerUser; carl's job 2 fits the
// free node. The main pass tests default_queue_depth jobs: at depth 1 it tests only job 1, so
// (without backfill) job 2 waits; at depth 2 it starts.
TEST(SlurmPolicy, TheMainPassTestsDefaultQueueDepthJobs) {
  for (int depth : {1, 2}) {
    SlurmRig r(2, "builtin", "\nSchedulerParameters=default_queue_depth=" + std::to_string(depth));
    r.Add(0, 0, 8, 100);
    r.Add(0, 1, 8, 100);
    r.Add(2, 2, 8, 100);
    const uint32_t j0 = r.Submit(0, 0);
    EXPECT_EQ(r.Cycle(0), "S" + std::to_string(j0) + " ");
    r.Submit(1, 1);
    const uint32_t j2 = r.Submit(2, 2);
    EXPECT_EQ(r.Cycle(2), depth == 1 ? "" : "S" + std::to_string(j2) + " ") << depth;
  }
}

// Fair share from the usage running jobs charge. One node; only fair share weighs (1000).
// ann's job 0 runs from t=0; her job 1 (t=10) and bob's job 2 (t=20) wait, both at fair share
// 1.0 (no usage yet: both LF infinite, tied at rank 2 of 2): priority 1000 each, ann first by
// submission. At the first PriorityCalcPeriod (60 s) ann is charged 64 CPUs × 60 s: her LF is
// 0.5 / 1 = 0.5, bob's infinite, so ann ranks 1 (factor 0.5, priority 500), bob 2 (1000).
// When job 0 ends, bob's job starts first.
TEST(SlurmPolicy, FairShareFollowsTheUsageRunningJobsCharge) {
  SlurmRig r(1, "builtin", "\nPriorityWeightQOS=0\nPriorityWeightFairshare=1000\nPriorityCalcPeriod=1");
  r.Add(0, 0, 8, 1000);
  r.Add(0, 10, 8, 1000);
  r.Add(1, 20, 8, 1000);
  const uint32_t j0 = r.Submit(0, 0);
  EXPECT_EQ(r.Cycle(0), "S" + std::to_string(j0) + " ");
  const uint32_t j1 = r.Submit(1, 10);
  r.Cycle(10);
  const uint32_t j2 = r.Submit(2, 20);
  r.Cycle(20);
  auto priority = [&](uint32_t slot, Time t) {
    std::vector<ExplainNote> notes;
    r.s->policy().reschedule->Describe(r.s->view(slot), t, &notes);
    return notes.empty() ? -1.0 : notes[0].fields[0].second;
  };
  EXPECT_EQ(priority(j1, 20), 1000);
  EXPECT_EQ(priority(j2, 20), 1000);
  r.Cycle(60);
  EXPECT_EQ(priority(j1, 60), 500);
  EXPECT_EQ(priority(j2, 60), 1000);
  r.s->Finish(j0, 600);
  EXPECT_EQ(r.Cycle(600), "S" + std::to_string(j2) + " ");
}

TEST(SlurmPolicy, WarningsOfTheFilesBecomeNotes) {
  Cluster cluster;
  testing::AddVc(&cluster, "batch", 1, 8);
  Trace trace;
  PolicyEnv env{&trace, &cluster, nullptr, {}};
  const std::string conf = WriteFile("notes.conf", "ClusterName=x\nNodeName=n1 Gres=gpu:8\nPartitionName=batch Nodes=n1\n");
  auto p = MakePolicyFor("slurm:conf=" + conf, 1, &env);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->notes, std::vector<std::string>{conf + ":1:1: key 'ClusterName' is not modelled; ignored"});
}

TEST(SlurmPolicy, RefusesWhatItCannotSimulate) {
  Cluster cluster;
  testing::AddVc(&cluster, "batch", 1, 8);
  Trace trace;
  PolicyEnv env{&trace, &cluster, nullptr, {}};
  const std::string conf = WriteFile("preempt.conf", "NodeName=n1 Gres=gpu:8\nPartitionName=batch Nodes=n1\n"
                                                     "PreemptType=preempt/qos\n");
  auto p = MakePolicyFor("slurm:conf=" + conf, 1, &env);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message,
            conf + ":3:1: key 'PreemptType': expected preempt/none (preemption is not simulated yet)");
  auto none = MakePolicyFor("slurm", 1, &env);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("expected the path of a slurm.conf"), std::string::npos);
}

}  // namespace
}  // namespace orrery
