// sacctmgr -P listings of associations and QOS: columns by header, the account tree (parent
// column, tree indentation, flat), limits, and located refusals.
#include "slurm/accounts.h"

#include <gtest/gtest.h>

namespace orrery::slurm {
namespace {

Accounts MustParse(std::string_view text) {
  auto a = ParseSacctmgr(text, "acct.txt");
  EXPECT_TRUE(a.ok()) << (a.ok() ? "" : a.error().message);
  return a.ok() ? std::move(a).value() : Accounts{};
}

std::string ErrorOf(std::string_view text) {
  auto a = ParseSacctmgr(text, "acct.txt");
  EXPECT_FALSE(a.ok());
  return a.ok() ? "" : a.error().message;
}

// The default columns of `sacctmgr -P show assoc tree` and `sacctmgr -P show qos`.
constexpr std::string_view kSite =
    "Cluster|Account|User|Partition|Share|Priority|GrpJobs|GrpTRES|GrpSubmit|GrpWall|GrpTRESMins|MaxJobs|MaxTRES|"
    "MaxTRESPerNode|MaxSubmit|MaxWall|MaxTRESMins|QOS|Def QOS|GrpTRESRunMins\n"
    "acme|root|||1|||||||||||||normal|normal|\n"
    "acme| root|root||1|||||||||||||normal|normal|\n"
    "acme| physics|||60||20|gres/gpu=64,cpu=2048||||||||||normal,high|normal|\n"
    "acme|  theory|||1|||||||||||||normal||\n"
    "acme|   theory|carol||1|||||||4||||||normal||\n"
    "acme|  physics|alice||3||||||||gres/gpu=16||100|||normal,high|normal|\n"
    "acme| bio|||40|||||||||||||normal|normal|\n"
    "acme|  bio|bob||parent_|||||||||||||normal||\n"
    "\n"
    "Name|Priority|GraceTime|Preempt|PreemptExemptTime|PreemptMode|Flags|UsageThres|UsageFactor|GrpTRES|"
    "GrpTRESMins|GrpTRESRunMins|GrpJobs|GrpSubmit|GrpWall|MaxTRES|MaxTRESPerNode|MaxTRESMins|MaxWall|MaxTRESPU|"
    "MaxJobsPU|MaxSubmitPU|MaxTRESPA|MaxJobsPA|MaxSubmitPA|MinTRES\n"
    "normal|0|00:00:00||||DenyOnLimit||1.000000|||||||||||gres/gpu=32|10|50||||\n"
    "high|100|00:05:00|normal||requeue|||2.5|gres/gpu=128|||40|||gres/gpu=64|||2-00:00:00|||||||\n";

TEST(Sacctmgr, ReadsATreeListingAndQos) {
  std::string text(kSite);
  text.replace(text.find("parent_"), 7, "2");
  const Accounts a = MustParse(text);
  ASSERT_EQ(a.assocs.size(), 8u);
  EXPECT_EQ(a.assocs[0].account, "root");
  EXPECT_EQ(a.assocs[0].parent, "");
  EXPECT_EQ(a.assocs[1].user, "root");
  EXPECT_EQ(a.assocs[1].parent, "root");
  const Assoc& physics = a.assocs[2];
  EXPECT_EQ(physics.account, "physics");
  EXPECT_EQ(physics.parent, "root");  // indented once under root
  EXPECT_EQ(physics.shares, 60u);
  EXPECT_EQ(physics.grp_jobs, 20);
  EXPECT_EQ(physics.grp_tres.at("gres/gpu"), 64);
  EXPECT_EQ(physics.grp_tres.at("cpu"), 2048);
  EXPECT_EQ(physics.qos, (std::vector<std::string>{"normal", "high"}));
  EXPECT_EQ(physics.def_qos, "normal");
  const Assoc& theory = a.assocs[3];
  EXPECT_EQ(theory.account, "theory");
  EXPECT_EQ(theory.parent, "physics");  // indented twice, under physics
  EXPECT_EQ(a.assocs[4].user, "carol");
  EXPECT_EQ(a.assocs[4].parent, "theory");
  EXPECT_EQ(a.assocs[4].max_jobs, 4);
  const Assoc& alice = a.assocs[5];
  EXPECT_EQ(alice.user, "alice");
  EXPECT_EQ(alice.parent, "physics");
  EXPECT_EQ(alice.shares, 3u);
  EXPECT_EQ(alice.max_tres.at("gres/gpu"), 16);
  EXPECT_EQ(alice.max_submit, 100);
  EXPECT_EQ(alice.max_jobs, kNoLimit);
  EXPECT_EQ(a.assocs[6].account, "bio");
  EXPECT_EQ(a.assocs[6].parent, "root");  // back to one level of indentation
  EXPECT_EQ(a.assocs[7].shares, 2u);

  ASSERT_EQ(a.qos.size(), 2u);
  const Qos& normal = a.qos[0];
  EXPECT_EQ(normal.priority, 0u);
  EXPECT_EQ(normal.max_tres_pu.at("gres/gpu"), 32);
  EXPECT_EQ(normal.max_jobs_pu, 10);
  EXPECT_EQ(normal.max_submit_pu, 50);
  EXPECT_FALSE(normal.preempt_mode.has_value());
  const Qos& high = a.qos[1];
  EXPECT_EQ(high.priority, 100u);
  EXPECT_EQ(high.preempt, (std::vector<std::string>{"normal"}));
  EXPECT_EQ(high.preempt_mode, PreemptMode::kRequeue);
  EXPECT_EQ(high.usage_factor, 2.5);
  EXPECT_EQ(high.grp_tres.at("gres/gpu"), 128);
  EXPECT_EQ(high.grp_jobs, 40);
  EXPECT_EQ(high.max_tres.at("gres/gpu"), 64);
  EXPECT_EQ(high.max_wall_s, 2 * 86400);
  EXPECT_EQ(high.max_jobs_pu, kNoLimit);
  // GraceTime and Flags are set and not modelled: one warning each, where first seen.
  EXPECT_EQ(a.warnings, (std::vector<std::string>{"acct.txt:12:10: column 'GraceTime' is not modelled; ignored",
                                                  "acct.txt:12:22: column 'Flags' is not modelled; ignored"}));
}

TEST(Sacctmgr, ParentColumnAndFlatListings) {
  const Accounts withParent = MustParse(
      "Account|User|Par Name|Share\nroot|||1\nlab||root|5\ngroup||lab|2\ngroup|dan||1\n");
  EXPECT_EQ(withParent.assocs[2].parent, "lab");
  EXPECT_EQ(withParent.assocs[3].parent, "group");
  // `-p` ends every line with '|'; without a tree, accounts hang under root.
  const Accounts flat = MustParse("Account|User|Share|\nroot|||\nlab||7|\nlab|erin|1|\n");
  EXPECT_EQ(flat.assocs[0].shares, 1u);  // empty Share: Slurm's default of 1
  EXPECT_EQ(flat.assocs[1].parent, "root");
  EXPECT_EQ(flat.assocs[1].shares, 7u);
  EXPECT_EQ(flat.assocs[2].parent, "lab");
}

TEST(Sacctmgr, LocatedErrors) {
  struct Case {
    std::string_view text;
    std::string_view error;
  } cases[] = {
      {kSite, "acct.txt:9:17: column 'Share': expected a non-negative number of shares below 2^32, got \"parent_\""},
      {"Account|User|Share\nroot||parent\n",
       "acct.txt:2:7: column 'Share': expected a number of shares (Share=parent, fair share taken from the parent, "
       "is not modelled), got \"parent\""},
      {"Who|What\na|b\n",
       "acct.txt:1:1: expected a header line of `sacctmgr -P show assoc` (with an Account column) or of `sacctmgr -P "
       "show qos` (with a Name column), got \"Who|What\""},
      {"Account|User|Share\nroot|1\n", "acct.txt:2:7: expected 3 fields as the header has, got 2"},
      {"Account|User|Share\nroot||1|x\n", "acct.txt:2:9: expected 3 fields as the header has, got more"},
      {"Account|User|GrpTRES\nroot||gpu=4\n",
       "acct.txt:2:7: column 'GrpTRES': expected limits on the TRES cpu, mem, node or gres/gpu (others are not "
       "enforced), got \"gpu\""},
      {"Account|User|GrpTRESMins\nroot||cpu=100\n",
       "acct.txt:2:7: column 'GrpTRESMins': expected no value (this limit is not enforced by the model), got "
       "\"cpu=100\""},
      {"Account|User|MaxJobs\nroot||many\n",
       "acct.txt:2:7: column 'MaxJobs': expected a count from 0 to 10^9, or empty (no limit), got \"many\""},
      {"Account|User\nroot|\nlab|zoe\n",
       "acct.txt:3:1: expected an association of account \"lab\" (a row with an empty User) for user \"zoe\", got "
       "none"},
      {"Account|User\nroot|\nroot|\n",
       "acct.txt:3:1: expected each association (account, user, partition) once, got \"root,,\" again"},
      {"Account|User|QOS\nroot||gold\n\nName|Priority\nnormal|0\n",
       "acct.txt:2:7: column 'QOS': expected QOS listed in the QOS table, got \"gold\""},
      {"Name|PreemptMode\nhigh|suspend,gang\n",
       "acct.txt:2:6: column 'PreemptMode': expected OFF, CANCEL, REQUEUE or SUSPEND (GANG time slicing is not "
       "modelled), got \"suspend,gang\""},
      {"Name|Preempt\nhigh|low\n", "acct.txt:2:1: QOS \"high\": expected QOS to preempt listed in the QOS table, got \"low\""},
      {"Name|Priority\nhigh|1\nhigh|2\n", "acct.txt:3:1: expected each QOS once, got \"high\" again"},
      {"Cluster|Account|User\na|root|\nb|root|x\n",
       "acct.txt:3:1: column 'Cluster': expected the associations of one cluster, \"a\", got \"b\""},
  };
  for (const Case& c : cases) EXPECT_EQ(ErrorOf(c.text), c.error) << c.text;
}

TEST(Sacctmgr, ShippedExampleReads) {
  auto a = ReadSacctmgr(std::string(ORRERY_SOURCE_DIR) + "/configs/slurm/gpu-site-accounts.txt");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->assocs.size(), 10u);
  EXPECT_EQ(a->assocs[3].user, "ana");
  EXPECT_EQ(a->assocs[3].parent, "llm");
  ASSERT_EQ(a->qos.size(), 2u);
  EXPECT_EQ(a->qos[1].max_jobs_pu, 4);
  EXPECT_TRUE(a->warnings.empty());
}

// The scale cluster's accounts: root, 8 accounts and 2,000 users, user k under account k mod 8.
TEST(Sacctmgr, ScaleAccountsRead) {
  auto a = ReadSacctmgr(std::string(ORRERY_SOURCE_DIR) + "/configs/slurm/scale-1024x8-accounts.txt");
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_EQ(a->assocs.size(), 1u + 8u + 2000u);
  EXPECT_EQ(a->assocs[1].account, "llm");
  EXPECT_EQ(a->assocs[1].shares, 30u);
  EXPECT_EQ(a->assocs[2].user, "user000");
  EXPECT_EQ(a->assocs[2].parent, "llm");
  ASSERT_EQ(a->qos.size(), 2u);
  EXPECT_EQ(a->qos[1].max_jobs_pu, 8);
  EXPECT_TRUE(a->warnings.empty());
}

}  // namespace
}  // namespace orrery::slurm
