// Multifactor priority goldens, each computed by hand from the documented formulas
// (priority.h): weight × factor summed, nice subtracted, truncated.
#include "slurm/priority.h"

#include <gtest/gtest.h>

namespace orrery::slurm {
namespace {

// 4 nodes × 64 CPUs × 8 GPUs (256 CPUs, 32 GPUs). Partitions: batch (all 4 nodes,
// PriorityJobFactor 10) and small (nodes 0-1, PriorityJobFactor 40). QOS normal 0, high 100,
// low 25. Weights: age 1000, fair share 10000, job size 500, partition 2000, QOS 3000,
// TRES gres/gpu 1000. PriorityMaxAge 2 days.
struct Site {
  SlurmConf conf;
  Accounts accounts;
  Site() {
    auto c = ParseSlurmConf(
        "PriorityType=priority/multifactor\nPriorityMaxAge=2-0\nPriorityWeightAge=1000\n"
        "PriorityWeightFairshare=10000\nPriorityWeightJobSize=500\nPriorityWeightPartition=2000\n"
        "PriorityWeightQOS=3000\nPriorityWeightTRES=GRES/gpu=1000\n"
        "NodeName=n[1-4] CPUs=64 Gres=gpu:8\n"
        "PartitionName=batch Nodes=ALL PriorityJobFactor=10 Default=YES\n"
        "PartitionName=small Nodes=n[1-2] PriorityJobFactor=40\n",
        "site.conf");
    EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
    conf = std::move(c).value();
    auto a = ParseSacctmgr("Account|User|Share\nroot||1\n root|u|1\n root|v|1\n\nName|Priority\nnormal|0\n"
                           "high|100\nlow|25\n",
                           "acct");
    EXPECT_TRUE(a.ok()) << (a.ok() ? "" : a.error().message);
    accounts = std::move(a).value();
  }
};

constexpr int64_t kDay = 86400;

PriorityJob Job() {
  PriorityJob j;
  j.nodes = 1;
  j.cpus = 16;
  j.gpus = 8;
  j.partition = 0;  // batch
  j.qos = 1;        // high
  return j;
}

TEST(MultifactorPriority, EachFactorAndTheSum) {
  Site s;
  auto tree = FairTree::Build(s.accounts);
  ASSERT_TRUE(tree.ok());
  tree->AddUsage(2, 300);  // v
  tree->AddUsage(1, 100);  // u: S .5 / U .25 = 2 ranks above v (S .5 / U .75): factors 1.0, 0.5
  tree->Compute();
  const PriorityModel m(s.conf, s.accounts, &*tree);
  PriorityJob j = Job();
  j.assoc = 1;  // u
  const PriorityFactors f = m.Factors(j, kDay);
  EXPECT_DOUBLE_EQ(f.age, 0.5);          // 1 day of a 2-day PriorityMaxAge
  EXPECT_DOUBLE_EQ(f.fairshare, 1.0);    // rank 2 of 2
  EXPECT_DOUBLE_EQ(f.job_size, 0.15625); // (1/4 nodes + 16/256 CPUs) / 2 = (0.25 + 0.0625) / 2
  EXPECT_DOUBLE_EQ(f.partition, 0.25);   // 10 / 40
  EXPECT_DOUBLE_EQ(f.qos, 1.0);          // 100 / 100
  EXPECT_DOUBLE_EQ(f.tres, 250.0);       // 1000 × 8 / 32 GPUs of batch
  // 1000 × 0.5 + 10000 × 1 + 500 × 0.15625 + 2000 × 0.25 + 3000 × 1 + 250
  //   = 500 + 10000 + 78.125 + 500 + 3000 + 250 = 14328.125 -> 14328
  EXPECT_EQ(m.Priority(j, kDay), 14328u);
  j.assoc = 2;  // v: fair share 0.5 -> 14328.125 - 5000 = 9328.125
  EXPECT_EQ(m.Priority(j, kDay), 9328u);
}

TEST(MultifactorPriority, CaseTable) {
  Site s;
  struct Case {
    const char* what;
    int64_t now;
    uint32_t partition;
    int32_t qos;
    uint32_t nodes, cpus, gpus;
    int32_t nice;
    bool favor_small;
    uint32_t priority;
  } cases[] = {
      // no fair share (assoc -1). Age 3 days capped at 1.0 -> 1000; size (1/4 + 16/256)/2 × 500
      // = 78.125; partition 0.25 × 2000 = 500; QOS high 3000; TRES 250: 4828.125
      {"age capped at PriorityMaxAge", 3 * kDay, 0, 1, 1, 16, 8, 0, false, 4828},
      // small partition: 40/40 × 2000 = 2000; TRES 8 of its 16 GPUs: 500;
      // age 0; size 78.125; QOS low 25/100 × 3000 = 750: 3328.125
      {"partition and TRES of the small partition", 0, 1, 2, 1, 16, 8, 0, false, 3328},
      // favor small: ((4-1)/4 + (256-16)/256)/2 = (0.75 + 0.9375)/2 = 0.84375 × 500 = 421.875;
      // age 0; partition 500; QOS 3000; TRES 250: 4171.875
      {"PriorityFavorSmall", 0, 0, 1, 1, 16, 8, 0, true, 4171},
      // whole cluster: size (4/4 + 256/256)/2 = 1 -> 500; TRES 32/32 -> 1000; partition 500;
      // no QOS (-1): 2000
      {"largest job, no QOS", 0, 0, -1, 4, 256, 32, 0, false, 2000},
      // nice 500 subtracted: 4828.125 - 500 = 4328.125
      {"nice", 3 * kDay, 0, 1, 1, 16, 8, 500, false, 4328},
      // a nice larger than the score: kept at 1
      {"priority never below 1", 0, 0, -1, 1, 16, 0, 100000, false, 1},
  };
  for (const Case& c : cases) {
    s.conf.priority.favor_small = c.favor_small;
    const PriorityModel m(s.conf, s.accounts, nullptr);
    PriorityJob j;
    j.partition = c.partition;
    j.qos = c.qos;
    j.nodes = c.nodes;
    j.cpus = c.cpus;
    j.gpus = c.gpus;
    j.nice = c.nice;
    EXPECT_EQ(m.Priority(j, c.now), c.priority) << c.what;
  }
}

TEST(MultifactorPriority, AgeFromEligibilityUnlessAccrueAlways) {
  Site s;
  s.conf.priority.weight_age = 1000;
  PriorityJob j = Job();
  j.submit = 0;
  j.eligible = kDay;  // a dependency held it for a day
  {
    const PriorityModel m(s.conf, s.accounts, nullptr);
    EXPECT_DOUBLE_EQ(m.Factors(j, 2 * kDay).age, 0.5);  // (2 - 1) days / 2 days
  }
  s.conf.priority.accrue_always = true;
  const PriorityModel m(s.conf, s.accounts, nullptr);
  EXPECT_DOUBLE_EQ(m.Factors(j, 2 * kDay).age, 1.0);  // 2 days since submission
  s.conf.priority.max_age_s = 0;
  const PriorityModel zero(s.conf, s.accounts, nullptr);
  EXPECT_DOUBLE_EQ(zero.Factors(j, 0).age, 1.0);  // PriorityMaxAge=0: every age is the maximum
}

TEST(MultifactorPriority, BasicIsFlat) {
  Site s;
  s.conf.priority.type = PriorityType::kBasic;
  const PriorityModel m(s.conf, s.accounts, nullptr);
  EXPECT_EQ(m.Priority(Job(), 3 * kDay), 1u);
}

}  // namespace
}  // namespace orrery::slurm
