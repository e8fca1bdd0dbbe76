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

}  // namespace
}  // namespace orrery
