#include "plan/model_names.h"

#include <cctype>

#include <fmt/format.h>

#include "base/parse.h"

namespace orrery::plan {

namespace {

constexpr uint8_t kTrain = static_cast<uint8_t>(ModelUse::kTraining);
constexpr uint8_t kInfer = static_cast<uint8_t>(ModelUse::kInference);
constexpr uint8_t kSail = static_cast<uint8_t>(ModelUse::kSailor);
constexpr uint8_t kEval = static_cast<uint8_t>(ModelUse::kEval);

// The H200 workload's GPT models (model.cc), the models of Sailor's and Lins' papers, and the
// published decoders of the inference model (infer.cc). Every model is also an evaluation size:
// the evaluation cost model needs only its nominal parameter count.
constexpr std::array kModels = {
    ModelName{"gpt-125m", {"125M", ""}, kTrain | kEval, "", "125M"},
    ModelName{"gpt-350m", {"350M", ""}, kTrain | kEval, "", "350M"},
    ModelName{"gpt-1.3b", {"1.3B", ""}, kTrain | kEval, "", "1.3B"},
    ModelName{"gpt-2.7b", {"2.7B", ""}, kTrain | kEval, "", "2.7B"},
    ModelName{"gpt-6.7b", {"6.7B", ""}, kTrain | kEval, "", "6.7B"},
    ModelName{"gpt-13b", {"13B", ""}, kTrain | kEval, "", "13B"},
    ModelName{"gpt-neo-2.7b", {"gpt-neo-2.7", ""}, kTrain | kSail | kEval, "GPT-Neo-2.7", "2.7B"},
    ModelName{"opt-350m", {"opt-350", ""}, kTrain | kSail | kEval, "OPT-350", "350M"},
    ModelName{"opt-30b", {"opt-30", ""}, kSail | kEval, "OPT-30", "30B"},
    ModelName{"llama-7b", {"", ""}, kTrain | kEval, "", "7B"},
    ModelName{"llama-13b", {"", ""}, kTrain | kEval, "", "13B"},
    ModelName{"llama-30b", {"", ""}, kTrain | kEval, "", "30B"},
    ModelName{"llama3-8b", {"llama-3-8", ""}, kInfer | kSail | kEval, "LLAMA-3-8", "8B"},
    ModelName{"llama3-70b", {"", ""}, kInfer | kEval, "", "70B"},
    ModelName{"qwen2.5-1.5b", {"", ""}, kInfer | kEval, "", "1.5B"},
    ModelName{"qwen2.5-7b", {"", ""}, kInfer | kEval, "", "7B"},
    ModelName{"qwen2.5-14b", {"", ""}, kInfer | kEval, "", "14B"},
    ModelName{"qwen2.5-32b", {"", ""}, kInfer | kEval, "", "32B"},
    ModelName{"qwen2.5-72b", {"", ""}, kInfer | kEval, "", "72B"},
};

// "a Sailor profile", "a training shape and a Sailor profile": what a model is, besides its
// evaluation size (which every model has).
std::string Uses(const ModelName& m) {
  std::vector<std::string_view> words;
  for (ModelUse u : {ModelUse::kTraining, ModelUse::kInference, ModelUse::kSailor})
    if (m.Has(u)) words.push_back(ModelUseName(u));
  if (words.empty()) return std::string(ModelUseName(ModelUse::kEval));
  return fmt::format("{}", fmt::join(words, " and "));
}

std::string Expected(ModelUse use, std::string_view other) {
  std::string out = "expected one of " + CanonicalModelList(use);
  if (!other.empty()) out += fmt::format(" or {}", other);
  return out;
}

}  // namespace

std::span<const ModelName> ModelNames() { return kModels; }

const ModelName* FindModel(std::string_view text) {
  const std::string_view t = Trim(text);
  for (const ModelName& m : kModels) {
    if (SpellsName(t, m.canonical)) return &m;
    for (std::string_view a : m.aliases)
      if (SpellsName(t, a)) return &m;
  }
  return nullptr;
}

std::vector<std::string> CanonicalModelNames(ModelUse use) {
  std::vector<std::string> out;
  for (const ModelName& m : kModels)
    if (m.Has(use)) out.emplace_back(m.canonical);
  return out;
}

std::string CanonicalModelList(ModelUse use) { return fmt::format("{}", fmt::join(CanonicalModelNames(use), ", ")); }

std::string_view ModelUseName(ModelUse use) {
  switch (use) {
    case ModelUse::kTraining: return "a training shape";
    case ModelUse::kInference: return "an inference shape";
    case ModelUse::kSailor: return "a Sailor profile";
    case ModelUse::kEval: return "an evaluation size";
  }
  return "";
}

Result<const ModelName*> ResolveModel(std::string_view text, ModelUse use, std::string_view other) {
  const ModelName* m = FindModel(text);
  if (m == nullptr) return MakeError(fmt::format("unknown model {}: {}", Quote(text), Expected(use, other)));
  if (!m->Has(use)) {
    std::string is = SpellsName(Trim(text), m->canonical) ? "" : fmt::format(" is {}, which", m->canonical);
    return MakeError(fmt::format("model {}{} has {}, not {}: {}", Quote(text), is, Uses(*m), ModelUseName(use),
                                 Expected(use, other)));
  }
  return m;
}

}  // namespace orrery::plan
