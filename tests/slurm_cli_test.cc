// `orrery simulate --policy slurm:conf=...,accounts=...` end to end: the shipped example site
// runs, the files' warnings are printed, and a malformed file is refused with exit 2 at its
// file:line:col.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_testing.h"

namespace {

namespace fs = std::filesystem;
using orrery::cli_testing::CmdOut;
using orrery::cli_testing::RunOrrery;

const std::string kSrc = ORRERY_SOURCE_DIR;
const std::string kConf = kSrc + "/configs/slurm/gpu-site.conf";
const std::string kAccounts = kSrc + "/configs/slurm/gpu-site-accounts.txt";
const std::string kSacct = kSrc + "/tests/fixtures/trace/sacct.txt";

// The sacct fixture's jobs are charged to their recorded accounts: with the example site's
// listing (no proj1/proj2/proj3 associations) sbatch would refuse them (InvalidAccount); with
// no listing the accounts are not checked.
TEST(SlurmCli, TheExampleSiteRunsAndItsWarningsArePrinted) {
  const std::string base = "simulate " + kSacct + " --cluster " + kSrc + "/configs/h200-16x8.toml --no-output";
  CmdOut o = RunOrrery(base + " --policy slurm:conf=" + kConf);
  ASSERT_EQ(o.status, 0) << o.text;
  EXPECT_NE(o.text.find("gpu-site.conf:4:1: key 'ClusterName' is not modelled; ignored"), std::string::npos) << o.text;
  EXPECT_NE(o.text.find("jobs finished"), std::string::npos) << o.text;
  CmdOut refused = RunOrrery(base + " --policy slurm:conf=" + kConf + ",accounts=" + kAccounts);
  EXPECT_NE(refused.text.find("refused at submission by Slurm's limit InvalidAccount: 3"), std::string::npos)
      << refused.text;
}

// --cluster site.conf: the cluster of the scale configuration's one partition (1,024 nodes of
// 8 GPUs, a single pool) is the scale TOML's, so every figure of the run is the same; the
// example site's overlapping partitions cannot be VCs and are refused at the second one.
TEST(SlurmCli, AClusterFromTheSitesSlurmConf) {
  const std::string scale_conf = kSrc + "/configs/slurm/scale-1024x8.conf";
  const std::string policy = " --policy slurm:conf=" + scale_conf + " --no-output";
  CmdOut from_conf = RunOrrery("simulate " + kSacct + " --cluster " + scale_conf + policy);
  CmdOut from_toml = RunOrrery("simulate " + kSacct + " --cluster " + kSrc + "/configs/scale-1024x8.toml" + policy);
  ASSERT_EQ(from_conf.status, 0) << from_conf.text;
  ASSERT_EQ(from_toml.status, 0) << from_toml.text;
  const auto table = [](const std::string& text) { return text.substr(0, text.find("simulation wall time")); };
  EXPECT_EQ(table(from_conf.text), table(from_toml.text));
  CmdOut overlap = RunOrrery("simulate " + kSacct + " --cluster " + kConf + " --no-output");
  EXPECT_EQ(overlap.status, 2) << overlap.text;
  EXPECT_NE(overlap.text.find("gpu-site.conf:31:1: partition 'interactive' names node gpu013, already in partition "
                              "'batch' (line 30)"),
            std::string::npos)
      << overlap.text;
}

TEST(SlurmCli, MalformedFilesAreRefusedWhereTheyAreWrong) {
  const fs::path d = fs::temp_directory_path() / "orrery-slurm-cli";
  fs::create_directories(d);
  const std::string bad_conf = (d / "bad.conf").string(), bad_acct = (d / "bad-accounts.txt").string();
  std::ofstream(bad_conf) << "NodeName=n1 Gres=gpu:8\nPartitionName=p Nodes=n1 MaxTime=soon\n";
  std::ofstream(bad_acct) << "Account|User|Share\nroot||1\n a||many\n";
  struct Case {
    std::string spec, expected;
  } cases[] = {
      {"slurm:conf=" + bad_conf, bad_conf + ":2:34: key 'MaxTime': expected a time as MINUTES"},
      {"slurm:conf=" + kConf + ",accounts=" + bad_acct,
       bad_acct + ":3:5: column 'Share': expected a non-negative number of shares below 2^32, got \"many\""},
      {"slurm:conf=" + kSrc + "/tests/fixtures/slurm_conf/include.conf", "include.conf:1:1: expected the settings in "
                                                                         "this one file, got \"Include\""},
      {"slurm", "parameter 'conf': expected the path of a slurm.conf"},
  };
  for (const Case& c : cases) {
    CmdOut o = RunOrrery("simulate " + kSacct + " --policy " + c.spec + " --no-output");
    EXPECT_EQ(o.status, 2) << c.spec << "\n" << o.text;
    EXPECT_NE(o.text.find(c.expected), std::string::npos) << c.spec << "\n" << o.text;
  }
}

// Preemption end to end, on two nodes of one pool shared by partitions low (PriorityTier 1)
// and high (2), each job 8 GPUs on a node of its own: jobs 1 (t=0, 3600 s) and 2 (t=10,
// 3600 s) of low run; job 3 of high (t=600, 600 s) preempts the younger, job 2, at 600.
// REQUEUE: job 2 ran 590 s, waits until job 3 ends at 1200 and runs its 3010 s left plus the
// restart overhead of 30 s (8 GPUs): it ends at 1200 + 3040 = 4240, JCT 4230, run 3630, queue
// delay 600. CANCEL: job 2 ends at 600 with status preempted (run 590, no JCT), and explain
// says so.
TEST(SlurmCli, PreemptionRequeuesOrCancelsAndTheRunConserves) {
  const fs::path d = fs::temp_directory_path() / "orrery-slurm-cli-preempt";
  fs::create_directories(d);
  const std::string sacct = (d / "sacct.txt").string(), cluster = (d / "two.toml").string();
  std::ofstream(cluster) << "name = \"two\"\n[defaults]\ngpus_per_node = 8\n[[vc]]\nname = \"batch\"\nnodes = 2\n";
  const std::string tres = "|cpu=8,gres/gpu=8,node=1|cpu=8,gres/gpu=8,node=1|1|8|1G\n";
  std::ofstream(sacct) << "JobID|JobName|User|Account|Partition|Submit|Start|End|Elapsed|Timelimit|State|AllocTRES|"
                          "ReqTRES|NNodes|NCPUS|ReqMem\n"
                       << "1|a|alice|p|low|2024-01-02T00:00:00|2024-01-02T00:00:00|2024-01-02T01:00:00|01:00:00|02:00:00|"
                          "COMPLETED" << tres
                       << "2|b|alice|p|low|2024-01-02T00:00:10|2024-01-02T00:00:10|2024-01-02T01:00:10|01:00:00|02:00:00|"
                          "COMPLETED" << tres
                       << "3|c|bob|p|high|2024-01-02T00:10:00|2024-01-02T00:10:00|2024-01-02T00:20:00|00:10:00|01:00:00|"
                          "COMPLETED" << tres;
  for (const std::string mode : {"REQUEUE", "CANCEL"}) {
    const std::string conf = (d / (mode + ".conf")).string();
    std::ofstream(conf) << "PreemptType=preempt/partition_prio\nPreemptMode=" << mode
                        << "\nNodeName=n[1-2] CPUs=64 Gres=gpu:8\n"
                           "PartitionName=low Nodes=ALL Default=YES PriorityTier=1\nPartitionName=high Nodes=ALL "
                           "PriorityTier=2\n";
    const fs::path out = d / ("out-" + mode);
    const std::string args = sacct + " --cluster " + cluster + " --policy slurm:conf=" + conf;
    CmdOut o = RunOrrery("simulate " + args + " --out-dir " + out.string() + " --force");
    ASSERT_EQ(o.status, 0) << o.text;  // the conservation check passed
    std::string jobs;  // the one policy's folder
    for (const fs::directory_entry& e : fs::directory_iterator(out))
      if (e.is_directory()) jobs = orrery::cli_testing::Slurp(e.path() / "jobs.csv");
    const std::string job2 = mode == "REQUEUE" ? "1,2,batch,8,1000,10,10,4240,600,4230,1.1653,3630,1,finished,\n"
                                               : "1,2,batch,8,1000,10,10,600,0,,,590,1,preempted,\n";
    EXPECT_NE(jobs.find(job2), std::string::npos) << mode << "\n" << jobs;
    EXPECT_NE(jobs.find("2,3,batch,8,1000,600,600,1200,0,600,1.0000,600,0,finished,\n"), std::string::npos) << jobs;
    CmdOut e = RunOrrery("explain " + args + " 1");
    EXPECT_NE(e.text.find("preempted (PreemptMode=" + mode + ") by job 2, priority 1"), std::string::npos) << e.text;
    if (mode == "CANCEL")
      EXPECT_NE(e.text.find("outcome: started 10, preempted and cancelled at 600, queue delay 0 s, ran 590 s"),
                std::string::npos)
          << e.text;
  }
}

// Fair share, per account, end to end (sacct text -> simulate -> summary.json -> report): one node
// of 8 GPUs; account heavy (alice) submits three 1-hour 8-GPU jobs at 0, 1 and 2 s, account light
// (bob) one at 10 s; equal shares. At 3600 job 0 ends and heavy has used 8 GPU-hours, light none:
//   fair share on  (weight 10000): light's factor is the higher, so light starts at 3600, then
//                  heavy's at 7200 and 10800. Waits: heavy 0, 7199, 10798 (mean 5999); light 3590.
//   fair share off (weight 0): age alone, oldest first: heavy's at 3600 and 7200, light at 10800.
//                  Waits: heavy 0, 3599, 7198 (mean 3599); light 10790.
TEST(SlurmCli, FairShareMovesWaitsBetweenAccountsAndTheReportShowsThem) {
  const fs::path d = fs::temp_directory_path() / "orrery-slurm-cli-fairshare";
  fs::remove_all(d);
  fs::create_directories(d);
  const std::string sacct = (d / "sacct.txt").string(), accounts = (d / "accounts.txt").string();
  std::ofstream(sacct) << "JobID|JobName|User|Account|Partition|Submit|Elapsed|Timelimit|State|ReqTRES|NNodes|QOS\n"
                          "1|a|alice|heavy|batch|2024-01-02T00:00:00|01:00:00|02:00:00|COMPLETED|gres/gpu=8,node=1|1|normal\n"
                          "2|b|alice|heavy|batch|2024-01-02T00:00:01|01:00:00|02:00:00|COMPLETED|gres/gpu=8,node=1|1|normal\n"
                          "3|c|alice|heavy|batch|2024-01-02T00:00:02|01:00:00|02:00:00|COMPLETED|gres/gpu=8,node=1|1|normal\n"
                          "4|d|bob|light|batch|2024-01-02T00:00:10|01:00:00|02:00:00|COMPLETED|gres/gpu=8,node=1|1|normal\n";
  std::ofstream(accounts) << "Cluster|Account|User|Partition|Share|GrpTRES|MaxJobs|MaxTRES|QOS|Def QOS\n"
                             "c|root|||1||||normal|normal\nc| heavy|||1||||normal|normal\n"
                             "c|  heavy|alice||1||||normal|normal\nc| light|||1||||normal|normal\n"
                             "c|  light|bob||1||||normal|normal\n\n"
                             "Name|Priority|PreemptMode|UsageFactor|GrpTRES|MaxTRES|MaxWall|MaxTRESPU|MaxJobsPU\n"
                             "normal|0|cluster|1.000000|||||\n";
  std::string specs;
  for (const std::string fs_weight : {"10000", "0"}) {
    const std::string conf = (d / ("fs" + fs_weight + ".conf")).string();
    std::ofstream(conf) << "PriorityType=priority/multifactor\nPriorityWeightAge=1000\nPriorityWeightFairshare="
                        << fs_weight
                        << "\nPriorityMaxAge=7-0\nPriorityDecayHalfLife=7-0\nPriorityCalcPeriod=5\n"
                           "NodeName=n1 CPUs=64 Gres=gpu:8\nPartitionName=batch Nodes=ALL Default=YES\n";
    specs += (specs.empty() ? "" : ",") + std::string("slurm:conf=") + conf + ",accounts=" + accounts;
  }
  const fs::path out = d / "runs";
  CmdOut o = RunOrrery("simulate " + sacct + " --cluster " + (d / "fs0.conf").string() + " --policy " + specs +
                       " --out-dir " + out.string() + " --force");
  ASSERT_EQ(o.status, 0) << o.text;
  const nlohmann::json s = nlohmann::json::parse(orrery::cli_testing::Slurp(out / "summary.json"));
  ASSERT_EQ(s["runs"].size(), 2u);
  const double want[2][2] = {{5999, 3590}, {3599, 10790}};  // [fair share on, off][heavy, light]
  for (size_t r = 0; r < 2; ++r) {
    const nlohmann::json& g = s["runs"][r]["per_account"];
    ASSERT_EQ(g.size(), 2u) << s["runs"][r].dump();
    EXPECT_EQ(g[0]["name"], "heavy");
    EXPECT_EQ(g[1]["name"], "light");
    EXPECT_EQ(g[0]["jobs"], 3);
    EXPECT_DOUBLE_EQ(g[0]["queue_delay_s"]["mean"].get<double>(), want[r][0]) << r;
    EXPECT_DOUBLE_EQ(g[1]["queue_delay_s"]["mean"].get<double>(), want[r][1]) << r;
    EXPECT_DOUBLE_EQ(g[1]["gpu_hours"].get<double>(), 8.0);
  }
  CmdOut rep = RunOrrery("report " + out.string() + " --out-dir " + (d / "report").string());
  ASSERT_EQ(rep.status, 0) << rep.text;
  const std::string html = orrery::cli_testing::Slurp(d / "report" / "report.html");
  EXPECT_NE(html.find("Per account"), std::string::npos);
  EXPECT_NE(html.find("account_queue"), std::string::npos);
}

// The example of docs/slurm-whatif.md, run as the doc runs it: its per-account figures are the
// doc's table (average queueing with fair share on and off, hours to two decimals).
TEST(SlurmCli, TheFairShareWhatIfExampleGivesTheDocumentedFigures) {
  const fs::path d = orrery::cli_testing::FreshTempDir("slurm-whatif");
  CmdOut o = orrery::cli_testing::RunShell("ORRERY=" + std::string(ORRERY_BINARY) + " " + kSrc +
                                           "/examples/slurm-whatif/run.sh " + d.string());
  ASSERT_EQ(o.status, 0) << o.text;
  const nlohmann::json s = nlohmann::json::parse(orrery::cli_testing::Slurp(d / "runs" / "summary.json"));
  ASSERT_EQ(s["runs"].size(), 2u);
  auto wait_h = [&](size_t run, const std::string& account) {
    for (const nlohmann::json& g : s["runs"][run]["per_account"])
      if (g["name"] == account) return std::round(g["queue_delay_s"]["mean"].get<double>() / 36) / 100;
    return -1.0;
  };
  EXPECT_EQ(s["runs"][0]["per_account"].size(), 15u);
  EXPECT_DOUBLE_EQ(wait_h(0, "vcJsw"), 30.38);
  EXPECT_DOUBLE_EQ(wait_h(1, "vcJsw"), 26.25);
  EXPECT_DOUBLE_EQ(wait_h(0, "vcgkz"), 0.03);
  EXPECT_DOUBLE_EQ(wait_h(1, "vcgkz"), 0.31);
  EXPECT_NE(orrery::cli_testing::Slurp(d / "report" / "report.html").find("Per account"), std::string::npos);
}

}  // namespace
