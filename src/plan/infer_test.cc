// The inference cost model: shapes, the roofline of one step worked by hand, the checks, the
// profile files, and the fit against the steps measured on an H100 with configurations held out.
#include "plan/infer.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "plan/infer_fit.h"
#include "plan/registry.h"

namespace orrery::plan {
namespace {

// A GPU with round numbers and no fixed costs, so that a step is its roofline terms alone.
InferGpu RoundGpu() {
  InferGpu g;
  g.name = "round";
  g.memory_bytes = 1e9;
  g.peak_flops = 1e15;
  g.hbm_bytes_per_s = 1e12;
  g.gemm_compute_eff = 0.5;
  g.gemm_half_tokens = 0;  // every GEMM at half of peak
  g.gemm_memory_eff = 1;
  g.attn_memory_eff = 1;
  g.attn_compute_eff = 1;
  g.elementwise_passes = 0;
  g.layer_s = 0, g.host_layer_s = 0, g.step_s = 0;
  g.allreduce_s = 1e-5;
  g.link_bytes_per_s = 1e11;
  g.mem_reserved_frac = 0;
  return g;
}

DecoderShape Tiny() { return ParseDecoder("llama:layers=1,hidden=64,heads=4,kv_heads=2,ffn=128,vocab=100").value(); }

TEST(InferShape, ParameterCountOfQwen7bIsItsPublishedConfig) {
  const DecoderShape m = ParseDecoder("Qwen2.5-7B").value();
  // Block GEMMs: 2·3584² + 2·3584·(4·128) + 3·3584·18944 = 25,690,112 + 3,670,016 + 203,685,888
  //   = 233,046,016; x 28 = 6,525,288,448; norms 28·2·3584 = 200,704; embedding and head
  //   2·152064·3584 = 1,089,994,752; final norm 3,584: 7,615,487,488 (Qwen reports 7.61 B).
  EXPECT_DOUBLE_EQ(m.Params(), 7615487488.0);
  // K and V, 28 layers, 4 KV heads of 128, bf16: 2·2·28·4·128 = 57,344 bytes a token.
  EXPECT_DOUBLE_EQ(m.KvBytesPerToken(1), 57344.0);
  EXPECT_DOUBLE_EQ(m.KvBytesPerToken(2), 28672.0);
  EXPECT_DOUBLE_EQ(m.KvBytesPerToken(8), 14336.0);  // a GPU keeps one whole KV head
}

TEST(InferShape, SpecsAndTheirErrors) {
  struct Case {
    const char* spec;
    const char* error;  // "" when valid
  } cases[] = {
      {"llama:layers=2,hidden=64,heads=4,kv_heads=2,ffn=128,vocab=100", ""},
      {"LLAMA:layers=2, hidden=64,heads=4,kv_heads=2,ffn=128,vocab=100,tied=1", ""},
      {"llama:layers=2,hidden=64,heads=4,kv_heads=2,ffn=128", "missing key 'vocab'"},
      {"llama:layers=2,hidden=64,heads=5,kv_heads=5,ffn=128,vocab=100", "heads 5 do not divide hidden 64"},
      {"llama:layers=2,hidden=64,heads=4,kv_heads=3,ffn=128,vocab=100", "kv_heads 3 do not divide heads 4"},
      {"llama:layers=2,hidden=64,heads=4,kv_heads=2,ffn=128,vocab=100,experts=8", "unknown key \"experts\""},
      {"llama:layers=x,hidden=64,heads=4,kv_heads=2,ffn=128,vocab=100", "key 'layers': expected an integer"},
      {"llama:layers", "expected key=value"},
      {"qwen3-moe", "unknown model \"qwen3-moe\": expected one of llama3-8b"},
  };
  for (const Case& c : cases) {
    auto m = ParseDecoder(c.spec);
    if (*c.error == '\0') {
      EXPECT_TRUE(m.ok()) << c.spec << ": " << (m.ok() ? "" : m.error().message);
    } else {
      ASSERT_FALSE(m.ok()) << c.spec;
      EXPECT_NE(m.error().message.find(c.error), std::string::npos) << m.error().message;
    }
  }
  EXPECT_TRUE(ParseDecoder("LLAMA:layers=2, hidden=64,heads=4,kv_heads=2,ffn=128,vocab=100,tied=1")->tied_embeddings);
}

TEST(InferStepTime, DecodeIsTheSumOfItsRooflineTermsByHand) {
  // Tiny: d = 16, 4 heads, 2 KV heads, MLP 128, vocabulary 100; one sequence, 100 cached tokens.
  // Every GEMM of one token is memory-bound: bytes 2·(K·N + K + N) at 1e12 B/s:
  //   QKV 64x128: 2·(8192 + 64 + 128) = 16,768     O 64x64: 2·(4096 + 64 + 64) = 8,448
  //   gate/up 64x256: 2·(16384 + 64 + 256) = 33,408 down 128x64: 2·(8192 + 128 + 64) = 16,768
  //   head 64x100: 2·(6400 + 64 + 100) = 13,128     sum 88,520 bytes -> 8.852e-8 s
  // Attention reads K and V of 101 tokens: 2·101·2·16·2 = 12,928 bytes -> 1.2928e-8 s.
  const InferEstimate e = InferStepTime(Tiny(), {InferPhase::kDecode, 1, 100, 0, 1}, RoundGpu());
  EXPECT_NEAR(e.gemm_s, 8.852e-8, 1e-15);
  EXPECT_NEAR(e.attention_s, 1.2928e-8, 1e-15);
  EXPECT_NEAR(e.step_time_s, 1.01448e-7, 1e-15);
  EXPECT_DOUBLE_EQ(e.comm_s, 0);
}

TEST(InferStepTime, TensorParallelAllReducesTwiceALayer) {
  // tp 2, 4 sequences: each all-reduce moves 2·4·64 = 512 bytes; ring factor 2·(2-1)/2 = 1:
  // 2 x (1e-5 + 512 / 1e11) = 2.001024e-5 s.
  const InferEstimate e = InferStepTime(Tiny(), {InferPhase::kDecode, 4, 100, 0, 2}, RoundGpu());
  EXPECT_NEAR(e.comm_s, 2.001024e-5, 1e-15);
  EXPECT_DOUBLE_EQ(InferStepTime(Tiny(), {InferPhase::kDecode, 4, 100, 0, 2}, RoundGpu(), kProfilerCounting).comm_s, 0);
}

TEST(InferStepTime, SequenceParallelPrefillSplitsTokensAndAddsFourAllToAlls) {
  // Tiny, 16 prompt tokens, sp 2: each GPU runs the GEMMs of 8 tokens; attention (memory-bound:
  // q, k, v, o of 16 tokens, 2·16·(8 + 4)·16 = 6,144 bytes -> 6.144e-9 s) halves to 3.072e-9 s;
  // four all-to-alls of 2·8·64·(1/2) = 512 bytes: 4·(1e-5 + 512/1e11) = 4.002048e-5 s.
  const InferEstimate one = InferStepTime(Tiny(), {InferPhase::kPrefill, 1, 16, 0, 1, 1}, RoundGpu());
  const InferEstimate two = InferStepTime(Tiny(), {InferPhase::kPrefill, 1, 16, 0, 1, 2}, RoundGpu());
  EXPECT_NEAR(one.attention_s, 6.144e-9, 1e-18);
  EXPECT_NEAR(two.attention_s, 3.072e-9, 1e-18);
  EXPECT_NEAR(two.comm_s, 4.002048e-5, 1e-15);
  EXPECT_NEAR(two.kv_cache_gib, one.kv_cache_gib / 2, 1e-15);
  auto decode = EstimateInfer(Tiny(), {InferPhase::kDecode, 1, 16, 0, 1, 2}, RoundGpu());
  ASSERT_FALSE(decode.ok());
  EXPECT_NE(decode.error().message.find("sequence parallelism splits a prefill, not a decode step"), std::string::npos);
  auto odd = EstimateInfer(Tiny(), {InferPhase::kPrefill, 1, 16, 0, 1, 3}, RoundGpu());
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.error().message.find("sp 3 does not divide the 4 heads"), std::string::npos);
}

TEST(InferStepTime, EagerPrefillTakesTheLongerOfHostAndDevice) {
  InferGpu g = RoundGpu();
  g.host_layer_s = 1e-3, g.step_s = 1e-5;
  // The device needs well under 1 ms for 16 tokens of Tiny, so the host's 1 ms for its one layer
  // sets the pace: 1e-3 + 1e-5.
  EXPECT_NEAR(InferStepTime(Tiny(), {InferPhase::kPrefill, 1, 16, 0, 1}, g).step_time_s, 1.01e-3, 1e-12);
}

TEST(InferStepTime, VerifyScoresEveryDraftTokenInEnginesOnly) {
  const InferStep verify{InferPhase::kVerify, 2, 100, 8, 1};
  // Engine: the head sees 2·8 = 16 tokens, bytes 2·(6400 + 16·64 + 16·100) = 18,048; profiler:
  // the last token of each sequence, 2·(6400 + 2·64 + 2·100) = 13,456. Difference 4,592 bytes.
  const double engine = InferStepTime(Tiny(), verify, RoundGpu()).gemm_s;
  const double profiler = InferStepTime(Tiny(), verify, RoundGpu(), kProfilerCounting).gemm_s;
  EXPECT_NEAR(engine - profiler, 4.592e-9, 1e-16);
}

TEST(InferMemory, MaxBatchByHand) {
  // Weights: 2·(36,864 block GEMM + 128 norm + 2·6,400 embedding and head + 64) = 99,712 bytes.
  // KV a token: 2·2·1·2·16 = 128 bytes; 1,000 tokens a sequence: 128,000 bytes;
  // (1e9 - 99,712) / 128,000 = 7,811.7 -> 7,811.
  EXPECT_EQ(MaxBatch(Tiny(), 1000, 1, RoundGpu()), 7811u);
  const InferEstimate e = InferStepTime(Tiny(), {InferPhase::kDecode, 8000, 999, 0, 1}, RoundGpu());
  EXPECT_FALSE(e.fits);
  EXPECT_EQ(e.max_batch, 7811u);
}

TEST(InferChecks, BadStepsAreErrors) {
  const DecoderShape m = ParseDecoder("qwen2.5-7b").value();
  struct Case {
    InferStep step;
    const char* error;
  } cases[] = {
      {{InferPhase::kDecode, 1, 100, 0, 3}, "tp 3 does not divide the 28 heads"},
      {{InferPhase::kDecode, 0, 100, 0, 1}, "batch: expected an integer in [1, 1000000]"},
      {{InferPhase::kPrefill, 1, 0, 0, 1}, "context: expected a number of tokens in [1, 10000000]"},
      {{InferPhase::kDecode, 1, 2e7, 0, 1}, "context"},
      {{InferPhase::kVerify, 1, 100, 0, 1}, "verify tokens: expected an integer in [1, 4096]"},
      {{InferPhase::kDecode, 1, 100, 4, 1}, "verify tokens apply to a verify step only"},
  };
  for (const Case& c : cases) {
    auto e = EstimateInfer(m, c.step, RoundGpu());
    ASSERT_FALSE(e.ok()) << c.error;
    EXPECT_NE(e.error().message.find(c.error), std::string::npos) << e.error().message;
  }
  EXPECT_TRUE(EstimateInfer(m, {InferPhase::kDecode, 1, 100, 0, 4}, RoundGpu()).ok());
  // 6 heads, 2 KV heads: tp 3 splits the heads but not the KV heads.
  auto odd = EstimateInfer(ParseDecoder("llama:layers=1,hidden=96,heads=6,kv_heads=2,ffn=96,vocab=10").value(),
                           {InferPhase::kDecode, 1, 100, 0, 3}, RoundGpu());
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.error().message.find("tp 3 neither divides nor is a multiple of the 2 KV heads"), std::string::npos);
}

TEST(InferProfile, ShippedProfilesReadAndRoundTrip) {
  auto h100 = InferGpuByName("H100");
  ASSERT_TRUE(h100.ok()) << h100.error().message;
  auto h200 = InferGpuByName("h200");
  ASSERT_TRUE(h200.ok()) << h200.error().message;
  // The H200 profile is derived: the H100's fitted constants with the H200's memory and HBM.
  EXPECT_EQ(h200->gemm_compute_eff, h100->gemm_compute_eff);
  EXPECT_EQ(h200->layer_s, h100->layer_s);
  EXPECT_EQ(h200->hbm_bytes_per_s, 4.8e12);
  auto again = ParseInferGpuText(InferGpuJson(*h100), "again.json");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->attn_memory_eff, h100->attn_memory_eff);
  EXPECT_FALSE(InferGpuByName("a100-80").ok());
}

TEST(InferProfile, BadFilesNameTheField) {
  std::string text = InferGpuJson(RoundGpu());
  const std::string good = "\"gemm_memory_eff\": 1.0";
  ASSERT_NE(text.find(good), std::string::npos) << text;
  std::string over = text;
  over.replace(over.find(good), good.size(), "\"gemm_memory_eff\": 1.5");
  auto e = ParseInferGpuText(over, "p.json");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("p.json: at /gemm_memory_eff: expected a fraction of at most 1, got 1.5"), std::string::npos)
      << e.error().message;
  auto f = ParseInferGpuText("{\"format\": \"orrery-infer-profile\", \"version\": 1, \"colour\": 3}", "q.json");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.error().message.find("unknown field 'colour'"), std::string::npos) << f.error().message;
}

TEST(InferSteps, RowsAreReadWithTheirLocation) {
  const std::string csv =
      "# comment\n"
      "gpu,model,tp,layers,phase,batch,context,verify_tokens,step_s,status\n"
      "H100,qwen2.5-7b,1,28,decode,4,512,0,0.0075,ok\n"
      "H100,qwen2.5-7b,1,28,decode,256,16384,0,,skipped-memory\n"
      "H100,qwen2.5-7b,1,28,verify,4,512,8,0.008,ok\n";
  auto pts = ParseInferSteps(csv, "m.csv");
  ASSERT_TRUE(pts.ok()) << pts.error().message;
  ASSERT_EQ(pts->size(), 2u);
  EXPECT_EQ((*pts)[1].config, "qwen2.5-7b:1");
  EXPECT_EQ((*pts)[1].step.verify_tokens, 8u);
  auto bad = ParseInferSteps("model,tp,layers,phase,batch,context,verify_tokens,step_s\nqwen2.5-7b,1,28,train,4,512,0,0.1\n", "b.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("b.csv:2:17: field 'phase': expected prefill, decode or verify, got \"train\""),
            std::string::npos)
      << bad.error().message;
  auto step = ParseInferSteps("model,tp,layers,phase,batch,context,verify_tokens,step_s\nqwen2.5-7b,3,28,decode,4,512,0,0.1\n", "t.csv");
  ASSERT_FALSE(step.ok());
  EXPECT_NE(step.error().message.find("t.csv:2:1: tp 3 does not divide"), std::string::npos) << step.error().message;
}

// The figures of docs/validation/inference.md: the constants are fitted with whole models set
// aside (the Llama family and the largest Qwen), and those models' steps are predicted within
// 10 % on average in every phase.
TEST(InferFit, HeldOutModelsArePredictedWithinTenPercentPerPhase) {
  const std::string csv = DefaultProfilePaths().profile_dir + "/h100-infer-steps.csv";
  auto pts = ReadInferSteps(csv);
  ASSERT_TRUE(pts.ok()) << pts.error().message;
  ASSERT_GE(pts->size(), 300u);
  auto fit = FitInfer(*pts, {"llama3-8b:1", "llama3-70b:8", "qwen2.5-72b:4"}, InferDatasheet("h100").value());
  ASSERT_TRUE(fit.ok()) << fit.error().message;
  ASSERT_EQ(fit->held_out.by_phase.size(), 3u);
  for (const InferErrorRow& r : fit->held_out.by_phase) {
    EXPECT_LT(r.mean_abs_rel, 0.10) << r.group;
    EXPECT_GE(r.points, 15u) << r.group;
  }
  // The shipped profile is this fit: its errors on all points match the refit's constants.
  const InferGpu shipped = InferGpuByName("h100").value();
  EXPECT_NEAR(ValidateInfer(*pts, shipped).all.mean_abs_rel, ValidateInfer(*pts, fit->gpu).all.mean_abs_rel, 1e-6);
  EXPECT_FALSE(FitInfer(*pts, {"gpt-3:1"}, InferDatasheet("h100").value()).ok());
}

}  // namespace
}  // namespace orrery::plan
