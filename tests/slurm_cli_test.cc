// `orrery simulate --policy slurm:conf=...,accounts=...` end to end: the shipped example site
// runs, the files' warnings are printed, and a malformed file is refused with exit 2 at its
// file:line:col.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

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

}  // namespace
