#include "semantic/models.h"

#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "semantic/strings.h"

namespace orrery::semantic {

namespace {

// Published architectures (model cards and papers: GPT-2, GPT-3 Table 2.1, OPT Table 1,
// Llama 2/3 papers, Mistral/Mixtral, Qwen2/2.5/3, Gemma 1/2, DeepSeek LLM/V3, Pythia, BLOOM,
// Falcon). Parameter counts in billions as published.
constexpr ModelArch kTable[] = {
    {"gpt2", 0.124, "GPT-2 small", 0.124, 0.124, 12, 768, 12, 50257},
    {"gpt2", 0.355, "GPT-2 medium", 0.355, 0.355, 24, 1024, 16, 50257},
    {"gpt2", 0.774, "GPT-2 large", 0.774, 0.774, 36, 1280, 20, 50257},
    {"gpt2", 1.5, "GPT-2 XL", 1.558, 1.558, 48, 1600, 25, 50257},
    {"gpt3", 0.125, "GPT-3 Small", 0.125, 0.125, 12, 768, 12, 50257},
    {"gpt3", 0.35, "GPT-3 Medium", 0.35, 0.35, 24, 1024, 16, 50257},
    {"gpt3", 0.76, "GPT-3 Large", 0.76, 0.76, 24, 1536, 16, 50257},
    {"gpt3", 1.3, "GPT-3 XL", 1.3, 1.3, 24, 2048, 24, 50257},
    {"gpt3", 2.7, "GPT-3 2.7B", 2.7, 2.7, 32, 2560, 32, 50257},
    {"gpt3", 6.7, "GPT-3 6.7B", 6.7, 6.7, 32, 4096, 32, 50257},
    {"gpt3", 13, "GPT-3 13B", 13, 13, 40, 5140, 40, 50257},
    {"gpt3", 175, "GPT-3 175B", 175, 175, 96, 12288, 96, 50257},
    {"opt", 0.125, "OPT-125M", 0.125, 0.125, 12, 768, 12, 50272},
    {"opt", 1.3, "OPT-1.3B", 1.3, 1.3, 24, 2048, 32, 50272},
    {"opt", 6.7, "OPT-6.7B", 6.7, 6.7, 32, 4096, 32, 50272},
    {"opt", 13, "OPT-13B", 13, 13, 40, 5120, 40, 50272},
    {"opt", 30, "OPT-30B", 30, 30, 48, 7168, 56, 50272},
    {"opt", 66, "OPT-66B", 66, 66, 64, 9216, 72, 50272},
    {"opt", 175, "OPT-175B", 175, 175, 96, 12288, 96, 50272},
    {"llama2", 7, "Llama-2-7B", 6.74, 6.74, 32, 4096, 32, 32000},
    {"llama2", 13, "Llama-2-13B", 13.0, 13.0, 40, 5120, 40, 32000},
    {"llama2", 70, "Llama-2-70B", 69.0, 69.0, 80, 8192, 64, 32000},
    {"llama3", 8, "Llama-3-8B", 8.03, 8.03, 32, 4096, 32, 128256},
    {"llama3", 70, "Llama-3-70B", 70.6, 70.6, 80, 8192, 64, 128256},
    {"llama3", 405, "Llama-3.1-405B", 405, 405, 126, 16384, 128, 128256},
    {"llama", 7, "LLaMA-7B", 6.7, 6.7, 32, 4096, 32, 32000},
    {"llama", 13, "LLaMA-13B", 13.0, 13.0, 40, 5120, 40, 32000},
    {"llama", 33, "LLaMA-33B", 32.5, 32.5, 60, 6656, 52, 32000},
    {"llama", 65, "LLaMA-65B", 65.2, 65.2, 80, 8192, 64, 32000},
    {"mistral", 7, "Mistral-7B", 7.24, 7.24, 32, 4096, 32, 32000},
    {"mixtral", 56, "Mixtral-8x7B", 46.7, 12.9, 32, 4096, 32, 32000},
    {"mixtral", 176, "Mixtral-8x22B", 141, 39, 56, 6144, 48, 32768},
    {"qwen2", 7, "Qwen2-7B", 7.62, 7.62, 28, 3584, 28, 152064},
    {"qwen2", 72, "Qwen2-72B", 72.7, 72.7, 80, 8192, 64, 152064},
    {"qwen25", 0.5, "Qwen2.5-0.5B", 0.49, 0.49, 24, 896, 14, 151936},
    {"qwen25", 1.5, "Qwen2.5-1.5B", 1.54, 1.54, 28, 1536, 12, 151936},
    {"qwen25", 3, "Qwen2.5-3B", 3.09, 3.09, 36, 2048, 16, 151936},
    {"qwen25", 7, "Qwen2.5-7B", 7.62, 7.62, 28, 3584, 28, 152064},
    {"qwen25", 14, "Qwen2.5-14B", 14.7, 14.7, 48, 5120, 40, 152064},
    {"qwen25", 32, "Qwen2.5-32B", 32.5, 32.5, 64, 5120, 40, 152064},
    {"qwen25", 72, "Qwen2.5-72B", 72.7, 72.7, 80, 8192, 64, 152064},
    {"qwen3", 0.6, "Qwen3-0.6B", 0.6, 0.6, 28, 1024, 16, 151936},
    {"qwen3", 1.7, "Qwen3-1.7B", 1.7, 1.7, 28, 2048, 16, 151936},
    {"qwen3", 4, "Qwen3-4B", 4.0, 4.0, 36, 2560, 32, 151936},
    {"qwen3", 8, "Qwen3-8B", 8.2, 8.2, 36, 4096, 32, 151936},
    {"qwen3", 14, "Qwen3-14B", 14.8, 14.8, 40, 5120, 40, 151936},
    {"qwen3", 32, "Qwen3-32B", 32.8, 32.8, 64, 5120, 64, 151936},
    {"qwen3", 30, "Qwen3-30B-A3B", 30.5, 3.3, 48, 2048, 32, 151936},
    {"qwen3", 235, "Qwen3-235B-A22B", 235, 22, 94, 4096, 64, 151936},
    {"gemma", 2, "Gemma-2B", 2.51, 2.51, 18, 2048, 8, 256000},
    {"gemma", 7, "Gemma-7B", 8.54, 8.54, 28, 3072, 16, 256000},
    {"gemma2", 2, "Gemma-2-2B", 2.61, 2.61, 26, 2304, 8, 256000},
    {"gemma2", 9, "Gemma-2-9B", 9.24, 9.24, 42, 3584, 16, 256000},
    {"gemma2", 27, "Gemma-2-27B", 27.2, 27.2, 46, 4608, 32, 256000},
    {"deepseek", 7, "DeepSeek-LLM-7B", 6.9, 6.9, 30, 4096, 32, 102400},
    {"deepseek", 67, "DeepSeek-LLM-67B", 67, 67, 95, 8192, 64, 102400},
    {"deepseekv3", 671, "DeepSeek-V3", 671, 37, 61, 7168, 128, 129280},
    {"pythia", 0.41, "Pythia-410M", 0.41, 0.41, 24, 1024, 16, 50304},
    {"pythia", 1, "Pythia-1B", 1.01, 1.01, 16, 2048, 8, 50304},
    {"pythia", 1.4, "Pythia-1.4B", 1.41, 1.41, 24, 2048, 16, 50304},
    {"pythia", 2.8, "Pythia-2.8B", 2.78, 2.78, 32, 2560, 32, 50304},
    {"pythia", 6.9, "Pythia-6.9B", 6.86, 6.86, 32, 4096, 32, 50304},
    {"pythia", 12, "Pythia-12B", 11.8, 11.8, 36, 5120, 40, 50304},
    {"bloom", 176, "BLOOM-176B", 176, 176, 70, 14336, 112, 250880},
    {"falcon", 7, "Falcon-7B", 7.2, 7.2, 32, 4544, 71, 65024},
    {"falcon", 40, "Falcon-40B", 40, 40, 60, 8192, 128, 65024},
    {"falcon", 180, "Falcon-180B", 180, 180, 80, 14848, 232, 65024},
};

// Family words as they appear in names, longest first, with their table key.
struct FamilyWord {
  const char* word;  // normalized (lower case, no separators)
  const char* family;
};
constexpr FamilyWord kFamilies[] = {
    {"deepseekv3", "deepseekv3"}, {"codellama", "llama2"}, {"llama31", "llama3"}, {"llama32", "llama3"},
    {"llama33", "llama3"},        {"llama3", "llama3"},    {"llama2", "llama2"},  {"llama", "llama"},
    {"mixtral", "mixtral"},       {"mistral", "mistral"},  {"qwen25", "qwen25"},  {"qwen3", "qwen3"},
    {"qwen2", "qwen2"},           {"qwen", "qwen2"},       {"gemma2", "gemma2"},  {"gemma", "gemma"},
    {"deepseek", "deepseek"},     {"pythia", "pythia"},    {"bloom", "bloom"},    {"falcon", "falcon"},
    {"gpt3", "gpt3"},             {"gpt2", "gpt2"},        {"opt", "opt"},
};

// Display words for mentions in free text (matched case-insensitively at a word start).
constexpr const char* kMentionWords[] = {"gpt-2", "gpt2", "gpt-3", "gpt3", "gpt-j", "gpt-neox", "llama", "mistral",
                                         "mixtral", "qwen", "gemma", "opt-", "bloom", "falcon", "pythia", "deepseek",
                                         "phi-", "mpt-", "olmo", "starcoder", "codellama", "bert", "t5-"};

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }


struct SizeToken {
  size_t begin = 0, end = 0;
  double billions = 0;
  bool moe = false;  // "8x7B": experts x size, no total stated
};

// Size tokens: a number directly followed by B/b or M/m and then a non-alphanumeric
// character (or the end), not preceded by a letter other than a separator.
std::vector<SizeToken> SizeTokens(std::string_view s) {
  std::vector<SizeToken> out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) continue;
    if (i > 0 && (IsAlnum(s[i - 1]) || s[i - 1] == '.') && !(s[i - 1] == 'x' || s[i - 1] == 'X')) continue;
    size_t j = i;
    while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '.' || s[j] == '_')) ++j;
    if (j >= s.size()) break;
    char unit = static_cast<char>(std::tolower(static_cast<unsigned char>(s[j])));
    bool boundary = j + 1 >= s.size() || !IsAlnum(s[j + 1]);
    if ((unit == 'b' || unit == 'm') && boundary) {
      std::string digits;
      for (size_t k = i; k < j; ++k) {
        if (s[k] != '_') digits.push_back(s[k]);
      }
      SizeToken t;
      t.begin = i;
      t.end = j + 1;
      t.billions = std::strtod(digits.c_str(), nullptr) / (unit == 'm' ? 1000.0 : 1.0);
      t.moe = i > 0 && (s[i - 1] == 'x' || s[i - 1] == 'X') && i > 1 && std::isdigit(static_cast<unsigned char>(s[i - 2]));
      if (t.billions > 0) out.push_back(t);
    }
    i = j;
  }
  return out;
}

}  // namespace

std::span<const ModelArch> ModelTable() { return kTable; }

std::optional<double> SizeFromName(std::string_view name) {
  std::vector<SizeToken> tokens = SizeTokens(name);
  if (tokens.empty() || tokens.front().moe) return std::nullopt;
  return tokens.front().billions;
}

const ModelArch* FindModel(std::string_view name) {
  std::string n = NormalizeName(name);
  std::vector<SizeToken> tokens = SizeTokens(name);
  double size = 0;
  if (!tokens.empty()) size = tokens.front().moe ? 0 : tokens.front().billions;
  if (!tokens.empty() && tokens.front().moe) {  // 8x7B: experts × expert size
    std::string_view s = name.substr(0, tokens.front().begin);
    size_t k = s.size() >= 2 ? s.size() - 2 : 0;
    while (k > 0 && std::isdigit(static_cast<unsigned char>(s[k - 1]))) --k;
    size = std::strtod(std::string(s.substr(k)).c_str(), nullptr) * tokens.front().billions;
  }
  for (const FamilyWord& f : kFamilies) {
    if (n.find(f.word) == std::string::npos) continue;
    if (std::string_view(f.family) == "gpt2" && size == 0) size = 0.124;  // "gpt2" names the small model
    for (const ModelArch& m : kTable) {
      if (std::string_view(m.family) == f.family && std::fabs(m.size_b - size) <= 0.02 * m.size_b) return &m;
    }
    return nullptr;
  }
  return nullptr;
}

std::optional<std::string> FindModelMention(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  size_t best = std::string::npos;
  for (const char* w : kMentionWords) {
    size_t p = 0;
    while ((p = lower.find(w, p)) != std::string::npos) {
      bool word_start = p == 0 || !IsAlnum(lower[p - 1]);
      size_t eg = lower.rfind("e.g.", p);
      bool alternative = eg != std::string::npos && p - eg <= 8;
      if (word_start && !alternative) {
        best = std::min(best, p);
        break;
      }
      ++p;
    }
  }
  if (best == std::string::npos) return std::nullopt;
  // Extend over the name and the size token that follows within a few characters.
  size_t end = best;
  while (end < text.size() && (IsAlnum(text[end]) || text[end] == '-' || text[end] == '.' || text[end] == '_')) ++end;
  std::string_view tail = text.substr(end, 12);
  std::vector<SizeToken> sizes = SizeTokens(tail);
  if (SizeTokens(text.substr(best, end - best)).empty() && !sizes.empty()) {
    size_t close = end + sizes.front().end;
    if (close < text.size() && text[close] == ')' && tail.find('(') < sizes.front().begin) ++close;
    end = close;
  }
  while (end > best && (text[end - 1] == '.' || text[end - 1] == '-' || text[end - 1] == '_')) --end;
  return std::string(text.substr(best, end - best));
}

double FormulaParamsBillion(double layers, double hidden, double vocab) {
  return (12.0 * layers * hidden * hidden + vocab * hidden) / 1e9;
}

}  // namespace orrery::semantic
