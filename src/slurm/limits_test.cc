// Association and QOS limits with Slurm's pending-reason names, step by step on a small site.
#include "slurm/limits.h"

#include <gtest/gtest.h>

namespace orrery::slurm {
namespace {

// lab: GrpTRES 16 GPUs, GrpJobs 3, GrpSubmit 10. ann (in lab): MaxJobs 2, MaxTRES 8 GPUs per
// job, MaxSubmit 4. QOS high: GrpTRES 12 GPUs, MaxTRES 4 GPUs per job, MaxWall 1 h,
// MaxTRESPU 6 GPUs, MaxJobsPU 1, MaxSubmitPU 2. cy (in ext) may use normal only.
constexpr std::string_view kAccounts =
    "Account|User|Share|GrpTRES|GrpJobs|GrpSubmit|MaxJobs|MaxTRES|MaxSubmit|QOS\n"
    "root|||||||||normal,high\n"
    " lab||1|gres/gpu=16|3|10||||normal,high\n"
    "  lab|ann|1||||2|gres/gpu=8|4|normal,high\n"
    "  lab|bo|1|||||||normal,high\n"
    " ext||1|||||||normal\n"
    "  ext|cy|1|||||||normal\n"
    "\n"
    "Name|Priority|GrpTRES|MaxTRES|MaxWall|MaxTRESPU|MaxJobsPU|MaxSubmitPU\n"
    "normal|0||||||\n"
    "high|100|gres/gpu=12|gres/gpu=4|01:00:00|gres/gpu=6|1|2\n";

enum : int32_t { kAnn = 2, kBo = 3, kCy = 5 };
enum : int32_t { kNormal = 0, kHigh = 1 };

struct Site {
  SlurmConf conf;
  Accounts accounts;
  Site() {
    auto c = ParseSlurmConf("NodeName=n[1-4] CPUs=64 Gres=gpu:8\nPartitionName=p Nodes=ALL MaxTime=2-0\n", "s");
    auto a = ParseSacctmgr(kAccounts, "a");
    EXPECT_TRUE(c.ok() && a.ok()) << (a.ok() ? "" : a.error().message);
    conf = std::move(c).value();
    accounts = std::move(a).value();
  }
};

LimitJob Job(int32_t assoc, int32_t qos, int64_t gpus, int64_t time_limit_s = 1800) {
  LimitJob j;
  j.assoc = assoc;
  j.qos = qos;
  j.tres = {8, 1024, 1, gpus};
  j.time_limit_s = time_limit_s;
  return j;
}

TEST(SlurmLimits, ReasonNamesAreSlurms) {
  EXPECT_EQ(ReasonName(Reason::kQOSMaxGRESPerUser), "QOSMaxGRESPerUser");
  EXPECT_EQ(ReasonName(Reason::kAssocGrpGRES), "AssocGrpGRES");
  EXPECT_EQ(ReasonName(Reason::kQOSMaxJobsPerUserLimit), "QOSMaxJobsPerUserLimit");
  EXPECT_EQ(ReasonName(Reason::kAssocMaxJobsLimit), "AssocMaxJobsLimit");
  EXPECT_EQ(ReasonName(Reason::kAssocMaxMemPerJob), "AssocMaxMemPerJob");
  EXPECT_EQ(ReasonName(Reason::kQOSMaxMemoryPerUser), "QOSMaxMemoryPerUser");
  EXPECT_EQ(ReasonName(Reason::kNone), "None");
}

TEST(SlurmLimits, PerJobLimitsAndTheQosOverride) {
  Site s;
  Limits l(s.conf, s.accounts);
  struct Case {
    const char* what;
    LimitJob job;
    Reason reason;
  } cases[] = {
      {"within every limit", Job(kAnn, kNormal, 8), Reason::kNone},
      {"over the partition's MaxTime of 2 days", Job(kAnn, kNormal, 1, 3 * 86400), Reason::kPartitionTimeLimit},
      {"no time limit under a partition MaxTime", Job(kAnn, kNormal, 1, kUnlimited), Reason::kPartitionTimeLimit},
      {"9 GPUs over ann's MaxTRES of 8", Job(kAnn, kNormal, 9), Reason::kAssocMaxGRESPerJob},
      {"5 GPUs over high's MaxTRES of 4 (the QOS's limit, not ann's 8)", Job(kAnn, kHigh, 5),
       Reason::kQOSMaxGRESPerJob},
      {"2 hours over high's MaxWall of 1 hour", Job(kAnn, kHigh, 1, 7200), Reason::kQOSMaxWallDurationPerJobLimit},
      {"bo has no per-job limit: 16 GPUs, all of lab's group", Job(kBo, kNormal, 16), Reason::kNone},
      {"17 GPUs pass lab's GrpTRES of 16 even with nothing running", Job(kBo, kNormal, 17), Reason::kAssocGrpGRES},
  };
  for (const Case& c : cases) EXPECT_EQ(ReasonName(l.CheckStart(c.job)), ReasonName(c.reason)) << c.what;
}

TEST(SlurmLimits, RunningJobsAndGroupLimits) {
  Site s;
  Limits l(s.conf, s.accounts);
  const LimitJob a1 = Job(kAnn, kNormal, 4), a2 = Job(kAnn, kNormal, 4);
  l.Submit(a1), l.Start(a1);
  l.Submit(a2), l.Start(a2);
  // ann runs 2 jobs = MaxJobs 2 (lab: 2 of GrpJobs 3).
  EXPECT_EQ(l.CheckStart(Job(kAnn, kNormal, 1)), Reason::kAssocMaxJobsLimit);
  // bo: lab has 8 of 16 GPUs in use, 8 more fit exactly.
  const LimitJob b1 = Job(kBo, kNormal, 8);
  EXPECT_EQ(l.CheckStart(b1), Reason::kNone);
  l.Submit(b1), l.Start(b1);
  // lab now runs 3 jobs = GrpJobs 3.
  EXPECT_EQ(l.CheckStart(Job(kBo, kNormal, 1)), Reason::kAssocGrpJobsLimit);
  l.End(a1, true);
  // lab: 2 jobs, 12 of 16 GPUs: 5 more would make 17.
  EXPECT_EQ(l.CheckStart(Job(kBo, kNormal, 5)), Reason::kAssocGrpGRES);
  EXPECT_EQ(l.CheckStart(Job(kBo, kNormal, 4)), Reason::kNone);
  // ext's user is not limited by lab.
  EXPECT_EQ(l.CheckStart(Job(kCy, kNormal, 16)), Reason::kNone);
}

TEST(SlurmLimits, QosPerUserAndGroupLimits) {
  Site s;
  Limits l(s.conf, s.accounts);
  const LimitJob h1 = Job(kAnn, kHigh, 4);
  l.Submit(h1), l.Start(h1);
  // high: MaxJobsPU 1 reached for ann; bo is another user.
  EXPECT_EQ(l.CheckStart(Job(kAnn, kHigh, 1)), Reason::kQOSMaxJobsPerUserLimit);
  const LimitJob h2 = Job(kBo, kHigh, 4);
  EXPECT_EQ(l.CheckStart(h2), Reason::kNone);
  l.Submit(h2), l.Start(h2);
  s.accounts.qos[kHigh].max_jobs_pu = kNoLimit;  // lifted, to reach the TRES limits behind it
  // bo holds 4 of high's MaxTRESPU 6: 4 more would be 8 (the group, 8 + 4 = 12, still fits).
  EXPECT_EQ(l.CheckStart(Job(kBo, kHigh, 4)), Reason::kQOSMaxGRESPerUser);
  const LimitJob h3 = Job(kBo, kHigh, 2), h4 = Job(kAnn, kHigh, 2);  // 6 each, 12 in high
  EXPECT_EQ(l.CheckStart(h3), Reason::kNone);
  l.Submit(h3), l.Start(h3);
  // lab runs 3 jobs, its GrpJobs: high sets no GrpJobs, so lab's applies to high jobs too.
  EXPECT_EQ(l.CheckStart(h4), Reason::kAssocGrpJobsLimit);
  s.accounts.assocs[1].grp_jobs = kNoLimit;  // lifted
  EXPECT_EQ(l.CheckStart(h4), Reason::kNone);
  l.Submit(h4), l.Start(h4);
  // high's GrpTRES of 12 GPUs is used up (a job without an association has no per-user limit).
  EXPECT_EQ(l.CheckStart(Job(-1, kHigh, 1)), Reason::kQOSGrpGRES);
  l.End(h1, true);
  EXPECT_EQ(l.CheckStart(Job(-1, kHigh, 4)), Reason::kNone);  // 8 + 4 = 12
}

TEST(SlurmLimits, SubmissionLimits) {
  Site s;
  Limits l(s.conf, s.accounts);
  EXPECT_EQ(l.CheckSubmit(Job(kCy, kHigh, 1)), Reason::kInvalidQOS);  // ext's users: normal only
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(l.CheckSubmit(Job(kAnn, kHigh, 1)), Reason::kNone);
    l.Submit(Job(kAnn, kHigh, 1));
  }
  EXPECT_EQ(l.CheckSubmit(Job(kAnn, kHigh, 1)), Reason::kQOSMaxSubmitJobPerUserLimit);  // MaxSubmitPU 2
  // ann's own MaxSubmit 4 counts all her jobs: 2 high + 2 normal.
  const LimitJob n1 = Job(kAnn, kNormal, 1);
  l.Submit(n1), l.Submit(Job(kAnn, kNormal, 1));
  EXPECT_EQ(l.CheckSubmit(Job(kAnn, kNormal, 1)), Reason::kAssocMaxSubmitJobLimit);
  l.End(n1, false);  // cancelled while pending
  EXPECT_EQ(l.CheckSubmit(Job(kAnn, kNormal, 1)), Reason::kNone);
  // lab's GrpSubmit 10: ann has 3 in the queue, bo adds 7.
  for (int i = 0; i < 7; ++i) l.Submit(Job(kBo, kNormal, 1));
  EXPECT_EQ(l.CheckSubmit(Job(kBo, kNormal, 1)), Reason::kAssocGrpSubmitJobsLimit);
  EXPECT_EQ(l.CheckSubmit(Job(kCy, kNormal, 1)), Reason::kNone);
}

}  // namespace
}  // namespace orrery::slurm
