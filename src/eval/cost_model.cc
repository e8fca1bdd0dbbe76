#include "eval/cost_model.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "base/gpu_names.h"
#include "base/parse.h"
#include "plan/model_names.h"

namespace orrery::eval {

Result<ModelSpec> ParseModelSize(std::string_view text) {
  std::string_view t = Trim(text);
  const std::string bad = "model size " + Quote(text) + ": expected a parameter count such as 7B, 1.3B, 350M or 7e9";
  if (t.empty()) return MakeError(bad);
  double scale = 1;
  switch (t.back()) {
    case 'B': case 'b': scale = 1e9; t.remove_suffix(1); break;
    case 'M': case 'm': scale = 1e6; t.remove_suffix(1); break;
    case 'T': case 't': scale = 1e12; t.remove_suffix(1); break;
    default: break;
  }
  double v = 0;
  if (!ParseF64(t, &v) || !std::isfinite(v)) return MakeError(bad);
  const double params = v * scale;
  if (!(params >= 1e6 && params <= 1e13)) return MakeError(bad + " between 1M and 10T");
  ModelSpec m;
  m.label = std::string(Trim(text));
  m.params = params;
  return m;
}

namespace {

// A name in the model table with an evaluation size, or the error of what `text` is not.
Result<const plan::ModelName*> EvalModelName(std::string_view text, const Error& as_count) {
  const std::string_view t = Trim(text);
  const bool count = !t.empty() && (std::isdigit(static_cast<unsigned char>(t[0])) != 0 || t[0] == '.');
  if (count && plan::FindModel(t) == nullptr) return as_count;  // a malformed or out-of-range count
  return plan::ResolveModel(t, plan::ModelUse::kEval, "a parameter count such as 7B, 1.3B, 350M or 7e9");
}

}  // namespace

Result<ModelSpec> ParseEvalModel(std::string_view text) {
  Result<ModelSpec> size = ParseModelSize(text);
  if (size.ok()) return size;
  ORR_ASSIGN_OR_RETURN(const plan::ModelName* name, EvalModelName(text, size.error()));
  ORR_ASSIGN_OR_RETURN(ModelSpec m, ParseModelSize(name->eval_size));
  m.label = std::string(name->canonical);
  return m;
}

Result<std::string> EvalModelSize(std::string_view text) {
  Result<ModelSpec> size = ParseModelSize(text);
  if (size.ok()) return std::string(Trim(text));
  ORR_ASSIGN_OR_RETURN(const plan::ModelName* name, EvalModelName(text, size.error()));
  return std::string(name->eval_size);
}

Result<GpuSpec> GpuByName(std::string_view name) {
  // Dense bf16 peak and HBM bandwidth from NVIDIA's datasheets (A100 80GB SXM: 312 TFLOP/s,
  // 2,039 GB/s; H100 SXM: 989 TFLOP/s, 3.35 TB/s; H200: 989 TFLOP/s, 4.8 TB/s, 141 GB).
  // Any spelling of base/gpu_names.h; the spec keeps the cost model's own name.
  const std::string_view gpu = CanonicalGpu(name);
  if (gpu == "a100-80") return GpuSpec{"a100-80g", 312e12, 2.039e12, 80e9};
  if (gpu == "h100") return GpuSpec{"h100-sxm", 989e12, 3.35e12, 80e9};
  if (gpu == "h200") return GpuSpec{"h200", 989e12, 4.8e12, 141e9};
  if (!gpu.empty())
    return MakeError("no evaluation cost model for GPU " + Quote(name) + " (it knows a100-80, h100 and h200)");
  return MakeError("unknown GPU " + Quote(name) + " (known: " + std::string(kGpuNames) +
                   "; the evaluation cost model has a100-80, h100 and h200)");
}

plan::DecoderShape DenseDecoder(double params) {
  // params = 12·L·d² with d = 128·L: L = cbrt(params / (12·128²)), rounded, at least 1.
  const uint32_t layers = std::max<uint32_t>(1, static_cast<uint32_t>(std::lround(std::cbrt(params / (12.0 * 128.0 * 128.0)))));
  plan::DecoderShape m;
  m.name = "dense";
  m.layers = layers;
  m.hidden = 128 * layers;
  m.heads = layers;
  m.kv_heads = layers;
  m.ffn = static_cast<uint32_t>(std::lround(8.0 * m.hidden / 3.0));  // 4·d² attention + 3·d·F MLP = 12·d²
  m.vocab = 32000;
  return m;
}

double KvBytesPerToken(double params) { return DenseDecoder(params).KvBytesPerToken(1); }

plan::InferGpu CalibratedGpu(const GpuSpec& g, const CostParams& p) {
  plan::InferGpu i;
  i.name = g.name;
  i.memory_bytes = g.memory_bytes;
  i.peak_flops = g.peak_flops;
  i.hbm_bytes_per_s = g.hbm_bytes_per_s;
  i.gemm_compute_eff = p.mfu;
  i.gemm_half_tokens = 0;  // a batched forward reaches mfu at any size
  i.gemm_memory_eff = p.hbm_efficiency;
  i.attn_memory_eff = p.hbm_efficiency;
  i.attn_compute_eff = p.mfu;
  i.elementwise_passes = 0;
  i.layer_s = 0;
  i.host_layer_s = 0;
  i.step_s = p.step_overhead_s;  // eager framework launches per forward, calibrated (docs/design/eval.md)
  i.mem_reserved_frac = 0;
  return i;
}

Result<uint32_t> GpusPerTrial(const ModelSpec& m, const GpuSpec& g, uint32_t gpus_per_node) {
  for (uint32_t n = 1; n <= gpus_per_node; n *= 2)
    if (m.checkpoint_bytes() <= 0.5 * g.memory_bytes * n) return n;
  return MakeError("a " + m.label + " model (" + std::to_string(static_cast<int64_t>(m.checkpoint_bytes() / 1e9)) +
                   " GB of weights) does not fit in half the memory of " + std::to_string(gpus_per_node) + " " +
                   g.name + " GPUs of one node");
}

double CalibratedCostModel::ForwardSeconds(const ModelSpec& m, const GpuSpec& g, double batch, double new_tokens,
                                           double context) const {
  // One forward of the planner's inference model (plan/infer.h): a prefill of the new tokens
  // over the prompt, or a decode step over `context` cached tokens.
  const plan::DecoderShape shape = DenseDecoder(m.params);
  const uint32_t b = static_cast<uint32_t>(std::max(1.0, std::round(batch)));
  const plan::InferStep step = new_tokens > 1 ? plan::InferStep{plan::InferPhase::kPrefill, b, new_tokens, 0, 1}
                                              : plan::InferStep{plan::InferPhase::kDecode, b, context, 0, 1};
  return plan::InferStepTime(shape, step, CalibratedGpu(g, p_)).step_time_s;
}

double CalibratedCostModel::PromptTokens(const Dataset& d) const {
  if (d.prompt_tokens) return *d.prompt_tokens;
  return p_.tokens_per_shot * (d.few_shot + 1.0);
}

double CalibratedCostModel::InferSecondsPerExample(const Dataset& d, const ModelSpec& m, const GpuSpec& g) const {
  const double b = p_.batch_size;
  const double prompt = PromptTokens(d);
  switch (d.task) {
    case TaskType::kPerplexity:
    case TaskType::kLoglikelihood: {
      return Candidates(d) * ForwardSeconds(m, g, b, prompt, prompt) / b;
    }
    case TaskType::kGeneration: {
      const double steps = std::max(1.0, p_.gen_fill * d.max_out_len.value_or(p_.default_max_out_len));
      const double prefill = ForwardSeconds(m, g, b, prompt, prompt);
      const double decode = steps * ForwardSeconds(m, g, b, 1, prompt + steps / 2);
      return (prefill + decode) / b;
    }
  }
  return 0;
}

double CalibratedCostModel::MetricSeconds(const Dataset& d) const {
  const double n = static_cast<double>(d.examples.value_or(0));
  switch (d.metric) {
    case MetricKind::kMatch:
      return n * (d.task == TaskType::kGeneration ? p_.match_generation_s : p_.match_scoring_s);
    case MetricKind::kCode: return n * p_.code_s;
    case MetricKind::kJudge: return n * p_.judge_s;
  }
  return 0;
}

uint32_t CalibratedCostModel::Candidates(const Dataset& d) const {
  switch (d.task) {
    case TaskType::kPerplexity: return d.candidates.value_or(p_.perplexity_candidates);
    case TaskType::kLoglikelihood: return d.candidates.value_or(p_.loglikelihood_candidates);
    case TaskType::kGeneration: return 1;
  }
  return 1;
}

DatasetCost CalibratedCostModel::Estimate(const Dataset& d, const ModelSpec& m, const GpuSpec& g,
                                          uint32_t gpus) const {
  // Tensor parallelism over `gpus`: the work divides, each doubling keeping tp_efficiency.
  const double tp = gpus * std::pow(p_.tp_efficiency, std::log2(static_cast<double>(gpus)));
  return DatasetCost{InferSecondsPerExample(d, m, g) / tp, MetricSeconds(d), Candidates(d)};
}

}  // namespace orrery::eval
