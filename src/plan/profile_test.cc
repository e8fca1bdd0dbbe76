#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "plan/profile.h"

namespace orrery::plan {
namespace {

constexpr const char* kMinimal = R"({
 "format": "orrery-gpu-profile", "version": 1, "gpu": "X", "memory_gib": 80,
 "peak_bf16_tflops": 900, "membw_GBps": 3000,
 "gemm": [{"op": "fwd", "m": 8192, "k": 8192, "n": 8192, "t_s": 0.0016}],
 "collectives": [
  {"op": "all_reduce", "dtype": "bf16", "world": 2, "nodes": 1, "bytes": 1048576, "t_s": 4e-5},
  {"op": "all_reduce", "dtype": "bf16", "world": 2, "nodes": 1, "bytes": 4194304, "t_s": 1.6e-4}
 ]
})";

TEST(ProfileFile, ParsesAndRoundTrips) {
  Result<GpuProfile> p = ParseProfileJson(kMinimal, "x.json");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_DOUBLE_EQ(p->memory_bytes, 80.0 * (1ull << 30));
  EXPECT_DOUBLE_EQ(p->membw_Bps, 3e12);
  Result<GpuProfile> again = ParseProfileJson(ProfileToJson(*p), "y.json");
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->gemm.size(), 1u);
  EXPECT_EQ(again->collectives.size(), 2u);
  EXPECT_DOUBLE_EQ(again->collectives[1].t_s, 1.6e-4);
}

TEST(ProfileFile, SyntaxErrorsAreLocated) {
  Result<GpuProfile> p = ParseProfileJson("{\n \"format\": \"orrery-gpu-profile\",\n \"version\": 1,,\n}", "bad.json");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message.rfind("bad.json:3:15: JSON syntax error while parsing object key", 0), 0u) << p.error().message;
}

TEST(ProfileFile, ContentErrorsNameThePath) {
  std::string t = kMinimal;
  t.replace(t.find("\"t_s\": 0.0016"), 13, "\"t_s\": -1");
  EXPECT_EQ(ParseProfileJson(t, "p.json").error().message,
            "p.json: at /gemm/0/t_s: expected a positive number, got -1");
  std::string u = kMinimal;
  u.replace(u.find("\"dtype\": \"bf16\""), 15, "\"dtype\": \"fp8\"");
  EXPECT_EQ(ParseProfileJson(u, "p.json").error().message,
            "p.json: at /collectives/0: field 'dtype': expected bf16 or fp32, got \"fp8\"");
  EXPECT_EQ(ParseProfileJson(R"({"format": "orrery-gpu-profile", "version": 2})", "v.json").error().message,
            "v.json: at /version: unsupported version 2 (this build reads 1)");
  EXPECT_EQ(ParseProfileJson(R"({"format": "x"})", "f.json").error().message,
            "f.json: at /format: expected \"orrery-gpu-profile\", got \"x\"");
  EXPECT_EQ(ParseProfileJson(R"({"formatt": 1})", "k.json").error().message.substr(0, 39),
            "k.json: at /: unknown field 'formatt' (");
}

TEST(Interpolation, GemmIsExactOnAMeasuredShapeAndScalesWithFlops) {
  GpuProfile p = *ParseProfileJson(kMinimal, "x.json");
  EXPECT_DOUBLE_EQ(GemmTime(p, GemmOp::kFwd, 8192, 8192, 8192), 0.0016);
  // one point only: the same rate everywhere -> half the M, half the time
  EXPECT_NEAR(GemmTime(p, GemmOp::kFwd, 4096, 8192, 8192), 0.0008, 1e-12);
}

TEST(Interpolation, CollectivesAreLogLog) {
  GpuProfile p = *ParseProfileJson(kMinimal, "x.json");
  // 2 MiB lies halfway between 1 and 4 MiB in log(size): time = sqrt(4e-5 * 1.6e-4) = 8e-5
  EXPECT_NEAR(CollectiveTime(p, Collective::kAllReduce, DType::kBf16, 2097152, 2, 1), 8e-5, 1e-12);
  // below the smallest size: latency-bound, flat
  EXPECT_DOUBLE_EQ(CollectiveTime(p, Collective::kAllReduce, DType::kBf16, 1024, 2, 1), 4e-5);
  // above the largest: linear in size
  EXPECT_NEAR(CollectiveTime(p, Collective::kAllReduce, DType::kBf16, 8388608, 2, 1), 3.2e-4, 1e-12);
  // 4 ranks from the 2-rank table at equal bus bandwidth: per-rank 1 MiB -> 2-rank buffer of 2 MiB
  // takes 8e-5 s, busbw = 2 MiB * 1 / 8e-5; 4 ranks move 4 MiB * 1.5 at that rate
  const double busbw = 2097152.0 / 8e-5;
  EXPECT_NEAR(CollectiveTime(p, Collective::kAllReduce, DType::kBf16, 4194304, 4, 1), 4194304.0 * 1.5 / busbw, 1e-12);
  EXPECT_EQ(CollectiveTime(p, Collective::kAllReduce, DType::kBf16, 4194304, 1, 1), 0.0);
}

}  // namespace
}  // namespace orrery::plan
