#include "plan/model.h"

#include <array>
#include <cctype>
#include <charconv>
#include <string>

#include "base/parse.h"
#include "plan/model_names.h"

namespace orrery::plan {

double GptModel::ModelFlops(int64_t seq, int64_t micro_batch) const {
  const double tokens = static_cast<double>(seq) * static_cast<double>(micro_batch);
  return 6.0 * MatmulParams() * tokens + 12.0 * layers * static_cast<double>(hidden) * seq * tokens;
}

namespace {

struct Preset {
  std::string_view name;
  int layers, hidden, heads, vocab, ffn;
};

// The H200 workload's models (vocabulary 32000) and the models of Sailor's and Lins' papers
// (GPT-Neo-2.7 as Sailor's training config describes it: vocabulary 128256; LLaMA shapes with a
// GELU MLP of the same parameter count, 3·h·ffn_swiglu = 2·h·ffn), by their canonical names
// (model_names.h, which holds the older spellings).
constexpr std::array kPresets = {
    Preset{"gpt-125m", 12, 768, 12, 32000, 3072},      Preset{"gpt-350m", 24, 1024, 16, 32000, 4096},
    Preset{"gpt-1.3b", 24, 2048, 16, 32000, 8192},     Preset{"gpt-2.7b", 32, 2560, 32, 32000, 10240},
    Preset{"gpt-6.7b", 32, 4096, 32, 32000, 16384},    Preset{"gpt-13b", 40, 5120, 40, 32000, 20480},
    Preset{"gpt-neo-2.7b", 32, 2560, 32, 128256, 10240}, Preset{"opt-350m", 24, 1024, 16, 50272, 4096},
    Preset{"llama-7b", 32, 4096, 32, 32000, 16512}, Preset{"llama-13b", 40, 5120, 40, 32000, 20736},
    Preset{"llama-30b", 60, 6656, 52, 32000, 26880},
};

constexpr std::string_view kGptSyntax = "gpt:layers=L,hidden=H,heads=A,vocab=V";

bool SameName(std::string_view given, std::string_view lower) {
  if (given.size() != lower.size()) return false;
  for (size_t i = 0; i < given.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(given[i])) != lower[i]) return false;
  return true;
}

Result<int> ParsePositive(std::string_view key, std::string_view v) {
  int out = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || p != v.data() + v.size() || out <= 0) {
    return MakeError("model: '" + std::string(key) + "' must be a positive integer, got \"" + std::string(v) + "\"");
  }
  return out;
}

Status SetField(GptModel& m, std::string_view key, std::string_view value) {
  ORR_ASSIGN_OR_RETURN(int v, ParsePositive(key, value));
  if (key == "layers") m.layers = v;
  else if (key == "hidden") m.hidden = v;
  else if (key == "heads") m.heads = v;
  else if (key == "vocab") m.vocab = v;
  else if (key == "ffn") m.ffn = v;
  else return MakeError("model: unknown key '" + std::string(key) + "' (expected layers, hidden, heads, vocab, ffn)");
  return Status::Ok();
}

Status CheckShape(const GptModel& m) {
  if (m.layers == 0 || m.hidden == 0 || m.heads == 0) {
    return MakeError("model: 'gpt:' needs layers, hidden and heads (e.g. gpt:layers=24,hidden=2048,heads=16,vocab=32000)");
  }
  if (m.hidden % m.heads != 0) {
    return MakeError("model: hidden " + std::to_string(m.hidden) + " is not divisible by heads " +
                     std::to_string(m.heads));
  }
  return Status::Ok();
}

}  // namespace

Result<GptModel> ParseModelSpec(std::string_view text) {
  const std::string_view spec = Trim(text);
  constexpr std::string_view kPrefix = "gpt:";
  if (!SameName(spec.substr(0, kPrefix.size()), kPrefix)) {
    ORR_ASSIGN_OR_RETURN(const ModelName* name, ResolveModel(spec, ModelUse::kTraining, kGptSyntax));
    for (const Preset& p : kPresets)
      if (p.name == name->canonical) return GptModel{std::string(p.name), p.layers, p.hidden, p.heads, p.vocab, p.ffn};
    return MakeError("model: " + std::string(name->canonical) + " has no training shape");  // the tables disagree
  }
  GptModel m;
  m.name = "gpt";
  std::string_view rest = spec.substr(kPrefix.size());
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view kv = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const size_t eq = kv.find('=');
    if (eq == std::string_view::npos) {
      return MakeError("model: expected key=value, got \"" + std::string(kv) + "\"");
    }
    ORR_RETURN_IF_ERROR(SetField(m, kv.substr(0, eq), kv.substr(eq + 1)));
  }
  ORR_RETURN_IF_ERROR(CheckShape(m));
  if (m.ffn == 0) m.ffn = 4 * m.hidden;
  return m;
}

}  // namespace orrery::plan
