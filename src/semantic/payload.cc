#include "semantic/payload.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/rng.h"
#include "semantic/models.h"

namespace orrery::semantic {

namespace {

// Candidate models (table labels whose names state their size) by size class: small jobs
// train small models.
struct SizeClass {
  uint32_t max_gpus;
  const char* models[4];
};
constexpr SizeClass kClasses[] = {
    {1, {"GPT-2 small", "OPT-125M", "Pythia-410M", "Qwen2.5-0.5B"}},
    {8, {"OPT-1.3B", "Qwen2.5-1.5B", "Pythia-2.8B", "Llama-2-7B"}},
    {64, {"Llama-2-7B", "Llama-3-8B", "Llama-2-13B", "GPT-3 6.7B"}},
    {UINT32_MAX, {"Llama-2-13B", "GPT-3 13B", "Llama-2-70B", "Llama-3-70B"}},
};

const ModelArch* ByLabel(const char* label) {
  for (const ModelArch& m : ModelTable()) {
    if (std::string_view(m.label) == label) return &m;
  }
  return nullptr;
}

// The class for `gpus`, stepped down while the planned run would be under 20 steps.
size_t ClassFor(uint32_t gpus) {
  size_t c = 0;
  while (c + 1 < std::size(kClasses) && gpus > kClasses[c].max_gpus) ++c;
  return c;
}

struct Plan {
  const ModelArch* model = nullptr;
  uint32_t gpus = 1, nodes = 1, gpn = 1, tp = 1, pp = 1, dp = 1;
  uint32_t seq = 2048, micro = 1, ga = 1, global = 1;
  double step_s = 0;
  uint64_t steps = 0;
  bool epochs_only = false;
  uint32_t save_interval = 0;
};

uint32_t PowerOfTwoAtMost(uint32_t n, uint32_t cap) {
  uint32_t p = 1;
  while (p * 2 <= n && p * 2 <= cap) p *= 2;
  return p;
}

// `megatron`: tensor/pipeline parallelism for large models; otherwise (Hugging Face
// Trainer) data parallelism only, as that launcher implies.
void ChooseParallelism(Plan* p, bool megatron) {
  p->gpn = std::min<uint32_t>(p->gpus, 8);
  p->nodes = (p->gpus + p->gpn - 1) / p->gpn;
  p->gpus = p->nodes * p->gpn;
  double params = p->model->params_b;
  uint32_t want_tp = params >= 60 ? 8 : params >= 12 ? 4 : params >= 6 ? 2 : 1;
  p->tp = megatron && (p->gpn & (p->gpn - 1)) == 0 ? PowerOfTwoAtMost(p->gpn, want_tp) : 1;
  p->pp = megatron && params >= 60 && p->nodes >= 2 && p->nodes % 2 == 0 ? 2 : 1;
  p->dp = p->gpus / (p->tp * p->pp);
}

std::string WholeNumber(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f", v);
  return b;
}

std::string MegatronScript(const Plan& p, const std::string& name) {
  std::string s = "#!/bin/bash\n#SBATCH --job-name=" + name + "\n#SBATCH --nodes=" + WholeNumber(p.nodes) +
                  "\n#SBATCH --gres=gpu:" + WholeNumber(p.gpn) + "\n# Pretrains " + p.model->label + " with Megatron-LM\n\n";
  s += "GPUS_PER_NODE=" + WholeNumber(p.gpn) + "\nNNODES=${NNODES:-" + WholeNumber(p.nodes) + "}\n";
  s += "TP=" + WholeNumber(p.tp) + "\nPP=" + WholeNumber(p.pp) + "\n\nMODEL_ARGS=(\n    --num-layers " + WholeNumber(p.model->layers) +
       "\n    --hidden-size " + WholeNumber(p.model->hidden) + "\n    --num-attention-heads " + WholeNumber(p.model->heads) +
       "\n    --seq-length " + WholeNumber(p.seq) + "\n)\n";
  s += "TRAIN_ARGS=(\n    --micro-batch-size " + WholeNumber(p.micro) + "\n    --global-batch-size " + WholeNumber(p.global) + "\n";
  s += p.epochs_only ? "    --train-samples " + WholeNumber(static_cast<double>(p.steps) * p.global) + "\n" : "    --train-iters " + WholeNumber(static_cast<double>(p.steps)) + "\n";
  s += "    --save-interval " + WholeNumber(p.save_interval) + "\n)\n\n";
  s += "torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NNODES pretrain_gpt.py \\\n    ${MODEL_ARGS[@]} ${TRAIN_ARGS[@]} \\\n"
       "    --tensor-model-parallel-size $TP --pipeline-model-parallel-size $PP\n";
  return s;
}

std::string HfCommandLine(const Plan& p, const std::string& hf_name) {
  std::string s = "#!/bin/bash\ntorchrun --nnodes " + WholeNumber(p.nodes) + " --nproc_per_node " + WholeNumber(p.gpn) + " run_clm.py \\\n";
  s += "    --model_name_or_path " + hf_name + " \\\n    --per_device_train_batch_size " + WholeNumber(p.micro) +
       " \\\n    --gradient_accumulation_steps " + WholeNumber(p.ga) + " \\\n    --block_size " + WholeNumber(p.seq) + " \\\n";
  s += p.epochs_only ? "    --num_train_epochs 3 \\\n" : "    --max_steps " + WholeNumber(static_cast<double>(p.steps)) + " \\\n";
  s += "    --save_steps " + WholeNumber(p.save_interval) + " --output_dir out\n";
  return s;
}

// A Hugging Face-style id for a table label ("Llama-2-7B" -> "org/Llama-2-7B").
std::string HfName(const ModelArch& m) {
  std::string label = m.label;
  for (char& c : label) c = c == ' ' ? '-' : c;
  return "org/" + label;
}

}  // namespace

SemanticPayload GeneratePayload(const Job& job, uint64_t seed, const PayloadOptions& o) {
  Rng rng(seed, "semantic-payload/" + std::to_string(job.id.v));
  Plan p;
  p.gpus = std::max<uint32_t>(1, job.gpus);
  double duration = std::max<double>(1, static_cast<double>(job.duration));
  bool stopped_early = job.state == JobState::kFailed || job.state == JobState::kCancelled || job.state == JobState::kNodeFail ||
                       job.state == JobState::kTimeout;
  double planned = stopped_early ? duration / (0.05 + 0.9 * rng.Uniform()) : duration;
  double mfu = std::clamp(o.mfu_median * std::exp(o.mfu_sigma * rng.Normal()), 0.03, 0.75);
  double overhead = std::min(planned * 0.5, o.overhead_median_s * std::exp(0.5 * rng.Normal()));
  static constexpr uint32_t kSeqs[] = {1024, 2048, 4096};
  static constexpr uint32_t kMicros[] = {1, 2, 4};
  static constexpr uint32_t kGas[] = {1, 2, 4, 8};
  p.seq = kSeqs[rng.Below(3)];
  p.micro = kMicros[rng.Below(3)];
  p.ga = kGas[rng.Below(4)];
  uint64_t pick = rng.Below(4);
  bool megatron = p.gpus >= 8 && rng.Uniform() < 0.6;
  for (size_t c = ClassFor(p.gpus) + 1; c-- > 0;) {
    p.model = ByLabel(kClasses[c].models[pick]);
    ChooseParallelism(&p, megatron);
    p.global = p.micro * p.ga * p.dp;
    double flops = 6.0 * p.model->params_b * 1e9 * p.global * p.seq;
    p.step_s = flops / (p.gpus * o.peak_flops * mfu);
    if ((planned - overhead) / p.step_s >= 20 || c == 0) break;  // short jobs train smaller models
  }
  p.steps = static_cast<uint64_t>(std::max(1.0, std::round((planned - overhead) / p.step_s)));
  p.save_interval = static_cast<uint32_t>(std::max<uint64_t>(1, p.steps / 10));
  p.epochs_only = rng.Uniform() < o.epochs_only_fraction;
  SemanticPayload out;
  std::string name = "job-" + std::to_string(job.id.v);
  if (megatron) {
    out.file_name = name + ".sh";
    out.text = MegatronScript(p, name);
  } else {
    out.file_name = name + ".sh";
    out.text = HfCommandLine(p, HfName(*p.model));
  }
  out.planned_s = planned;
  out.params_b = p.model->params_b;
  out.mfu = mfu;
  out.step_s = p.step_s;
  out.steps = p.steps;
  return out;
}

}  // namespace orrery::semantic
