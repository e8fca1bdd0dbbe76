// Speed of the scheduling advisor's reader: one launch file -> launch schema, per format
// (the fixtures of tests/fixtures/inspect plus inline JSON/YAML/TOML configs), and a large
// synthetic Megatron script for throughput in MB/s.
//   build/orrery_semantic_bench --benchmark_filter=Inspect
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>
#include <string>

#include "semantic/inspect.h"

namespace orrery::semantic {
namespace {

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(ORRERY_SOURCE_DIR) + "/tests/fixtures/inspect/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void BM_InspectFile(benchmark::State& state, const std::string& name, const std::string& text) {
  for (auto _ : state) {
    LaunchSchema s = InspectText(name, text);
    benchmark::DoNotOptimize(s);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(text.size()));
  state.SetItemsProcessed(state.iterations());
}

const char* kNemoYaml =
    "run:\n  name: gpt3_5b\n  time_limit: \"6-00:00:00\"\ntrainer:\n  num_nodes: 16\n  devices: 8\n  max_steps: 75000\n"
    "exp_manager:\n  name: megatron_gpt\nmodel:\n  micro_batch_size: 4\n  global_batch_size: 2048\n"
    "  tensor_model_parallel_size: 1\n  pipeline_model_parallel_size: 1\n  encoder_seq_length: 2048\n  num_layers: 24\n"
    "  hidden_size: 4096\n  ffn_hidden_size: ${multiply:4, ${.hidden_size}}\n  num_attention_heads: 32\n";
const char* kDsJson =
    "{\n  \"train_batch_size\": 65536,\n  \"train_micro_batch_size_per_gpu\": 64,\n  \"optimizer\": {\"type\": \"Lamb\", "
    "\"params\": {\"lr\": 0.011}},\n  \"fp16\": {\"enabled\": true},\n  \"zero_optimization\": {\"stage\": 2}\n}\n";
const char* kTitanToml =
    "[job]\ndump_folder = \"./outputs\"\n[model]\nname = \"llama3\"\nflavor = \"70B\"\n[training]\nlocal_batch_size = 8\n"
    "seq_len = 8192\nsteps = 1000\n[parallelism]\ndata_parallel_shard_degree = -1\ntensor_parallel_degree = 8\n"
    "[checkpoint]\nenable = false\ninterval = 500\n";

// A long launcher: the Megatron fixture's argument arrays repeated (about 1 MB).
std::string LargeScript() {
  std::string one = Fixture("megatron_gpt3_175b.sh");
  std::string out;
  while (out.size() < (1u << 20)) out += one;
  return out;
}

void RegisterAll() {
  for (const char* f : {"megatron_gpt3_175b.sh", "megatron_ds_llama.sh", "tr-13b.slurm", "multinode_trainer.slurm",
                        "run_qwen2-7b.sh", "train_gpt2.py"}) {
    benchmark::RegisterBenchmark((std::string("BM_Inspect/") + f).c_str(), BM_InspectFile, std::string(f), Fixture(f));
  }
  benchmark::RegisterBenchmark("BM_Inspect/nemo.yaml", BM_InspectFile, std::string("nemo.yaml"), std::string(kNemoYaml));
  benchmark::RegisterBenchmark("BM_Inspect/ds.json", BM_InspectFile, std::string("ds.json"), std::string(kDsJson));
  benchmark::RegisterBenchmark("BM_Inspect/titan.toml", BM_InspectFile, std::string("titan.toml"), std::string(kTitanToml));
  benchmark::RegisterBenchmark("BM_Inspect/large_1MB.sh", BM_InspectFile, std::string("large.sh"), LargeScript());
}

const int kRegistered = (RegisterAll(), 0);

}  // namespace
}  // namespace orrery::semantic
