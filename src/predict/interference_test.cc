#include "predict/interference.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <numeric>

#include "base/io.h"

namespace orrery {
namespace {

// Three workloads with hand-chosen solo footprints a=(10,5,1000), b=(20,10,2000), c=(40,20,4000):
// every pair footprint is the exact sum, so the decomposition must recover them.
ColocationTable Toy() {
  std::vector<Workload> w(3);
  w[0].model = "A";
  w[1].model = "B";
  w[2].model = "C";
  const float u[3] = {10, 20, 40}, mu[3] = {5, 10, 20}, m[3] = {1000, 2000, 4000};
  std::vector<ColocPair> p;
  for (uint16_t a = 0; a < 3; ++a)
    for (uint16_t b = a; b < 3; ++b) {
      ColocPair cp;
      cp.a = a;
      cp.b = b;
      cp.gpu_util = u[a] + u[b];
      cp.gmem_util = mu[a] + mu[b];
      cp.gmem = m[a] + m[b];
      cp.speed_a = 1.0f - 0.005f * cp.gpu_util;
      cp.speed_b = cp.speed_a;
      p.push_back(cp);
    }
  return ColocationTable::FromParts(std::move(w), std::move(p));
}

TEST(InterferenceTest, AdditiveDecompositionRecoversSoloFootprints) {
  ColocationTable t = Toy();
  std::vector<size_t> all(t.pairs().size());
  std::iota(all.begin(), all.end(), 0);
  DeriveProfiles(&t, all);
  EXPECT_NEAR(t.workloads()[0].gpu_util, 10, 0.05);
  EXPECT_NEAR(t.workloads()[1].gpu_util, 20, 0.05);
  EXPECT_NEAR(t.workloads()[2].gpu_util, 40, 0.05);
  EXPECT_NEAR(t.workloads()[2].gmem_util, 20, 0.05);
  EXPECT_NEAR(t.workloads()[1].gmem, 2000, 1);
  EXPECT_EQ(t.Find(2, 0), t.Find(0, 2));
  EXPECT_GE(t.Find(1, 1), 0);
}

TEST(InterferenceTest, SharingScoreFollowsLucidLabels) {
  EXPECT_EQ(SharingScoreOf(0.84), 2);
  EXPECT_EQ(SharingScoreOf(0.85), 1);
  EXPECT_EQ(SharingScoreOf(0.949), 1);
  EXPECT_EQ(SharingScoreOf(0.95), 0);
}

TEST(InterferenceTest, AssignmentIsSeededStatelessAndCoversAllWorkloads) {
  std::vector<int> hits(56, 0);
  for (uint32_t i = 0; i < 56000; ++i) ++hits[AssignWorkload(7, i, 56)];
  for (int h : hits) EXPECT_NEAR(h, 1000, 150);
  EXPECT_EQ(AssignWorkload(7, 123, 56), AssignWorkload(7, 123, 56));
  int differ = 0;
  for (uint32_t i = 0; i < 100; ++i) differ += AssignWorkload(7, i, 56) != AssignWorkload(8, i, 56);
  EXPECT_GT(differ, 80);
}

TEST(InterferenceTest, LoadRejectsMalformedRowsWithPosition) {
  std::string dir = ::testing::TempDir();
  std::string path = dir + "/coloc_bad.csv";
  ASSERT_TRUE(WriteFileAtomic(path,
                              ",model1,dataset1,gpu_num1,batchsize1,amp1,speed1,model2,dataset2,gpu_num2,batchsize2,amp2,"
                              "speed2,gpu_util,gmem_util,gmem\n"
                              "0,VGG,CIFAR-10,1,32,0,0.9,PPO,LunarLander,1,32,0,abc,50,20,4000\n")
                  .ok());
  auto t = ColocationTable::Load(path);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("coloc_bad.csv:2:"), std::string::npos) << t.error().message;
  EXPECT_NE(t.error().message.find("speed2"), std::string::npos) << t.error().message;
}

std::string TablePath() { return std::string(ORRERY_SHARED_DIR) + "/traces/lucid-colocation/colocate_info.csv"; }

TEST(InterferenceTest, RealTableCrossValidatedErrorBeatsConstantBaseline) {
  if (!std::filesystem::exists(TablePath())) GTEST_SKIP() << "shared data not found at " << TablePath();
  auto t = ColocationTable::Load(TablePath());
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->pairs().size(), 1388u);
  EXPECT_EQ(t->workloads().size(), 56u);
  auto r = CrossValidate(*t, 5, 1, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->predictions, 2 * 1388u);
  EXPECT_LT(r->mae, 0.8 * r->base_mae);
  EXPECT_GT(r->corr, 0.6);
}

TEST(InterferenceTest, ContextTruthUsesMeasuredSpeedsClampedToOne) {
  if (!std::filesystem::exists(TablePath())) GTEST_SKIP() << "shared data not found at " << TablePath();
  auto c = BuildColocationContext(TablePath(), nullptr, 1);
  ASSERT_TRUE(c.ok()) << c.error().message;
  const ColocationContext& ctx = **c;
  for (const ColocPair& p : ctx.table.pairs()) {
    if (p.a == p.b) continue;
    EXPECT_FLOAT_EQ(ctx.TrueSpeed(p.a, p.b), std::min(1.0f, p.speed_a));
    EXPECT_FLOAT_EQ(ctx.TrueSpeed(p.b, p.a), std::min(1.0f, p.speed_b));
  }
  for (size_t a = 0; a < ctx.n(); ++a) EXPECT_LE(ctx.sharing_score[a], 2);
}

}  // namespace
}  // namespace orrery
