// What one evaluation trial costs: GPU inference seconds per example, CPU metric seconds, and
// the fixed parts of a trial (process start, checkpoint bytes to load).
//
// CalibratedCostModel times each forward with the planner's inference model (plan/infer.h) on
// constants calibrated for eager evaluation frameworks (docs/design/eval.md):
//   a forward of B sequences x T new tokens over a context of c tokens is a prefill of T
//   tokens (T > 1) or a decode step over c cached tokens, + the framework's launch overhead
//   scoring (perplexity / loglikelihood): one forward per candidate, prompt tokens new;
//   generation: one prefill forward, then gen_fill·max_out_len decode steps of one token.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"
#include "eval/suite.h"
#include "plan/infer.h"

namespace orrery::eval {

struct ModelSpec {
  std::string label;             // a parameter count as given ("7B") or a model's canonical name
  double params = 0;             // parameter count
  double bytes_per_param = 2.0;  // bf16 checkpoint
  double checkpoint_bytes() const { return params * bytes_per_param; }
};
// "7B", "13b", "1.3B", "350M", "70e9" -> parameters. Errors (exit 2) on anything else or on
// sizes outside [1M, 10T].
Result<ModelSpec> ParseModelSize(std::string_view text);
// The evaluated model of `eval --model`: a parameter count as ParseModelSize reads it, or a model
// of plan/model_names.h (canonical name or alias, any case) at its nominal parameter count,
// labelled with its canonical name ("gpt-1.3b", 1.3e9). A parameter count is read as one first,
// so "1.3B" stays the count it always was. Unknown names list the canonical ones (exit 2).
Result<ModelSpec> ParseEvalModel(std::string_view text);
// The parameter count of `text` as ParseModelSize spells it: `text` itself, or a model's nominal
// size ("llama-7b" -> "7B"); errors as ParseEvalModel's.
Result<std::string> EvalModelSize(std::string_view text);

struct GpuSpec {
  std::string name;
  double peak_flops = 0;      // dense bf16, FLOP/s
  double hbm_bytes_per_s = 0;
  double memory_bytes = 0;
};
// a100-80g (Acme's GPUs), h100-sxm, h200: datasheet peaks (docs/design/eval.md cites them).
Result<GpuSpec> GpuByName(std::string_view name);

// Every constant of the calibrated model, with its default and where it comes from in
// docs/design/eval.md ("Constants").
struct CostParams {
  double mfu = 0.45;                     // fraction of peak FLOP/s a batched forward reaches
  double hbm_efficiency = 0.8;           // fraction of HBM bandwidth a decode step reaches
  double step_overhead_s = 0.015;        // kernel launches + framework per forward (eager HF)
  uint32_t batch_size = 16;              // sequences per forward
  double gen_fill = 0.75;                // decode steps of a batch / max_out_len
  uint32_t default_max_out_len = 100;    // the model config's max_out_len
  double tokens_per_shot = 120;          // prompt tokens per question or in-context example
  uint32_t perplexity_candidates = 4;    // default candidates of a PPL template
  uint32_t loglikelihood_candidates = 2;
  double tp_efficiency = 0.85;           // per doubling of tensor-parallel GPUs
  double startup_s = 30;                 // process start, imports, CUDA context, dataset build
  double metric_job_startup_s = 10;      // a CPU metric job's own start (predictions read back)
  double match_generation_s = 0.005;     // answer extraction + comparison, per example
  double match_scoring_s = 0.0005;       // argmin over candidate scores, per example
  double code_s = 0.245;                 // program execution, per example
  double judge_s = 2.0;                  // judge-model call, per example
};

// The cost of one dataset of a suite for one model on one GPU kind.
struct DatasetCost {
  double infer_s_per_example = 0;  // GPU seconds per example with `gpus` GPUs per trial
  double metric_s = 0;             // CPU seconds for the whole dataset's metric (no job start)
  uint32_t candidates = 1;         // scoring tasks: candidates scored per example (1 for generation)
};

class TrialCostModel {
 public:
  virtual ~TrialCostModel() = default;
  virtual std::string_view name() const = 0;
  virtual DatasetCost Estimate(const Dataset& d, const ModelSpec& m, const GpuSpec& g, uint32_t gpus) const = 0;
  // Fixed seconds every GPU job pays before loading (process start, dataset build).
  virtual double StartupSeconds() const = 0;
  virtual double MetricJobStartupSeconds() const = 0;
};

class CalibratedCostModel final : public TrialCostModel {
 public:
  explicit CalibratedCostModel(CostParams p = {}) : p_(p) {}
  std::string_view name() const override { return "calibrated-roofline"; }
  DatasetCost Estimate(const Dataset& d, const ModelSpec& m, const GpuSpec& g, uint32_t gpus) const override;
  double StartupSeconds() const override { return p_.startup_s; }
  double MetricJobStartupSeconds() const override { return p_.metric_job_startup_s; }
  const CostParams& params() const { return p_; }
  // Seconds of one forward over `batch` sequences with `new_tokens` each and `context` tokens
  // of KV cache each, on one GPU.
  double ForwardSeconds(const ModelSpec& m, const GpuSpec& g, double batch, double new_tokens, double context) const;
  double PromptTokens(const Dataset& d) const;
  uint32_t Candidates(const Dataset& d) const;

 private:
  double InferSecondsPerExample(const Dataset& d, const ModelSpec& m, const GpuSpec& g) const;
  double MetricSeconds(const Dataset& d) const;
  CostParams p_;
};

// The decoder of a model known by its size alone: dense multi-head attention with heads of 128,
// d = 128·L (the aspect of LLaMA-7B/13B), params = 12·L·d² (L rounded), SwiGLU MLP of 8/3·d,
// vocabulary 32,000; the shape the planner's inference model times.
plan::DecoderShape DenseDecoder(double params);
// Its bf16 KV-cache bytes per token: 2 (K and V) x layers x d x 2 bytes.
double KvBytesPerToken(double params);
// The planner's inference constants from this model's calibration: `mfu` for every GEMM and
// prefill attention, `hbm_efficiency` for streamed weights and KV reads, `step_overhead_s` per
// forward, no per-layer costs.
plan::InferGpu CalibratedGpu(const GpuSpec& g, const CostParams& p);

// GPUs one trial needs: the smallest power of two g <= gpus_per_node whose memory holds the
// weights in half of it (the rest for KV cache and activations). Error when none does.
Result<uint32_t> GpusPerTrial(const ModelSpec& m, const GpuSpec& g, uint32_t gpus_per_node);

}  // namespace orrery::eval
