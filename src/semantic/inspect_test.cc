#include "semantic/inspect.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "semantic/evaluate.h"
#include "semantic/models.h"

namespace orrery::semantic {
namespace {

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(ORRERY_SOURCE_DIR) + "/tests/fixtures/inspect/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Field -> expected value (text or number); every field not listed must be unknown.
using Expect = std::vector<std::pair<FieldId, Value>>;

void ExpectSchema(const LaunchSchema& s, const Expect& expected) {
  std::array<bool, kNumFields> listed{};
  for (const auto& [f, v] : expected) {
    listed[static_cast<size_t>(f)] = true;
    ASSERT_TRUE(s.get(f).has_value()) << FieldName(f) << " unknown in " << s.file;
    EXPECT_EQ(FormatValue(s.get(f)->value), FormatValue(v)) << FieldName(f) << " in " << s.file;
  }
  for (size_t i = 0; i < kNumFields; ++i) {
    if (!listed[i]) EXPECT_FALSE(s.fields[i].has_value()) << FieldName(FieldAt(i)) << " invented in " << s.file;
  }
}

using F = FieldId;

// A launch line whose number (4.78e84) lies beyond long long: converting it to an integer
// was undefined behaviour (UBSan stopped inspect_fuzz on it); it is written as a double.
TEST(InspectTest, HugeNumbersStayDoubles) {
  const nlohmann::ordered_json huge = ToJson(InspectText("ds.json", R"({"train_batch_size": 4.77778e+84})"));
  ASSERT_TRUE(huge["global_batch"].is_number_float()) << huge.dump();
  EXPECT_DOUBLE_EQ(huge["global_batch"].get<double>(), 4.77778e+84);
  const nlohmann::ordered_json small = ToJson(InspectText("ds.json", R"({"train_batch_size": 512})"));
  ASSERT_TRUE(small["global_batch"].is_number_integer()) << small.dump();
  EXPECT_EQ(small["global_batch"].get<long long>(), 512);
}

TEST(InspectTest, MegatronArraysArithmeticAndTooSmallWorld) {
  LaunchSchema s = InspectText("megatron_gpt3_175b.sh", Fixture("megatron_gpt3_175b.sh"));
  // 1 node x 8 GPUs cannot hold TP 8 x PP 16 = 128: dp stays unknown, with a warning.
  ExpectSchema(s, {{F::kFramework, "Megatron-LM"}, {F::kModelName, "gpt3_175b"}, {F::kParamsBillion, 175.0},
                   {F::kNumLayers, 96.0}, {F::kHiddenSize, 12288.0}, {F::kNumHeads, 96.0}, {F::kSeqLen, 2048.0},
                   {F::kGlobalBatch, 1536.0}, {F::kMicroBatch, 1.0}, {F::kTrainSteps, 500000.0}, {F::kTp, 8.0},
                   {F::kPp, 16.0}, {F::kNodes, 1.0}, {F::kGpusPerNode, 8.0}, {F::kCheckpointIntervalSteps, 10000.0}});
  EXPECT_EQ(s.get(F::kNumLayers)->origin.line, 20u);  // inside MODEL_ARGS=( ... ), not the torchrun line
  EXPECT_EQ(s.get(F::kNodes)->origin.line, 7u);       // NUM_NODES=${NUM_NODES:-1}
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_EQ(s.warnings[0].message, "8 GPUs cannot hold TP x PP x CP = 128: dp left unknown");
  ASSERT_TRUE(s.params_estimate.has_value());
  EXPECT_EQ(s.params_estimate->method, "table: GPT-3 175B");
}

TEST(InspectTest, MegatronDeepSpeedStringArgsAndInlineConfig) {
  LaunchSchema s = InspectText("megatron_ds_llama.sh", Fixture("megatron_ds_llama.sh"));
  // dp = 1 x 8 / (2 x 2) = 2. "e.g. llama-13b" comments are alternatives, not the model.
  ExpectSchema(s, {{F::kFramework, "Megatron-DeepSpeed"}, {F::kNumLayers, 24.0}, {F::kHiddenSize, 2048.0},
                   {F::kNumHeads, 16.0}, {F::kSeqLen, 2048.0}, {F::kGlobalBatch, 32.0}, {F::kMicroBatch, 4.0},
                   {F::kTrainSteps, 250000.0}, {F::kTp, 2.0}, {F::kPp, 2.0}, {F::kDp, 2.0}, {F::kZeroStage, 0.0},
                   {F::kNodes, 1.0}, {F::kGpusPerNode, 8.0}, {F::kCheckpointIntervalSteps, 10000.0}});
  EXPECT_EQ(s.get(F::kDp)->note, "1 nodes x 8 GPUs / (TP 2 x PP 2 x CP 1)");
  // 12·24·2048² + 50257·2048 = 1.2080e9 + 0.1029e9 = 1.311e9
  ASSERT_TRUE(s.params_estimate.has_value());
  EXPECT_NEAR(s.params_estimate->billions, 1.311, 0.001);
}

TEST(InspectTest, SbatchHeaderWinsAndBackquotedLaunchStringsAreRead) {
  LaunchSchema s = InspectText("tr-13b.slurm", Fixture("tr-13b.slurm"));
  // --train-samples (not steps) leaves train_steps unknown; dp = 128 x 4 / (2 x 4) = 64.
  ExpectSchema(s, {{F::kFramework, "Megatron-DeepSpeed"}, {F::kModelName, "tr1-13B"}, {F::kParamsBillion, 13.0},
                   {F::kNumLayers, 40.0}, {F::kHiddenSize, 5120.0}, {F::kNumHeads, 32.0}, {F::kSeqLen, 2048.0},
                   {F::kGlobalBatch, 1024.0}, {F::kMicroBatch, 1.0}, {F::kTp, 2.0}, {F::kPp, 4.0}, {F::kDp, 64.0},
                   {F::kZeroStage, 1.0}, {F::kNodes, 128.0}, {F::kGpusPerNode, 4.0}, {F::kTimeLimit, "20:00:00"},
                   {F::kCheckpointIntervalSteps, 1500.0}});
  EXPECT_EQ(s.get(F::kNodes)->origin.key, "#SBATCH --nodes");
  EXPECT_EQ(s.get(F::kGpusPerNode)->origin.line, 5u);
}

TEST(InspectTest, SlurmLauncherWithoutModel) {
  LaunchSchema s = InspectText("multinode_trainer.slurm", Fixture("multinode_trainer.slurm"));
  // --gpus-per-task 8 x (4 tasks / 4 nodes) = 8; the job name names no model.
  ExpectSchema(s, {{F::kFramework, "torchtitan"}, {F::kNodes, 4.0}, {F::kGpusPerNode, 8.0}});
}

TEST(InspectTest, NanoGptConfigAndTheCommandInItsComment) {
  LaunchSchema s = InspectText("train_gpt2.py", Fixture("train_gpt2.py"));
  // gradient_accumulation_steps = 5 * 8 = 40 in total; global = 12 x 40 = 480 sequences.
  ExpectSchema(s, {{F::kFramework, "nanoGPT"}, {F::kModelName, "gpt2-124M"}, {F::kParamsBillion, 0.124},
                   {F::kSeqLen, 1024.0}, {F::kGlobalBatch, 480.0}, {F::kMicroBatch, 12.0}, {F::kTrainSteps, 600000.0},
                   {F::kDp, 8.0}, {F::kNodes, 1.0}, {F::kGpusPerNode, 8.0}});
  EXPECT_EQ(s.get(F::kGpusPerNode)->provenance, Provenance::kComment);
}

TEST(InspectTest, VerlOverridesUseRolloutTpAndPromptPlusResponse) {
  LaunchSchema s = InspectText("run_qwen2-7b.sh", Fixture("run_qwen2-7b.sh"));
  ExpectSchema(s, {{F::kFramework, "verl"}, {F::kModelName, "Qwen/Qwen2-7B-Instruct"}, {F::kParamsBillion, 7.0},
                   {F::kSeqLen, 1536.0}, {F::kGlobalBatch, 1024.0}, {F::kMicroBatch, 40.0}, {F::kEpochs, 15.0},
                   {F::kTp, 2.0}, {F::kNodes, 1.0}, {F::kGpusPerNode, 8.0}, {F::kCheckpointIntervalSteps, 20.0}});
  EXPECT_EQ(s.get(F::kSeqLen)->note, "prompt 512 + response 1024");
}

TEST(InspectTest, DeepSpeedJsonAutoValuesAndLocatedKeys) {
  LaunchSchema s = InspectText("ds.json", "{\n  \"train_batch_size\": \"auto\",\n  \"train_micro_batch_size_per_gpu\": 4,\n"
                                          "  \"zero_optimization\": {\"stage\": 3}\n}\n");
  ExpectSchema(s, {{F::kFramework, "DeepSpeed"}, {F::kMicroBatch, 4.0}, {F::kZeroStage, 3.0}});
  EXPECT_EQ(s.get(F::kMicroBatch)->origin.line, 3u);
  EXPECT_EQ(s.get(F::kZeroStage)->origin.line, 4u);
  EXPECT_EQ(s.get(F::kZeroStage)->origin.key, "zero_optimization.stage");
}

TEST(InspectTest, TorchtitanTomlDisabledCheckpointAndShardDegreeMinusOne) {
  LaunchSchema s = InspectText("llama3_8b.toml",
                               "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nlocal_batch_size = 2\nseq_len = 4096\n"
                               "steps = 300\n[parallelism]\ndata_parallel_shard_degree = -1\ntensor_parallel_degree = 1\n"
                               "[checkpoint]\nenable = false\ninterval = 100\n");
  ExpectSchema(s, {{F::kFramework, "torchtitan"}, {F::kModelName, "llama3 8B"}, {F::kParamsBillion, 8.0},
                   {F::kSeqLen, 4096.0}, {F::kMicroBatch, 2.0}, {F::kTrainSteps, 300.0}, {F::kTp, 1.0}});
  EXPECT_EQ(s.params_estimate->method, "table: Llama-3-8B");
}

TEST(InspectTest, NemoInterpolationResolves) {
  LaunchSchema s = InspectText("gpt.yaml",
                               "run:\n  name: gpt3_1.3b\n  time_limit: \"1-00:00:00\"\ntrainer:\n  num_nodes: 2\n  devices: 8\n"
                               "  max_steps: 100\nexp_manager:\n  name: x\nmodel:\n  micro_batch_size: 2\n  global_batch_size: ${multiply:${.micro_batch_size}, 16}\n"
                               "  tensor_model_parallel_size: 2\n  encoder_seq_length: 2048\n");
  // global = 2 x 16 = 32; dp = 2 x 8 / 2 = 8.
  ExpectSchema(s, {{F::kFramework, "NeMo (NeMo-Framework-Launcher)"}, {F::kModelName, "gpt3_1.3b"}, {F::kParamsBillion, 1.3},
                   {F::kSeqLen, 2048.0}, {F::kGlobalBatch, 32.0}, {F::kMicroBatch, 2.0}, {F::kTrainSteps, 100.0},
                   {F::kTp, 2.0}, {F::kDp, 8.0}, {F::kNodes, 2.0}, {F::kGpusPerNode, 8.0}, {F::kTimeLimit, "1-00:00:00"}});
}

TEST(InspectTest, HfCommandInMarkdownWithZeroFromConfigName) {
  LaunchSchema s = InspectText("README.md",
                               "Run:\n\n```bash\naccelerate launch --config_file configs/deepspeed_zero3.yaml --num_processes 8 \\\n"
                               "  trl/scripts/sft.py --model_name_or_path Qwen/Qwen2.5-0.5B --per_device_train_batch_size 4 \\\n"
                               "  --gradient_accumulation_steps 2 --max_steps 500 --save_steps 100 --max_seq_length 1024\n```\n");
  // accelerate: 8 processes on 1 machine; DDP only, so dp = 8 and global = 4 x 2 x 8 = 64.
  ExpectSchema(s, {{F::kFramework, "Hugging Face TRL (accelerate launch)"}, {F::kModelName, "Qwen/Qwen2.5-0.5B"},
                   {F::kParamsBillion, 0.5}, {F::kSeqLen, 1024.0}, {F::kGlobalBatch, 64.0}, {F::kMicroBatch, 4.0},
                   {F::kTrainSteps, 500.0}, {F::kDp, 8.0}, {F::kZeroStage, 3.0}, {F::kGpusPerNode, 8.0},
                   {F::kCheckpointIntervalSteps, 100.0}});
  EXPECT_EQ(s.get(F::kMicroBatch)->origin.line, 5u);
}

TEST(InspectTest, HfJobsTimeoutIsTheSchedulersLimitOnlyThere) {
  LaunchSchema jobs = InspectText("job.sh", "hf jobs run --flavor a100-large --timeout 2h img python run_glue.py --num_train_epochs 2\n");
  ExpectSchema(jobs, {{F::kFramework, "Hugging Face Transformers"}, {F::kEpochs, 2.0}, {F::kTimeLimit, "2h"}});
  LaunchSchema other = InspectText("job.sh", "torchrun --nproc_per_node 2 run_glue.py --timeout 30 --num_train_epochs 2\n");
  EXPECT_FALSE(other.get(F::kTimeLimit).has_value());  // a process-group timeout, not a limit
}

TEST(InspectTest, CommentedOutSettingsNameNoModel) {
  LaunchSchema s = InspectText("a.yaml", "# base_model: meta-llama/Llama-2-7b-hf\n# Fine-tunes Qwen2.5-0.5B on alpaca\nmicro_batch_size: 2\n");
  ASSERT_TRUE(s.get(F::kModelName).has_value());
  EXPECT_EQ(FormatValue(s.get(F::kModelName)->value), "Qwen2.5-0.5B");  // the prose comment, not the switched-off key
  EXPECT_EQ(s.get(F::kModelName)->origin.line, 2u);
}

TEST(InspectTest, ReferencedConfigIsMerged) {
  std::vector<InputFile> in = {
      {"jobs/run.sh", "deepspeed --num_gpus 4 train.py --deepspeed conf/ds.json --num_train_epochs 2\n"},
      {"jobs/conf/ds.json", "{\"train_micro_batch_size_per_gpu\": 8, \"zero_optimization\": {\"stage\": 2}}"}};
  std::vector<LaunchSchema> out = InspectFiles(in);
  ASSERT_EQ(out.size(), 2u);
  ASSERT_TRUE(out[0].get(F::kZeroStage).has_value());
  EXPECT_EQ(FormatValue(out[0].get(F::kZeroStage)->value), "2");
  EXPECT_EQ(out[0].get(F::kZeroStage)->origin.file, "jobs/conf/ds.json");
  EXPECT_EQ(FormatValue(out[0].get(F::kMicroBatch)->value), "8");
  EXPECT_FALSE(out[1].get(F::kEpochs).has_value());  // the config does not inherit the script
}

TEST(InspectTest, BrokenFilesGivePartialSchemasWithLocatedWarnings) {
  LaunchSchema j = InspectText("bad.json", "{\n  \"train_micro_batch_size_per_gpu\": 4,\n  \"x\": [1,\n");
  ASSERT_EQ(j.warnings.size(), 1u);
  EXPECT_EQ(j.warnings[0].line, 4u);  // end of input: just past the last line
  EXPECT_EQ(j.warnings[0].message.rfind("JSON syntax error while parsing value", 0), 0u) << j.warnings[0].message;
  LaunchSchema y = InspectText("bad.yaml", "micro_batch_size: 2\nx: [1, 2\n");
  ASSERT_EQ(y.warnings.size(), 1u);
  EXPECT_EQ(FormatWarning(y.warnings[0]).rfind("bad.yaml:3:1: YAML syntax error: ", 0), 0u) << FormatWarning(y.warnings[0]);
  LaunchSchema t = InspectText("bad.toml", "[training]\nsteps = = 3\n");
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_EQ(t.warnings[0].line, 2u);
  LaunchSchema sh = InspectText("partial.sh", "#SBATCH --nodes=2\nrun --x \"unterminated\n");
  ASSERT_TRUE(sh.get(F::kNodes).has_value());  // what came before the error is kept
  EXPECT_EQ(FormatValue(sh.get(F::kNodes)->value), "2");
  EXPECT_EQ(FormatWarning(sh.warnings.at(0)), "partial.sh:2:9: unterminated double quote: expected '\"', found end of file");
}

TEST(ModelsTest, SizesFromNames) {
  EXPECT_EQ(SizeFromName("Qwen/Qwen3-4B-Instruct-2507"), 4.0);
  EXPECT_EQ(SizeFromName("NousResearch/Meta-Llama-3.1-8B"), 8.0);
  EXPECT_NEAR(*SizeFromName("GPT-2 (124M)"), 0.124, 1e-12);
  EXPECT_EQ(SizeFromName("Qwen3-30B-A3B"), 30.0);
  EXPECT_EQ(SizeFromName("mistralai/Mixtral-8x7B-v0.1"), std::nullopt);  // no total stated
  EXPECT_EQ(SizeFromName("EleutherAI/pythia-1b-deduped"), 1.0);
  EXPECT_EQ(SizeFromName("gpt2"), std::nullopt);
  ASSERT_NE(FindModel("mistralai/Mixtral-8x7B-v0.1"), nullptr);
  EXPECT_EQ(FindModel("mistralai/Mixtral-8x7B-v0.1")->params_b, 46.7);
  EXPECT_EQ(FindModel("meta-llama/Llama-2-70b-hf")->layers, 80);
  EXPECT_EQ(FindModel("gpt2")->params_b, 0.124);
  EXPECT_EQ(FindModelMention("config for training GPT-2 (124M) down to"), "GPT-2 (124M)");
  EXPECT_EQ(FindModelMention("# e.g. llama-13b: 5120"), std::nullopt);
}

TEST(EvaluateTest, MatchingRules) {
  EXPECT_TRUE(ValuesMatch(F::kFramework, Value("Hugging Face TRL"), Value("Hugging Face TRL (accelerate launch)"), false));
  EXPECT_FALSE(ValuesMatch(F::kFramework, Value("DeepSpeed"), Value("Megatron-DeepSpeed"), false));
  EXPECT_TRUE(ValuesMatch(F::kModelName, Value("llama3 70B"), Value("Llama 3 70B (llama3 flavor 70B)"), false));
  EXPECT_FALSE(ValuesMatch(F::kModelName, Value("llama3 70B"), Value("Llama 3 70B (llama3 flavor 70B)"), true));
  EXPECT_TRUE(ValuesMatch(F::kEpochs, Value(3.0), Value(3.0), false));
  EXPECT_FALSE(ValuesMatch(F::kTp, Value(2.0), std::nullopt, false));  // an invented value is wrong
  EXPECT_TRUE(ValuesMatch(F::kTp, std::nullopt, std::nullopt, false));
  EXPECT_FALSE(ValuesMatch(F::kTimeLimit, Value("20:00:00"), Value("20:00"), false));
}

TEST(EvaluateTest, CorpusErrorsAreLocated) {
  auto r = ParseLabelledCorpus("{\"id\": \"X\", \"labels\": {}}\n[1]\n", "c.jsonl");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "c.jsonl:2:1: expected a JSON object per line, got array");
  auto n = ParseLabelledCorpus("{\"id\": 1, \"labels\": {}}\n", "c.jsonl");
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().message, "c.jsonl:1:1: field 'id': expected a string, got number");
}

// The dev corpus of shared/corpora/launch-configs: the floor reached (docs/validation/signals.md).
TEST(EvaluateTest, DevCorpusFloor) {
  std::ifstream in(std::string(ORRERY_SHARED_DIR) + "/corpora/launch-configs/dev.jsonl");
  if (!in) GTEST_SKIP() << "shared corpus not found";
  std::stringstream ss;
  ss << in.rdbuf();
  auto records = ParseLabelledCorpus(ss.str(), "dev.jsonl");
  ASSERT_TRUE(records.ok()) << records.error().message;
  CorpusAccuracy a = EvaluateCorpus(*records);
  EXPECT_EQ(a.evaluated, 6u);  // 6 of 12 records store their text
  EXPECT_GE(a.overall(), 0.99) << FormatAccuracy(a, true);
  for (size_t i = 0; i < kNumFields; ++i) EXPECT_GE(a.fields[i].correct, 5u) << FieldName(FieldAt(i));
  // The LLM fallback's rule: only the DeepSpeed JSON that gives just its batch sizes
  // (framework + global + micro = 3 fields < 4) would be sent (docs/validation/signals.md).
  EXPECT_EQ(a.llm_triggers, std::vector<std::string>{"C003 (fewer than 4 fields located)"});
}

}  // namespace
}  // namespace orrery::semantic
