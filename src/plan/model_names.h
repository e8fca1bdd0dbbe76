// One model naming across commands (docs/cli.md, "Model names"): each model has one canonical
// name, lower-case `family-size` (gpt-1.3b, gpt-neo-2.7b, opt-350m, llama3-8b, qwen2.5-7b); the
// spellings commands used before (1.3B, GPT-Neo-2.7, OPT-350, LLAMA-3-8, ...) are aliases,
// matched in any case with '_' read as '-'. The table also says what each model is to the
// commands: a training shape of the planner, an inference decoder shape, a Sailor profile, an
// evaluation size. Every model flag resolves through it, and outputs print the canonical name.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace orrery::plan {

enum class ModelUse : uint8_t {
  kTraining = 1,   // a GPT training shape (model.h): plan estimate, plan lins-scaling, flex-shape lines
  kInference = 2,  // a decoder shape (infer.h): plan estimate --phase, rl step, RL jobs files
  kSailor = 4,     // a folder of Sailor's published profiles (sailor.h): plan search
  kEval = 8,       // a parameter count of the evaluation cost model: eval --model
};

struct ModelName {
  std::string_view canonical;
  std::array<std::string_view, 2> aliases;  // older spellings; "" = none
  uint8_t uses = 0;                         // ModelUse bits
  std::string_view sailor;                  // Sailor's profile folder (with kSailor)
  std::string_view eval_size;               // the nominal parameter count, e.g. "1.3B" (with kEval)

  bool Has(ModelUse use) const { return (uses & static_cast<uint8_t>(use)) != 0; }
};

// Every known model, in the order help texts list them.
std::span<const ModelName> ModelNames();

// The model whose canonical name or alias `text` is (any case, '_' as '-', outer spaces
// trimmed); nullptr when none is.
const ModelName* FindModel(std::string_view text);

// The canonical names of the models with `use`, in table order, and the same joined by ", ".
std::vector<std::string> CanonicalModelNames(ModelUse use);
std::string CanonicalModelList(ModelUse use);

// What `use` is in words: "a training shape", "an inference shape", "a Sailor profile",
// "an evaluation size".
std::string_view ModelUseName(ModelUse use);

// The model `text` names, when it has `use`. Errors (exit 2) list the canonical names that have
// `use`, followed by `other` (what else the flag accepts, e.g. "gpt:layers=L,..."; may be empty):
//   unknown model "gpt-9b": expected one of gpt-125m, gpt-350m, ... or gpt:layers=L,...
//   model "OPT-30" is opt-30b, which has a Sailor profile, not a training shape: expected one of ...
Result<const ModelName*> ResolveModel(std::string_view text, ModelUse use, std::string_view other = {});

}  // namespace orrery::plan
