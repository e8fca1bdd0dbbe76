#include "rl/length.h"

#include <cmath>

#include <gtest/gtest.h>

namespace orrery::rl {
namespace {

TEST(Lengths, FitSolvesTheClosedForm) {
  // clip 0.5 puts the median at the maximum (z = 0, mu = ln L); with sigma = 1 the clipped
  // mean is exp(1/2)·Phi(−1) + 0.5 = 1.6487213·0.1586553 + 0.5 = 0.7615783 of L.
  const double mean = std::exp(0.5) * 0.5 * std::erfc(1 / std::sqrt(2.0)) + 0.5;
  Result<LengthDist> d = FitLengths({mean, 0.5, 0}, 1000);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_NEAR(d->sigma, 1.0, 1e-9);
  EXPECT_NEAR(d->mu, std::log(1000.0), 1e-9);
  EXPECT_NEAR(mean, 0.7615783, 1e-7);
}

TEST(Lengths, PresetsReproduceTheirFiguresAndSamplesFollow) {
  for (const LengthPreset& p : LengthPresets()) {
    SCOPED_TRACE(std::string(p.name));
    Result<LengthDist> d = FitLengths(p.spec, 32768);
    ASSERT_TRUE(d.ok()) << d.error().message;
    EXPECT_NEAR(ClippedMeanFrac(*d), p.spec.mean_frac, 1e-9);
    EXPECT_NEAR(ClipRatio(*d), p.spec.clip_ratio, 1e-9);
    Rng rng(7, "lengths-test");
    const std::vector<uint32_t> v = SampleGroups(*d, 25000, 8, rng);
    double sum = 0, at_max = 0;
    for (uint32_t x : v) {
      ASSERT_GE(x, 1u);
      ASSERT_LE(x, 32768u);
      sum += x;
      at_max += x == 32768;
    }
    EXPECT_NEAR(sum / v.size() / 32768, p.spec.mean_frac, 0.01);
    EXPECT_NEAR(at_max / v.size(), p.spec.clip_ratio, 0.005);
  }
}

TEST(Lengths, SameSeedSameLengths) {
  Result<LengthDist> d = FitLengths({0.41, 0.02, 0.5}, 32768);
  ASSERT_TRUE(d.ok());
  Rng a(3, "x"), b(3, "x"), c(4, "x");
  const std::vector<uint32_t> va = SampleGroups(*d, 64, 8, a);
  EXPECT_EQ(va, SampleGroups(*d, 64, 8, b));
  EXPECT_NE(va, SampleGroups(*d, 64, 8, c));
}

TEST(Lengths, ParseAndErrors) {
  Result<LengthSpec> s = ParseLengthSpec("mean=0.3,clip=0.05,corr=0.5");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_DOUBLE_EQ(s->mean_frac, 0.3);
  EXPECT_DOUBLE_EQ(s->clip_ratio, 0.05);
  EXPECT_DOUBLE_EQ(s->corr, 0.5);
  EXPECT_EQ(ParseLengthSpec("verl")->mean_frac, 0.41);
  EXPECT_EQ(ParseLengthSpec("vrel").error().message,
            "lengths: unknown preset \"vrel\"; expected one of verl, deepscaler or mean=F,clip=C[,corr=R]");
  EXPECT_EQ(ParseLengthSpec("mean=2,clip=0.1").error().message,
            "lengths: mean: expected a fraction from 0 to 1, got \"2\"");
  EXPECT_EQ(ParseLengthSpec("mean=0.3").error().message, "lengths: mean= and clip= are both needed");
  // A mean below the clip ratio has no lognormal: clipped responses alone exceed it.
  EXPECT_FALSE(FitLengths({0.01, 0.02, 0}, 1000).ok());
}

}  // namespace
}  // namespace orrery::rl
