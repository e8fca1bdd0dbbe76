// Profiles of unmeasured GPU types transferred from the H200 by Sailor's data (transfer.h).
#include "plan/transfer.h"

#include <gtest/gtest.h>

#include "plan/registry.h"

namespace orrery::plan {
namespace {

const std::string kSailor = std::string(ORRERY_SHARED_DIR) + "/sailor-profiles";

GpuProfile Base() {
  GpuProfile p;
  p.gpu = "H200";
  p.memory_bytes = 140e9;
  p.peak_bf16_tflops = 989.4;
  p.membw_Bps = 4.27e12;
  p.gemm.push_back(GemmPoint{GemmOp::kFwd, 8192, 8192, 8192, 1e-3});
  p.sdpa.push_back(SdpaPoint{1, 16, 2048, 128, 1e-4, 3e-4});
  p.collectives.push_back(CollectivePoint{Collective::kAllReduce, DType::kBf16, 2, 1, 256e6, 1e-3});
  return p;
}

TEST(TransferProfile, ScalesDeviceTimesBySailorsBlockRatio) {
  Result<GpuProfile> a = TransferProfile(Base(), "A100-80", kSailor);
  ASSERT_TRUE(a.ok()) << a.error().message;
  // Median GPT-Neo-2.7 block (mb 1, tp 1), forward + backward: A100-80 16.40 ms, GH-96 3.91 ms
  // (read off the profile.json files) -> r = 4.19.
  const double r = a->gemm[0].t_s / 1e-3;
  EXPECT_NEAR(r, 16.40 / 3.91, 0.01);
  EXPECT_DOUBLE_EQ(a->sdpa[0].t_fwd_s, 1e-4 * r);
  EXPECT_DOUBLE_EQ(a->sdpa[0].t_fwdbwd_s, 3e-4 * r);
  EXPECT_DOUBLE_EQ(a->membw_Bps, 4.27e12 / r);
  EXPECT_EQ(a->gpu, "A100-80");
  EXPECT_EQ(a->gpus_per_node, 4);              // Sailor's A100 nodes
  EXPECT_NEAR(a->memory_bytes / 1e9, 80, 6);   // Sailor's memory per GPU (80 GB class)
  EXPECT_DOUBLE_EQ(a->collectives[0].t_s, 1e-3 * 900 / 600);  // NVLink 4 vs NVLink 3
  // V100-16: 86.84 / 3.91 = 22.2.
  Result<GpuProfile> v = TransferProfile(Base(), "V100-16", kSailor);
  ASSERT_TRUE(v.ok());
  EXPECT_NEAR(v->gemm[0].t_s / 1e-3, 86.84 / 3.91, 0.05);
  EXPECT_FALSE(TransferProfile(Base(), "B200", kSailor).ok());
}

TEST(TransferProfile, RegistryResolvesSailorGpuNames) {
  ProfilePaths paths = DefaultProfilePaths();
  Result<GpuProfile> a = ResolveGpu("a100-40", paths);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->gpu, "A100-40");
  EXPECT_NE(a->source.find("H200 transferred to A100-40"), std::string::npos) << a->source;
}

}  // namespace
}  // namespace orrery::plan
