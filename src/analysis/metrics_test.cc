#include "analysis/metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "base/rng.h"

namespace orrery {
namespace {

TEST(DescribeTest, NearestRankPercentilesOfASmallSample) {
  std::vector<double> v = {5, 1, 3, 2, 4};
  Distribution d = Describe(v);
  EXPECT_EQ(d.mean, 3.0);    // 15 / 5
  EXPECT_EQ(d.median, 3.0);  // rank ceil(0.5 × 5) = 3
  EXPECT_EQ(d.p95, 5.0);     // rank ceil(4.75) = 5
  EXPECT_EQ(d.max, 5.0);
  EXPECT_EQ(v, (std::vector<double>{1, 2, 3, 4, 5}));
}

TEST(DescribeTest, LargeSamplesSortLikeStdSort) {
  // Above the radix-sort threshold: integers with duplicates (JCTs), fractions (slowdowns),
  // zeros and negative values must come out in exactly std::sort's order, so the mean
  // (summed in sorted order) and every rank are bit-identical.
  Rng rng(7, "describe-test");
  std::vector<double> v;
  for (int i = 0; i < 50000; ++i) {
    const uint64_t r = rng.NextU64();
    switch (r % 4) {
      case 0: v.push_back(static_cast<double>(r % 100000)); break;
      case 1: v.push_back(1.0 + rng.Uniform() * 1000); break;
      case 2: v.push_back(-rng.Uniform() * 1e6); break;
      case 3: v.push_back(0.0); break;
    }
  }
  std::vector<double> ref = v;
  std::sort(ref.begin(), ref.end());
  double sum = 0;
  for (double x : ref) sum += x;
  Distribution d = Describe(v);
  EXPECT_EQ(v, ref);
  EXPECT_EQ(d.mean, sum / static_cast<double>(ref.size()));
  EXPECT_EQ(d.median, ref[24999]);  // rank 25,000
  EXPECT_EQ(d.p99, ref[49499]);     // rank 49,500
  EXPECT_EQ(d.max, ref.back());
}

// Every figure of group `g` equals Describe of the values of the outcomes `in` selects.
template <class In>
void ExpectGroupIsDescribed(const std::vector<JobOutcome>& outs, const GroupStats& g, In in) {
  std::vector<double> jct, wait, slow;
  uint64_t jobs = 0;
  for (const JobOutcome& o : outs) {
    if (!in(o)) continue;
    const bool finished = o.status == OutcomeStatus::kFinished;
    if (finished || o.status == OutcomeStatus::kWithdrawn) wait.push_back(static_cast<double>(o.wait));
    if (!finished) continue;
    ++jobs;
    jct.push_back(static_cast<double>(o.jct()));
    slow.push_back(std::max(1.0, static_cast<double>(o.jct()) / static_cast<double>(std::max<Duration>(o.run, 10))));
  }
  auto same = [](const Distribution& a, const Distribution& b) {
    EXPECT_EQ(a.mean, b.mean);
    EXPECT_EQ(a.median, b.median);
    EXPECT_EQ(a.p95, b.p95);
    EXPECT_EQ(a.p99, b.p99);
    EXPECT_EQ(a.p999, b.p999);
    EXPECT_EQ(a.max, b.max);
  };
  EXPECT_EQ(g.jobs, jobs) << g.name;
  same(g.jct, Describe(jct));
  same(g.wait, Describe(wait));
  same(g.slowdown, Describe(slow));
}

// Summarize sorts each metric once for all groups; every group's figures must be exactly those
// of sorting that group's own values (Describe), for groups above and below the radix threshold.
TEST(SummarizeTest, EveryGroupEqualsDescribingItAlone) {
  Rng rng(11, "summarize-test");
  std::vector<JobOutcome> outs(30000);
  for (size_t i = 0; i < outs.size(); ++i) {
    JobOutcome& o = outs[i];
    o.job = JobId{static_cast<uint32_t>(i)};
    const uint64_t r = rng.NextU64();
    o.gpus = static_cast<uint32_t>(1u << (r % 6));           // 1..32: small and large
    if (r % 7 != 0) o.vc = VcId{static_cast<uint16_t>(r % 3)};  // every 7th job in no VC
    o.status = r % 11 == 0 ? OutcomeStatus::kWithdrawn : r % 13 == 0 ? OutcomeStatus::kRejected : OutcomeStatus::kFinished;
    o.wait = static_cast<Duration>(rng.NextU64() % 5000);
    o.run = static_cast<Duration>(rng.NextU64() % 90000);
  }
  const std::vector<std::string> vcs = {"a", "b", "c"};
  RunData run;
  run.outcomes = &outs;
  run.vc_names = &vcs;
  const RunSummary s = Summarize(run);
  auto expect_group = [&](const GroupStats& g, auto in) { ExpectGroupIsDescribed(outs, g, in); };
  ASSERT_EQ(s.per_vc.size(), 3u);
  EXPECT_EQ(s.per_vc[1].name, "b");
  expect_group(s.small, [](const JobOutcome& o) { return o.gpus <= 8; });
  expect_group(s.large, [](const JobOutcome& o) { return o.gpus > 8; });
  for (uint16_t v = 0; v < 3; ++v)
    expect_group(s.per_vc[v], [v](const JobOutcome& o) { return o.vc.valid() && o.vc.v == v; });
  GroupStats all;
  all.jobs = s.finished;
  all.jct = s.jct;
  all.wait = s.wait;
  all.slowdown = s.slowdown;
  expect_group(all, [](const JobOutcome&) { return true; });
  EXPECT_GT(s.small.jobs, 4096u);  // the radix path and the std::sort path are both exercised
  EXPECT_LT(s.per_vc[0].jobs + s.large.jobs, 30000u);
}

// One VC holding every job (the scale runs' one pool): its group is reported as "all" is,
// and both equal Describe of every value.
TEST(SummarizeTest, AVcHoldingEveryJobEqualsAll) {
  Rng rng(13, "summarize-one-vc");
  std::vector<JobOutcome> outs(6000);
  for (size_t i = 0; i < outs.size(); ++i) {
    JobOutcome& o = outs[i];
    o.job = JobId{static_cast<uint32_t>(i)};
    o.gpus = static_cast<uint32_t>(1u << (i % 5));
    o.vc = VcId{0};
    o.status = i % 9 == 0 ? OutcomeStatus::kWithdrawn : OutcomeStatus::kFinished;
    o.wait = static_cast<Duration>(rng.NextU64() % 7000);
    o.run = static_cast<Duration>(rng.NextU64() % 50000);
  }
  const std::vector<std::string> vcs = {"pool"};
  RunData run;
  run.outcomes = &outs;
  run.vc_names = &vcs;
  const RunSummary s = Summarize(run);
  ASSERT_EQ(s.per_vc.size(), 1u);
  EXPECT_EQ(s.per_vc[0].name, "pool");
  ExpectGroupIsDescribed(outs, s.per_vc[0], [](const JobOutcome&) { return true; });
  EXPECT_EQ(s.per_vc[0].jobs, 5333u);  // 6000 less the 667 withdrawn (i % 9 == 0)
  EXPECT_EQ(s.per_vc[0].jct.mean, s.jct.mean);
  EXPECT_EQ(s.per_vc[0].wait.p99, s.wait.p99);
}


// Per-account groups, one per account of the trace in the order of its first job; jobs without
// an account form "(none)"; waits count withdrawn jobs, JCT and GPU-hours finished ones.
//   job  account  status     wait  run   gpus
//   0    b        finished    10   3600   2
//   1    a        finished    20   1800   4
//   2    b        withdrawn   30      0   1
//   3    (none)   finished    40    600   1
//   4    a        rejected     0      0   8
//   5    c        rejected     0      0   8     (c: jobs 0, every figure 0)
// b: jobs 1, JCT 3610, waits {10, 30} → mean 20, max 30, GPU-h 2 × 3600 / 3600 = 2.
// a: jobs 1, JCT 1820, wait 20, GPU-h 4 × 1800 / 3600 = 2.
TEST(SummarizeTest, PerAccountGroupsInTheOrderOfTheirFirstJobs) {
  const std::vector<std::string> accounts = {"b", "a", "b", "", "a", "c"};
  const OutcomeStatus st[] = {OutcomeStatus::kFinished, OutcomeStatus::kFinished, OutcomeStatus::kWithdrawn,
                              OutcomeStatus::kFinished, OutcomeStatus::kRejected, OutcomeStatus::kRejected};
  const Duration wait[] = {10, 20, 30, 40, 0, 0}, run[] = {3600, 1800, 0, 600, 0, 0};
  const uint32_t gpus[] = {2, 4, 1, 1, 8, 8};
  std::vector<JobOutcome> outs(6);
  std::vector<JobAccount> acc(6);
  for (size_t i = 0; i < 6; ++i) {
    outs[i].job = JobId{static_cast<uint32_t>(i)};
    outs[i].status = st[i];
    outs[i].wait = wait[i];
    outs[i].run = run[i];
    outs[i].gpus = gpus[i];
    acc[i].account = accounts[i];
  }
  RunData rd;
  rd.outcomes = &outs;
  rd.accounting = &acc;
  const RunSummary s = Summarize(rd);
  ASSERT_EQ(s.per_account.size(), 4u);
  EXPECT_EQ(s.per_account[0].name, "b");
  EXPECT_EQ(s.per_account[1].name, "a");
  EXPECT_EQ(s.per_account[2].name, "(none)");
  EXPECT_EQ(s.per_account[3].name, "c");
  EXPECT_EQ(s.per_account[0].jobs, 1u);
  EXPECT_EQ(s.per_account[0].jct.mean, 3610);
  EXPECT_EQ(s.per_account[0].wait.mean, 20);
  EXPECT_EQ(s.per_account[0].wait.max, 30);
  EXPECT_EQ(s.per_account[0].gpu_hours, 2);
  EXPECT_EQ(s.per_account[1].jct.mean, 1820);
  EXPECT_EQ(s.per_account[1].gpu_hours, 2);
  EXPECT_EQ(s.per_account[2].wait.mean, 40);
  EXPECT_EQ(s.per_account[3].jobs, 0u);
  EXPECT_EQ(s.per_account[3].jct.max, 0);
  rd.accounting = nullptr;  // a trace without accounts: no groups
  EXPECT_TRUE(Summarize(rd).per_account.empty());
}

}  // namespace
}  // namespace orrery
