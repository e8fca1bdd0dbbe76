#include <string>

#include <gtest/gtest.h>

#include "eval/cost_model.h"
#include "eval/executor.h"
#include "eval/strategy.h"

namespace orrery::eval {
namespace {

// A parameter count is read as one and keeps its spelling; a model name is taken at its nominal
// size and labelled by its canonical name.
TEST(CostModelTest, EvalModelIsACountOrAModelName) {
  struct Row {
    const char* given;
    const char* label;
    const char* size;
    double params;
  } rows[] = {
      {"7B", "7B", "7B", 7e9},
      {"1.3b", "1.3b", "1.3b", 1.3e9},
      {"70e9", "70e9", "70e9", 70e9},
      {"gpt-1.3b", "gpt-1.3b", "1.3B", 1.3e9},
      {"GPT-Neo-2.7", "gpt-neo-2.7b", "2.7B", 2.7e9},
      {"llama3-70b", "llama3-70b", "70B", 70e9},
      {"OPT-30", "opt-30b", "30B", 30e9},
      {"qwen2.5-7b", "qwen2.5-7b", "7B", 7e9},
  };
  for (const Row& r : rows) {
    Result<ModelSpec> m = ParseEvalModel(r.given);
    ASSERT_TRUE(m.ok()) << r.given << ": " << m.error().message;
    EXPECT_EQ(m->label, r.label) << r.given;
    EXPECT_DOUBLE_EQ(m->params, r.params) << r.given;
    EXPECT_EQ(EvalModelSize(r.given).value(), r.size) << r.given;
  }
  EXPECT_EQ(ParseEvalModel("7X").error().message.rfind("model size \"7X\": expected a parameter count", 0), 0u);
  EXPECT_EQ(ParseEvalModel("100T").error().message.find("between 1M and 10T") != std::string::npos, true);
  const std::string unknown = ParseEvalModel("mistral-7b").error().message;
  EXPECT_EQ(unknown.rfind("unknown model \"mistral-7b\": expected one of gpt-125m, gpt-350m, ", 0), 0u) << unknown;
  EXPECT_NE(unknown.find(", qwen2.5-72b or a parameter count such as 7B, 1.3B, 350M or 7e9"), std::string::npos) << unknown;
}

TEST(CostModelTest, ParsesModelSizes) {
  EXPECT_DOUBLE_EQ(ParseModelSize("7B")->params, 7e9);
  EXPECT_DOUBLE_EQ(ParseModelSize("1.3b")->params, 1.3e9);
  EXPECT_DOUBLE_EQ(ParseModelSize("350M")->params, 350e6);
  EXPECT_DOUBLE_EQ(ParseModelSize("7e9")->params, 7e9);
  EXPECT_DOUBLE_EQ(ParseModelSize("7B")->checkpoint_bytes(), 14e9);
  for (const char* bad : {"", "B", "seven", "0B", "-7B", "100T", "nanB"}) {
    auto m = ParseModelSize(bad);
    EXPECT_FALSE(m.ok()) << bad;
  }
}

TEST(CostModelTest, ForwardIsThePlannersInferenceStepOnCalibratedConstants) {
  CalibratedCostModel cm;
  const ModelSpec m = *ParseModelSize("7B");
  const GpuSpec g = *GpuByName("a100-80g");
  // 7e9 parameters: L = round(cbrt(7e9 / (12·128²))) = round(32.89) = 33, d = 4224, 33 heads of
  // 128 (all KV heads), MLP round(8·4224/3) = 11264, vocabulary 32000.
  const plan::DecoderShape s = DenseDecoder(7e9);
  EXPECT_EQ(s.layers, 33u);
  EXPECT_EQ(s.hidden, 4224u);
  EXPECT_EQ(s.ffn, 11264u);
  // Rates: compute 0.45·312e12 = 1.404e14 FLOP/s, memory 0.8·2.039e12 = 1.6312e12 B/s.
  const double compute = 1.404e14, memory = 1.6312e12;
  // Prefill of 16 x 120 tokens (M = 1920): every block GEMM is compute-bound, 24·M·d² FLOPs a
  // layer (12·d² weights) = 33·24·1920·4224² = 2.713152651264e13; the head (last tokens only,
  // M = 16) streams 2·(4224·32000 + 16·4224 + 16·32000) = 271,495,168 bytes; causal attention
  // reads q, k, v and writes o: 2·16·120·(66 + 66)·128 = 64,880,640 bytes a layer (memory-bound).
  const double prefill = 2.713152651264e13 / compute + 271495168.0 / memory + 33 * 64880640.0 / memory + 0.015;
  EXPECT_NEAR(cm.ForwardSeconds(m, g, 16, 120, 120), prefill, 1e-12);
  // Decode (M = 16) over 120 cached tokens: every GEMM streams its weights, 14,202,372,096 bytes
  // over 33 layers with inputs and outputs; the head as above; K and V of 121 tokens:
  // 2·16·121·2·33·128 = 32,710,656 bytes a layer.
  const double decode = 14202372096.0 / memory + 271495168.0 / memory + 33 * 32710656.0 / memory + 0.015;
  EXPECT_NEAR(cm.ForwardSeconds(m, g, 16, 1, 120), decode, 1e-12);
  // KV a token: 2 (K and V) · 33 layers · 4224 · 2 bytes = 557,568.
  EXPECT_DOUBLE_EQ(KvBytesPerToken(7e9), 557568.0);
}

TEST(CostModelTest, GpusPerTrialHoldTheWeightsInHalfTheMemory) {
  const GpuSpec a100 = *GpuByName("a100-80g");
  EXPECT_EQ(*GpusPerTrial(*ParseModelSize("7B"), a100, 8), 1u);    // 14 GB <= 40
  EXPECT_EQ(*GpusPerTrial(*ParseModelSize("34B"), a100, 8), 2u);   // 68 GB <= 80
  EXPECT_EQ(*GpusPerTrial(*ParseModelSize("70B"), a100, 8), 4u);   // 140 GB <= 160
  auto too_big = GpusPerTrial(*ParseModelSize("1T"), a100, 8);
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.error().message,
            "a 1T model (2000 GB of weights) does not fit in half the memory of 8 a100-80g GPUs of one node");
}

// The calibration anchor (Acme finding 7): HumanEval evaluated the coupled way spends 29.5 %
// of its time loading the model + preprocessing, 19.0 % in program-correctness tests, the
// rest (51.5 %) inferring. Eight HumanEval trials at once on one 8-GPU node (today's practice)
// with the default cluster and cost constants must reproduce that split within 3 points.
TEST(CostModelTest, CoupledHumanEvalReproducesAcmesBreakdown) {
  Suite suite;
  for (int i = 0; i < 8; ++i) {
    Dataset d;
    d.name = "openai_humaneval_" + std::to_string(i);
    d.examples = 164;
    d.task = TaskType::kGeneration;
    d.max_out_len = 512;
    d.metric = MetricKind::kCode;
    suite.datasets.push_back(d);
  }
  const ModelSpec m = *ParseModelSize("7B");
  const GpuSpec g = *GpuByName("a100-80g");
  auto w = BuildWorkload(suite, m, g, 8, CalibratedCostModel(), nullptr);
  ASSERT_TRUE(w.ok());
  ClusterSpec c;
  auto plan = BuildPlan(*MakeCoupled(), "coupled", *w, c);
  ASSERT_TRUE(plan.ok());
  auto s = Execute(*w, *plan, c);
  ASSERT_TRUE(s.ok());
  const JobRun& r = s->gpu_jobs[0];
  const double total = r.end - r.start;
  const double load = r.phases[0].end - r.phases[0].start + r.phases[1].end - r.phases[1].start;
  const double infer = r.phases[2].end - r.phases[2].start;
  const double metric = r.phases[3].end - r.phases[3].start;
  EXPECT_NEAR(100 * load / total, 29.5, 3.0);
  EXPECT_NEAR(100 * infer / total, 51.5, 3.0);
  EXPECT_NEAR(100 * metric / total, 19.0, 3.0);
}

}  // namespace
}  // namespace orrery::eval
