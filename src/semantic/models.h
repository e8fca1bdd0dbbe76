// Model names: the size a name states, a table of published architectures, and the
// standard transformer parameter count (docs/formats/inspect.md, "Model table").
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace orrery::semantic {

// One published architecture. `active_b` differs from `params_b` for mixture-of-experts.
struct ModelArch {
  const char* family;  // normalized family key ("llama3", "gpt2", "qwen25")
  double size_b;       // the size its name gives ("8" of Llama-3-8B; 0.124 for GPT-2 small)
  const char* label;   // display name
  double params_b;     // total parameters (billions), as published
  double active_b;     // parameters active per token
  int layers, hidden, heads, vocab;
};
std::span<const ModelArch> ModelTable();

// The parameter count a name states: "Qwen3-4B-Instruct-2507" -> 4, "GPT-2 (124M)" -> 0.124,
// "Qwen3-30B-A3B" -> 30 (total). Nullopt when no size token is present or for mixture
// names without a total ("Mixtral-8x7B").
std::optional<double> SizeFromName(std::string_view name);

// The table entry of a model name (family and size), or null.
const ModelArch* FindModel(std::string_view name);

// The first model mention in free text (a comment, a file name): a known family word with
// the size that follows it, as written ("GPT-2 (124M)", "llama3_70b"). Mentions introduced
// by "e.g." are alternatives, not the model, and are skipped.
std::optional<std::string> FindModelMention(std::string_view text);

// Standard dense-transformer count 12·L·h² + V·h (attention 4h², MLP 8h², embeddings V·h),
// in billions.
double FormulaParamsBillion(double layers, double hidden, double vocab);

}  // namespace orrery::semantic
