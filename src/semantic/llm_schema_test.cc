// The advisor's LLM fallback (llm_schema.h) against the local OpenAI-compatible stub
// (llm/fake_endpoint_testing.h): the trigger rule, one question per distinct config, the
// cache across processes, strict validation with exact warnings, transport failures.
#include "semantic/llm_schema.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "llm/fake_endpoint_testing.h"

namespace orrery::semantic {
namespace {

using F = FieldId;
using llm::testing::FakeEndpoint;

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(ORRERY_SOURCE_DIR) + "/tests/fixtures/inspect/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string CachePath(const std::string& name) { return llm::testing::FreshCachePath("orrery_llm_schema_test", name); }

// A trainer no reader knows: no framework, no known key.
const InputFile kMystery{"mystery.yaml", "trainer:\n  depth: 24\n  width: 2048\n  attn_heads: 16\n  ctx: 2048\n"};
const char* kMysteryAnswer =
    R"({"framework": null, "model_name": "mystery-1b", "params_billion": null, "num_layers": 24, "hidden_size": 2048,
        "num_heads": 16, "seq_len": 2048, "global_batch": null, "micro_batch": null, "train_steps": 10000,
        "epochs": null, "tp": null, "pp": null, "dp": null, "zero_stage": null, "nodes": 2, "gpus_per_node": 8,
        "time_limit": "1-00:00:00", "checkpoint_interval_steps": null})";

// One "process": its own client, cache object (on `cache_file`) and filler.
struct Process {
  llm::HttpChatClient client;
  std::unique_ptr<llm::LlmCache> cache;
  LlmSchemaFiller filler;
  explicit Process(const llm::LlmConfig& cfg)
      : client(cfg), cache(llm::OpenLlmCache(cfg, nullptr)), filler(&client, cache.get(), cfg.model, cfg.max_context_bytes) {}
  LaunchSchema Inspect(const InputFile& f) { return InspectFiles({f}, &filler).front(); }
};

TEST(LlmSchemaTest, TheRule) {
  EXPECT_EQ(NeedsLlm(InspectText(kMystery.name, kMystery.text)), LlmNeed::kNoFramework);
  // DeepSpeed JSON with micro batch and ZeRO stage: framework + 2 fields = 3 < 4.
  EXPECT_EQ(NeedsLlm(InspectText("ds.json", R"({"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 3}})")),
            LlmNeed::kTooFewFields);
  EXPECT_EQ(NeedsLlm(InspectText("train_gpt2.py", Fixture("train_gpt2.py"))), LlmNeed::kNone);
  EXPECT_EQ(NormaliseConfig("a: 1  \r\n\r\n\tb: 2\t\rc: 3"), "a: 1\n\tb: 2\nc: 3\n");
}

TEST(LlmSchemaTest, AnUnknownConfigIsAskedOnceAndOnlyMissingFieldsAreMerged) {
  FakeEndpoint ep;
  ep.content = kMysteryAnswer;
  llm::LlmConfig cfg = ep.Config();
  cfg.cache_file = CachePath("once.json");
  Process run(cfg);
  LaunchSchema s = run.Inspect(kMystery);
  EXPECT_EQ(ep.requests.load(), 1);
  EXPECT_EQ(run.filler.calls(), 1u);
  ASSERT_TRUE(s.get(F::kNumLayers).has_value());
  EXPECT_EQ(FormatValue(s.get(F::kNumLayers)->value), "24");
  EXPECT_EQ(s.get(F::kNumLayers)->provenance, Provenance::kLlm);
  EXPECT_EQ(s.get(F::kNumLayers)->origin.key, "llm:test-model");
  EXPECT_DOUBLE_EQ(s.get(F::kNumLayers)->confidence, 0.3);
  EXPECT_EQ(s.text(F::kTimeLimit), std::optional<std::string>("1-00:00:00"));
  EXPECT_FALSE(s.get(F::kFramework).has_value());  // null in the answer stays unknown
  size_t known = 0;
  for (const auto& fv : s.fields) known += fv.has_value();
  EXPECT_EQ(known, 9u);  // model, layers, hidden, heads, seq, steps, nodes, GPUs/node, time limit
  // 12·24·2048² + 50257·2048 = 1.2080e9 + 0.1029e9 = 1.311e9
  ASSERT_TRUE(s.params_estimate.has_value());
  EXPECT_NEAR(s.params_estimate->billions, 1.311, 0.001);
  // The question: the template and the file.
  auto body = nlohmann::json::parse(ep.last_body);
  EXPECT_EQ(body["messages"][0]["content"], std::string(SchemaPrompt()));
  EXPECT_EQ(body["messages"][1]["content"], "file: mystery.yaml\n" + kMystery.text);
}

TEST(LlmSchemaTest, ASecondProcessAndTheSameConfigRenamedAreCacheHits) {
  FakeEndpoint ep;
  ep.content = kMysteryAnswer;
  llm::LlmConfig cfg = ep.Config();
  cfg.cache_file = CachePath("hits.json");
  { Process(cfg).Inspect(kMystery); }
  Process second(cfg);
  // Other name, CR LF line ends, trailing blanks and a blank line: the same normalised config.
  LaunchSchema s = second.Inspect({"copy.yml", "trainer:  \r\n  depth: 24\r\n\r\n  width: 2048\r\n  attn_heads: 16\r\n  ctx: 2048\r\n"});
  EXPECT_EQ(ep.requests.load(), 1);
  EXPECT_EQ(second.filler.calls(), 0u);
  EXPECT_EQ(second.filler.cache_hits(), 1u);
  EXPECT_EQ(FormatValue(s.get(F::kHiddenSize)->value), "2048");
  // Another model asks again.
  cfg.model = "other-model";
  Process other(cfg);
  other.Inspect(kMystery);
  EXPECT_EQ(ep.requests.load(), 2);
}

TEST(LlmSchemaTest, AConfigTheReadersUnderstandIsNotSent) {
  FakeEndpoint ep;
  Process run(ep.Config());
  LaunchSchema s = run.Inspect({"train_gpt2.py", Fixture("train_gpt2.py")});
  EXPECT_EQ(ep.requests.load(), 0);
  for (const auto& fv : s.fields)
    if (fv) EXPECT_NE(fv->provenance, Provenance::kLlm);
}

TEST(LlmSchemaTest, ALocatedFieldIsNeverOverridden) {
  FakeEndpoint ep;
  // The file states micro 4 and ZeRO 3; the answer says micro 8, ZeRO 2, global 64.
  ep.content = R"({"framework": "DeepSpeed", "micro_batch": 8, "zero_stage": 2, "global_batch": 64})";
  Process run(ep.Config());
  LaunchSchema s = run.Inspect({"ds.json", "{\n  \"train_micro_batch_size_per_gpu\": 4,\n  \"zero_optimization\": {\"stage\": 3}\n}\n"});
  EXPECT_EQ(ep.requests.load(), 1);
  EXPECT_EQ(FormatValue(s.get(F::kMicroBatch)->value), "4");
  EXPECT_EQ(s.get(F::kMicroBatch)->provenance, Provenance::kWritten);
  EXPECT_EQ(FormatValue(s.get(F::kZeroStage)->value), "3");
  EXPECT_EQ(s.get(F::kFramework)->provenance, Provenance::kDerived);  // the readers' identification
  EXPECT_EQ(FormatValue(s.get(F::kGlobalBatch)->value), "64");
  EXPECT_EQ(s.get(F::kGlobalBatch)->provenance, Provenance::kLlm);
}

// Each invalid answer: the exact reason; nothing merged.
TEST(LlmSchemaTest, InvalidAnswersAreRejectedWithTheirReason) {
  LaunchSchema empty = InspectText(kMystery.name, kMystery.text);
  // nodes 1 x 8 GPUs stated by the file (the checks then use the located values).
  LaunchSchema located = InspectText("job.sbatch", "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gres=gpu:8\npython my_train.py\n");
  ASSERT_EQ(FormatValue(located.get(F::kGpusPerNode)->value), "8");
  struct Case {
    const LaunchSchema* against;
    std::string answer, error;
  };
  const Case cases[] = {
      {&empty, "Sure! The job trains a 7B model.",
       "llm answer: content:1:1: JSON syntax error while parsing value - invalid literal; last read: 'S'"},
      // `{"num_layers": ` is 15 bytes: the number starts at column 16.
      {&empty, R"({"num_layers": 1e400})",
       "llm answer: content:1:16: expected a number within a double's range (magnitude below 1.8e308), got \"1e400\""},
      {&empty, "[24, 2048]", "llm answer: expected a JSON object"},
      {&empty, R"({"num_layers": 24, "learning_rate": 0.0003})", "llm answer: unknown key 'learning_rate'"},
      {&empty, R"({"num_layers": "24"})", "llm answer: 'num_layers': expected null or a positive integer in [1, 1000], got \"24\""},
      {&empty, R"({"num_layers": -3})", "llm answer: 'num_layers': expected null or a positive integer in [1, 1000], got -3"},
      {&empty, R"({"micro_batch": 2.5})", "llm answer: 'micro_batch': expected null or a positive integer in [1, 1000000], got 2.5"},
      {&empty, R"({"zero_stage": 4})", "llm answer: 'zero_stage': expected null or an integer in [0, 3], got 4"},
      {&empty, R"({"gpus_per_node": true})", "llm answer: 'gpus_per_node': expected null or a positive integer in [1, 64], got true"},
      {&empty, R"({"params_billion": 0})", "llm answer: 'params_billion': expected null or a positive number up to 100000, got 0"},
      {&empty, R"({"framework": "PyTorch Lightning"})",
       "llm answer: 'framework': expected null or one of Megatron-LM, Megatron-DeepSpeed, DeepSpeed, torchtitan, "
       "LLaMA-Factory, axolotl, Hugging Face Transformers, Hugging Face TRL, NeMo, nanoGPT, verl, OpenRLHF, got "
       "\"PyTorch Lightning\""},
      {&empty, R"({"time_limit": "two days"})",
       "llm answer: 'time_limit': expected null or a Slurm time limit ([D-]HH:MM:SS), got \"two days\""},
      {&empty, R"({"model_name": ""})",
       "llm answer: 'model_name': expected null or a non-empty printable string of at most 200 bytes, got \"\""},
      // 4 x 4 x 1 = 16 GPUs of model parallelism on the file's 1 x 8.
      {&located, R"({"tp": 4, "pp": 4, "dp": 1})",
       "llm answer: tp x pp x dp = 4 x 4 x 1 = 16 does not divide nodes x gpus_per_node = 1 x 8 = 8"},
      {&empty, R"({"micro_batch": 16, "global_batch": 8})", "llm answer: micro_batch 16 is larger than global_batch 8"},
      {&empty, R"({"num_heads": 12, "hidden_size": 1000})", "llm answer: num_heads 12 does not divide hidden_size 1000"},
      // 12·32·4096²/1e9 = 6.44 B of dense layers: 0.5 B is below half of it.
      {&empty, R"({"params_billion": 0.5, "num_layers": 32, "hidden_size": 4096})",
       "llm answer: params_billion 0.5 is not consistent with num_layers 32 x hidden_size 4096 (expected [3.221, 479.4])"},
  };
  for (const Case& c : cases) {
    Result<LlmFields> r = ParseLlmSchema(c.answer, *c.against);
    ASSERT_FALSE(r.ok()) << c.answer;
    EXPECT_EQ(r.error().message, c.error) << c.answer;
  }
  // The same checks pass where the answer is consistent: 1 x 8 = 2 x 1 x 4; 7 B within [3.221, 479.3].
  EXPECT_TRUE(ParseLlmSchema(R"({"tp": 2, "pp": 1, "dp": 4})", located).ok());
  EXPECT_TRUE(ParseLlmSchema("```json\n{\"params_billion\": 7, \"num_layers\": 32, \"hidden_size\": 4096}\n```", empty).ok());
}

TEST(LlmSchemaTest, AnInvalidAnswerIsAWarningAndNothingIsMerged) {
  FakeEndpoint ep;
  ep.content = R"({"num_layers": 24, "optimizer": "adam"})";
  llm::LlmConfig cfg = ep.Config();
  cfg.cache_file = CachePath("invalid.json");
  Process run(cfg);
  LaunchSchema s = run.Inspect(kMystery);
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_EQ(FormatWarning(s.warnings[0]), "mystery.yaml:0:0: llm (test-model): llm answer: unknown key 'optimizer'; answer rejected");
  for (const auto& fv : s.fields) EXPECT_FALSE(fv.has_value());
  // The answer is kept as given and validated again: a second process is not asked again.
  Process second(cfg);
  EXPECT_EQ(second.Inspect(kMystery).warnings.size(), 1u);
  EXPECT_EQ(ep.requests.load(), 1);
}

TEST(LlmSchemaTest, AnEndpointDownIsAWarningThePartialSchemaStandsAndNothingIsKept) {
  const std::string ds = "{\n  \"train_micro_batch_size_per_gpu\": 4\n}\n";
  llm::LlmConfig cfg;
  {
    FakeEndpoint ep;
    ep.status = 500;
    cfg = ep.Config();
    cfg.cache_file = CachePath("down.json");
    Process run(cfg);
    LaunchSchema s = run.Inspect({"ds.json", ds});
    ASSERT_EQ(s.warnings.size(), 1u);
    EXPECT_EQ(FormatWarning(s.warnings[0]), "ds.json:0:0: llm (test-model): no answer (llm: " + cfg.base_url +
                                                " answered HTTP 500); the readers' schema stands");
    EXPECT_EQ(FormatValue(s.get(F::kMicroBatch)->value), "4");  // the readers' partial schema
    // The same config again in this run: not asked again (the endpoint failed).
    EXPECT_EQ(run.Inspect({"again.json", ds}).warnings.size(), 1u);
    EXPECT_EQ(ep.requests.load(), 1);
  }
  // The stub is gone: connection refused; nothing was kept, so this process asks (and fails).
  Process run(cfg);
  LaunchSchema s = run.Inspect({"ds.json", ds});
  EXPECT_EQ(run.filler.calls(), 1u);
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_NE(s.warnings[0].message.find("no answer (llm: request to " + cfg.base_url + " failed: "), std::string::npos)
      << s.warnings[0].message;
  EXPECT_EQ(run.cache->size(), 0u);
}

}  // namespace
}  // namespace orrery::semantic
