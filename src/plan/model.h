// The transformer being trained: a GPT-style decoder (the workload of ../shared/gpu-h200/README.md
// and of Sailor's GPT-Neo/OPT profiles), described by its shape alone.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"

namespace orrery::plan {

struct GptModel {
  std::string name;  // canonical preset name (model_names.h) or "gpt"
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int vocab = 32000;
  int ffn = 0;  // MLP inner width (4·hidden unless given)

  int HeadDim() const { return hidden / heads; }
  // Weights of one block: QKV h→3h, Proj h→h, FC1 h→ffn, FC2 ffn→h (bias-free).
  double BlockMatmulParams() const { return 4.0 * hidden * hidden + 2.0 * hidden * ffn; }
  // One block's parameters: matmul weights plus two LayerNorms (weight + bias).
  double BlockParams() const { return BlockMatmulParams() + 4.0 * hidden; }
  // Untied input embedding (V×h) and LM head (h×V), final LayerNorm.
  double EmbeddingParams() const { return static_cast<double>(vocab) * hidden; }
  double TotalParams() const { return layers * BlockParams() + 2.0 * EmbeddingParams() + 2.0 * hidden; }
  // Weights that take part in GEMMs (the FLOP convention of the H200 README).
  double MatmulParams() const { return layers * BlockMatmulParams() + EmbeddingParams(); }
  // Model FLOPs per replica per step: 6·N_matmul·tokens + 12·L·h·s²·b (no causal halving,
  // recompute not counted), the convention MFU is reported against.
  double ModelFlops(int64_t seq, int64_t micro_batch) const;
};

// "gpt:layers=24,hidden=2048,heads=16,vocab=32000[,ffn=8192]" or a model with a training shape
// (model_names.h): gpt-125m, gpt-350m, gpt-1.3b, gpt-2.7b, gpt-6.7b, gpt-13b of the H200 workload;
// gpt-neo-2.7b, opt-350m, llama-7b, ...; any alias of theirs (1.3B, GPT-Neo-2.7, ...) in any case.
Result<GptModel> ParseModelSpec(std::string_view spec);

}  // namespace orrery::plan
