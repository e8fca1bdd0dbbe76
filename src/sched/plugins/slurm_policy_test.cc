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
           const std::string& accounts = kAccounts)
      : SlurmRig(nodes,
                 "PriorityType=priority/multifactor\nPriorityWeightQOS=1000\nSchedulerType=sched/" + scheduler +
                     "\nNodeName=n[1-" + std::to_string(nodes) +
                     "] CPUs=64 Gres=gpu:8\nPartitionName=batch Nodes=ALL Default=YES " + partition_extra + "\n",
                 accounts, WholeConf{}) {}
  // A whole slurm.conf. The cluster is one pool (VC "batch"): partitions overlap on its nodes.
  struct WholeConf {};
  SlurmRig(int nodes, const std::string& conf_text, const std::string& accounts, WholeConf) {
    testing::AddVc(&cluster, "batch", nodes, 8);
    trace.users.Intern("ann");
    trace.users.Intern("bob");
    trace.users.Intern("carl");  // no association: no limits, priority 1
    trace.vcs.Intern("low");
    trace.vcs.Intern("high");
    const std::string conf = WriteFile("slurm-rig.conf", conf_text);
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
    for (const Decision& x : out) {
      if (const auto* st = std::get_if<StartDecision>(&x)) d += "S" + std::to_string(st->slot) + " ";
      if (const auto* p = std::get_if<PreemptDecision>(&x)) d += (p->cancel ? "C" : "P") + std::to_string(p->slot) + " ";
    }
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

// The periodic main pass: every sched_interval (60 s by default) from the first cycle the main
// pass tests the whole queue. Two nodes, default_queue_depth=1, no backfill. ann's job 0 runs;
// her job 1 is held by QOSMaxGRESPerUser and is the one job the event-triggered passes test,
// so carl's job 2 (t=2), which fits the free node, waits: at t=30 (carl's job 3 arrives, an
// event) it still waits; the policy asks for a wakeup at the next periodic pass, 0 + 60 = 60
// (0 + 100 = 100 with sched_interval=100), and job 2 starts there, not before. With
// sched_interval=0 there is no periodic pass: the next wakeup is the priority recalculation at
// 300 (PriorityCalcPeriod), whose pass is depth-limited too.
TEST(SlurmPolicy, ThePeriodicMainPassTestsTheWholeQueue) {
  for (const auto& [interval, at] : std::vector<std::pair<std::string, Time>>{{"", 60}, {",sched_interval=100", 100},
                                                                             {",sched_interval=0", kNoTime}}) {
    SlurmRig r(2, "builtin", "\nSchedulerParameters=default_queue_depth=1" + interval);
    r.Add(0, 0, 8, 1000);
    r.Add(0, 1, 8, 1000);
    r.Add(2, 2, 8, 1000);
    r.Add(2, 30, 8, 1000);
    const uint32_t j0 = r.Submit(0, 0);
    EXPECT_EQ(r.Cycle(0), "S" + std::to_string(j0) + " ");
    r.Submit(1, 1);
    EXPECT_EQ(r.Cycle(1), "");
    const uint32_t j2 = r.Submit(2, 2);
    EXPECT_EQ(r.Cycle(2), "") << interval;
    r.Submit(3, 30);
    EXPECT_EQ(r.Cycle(30), "") << interval;
    if (at == kNoTime) {
      EXPECT_EQ(r.s->NextDecisionTime(30), 300);
      EXPECT_EQ(r.Cycle(300), "");
      continue;
    }
    EXPECT_EQ(r.s->NextDecisionTime(30), at) << interval;
    EXPECT_EQ(r.Cycle(at - 1), "") << interval;
    EXPECT_EQ(r.Cycle(at), "S" + std::to_string(j2) + " ") << interval;
  }
}

// preempt/partition_prio with PreemptMode=REQUEUE. One pool of two nodes (8 GPUs each) shared
// by partitions low (PriorityTier 1, the default) and high (PriorityTier 2); carl's jobs, all
// of priority 1 (priority/basic), 8 GPUs each. Jobs 0 (t=0) and 1 (t=10) of low take a node
// each; job 3 of low (t=15) waits. Job 2 of high (t=20) fits no free GPU: both running low
// jobs may be preempted (tier 1 < 2), at equal priority, so the youngest goes first: job 1
// (started 10) is requeued and job 2 starts on its node. Job 1 waits: its tier does not exceed
// job 0's, so it preempts nothing at t=21. Its requeue reset its submission time to 20, so job
// 3 (submitted 15) is ahead of it: when job 0 ends at 100, job 3 starts (job 1 would, by its
// trace submission 10, had the requeue kept it); when job 3 ends at 200, job 1 starts.
TEST(SlurmPolicy, PartitionPriorityTierPreemptsAndRequeues) {
  SlurmRig r(2,
             "PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\nSchedulerType=sched/builtin\n"
             "NodeName=n[1-2] CPUs=64 Gres=gpu:8\nPartitionName=low Nodes=ALL Default=YES PriorityTier=1\n"
             "PartitionName=high Nodes=ALL PriorityTier=2\n",
             kAccounts, SlurmRig::WholeConf{});
  r.Add(2, 0, 8, 1000);
  r.Add(2, 10, 8, 1000);
  r.Add(2, 20, 8, 1000);
  r.Add(2, 15, 8, 1000);
  for (uint32_t i = 0; i < 4; ++i) r.trace.jobs[i].vc = VcId(i == 2 ? 1 : 0);  // low, low, high, low
  const uint32_t j0 = r.Submit(0, 0);
  EXPECT_EQ(r.Cycle(0), "S" + std::to_string(j0) + " ");
  const uint32_t j1 = r.Submit(1, 10);
  EXPECT_EQ(r.Cycle(10), "S" + std::to_string(j1) + " ");
  const uint32_t j3 = r.Submit(3, 15);
  EXPECT_EQ(r.Cycle(15), "");
  const uint32_t j2 = r.Submit(2, 20);
  EXPECT_EQ(r.Cycle(20), "P" + std::to_string(j1) + " S" + std::to_string(j2) + " ");
  EXPECT_EQ(r.s->view(j1).preemptions, 1u);
  EXPECT_EQ(r.Cycle(21), "");
  std::vector<ExplainNote> notes;
  r.s->policy().reschedule->Describe(r.s->view(j1), 21, &notes);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].text, "pending, reason Priority, priority 1");
  r.s->Finish(j0, 100);
  EXPECT_EQ(r.Cycle(100), "S" + std::to_string(j3) + " ");
  r.s->Finish(j3, 200);
  EXPECT_EQ(r.Cycle(200), "S" + std::to_string(j1) + " ");
}

// A job that cannot start stops its own partition only. One pool of two nodes shared by
// partitions low (PriorityTier 1) and high (2), no preemption. Job 0 of low holds n1; job 1
// of high (16 GPUs, t=5) comes first in the queue (tier 2) and cannot start: high stops. Job 2
// of low (8 GPUs, t=6) is in another partition and starts on n2 in the same pass.
TEST(SlurmPolicy, AJobThatCannotStartStopsOnlyItsPartition) {
  SlurmRig r(2,
             "SchedulerType=sched/builtin\nNodeName=n[1-2] CPUs=64 Gres=gpu:8\n"
             "PartitionName=low Nodes=ALL Default=YES PriorityTier=1\nPartitionName=high Nodes=ALL PriorityTier=2\n",
             kAccounts, SlurmRig::WholeConf{});
  r.Add(2, 0, 8, 1000);
  r.Add(2, 5, 16, 1000);
  r.Add(2, 6, 8, 1000);
  r.trace.jobs[1].vc = VcId(1);  // high; the others low
  const uint32_t j0 = r.Submit(0, 0);
  EXPECT_EQ(r.Cycle(0), "S" + std::to_string(j0) + " ");
  const uint32_t j1 = r.Submit(1, 5);
  const uint32_t j2 = r.Submit(2, 6);
  EXPECT_EQ(r.Cycle(6), "S" + std::to_string(j2) + " ");
  std::vector<ExplainNote> notes;
  r.s->policy().reschedule->Describe(r.s->view(j1), 6, &notes);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].text, "pending, reason Resources, priority 1");
}

// PreemptExemptTime: a job runs that long before it may be preempted. As above, jobs 0 (started
// 0) and 1 (started 10) of low run when job 2 of high arrives at t=20. With
// PreemptExemptTime=0:15 (15 s) job 1 has run 10 s and is exempt, job 0 has run 20 s: job 0
// is preempted. With 0:25 both are exempt and job 2 waits; -1 disables it (job 1, the
// youngest, goes).
TEST(SlurmPolicy, PreemptExemptTimeProtectsYoungJobs) {
  for (const std::string exempt : {"0:15", "0:25", "-1"}) {
    SlurmRig r(2,
               "PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\nPreemptExemptTime=" + exempt +
                   "\nSchedulerType=sched/builtin\nNodeName=n[1-2] CPUs=64 Gres=gpu:8\n"
                   "PartitionName=low Nodes=ALL Default=YES PriorityTier=1\nPartitionName=high Nodes=ALL PriorityTier=2\n",
               kAccounts, SlurmRig::WholeConf{});
    r.Add(2, 0, 8, 1000);
    r.Add(2, 10, 8, 1000);
    r.Add(2, 20, 8, 1000);
    r.trace.jobs[2].vc = VcId(1);  // high
    const uint32_t j0 = r.Submit(0, 0);
    EXPECT_EQ(r.Cycle(0), "S" + std::to_string(j0) + " ");
    const uint32_t j1 = r.Submit(1, 10);
    EXPECT_EQ(r.Cycle(10), "S" + std::to_string(j1) + " ");
    const uint32_t j2 = r.Submit(2, 20);
    const std::string expected = exempt == "0:15"   ? "P" + std::to_string(j0) + " S" + std::to_string(j2) + " "
                                 : exempt == "0:25" ? ""
                                                    : "P" + std::to_string(j1) + " S" + std::to_string(j2) + " ";
    EXPECT_EQ(r.Cycle(20), expected) << exempt;
  }
}

// preempt/qos: high lists normal in its Preempt list, normal's PreemptMode is CANCEL (the
// cluster's REQUEUE is overridden). Two nodes. ann (QOS normal) runs job 0 (8 GPUs, t=0) on
// n1 and job 1 (4 GPUs, t=5) on n2; carl's job 3 (no association, no QOS: never a victim)
// holds n2's other 4 GPUs. bob's job 2 (QOS high, 8 GPUs, t=10) fits no free GPU. Candidates,
// lowest QOS priority (0 both), then priority (1 both), then youngest: job 1, then job 0.
// Without job 1, n2 has 4 free GPUs: not enough; without job 0 too, n1 has 8: placed there.
// Job 1 fits beside the new allocation and keeps running; job 0 is cancelled. With bob's job
// in QOS normal (the trace's QOS), whose Preempt list is empty, nothing is preempted.
TEST(SlurmPolicy, QosPreemptsAndCancelsOnlyWhatItNeeds) {
  const std::string accounts =
      "Account|User|Share|QOS|Def QOS\nroot||1|normal,high|normal\n a||1|normal|normal\n  a|ann|1|normal|normal\n"
      " b||1|normal,high|high\n  b|bob|1|normal,high|high\n\n"
      "Name|Priority|Preempt|PreemptMode\nnormal|0||cancel\nhigh|100|normal|\n";
  for (const std::string qos : {"high", "normal"}) {
    SlurmRig r(2,
               "PriorityType=priority/multifactor\nPriorityWeightQOS=1000\nPreemptType=preempt/qos\n"
               "PreemptMode=REQUEUE\nSchedulerType=sched/builtin\nNodeName=n[1-2] CPUs=64 Gres=gpu:8\n"
               "PartitionName=batch Nodes=ALL Default=YES\n",
               accounts, SlurmRig::WholeConf{});
    r.Add(0, 0, 8, 1000);
    r.Add(0, 5, 4, 1000);
    r.Add(1, 10, 8, 1000);
    r.Add(2, 5, 4, 1000);
    r.trace.accounting = {JobAccount{}, JobAccount{}, JobAccount{"b", qos, 0}, JobAccount{}};
    const uint32_t j0 = r.Submit(0, 0);
    EXPECT_EQ(r.Cycle(0), "S" + std::to_string(j0) + " ");
    const uint32_t j1 = r.Submit(1, 5);
    const uint32_t j3 = r.Submit(3, 5);
    EXPECT_EQ(r.Cycle(5), "S" + std::to_string(j1) + " S" + std::to_string(j3) + " ");
    const uint32_t j2 = r.Submit(2, 10);
    if (qos == "high") {
      EXPECT_EQ(r.Cycle(10), "C" + std::to_string(j0) + " S" + std::to_string(j2) + " ");
      EXPECT_TRUE(r.s->view(j1).running);
      EXPECT_EQ(r.s->view(j0).preemptions, 1u);
    } else {
      EXPECT_EQ(r.Cycle(10), "");
    }
  }
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

// Preemption modes the simulator cannot reproduce are errors at their line: SUSPEND (it needs
// gang scheduling) for the cluster, a partition or a QOS, GANG (refused by the reader), and
// PreemptType without a PreemptMode (OFF, which Slurm allows with preempt/none only).
TEST(SlurmPolicy, RefusesWhatItCannotSimulate) {
  Cluster cluster;
  testing::AddVc(&cluster, "batch", 1, 8);
  Trace trace;
  PolicyEnv env{&trace, &cluster, nullptr, {}};
  const std::string nodes = "NodeName=n1 Gres=gpu:8\nPartitionName=batch Nodes=n1\n";
  const std::string suspend = WriteFile("suspend.conf", nodes + "PreemptType=preempt/qos\nPreemptMode=SUSPEND\n");
  const std::string gang = WriteFile("gang.conf", nodes + "PreemptType=preempt/qos\nPreemptMode=SUSPEND,GANG\n");
  const std::string off = WriteFile("off.conf", nodes + "PreemptType=preempt/partition_prio\n");
  const std::string part = WriteFile("part.conf", "NodeName=n1 Gres=gpu:8\nPreemptType=preempt/partition_prio\n"
                                                  "PreemptMode=REQUEUE\nPartitionName=batch Nodes=n1 PreemptMode=SUSPEND\n");
  const std::string qos_ok = WriteFile("qos.conf", nodes + "PreemptType=preempt/qos\nPreemptMode=CANCEL\n");
  const std::string acc = WriteFile("suspend-qos.txt", "Name|Priority|Preempt|PreemptMode\nlow|0||\nhigh|1|low|suspend\n");
  auto message = [&](const std::string& spec) {
    auto p = MakePolicyFor(spec, 1, &env);
    return p.ok() ? std::string("ok") : p.error().message;
  };
  EXPECT_EQ(message("slurm:conf=" + suspend),
            suspend + ":4:1: key 'PreemptMode': expected PreemptMode CANCEL or REQUEUE, found SUSPEND (suspension needs "
                      "gang scheduling: not simulated)");
  EXPECT_NE(message("slurm:conf=" + gang).find(gang + ":4:"), std::string::npos);
  EXPECT_NE(message("slurm:conf=" + gang).find("GANG time slicing is not modelled"), std::string::npos);
  EXPECT_EQ(message("slurm:conf=" + off),
            off + ":3:1: key 'PreemptType' (PreemptMode unset): expected PreemptMode CANCEL or REQUEUE, found OFF (OFF "
                  "goes with PreemptType=preempt/none only)");
  EXPECT_EQ(message("slurm:conf=" + part),
            part + ":4:1: partition batch: expected PreemptMode CANCEL or REQUEUE, found SUSPEND (suspension needs gang "
                   "scheduling: not simulated)");
  EXPECT_EQ(message("slurm:conf=" + qos_ok + ",accounts=" + acc),
            acc + ":3:1: QOS high: expected PreemptMode CANCEL or REQUEUE, found SUSPEND (suspension needs gang "
                  "scheduling: not simulated)");
  auto none = MakePolicyFor("slurm", 1, &env);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("expected the path of a slurm.conf"), std::string::npos);
}

}  // namespace
}  // namespace orrery
