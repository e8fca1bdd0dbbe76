// The inference cost model: how long an inference engine takes for one forward of a decoder-only
// model (GQA attention, SwiGLU MLP) over a batch of sequences, as production engines run it
// (the whole step replayed as one CUDA graph, flash attention over a KV cache), and how much KV
// cache a batch holds. The one model of inference in the project: the RL rollout model and the
// evaluation planner call it (docs/design/inference.md).
//
// A step is a roofline per kernel: each GEMM takes max(FLOPs / compute rate, bytes / memory
// rate) plus a fixed launch cost; attention reads the batch's KV cache (decode, verify) or
// computes the causal square (prefill); tensor parallelism splits heads and MLP columns and adds
// two all-reduces per layer. The rates and fixed costs of a GPU are fitted on measured whole
// steps (`tools/profile/infer.py`) and stored in `data/profiles/infer-<gpu>.json`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace orrery::plan {

// A decoder as `llama:layers=L,hidden=H,heads=A,kv_heads=K,ffn=F,vocab=V[,tied=1]` or a model
// with an inference shape (model_names.h: qwen2.5-1.5b, -7b, -14b, -32b, -72b; llama3-8b, -70b),
// by its canonical name or an alias, in any case.
struct DecoderShape {
  std::string name;
  uint32_t layers = 0;
  uint32_t hidden = 0;
  uint32_t heads = 0;
  uint32_t kv_heads = 0;
  uint32_t ffn = 0;
  uint32_t vocab = 0;
  bool tied_embeddings = false;  // the LM head shares the input embedding's weights

  uint32_t HeadDim() const { return hidden / heads; }
  // Weights of one block's GEMMs: Q (H×H), K and V (H×K·d each), O (H×H), gate and up (H×F
  // each), down (F×H).
  double BlockMatmulParams() const;
  // All parameters: blocks (GEMMs, two RMSNorm weights, QKV biases are ignored), embedding, LM
  // head unless tied, final norm.
  double Params() const;
  // bf16 K and V of one token over all layers, on one GPU of `tp` (KV heads are split by tp;
  // a GPU keeps at least one KV head).
  double KvBytesPerToken(uint32_t tp = 1) const;
};

Result<DecoderShape> ParseDecoder(std::string_view spec);
std::vector<std::string> DecoderPresetNames();  // the canonical names of the decoder presets

enum class InferPhase { kPrefill, kDecode, kVerify };
std::string_view InferPhaseName(InferPhase p);  // prefill, decode, verify
Result<InferPhase> ParseInferPhase(std::string_view text);

// One forward of the engine. `context` is each sequence's KV length before the step (for a
// prefill: the prompt length; the logits are computed for the last token only, as engines do).
// A verify step checks `verify_tokens` draft tokens per sequence in one forward. A prefill may
// also split its tokens over `sp` sequence-parallel groups of `tp` GPUs (DeepSpeed-Ulysses, as
// LongVILA's MM-SP runs inside a node: each GPU runs the GEMMs of C/sp tokens, all-to-alls
// before and after attention give each GPU the whole sequence for heads/(tp·sp) heads).
struct InferStep {
  InferPhase phase = InferPhase::kDecode;
  uint32_t batch = 1;
  double context = 0;
  uint32_t verify_tokens = 0;
  uint32_t tp = 1;
  uint32_t sp = 1;
};

struct InferEstimate {
  double step_time_s = 0;
  double gemm_s = 0;       // block GEMMs and the LM head
  double attention_s = 0;  // attention kernels
  double elementwise_s = 0;  // norms, rotary, activation, residual adds
  double comm_s = 0;       // tensor-parallel all-reduces and sequence-parallel all-to-alls
  double fixed_s = 0;      // per-kernel launch costs and the step's fixed cost
  double kv_cache_gib = 0;  // KV cache of the batch after the step, per GPU
  double weights_gib = 0;   // weights per GPU
  uint32_t max_batch = 0;   // most sequences of this context (after the step) that fit
  bool fits = true;
};

// Fitted constants of one GPU kind (docs/formats/infer-profile.md).
struct InferGpu {
  std::string name;               // h100, h200
  double memory_bytes = 0;        // usable HBM
  double peak_flops = 0;          // dense bf16 datasheet peak
  double hbm_bytes_per_s = 0;     // datasheet bandwidth
  double gemm_compute_eff = 0.7;  // reached fraction of peak for large GEMMs
  double gemm_half_tokens = 64;   // tokens at which a GEMM reaches half of gemm_compute_eff
  double gemm_memory_eff = 0.8;   // reached fraction of bandwidth when streaming weights
  double attn_memory_eff = 0.6;   // reached fraction of bandwidth when reading the KV cache
  double attn_compute_eff = 0.5;  // reached fraction of peak for prefill attention
  double elementwise_passes = 8;  // bytes of (hidden + ffn) activations per token moved, x2 bytes
  double layer_s = 40e-6;         // fixed cost of one layer's kernels inside a graph replay
  double host_layer_s = 200e-6;   // host time to issue one layer eagerly (prefill)
  double step_s = 30e-6;          // fixed cost of one step (graph launch, sampling)
  double allreduce_s = 8e-6;      // fixed cost of one tensor-parallel all-reduce
  double link_bytes_per_s = 300e9;  // tensor-parallel all-reduce bus bandwidth
  double mem_reserved_frac = 0.1;   // memory kept free (activations, graphs, fragmentation)
  std::string source;               // where the constants come from
};

// The profile of `gpu` (h100, h200, any case): infer-<gpu>.json in the profile folder
// (data/profiles, or ORRERY_PROFILE_DIR).
Result<InferGpu> InferGpuByName(std::string_view gpu);
// Reads and writes a profile file (docs/formats/infer-profile.md); located errors.
Result<InferGpu> ReadInferGpu(const std::string& path);
Result<InferGpu> ParseInferGpuText(std::string_view text, const std::string& name);
std::string InferGpuJson(const InferGpu& g);

// Checks the step against the shape (tp divides the heads, batch ≥ 1, context ≥ 0 and below
// 10M, verify_tokens ≥ 1 exactly for verify) and estimates it; does not fail on memory (`fits`).
Status CheckInferStep(const DecoderShape& m, const InferStep& s);
Result<InferEstimate> EstimateInfer(const DecoderShape& m, const InferStep& s, const InferGpu& g);

// What a forward counts. Engines split the vocabulary across tensor-parallel ranks, score every
// verified token and all-reduce twice a layer; tools/profile/infer.py times one rank with the
// whole vocabulary, the last token's logits and no all-reduce. Validation compares like with like.
struct InferCounting {
  bool vocab_parallel = true;
  bool verify_all_logits = true;
  bool allreduce = true;
};
inline constexpr InferCounting kEngineCounting{};
inline constexpr InferCounting kProfilerCounting{false, false, false};

// The same estimate without the checks, for callers that hold a checked shape and step (the
// rollout model calls it once per decode step).
InferEstimate InferStepTime(const DecoderShape& m, const InferStep& s, const InferGpu& g,
                            InferCounting c = kEngineCounting);

// A one-block drafter of the target (EAGLE-style: the target's hidden width, one decoder
// block, the target's embedding and LM head): the shape whose decode step `InferStepTime` times.
DecoderShape DrafterOf(const DecoderShape& target);

// Most sequences with `context` tokens of KV each that fit beside the weights on one GPU of
// `tp` (0 when the weights alone do not fit).
uint32_t MaxBatch(const DecoderShape& m, double context, uint32_t tp, const InferGpu& g);

}  // namespace orrery::plan
