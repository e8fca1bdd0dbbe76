// slurm.conf and Slurm's value syntax: what is read, what is warned about, and where each
// refusal points (file:line:col).
#include "slurm/conf.h"

#include <gtest/gtest.h>

namespace orrery::slurm {
namespace {

SlurmConf MustParse(std::string_view text) {
  auto c = ParseSlurmConf(text, "s.conf");
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
  return c.ok() ? std::move(c).value() : SlurmConf{};
}

std::string ErrorOf(std::string_view text) {
  auto c = ParseSlurmConf(text, "s.conf");
  EXPECT_FALSE(c.ok());
  return c.ok() ? "" : c.error().message;
}

TEST(SlurmDuration, EveryFormSlurmWrites) {
  struct Case {
    const char* text;
    std::optional<int64_t> secs;
  } cases[] = {
      {"5", 300},                            // a bare number is minutes
      {"5:30", 330},                         // M:S
      {"1:02:03", 3723},                     // H:M:S = 3600 + 120 + 3
      {"2-00:00:00", 172800},                // D-H:M:S = 2 × 86400
      {"7-0", 604800},                       // D-H
      {"1-2", 93600},                        // 86400 + 2 × 3600
      {"1-2:30", 95400},                     // D-H:M = 93600 + 1800
      {"0", 0},
      {"UNLIMITED", kUnlimited},
      {"infinite", kUnlimited},
      {"-1", kUnlimited},
      {"", std::nullopt},
      {"1:2:3:4", std::nullopt},
      {"1-2:3:4:5", std::nullopt},
      {"x", std::nullopt},
      {"-5", std::nullopt},
      {"1-", std::nullopt},
      {"1234567890", std::nullopt},  // beyond nine digits
  };
  for (const Case& c : cases) EXPECT_EQ(ParseDuration(c.text), c.secs) << c.text;
}

TEST(SlurmHostList, RangesListsPaddingAndErrors) {
  auto a = ExpandHostList("gpu[001-003],cpu1", 100);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, (std::vector<std::string>{"gpu001", "gpu002", "gpu003", "cpu1"}));
  auto b = ExpandHostList("r[1-2]n[8-10,3]", 100);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, (std::vector<std::string>{"r1n8", "r1n9", "r1n10", "r1n3", "r2n8", "r2n9", "r2n10", "r2n3"}));
  EXPECT_FALSE(ExpandHostList("a[3-1]", 100).ok());
  EXPECT_FALSE(ExpandHostList("a[1-2", 100).ok());
  EXPECT_FALSE(ExpandHostList("a]", 100).ok());
  EXPECT_FALSE(ExpandHostList("a,,b", 100).ok());
  EXPECT_FALSE(ExpandHostList("a[]", 100).ok());
  EXPECT_TRUE(ExpandHostList("a[1][1][1][1][1][1][1][1]", 100).ok());
  EXPECT_FALSE(ExpandHostList("a[1][1][1][1][1][1][1][1][1]", 100).ok());  // nine groups
  auto big = ExpandHostList("n[1-101]", 100);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().message, "expected at most 100 names, got more");
  // 250 bytes of prefix + "[1-3]" + 10 bytes of suffix: names of 251 + 10 = 261 bytes.
  auto wide = ExpandHostList(std::string(250, 'w') + "[1-3]" + std::string(10, 's'), 100);
  ASSERT_FALSE(wide.ok());
  EXPECT_EQ(wide.error().message, "expected host names of at most 255 bytes, got one of 261");
}

// A 264-byte slurm.conf whose NodeName lines multiplied bracketed ranges asked for a million
// nodes (about 2 GB and 9 s under the fuzzer's sanitizers); nodes are bounded at 100,000.
TEST(SlurmConf, BoundsTheNodesARangeMakes) {
  auto c = ParseSlurmConf("NodeName=r[0-99]n[0-1000] CPUs=1\n", "big.conf");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("big.conf:1:"), std::string::npos) << c.error().message;
  EXPECT_NE(c.error().message.find("expected at most 100000 names, got more"), std::string::npos) << c.error().message;
  auto ok = ParseSlurmConf("NodeName=r[0-99]n[0-999] CPUs=1\n", "ok.conf");  // exactly 100,000
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->nodes.size(), 100'000u);
}

TEST(SlurmConf, BoundsThePartitionMemberships) {
  // 2,000 nodes and six partitions of Nodes=ALL: 12,000 memberships. A bound of 10,000 stops
  // the sixth partition (10,000 after five, 12,000 with it), at its Nodes key.
  std::string text = "NodeName=n[0-1999] CPUs=1\n";
  for (int i = 0; i < 6; ++i) text += "PartitionName=p" + std::to_string(i) + " Nodes=ALL\n";
  SlurmConfBounds small;
  small.max_memberships = 10'000;
  auto c = ParseSlurmConf(text, "parts.conf", small);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("parts.conf:7:"), std::string::npos) << c.error().message;
  EXPECT_NE(c.error().message.find("expected at most 10000 partition memberships"), std::string::npos)
      << c.error().message;
  EXPECT_NE(c.error().message.find("got 12000 so far"), std::string::npos) << c.error().message;
  auto ok = ParseSlurmConf(text, "parts.conf");  // the default bound holds 12,000
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->partitions.size(), 6u);
  EXPECT_EQ(ok->partitions[5].nodes.size(), 2'000u);
}

TEST(SlurmConf, ACallerBoundsItsClusterBelowTheDefault) {
  SlurmConfBounds small;
  small.max_nodes = 16;
  auto c = ParseSlurmConf("NodeName=a[0-9] CPUs=1\nNodeName=b[0-9] CPUs=1\n", "small.conf", small);
  ASSERT_FALSE(c.ok());  // 10 + 10 > 16: the second line may add only 6
  EXPECT_NE(c.error().message.find("small.conf:2:"), std::string::npos) << c.error().message;
  auto full = ParseSlurmConf("NodeName=a[0-15] CPUs=1\nNodeName=b0 CPUs=1\n", "full.conf", small);
  ASSERT_FALSE(full.ok());  // 16 defined: a 17th is refused before its list is read
  EXPECT_NE(full.error().message.find("expected at most 16 nodes in all, got more"), std::string::npos)
      << full.error().message;
}

TEST(SlurmTres, CountsAndMemoryUnits) {
  auto t = ParseTres("cpu=64,GRES/gpu=8,mem=2G,node=2");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->at("cpu"), 64);
  EXPECT_EQ(t->at("gres/gpu"), 8);
  EXPECT_EQ(t->at("mem"), 2048);  // 2 GiB in MiB
  EXPECT_EQ(t->at("node"), 2);
  EXPECT_EQ(ParseTres("mem=1536K")->at("mem"), 2);  // 1.5 MiB, rounded up
  EXPECT_EQ(ParseTres("mem=3T")->at("mem"), 3 * 1024 * 1024);
  EXPECT_FALSE(ParseTres("cpu").ok());
  EXPECT_FALSE(ParseTres("cpu=-1").ok());
  EXPECT_FALSE(ParseTres("cpu=1,cpu=2").ok());
}

constexpr std::string_view kSite = R"(# a GPU site
ClusterName=acme
PriorityType=priority/multifactor
prioritydecayhalflife=14-0
PriorityCalcPeriod=1
PriorityMaxAge=2-00:00:00
PriorityFavorSmall=YES
PriorityWeightAge=1000
PriorityWeightFairshare=10000 PriorityWeightJobSize=500
PriorityWeightPartition=2000
PriorityWeightQOS=3000
PriorityWeightTRES=CPU=1,GRES/gpu=1000.5
PriorityFlags=ACCRUE_ALWAYS,CALCULATE_RUNNING
SchedulerType=sched/backfill
SchedulerParameters=bf_window=2880,bf_resolution=300,bf_continue,\
default_queue_depth=50,bf_max_job_test=1000,bf_max_job_user=20,sched_interval=30,bf_interval=60,batch_sched_delay=1,max_rpc_cnt=150
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
NodeName=DEFAULT CPUs=64 RealMemory=512000 State=UNKNOWN
NodeName=gpu[01-04] Gres=gpu:a100:8 Weight=10 Sockets=2
NodeName=cpu1 Weight=1   # no GPUs
PartitionName=DEFAULT MaxTime=1-00:00:00 State=UP
PartitionName=batch Nodes=gpu[01-04] Default=YES PriorityJobFactor=10
PartitionName=urgent Nodes=gpu[03-04],cpu1 PriorityTier=5 PriorityJobFactor=40 MaxTime=UNLIMITED PreemptMode=CANCEL
PartitionName=everything Nodes=ALL Priority=3
)";

TEST(SlurmConf, ReadsASiteConfiguration) {
  const SlurmConf c = MustParse(kSite);
  EXPECT_EQ(c.priority.type, PriorityType::kMultifactor);
  EXPECT_EQ(c.priority.decay_half_life_s, 14 * 86400);
  EXPECT_EQ(c.priority.calc_period_s, 60);  // 1 minute
  EXPECT_EQ(c.priority.max_age_s, 2 * 86400);
  EXPECT_TRUE(c.priority.favor_small);
  EXPECT_TRUE(c.priority.accrue_always);
  EXPECT_EQ(c.priority.weight_age, 1000u);
  EXPECT_EQ(c.priority.weight_fairshare, 10000u);
  EXPECT_EQ(c.priority.weight_job_size, 500u);
  EXPECT_EQ(c.priority.weight_partition, 2000u);
  EXPECT_EQ(c.priority.weight_qos, 3000u);
  EXPECT_EQ(c.priority.weight_tres.at("cpu"), 1.0);
  EXPECT_EQ(c.priority.weight_tres.at("gres/gpu"), 1000.5);
  EXPECT_EQ(c.scheduler, SchedulerType::kBackfill);
  EXPECT_EQ(c.sched.bf_window_s, 2880 * 60);  // bf_window is in minutes
  EXPECT_EQ(c.sched.bf_resolution_s, 300);
  EXPECT_TRUE(c.sched.bf_continue);
  EXPECT_EQ(c.sched.default_queue_depth, 50);  // from the continued line
  EXPECT_EQ(c.sched.bf_max_job_test, 1000);
  EXPECT_EQ(c.sched.bf_max_job_user, 20);
  EXPECT_EQ(c.sched.sched_interval_s, 30);
  EXPECT_EQ(c.sched.bf_interval_s, 60);
  EXPECT_EQ(c.sched.batch_sched_delay_s, 1);
  EXPECT_EQ(c.preempt_type, PreemptType::kPartitionPrio);
  EXPECT_EQ(c.preempt_mode, PreemptMode::kRequeue);

  ASSERT_EQ(c.nodes.size(), 5u);
  EXPECT_EQ(c.nodes[0].name, "gpu01");
  EXPECT_EQ(c.nodes[3].name, "gpu04");
  EXPECT_EQ(c.nodes[0].cpus, 64u);  // from NodeName=DEFAULT
  EXPECT_EQ(c.nodes[0].real_memory_mib, 512000);
  EXPECT_EQ(c.nodes[0].gpus, 8u);
  EXPECT_EQ(c.nodes[0].gpu_type, "a100");
  EXPECT_EQ(c.nodes[0].weight, 10u);
  EXPECT_EQ(c.nodes[4].name, "cpu1");
  EXPECT_EQ(c.nodes[4].gpus, 0u);
  EXPECT_EQ(c.nodes[4].weight, 1u);

  ASSERT_EQ(c.partitions.size(), 3u);
  const PartitionDef& batch = c.partitions[0];
  EXPECT_EQ(batch.nodes, (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(batch.max_time_s, 86400);  // PartitionName=DEFAULT
  EXPECT_EQ(batch.priority_job_factor, 10u);
  EXPECT_EQ(batch.priority_tier, 1u);
  EXPECT_FALSE(batch.preempt_mode.has_value());
  const PartitionDef& urgent = c.partitions[1];
  EXPECT_EQ(urgent.nodes, (std::vector<uint32_t>{2, 3, 4}));
  EXPECT_EQ(urgent.priority_tier, 5u);
  EXPECT_EQ(urgent.max_time_s, kUnlimited);
  EXPECT_EQ(urgent.preempt_mode, PreemptMode::kCancel);
  EXPECT_EQ(c.partitions[2].nodes.size(), 5u);  // Nodes=ALL
  EXPECT_EQ(c.partitions[2].priority_tier, 3u);  // Priority= sets both
  EXPECT_EQ(c.partitions[2].priority_job_factor, 3u);
  EXPECT_EQ(c.default_partition, 0u);

  // One warning per key Orrery does not model, where it first appears.
  EXPECT_EQ(c.warnings, (std::vector<std::string>{
                            "s.conf:2:1: key 'ClusterName' is not modelled; ignored",
                            "s.conf:15:21: SchedulerParameters option 'max_rpc_cnt' is not modelled; ignored",
                            "s.conf:19:44: NodeName attribute 'State' is not modelled; ignored",
                            "s.conf:20:47: NodeName attribute 'Sockets' is not modelled; ignored",
                            "s.conf:22:42: PartitionName attribute 'State' is not modelled; ignored",
                        }));
}

TEST(SlurmConf, DefaultsWhenUnset) {
  const SlurmConf c = MustParse("NodeName=n1\nPartitionName=p Nodes=n1\n");
  EXPECT_EQ(c.priority.type, PriorityType::kBasic);
  EXPECT_EQ(c.priority.decay_half_life_s, 7 * 86400);
  EXPECT_EQ(c.priority.calc_period_s, 300);
  EXPECT_EQ(c.priority.max_age_s, 7 * 86400);
  EXPECT_EQ(c.sched.bf_window_s, 86400);
  EXPECT_EQ(c.sched.bf_resolution_s, 60);
  EXPECT_EQ(c.sched.default_queue_depth, 100);
  EXPECT_EQ(c.preempt_type, PreemptType::kNone);
  EXPECT_EQ(c.partitions[0].priority_tier, 1u);
  EXPECT_EQ(c.nodes[0].cpus, 1u);
  EXPECT_TRUE(c.warnings.empty());
}

TEST(SlurmConf, QuotesCommentsAndCaseOfKeys) {
  const SlurmConf c = MustParse("pRiOrItYwEiGhTaGe=7 # comment = ignored\nNodeName=n1 Feature=\"a b\\#c\"\n");
  EXPECT_EQ(c.priority.weight_age, 7u);
  EXPECT_EQ(c.warnings.size(), 1u);
}

TEST(SlurmConf, KeySetTwiceWarnsAndTheLastCounts) {
  const SlurmConf c = MustParse("PriorityWeightAge=1\nPriorityWeightAge=2\n");
  EXPECT_EQ(c.priority.weight_age, 2u);
  EXPECT_EQ(c.warnings,
            (std::vector<std::string>{"s.conf:2:1: key 'PriorityWeightAge' set again (first on line 1); the last "
                                      "value is used"}));
}

TEST(SlurmConf, LocatedErrors) {
  struct Case {
    std::string_view text;
    std::string_view error;
  } cases[] = {
      {"Include /etc/slurm/nodes.conf\n",
       "s.conf:1:1: expected the settings in this one file, got \"Include\" (Include is not supported: merge the "
       "included file into this one)"},
      {"PriorityWeightAge=abc\n",
       "s.conf:1:19: key 'PriorityWeightAge': expected a non-negative integer below 2^32, got \"abc\""},
      {"PriorityType=priority/fancy\n",
       "s.conf:1:14: key 'PriorityType': expected priority/basic or priority/multifactor, got \"priority/fancy\""},
      {"PriorityMaxAge=1:2:3:4\n",
       "s.conf:1:16: key 'PriorityMaxAge': expected a time as MINUTES, MM:SS, HH:MM:SS, D-HH, D-HH:MM or "
       "D-HH:MM:SS, got \"1:2:3:4\""},
      {"PriorityFlags=DEPTH_OBLIVIOUS\n",
       "s.conf:1:15: key 'PriorityFlags': expected PriorityFlags of ACCRUE_ALWAYS, CALCULATE_RUNNING, FAIR_TREE "
       "(others, such as NO_FAIR_TREE, DEPTH_OBLIVIOUS, SMALL_RELATIVE_TO_TIME, MAX_TRES or NO_NORMAL_*, are not "
       "modelled), got \"DEPTH_OBLIVIOUS\""},
      {"PriorityWeightAssoc=5\n",
       "s.conf:1:21: key 'PriorityWeightAssoc': expected 0 (the association priority factor is not modelled), got "
       "\"5\""},
      {"\n\nSchedulerParameters=bf_window=0\n",
       "s.conf:3:21: key 'SchedulerParameters': expected bf_window=N with N from 1 to 43200 minutes, got "
       "\"bf_window=0\""},
      {"PreemptMode=SUSPEND,GANG\n",
       "s.conf:1:13: key 'PreemptMode': expected OFF, CANCEL, REQUEUE or SUSPEND (GANG time slicing is not "
       "modelled), got \"SUSPEND,GANG\""},
      {"NodeName=n[1-2]\nNodeName=n2\n",
       "s.conf:2:10: key 'NodeName': expected each node defined once, got \"n2\" again (first on line 1)"},
      {"NodeName=n[2-1]\n",
       "s.conf:1:10: key 'NodeName': expected a range whose end is not below its start, got \"2-1\""},
      {"NodeName=n1 Gres=gpu:a100:4,gpu:v100:4\n",
       "s.conf:1:18: key 'Gres': expected one GPU type per node (nodes mixing GPU types are not modelled), got "
       "\"gpu:a100:4,gpu:v100:4\""},
      {"NodeName=n1\nPartitionName=p Nodes=n[1-2]\n",
       "s.conf:2:23: key 'Nodes': expected nodes defined by NodeName lines, got undefined node \"n2\""},
      {"PartitionName=p MaxTime=forever\n",
       "s.conf:1:25: key 'MaxTime': expected a time as MINUTES, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or "
       "UNLIMITED, got \"forever\""},
      {"PartitionName=a Default=YES\nPartitionName=b Default=YES\n",
       "s.conf:2:15: key 'PartitionName': expected one partition with Default=YES, got a second: \"b\""},
      {"NodeName=n1 Feature=\"open\n", "s.conf:1:13: expected a closing '\"' on this line, got the end of the line"},
      {"=5\n", "s.conf:1:1: expected Key=Value, got \"=5\""},
      {"PriorityWeightAge\n", "s.conf:1:1: expected Key=Value, got \"PriorityWeightAge\""},
      {"PriorityUsageResetPeriod=MONTHLY\n",
       "s.conf:1:26: key 'PriorityUsageResetPeriod': expected NONE (usage resets are not modelled: usage only "
       "decays), got \"MONTHLY\""},
      {"PartitionName=p TRESBillingWeights=CPU=1.0,GRES/gpu=4.0\n",
       "s.conf:1:36: key 'TRESBillingWeights': expected no TRESBillingWeights (usage is charged as allocated CPUs × "
       "seconds, Slurm's default billing), got \"CPU=1.0,GRES/gpu=4.0\""},
      {"PriorityWeightTRES=CPU=1,billing=5\n",
       "s.conf:1:20: key 'PriorityWeightTRES': expected weights of the TRES cpu, mem, node or gres/gpu (others are "
       "not modelled), got \"CPU=1,billing=5\""},
  };
  for (const Case& c : cases) EXPECT_EQ(ErrorOf(c.text), c.error) << c.text;
}

TEST(SlurmConf, ContinuedLinesKeepTheirOwnLineNumbers) {
  EXPECT_EQ(ErrorOf("NodeName=n1 \\\n  CPUs=zero\n"),
            "s.conf:2:8: key 'CPUs': expected a positive integer below 2^32, got \"zero\"");
}

TEST(SlurmConf, ShippedExampleReads) {
  auto c = ReadSlurmConf(std::string(ORRERY_SOURCE_DIR) + "/configs/slurm/gpu-site.conf");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->nodes.size(), 16u);
  EXPECT_EQ(c->nodes[12].name, "gpu013");
  EXPECT_EQ(c->nodes[12].weight, 20u);
  EXPECT_EQ(c->nodes[0].gpus, 8u);
  ASSERT_EQ(c->partitions.size(), 2u);
  EXPECT_EQ(c->partitions[1].nodes.size(), 4u);
  EXPECT_EQ(c->partitions[1].max_time_s, 4 * 3600);
  EXPECT_EQ(c->sched.bf_max_job_user, 50);  // on the continued line
  EXPECT_EQ(c->warnings.size(), 2u);        // ClusterName, SlurmctldHost
}

}  // namespace
}  // namespace orrery::slurm
