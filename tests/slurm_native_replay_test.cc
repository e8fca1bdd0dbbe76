// `orrery replay --native` against a real Slurm 22.05 with accounting (tests/slurm/harness.sh
// with MariaDB and slurmdbd): Slurm schedules a 30-job segment by itself under the users and
// accounts of tests/fixtures/slurm_native/accounts.txt (fair share: teama 3 shares, teamb 1;
// orr-b1's default QOS `lim` caps it at 4 GPUs running), with the scheduling configuration of
// tests/fixtures/slurm_native/sched.conf, and the replay compares every job with `--policy
// slurm` on the same harness slurm.conf. Named *Slow* (real Slurm: the Release stage of CI runs
// it); it skips where Slurm, slurmdbd or MariaDB is not installed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "slurm/live_slurm.h"

namespace orrery {
namespace {

using testing::SlurmCluster;

const std::string kFixtures = ORRERY_SOURCE_DIR "/tests/fixtures/slurm_native";

bool AccountingInstalled() {
  return std::system("command -v slurmdbd >/dev/null 2>&1 && command -v mariadbd >/dev/null 2>&1 && "
                     "command -v mariadb-install-db >/dev/null 2>&1") == 0;
}

int Shell(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

struct Row {
  std::string user;
  double m_start = 0, m_end = 0, p_start = 0, p_end = 0;
};

// replay_jobs.csv: columns 11 m_start, 12 m_end, 15 p_start, 16 p_end, 23 user.
std::vector<Row> ReadRows(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::vector<Row> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    std::string x;
    while (std::getline(ls, x, ',')) f.push_back(x);
    if (f.size() < 24) continue;
    rows.push_back(Row{f[23], std::stod(f[11]), std::stod(f[12]), std::stod(f[15]), std::stod(f[16])});
  }
  return rows;
}

// Jobs of one user never overlap (its QOS lets 4 GPUs run and each of its jobs takes 4).
void ExpectSerial(const std::vector<Row>& rows, const std::string& user, bool measured) {
  std::vector<std::pair<double, double>> spans;
  for (const Row& r : rows)
    if (r.user == user) spans.emplace_back(measured ? r.m_start : r.p_start, measured ? r.m_end : r.p_end);
  std::sort(spans.begin(), spans.end());
  ASSERT_GE(spans.size(), 2u);
  for (size_t i = 1; i < spans.size(); ++i)
    EXPECT_GE(spans[i].first, spans[i - 1].second) << user << (measured ? " measured" : " predicted") << " job " << i;
}

// Refused before Slurm is asked: --native with a policy other than slurm.
TEST(ReplayNativeCli, RefusesAPolicyOtherThanSlurm) {
  const std::string log = ::testing::TempDir() + "/native-refused.log";
  const std::string cmd = std::string(ORRERY_BINARY) + " replay --slurm " + kFixtures +
                          "/trace.csv --native --speedup 1 --policy fifo --partition gpu > " + log + " 2>&1";
  EXPECT_EQ(Shell(cmd), 2);
  EXPECT_NE(testing::LogTail(log).find("--native: Slurm schedules by itself"), std::string::npos) << testing::LogTail(log);
}

// 30 jobs over 10 s (3 users, 1-8 GPUs, 3-10 s) on 2 nodes × 8 GPUs at speedup 1 (about 75 s
// of Slurm). Bounds from the measured run (docs/validation/slurm-native.md): start order tau
// 1.000, completion order tau 0.977, avg JCT +18.6 % (each start that waits for a completion
// is about 1 s later in Slurm than predicted, and these jobs last 3-10 s; +23.2 % with two
// other replays running beside it, hence the bound of +40 % for loaded CI machines).
TEST(SlurmNativeSlow, FairShareAndQosLimitReplayMatchesSlurmModel) {
  REQUIRE_SLURM();
  if (!AccountingInstalled()) GTEST_SKIP() << "slurmdbd or mariadb-server not installed (scripts/install-deps.sh)";
  SlurmCluster cluster(2, "ORRERY_SLURM_ACCOUNTS=" + kFixtures + "/accounts.txt ORRERY_SLURM_SCHED_CONF=" + kFixtures +
                              "/sched.conf");
  ASSERT_TRUE(cluster.ok()) << cluster.log();
  const std::string out = cluster.dir() + "/native", log = cluster.dir() + "/native.log";
  const std::string cmd = std::string(ORRERY_BINARY) + " replay --slurm " + kFixtures +
                          "/trace.csv --native --speedup 1 --policy slurm:conf=" + cluster.conf() + ",accounts=" +
                          kFixtures + "/accounts.txt --partition gpu --slurm-conf " + cluster.conf() + " --out " + out +
                          // The bounds below were measured with the plain prediction (JCT +18.6 to +23.2 %:
                          // about 1 s per wait on 3-10 s jobs, the wave latency).
                          " --wave-latency 0 --max-wall 240 > " + log + " 2>&1";
  ASSERT_EQ(Shell(cmd), 0) << testing::LogTail(log);
  std::ifstream sj(out + "/summary.json");
  const nlohmann::json s = nlohmann::json::parse(sj);
  EXPECT_EQ(s["mode"], "native");
  EXPECT_EQ(s["jobs"], 30);
  EXPECT_EQ(s["measured"], 30);
  const std::vector<Row> rows = ReadRows(out + "/replay_jobs.csv");
  ASSERT_EQ(rows.size(), 30u);
  // Trace users u1, u2, u3 are the listing's orr-a1, orr-a2, orr-b1 (first job order).
  EXPECT_EQ(rows[0].user, "orr-a1");
  EXPECT_EQ(rows[2].user, "orr-b1");
  // The QOS limit, in Slurm and in the model: orr-b1's 4-GPU jobs run one at a time.
  ExpectSerial(rows, "orr-b1", true);
  ExpectSerial(rows, "orr-b1", false);
  const double err = s["avg_jct_rel_error"], tau = s["kendall_tau"], stau = s["start_kendall_tau"];
  EXPECT_GE(stau, 0.95) << testing::LogTail(log);
  EXPECT_GE(tau, 0.90) << testing::LogTail(log);
  EXPECT_GE(err, -0.02) << testing::LogTail(log);
  EXPECT_LE(err, 0.40) << testing::LogTail(log);
  std::printf("[ native ] avg JCT error %+.1f %%, completion tau %.3f, start tau %.3f, mean |start error| %.2f s\n",
              100 * err, tau, stau, s["mean_abs_start_error_s"].get<double>());
}

}  // namespace
}  // namespace orrery
