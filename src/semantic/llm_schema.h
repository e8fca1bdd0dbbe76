// The advisor's LLM fallback (docs/design/semantic.md, "LLM fallback";
// prompt and answer: docs/formats/llm-cache.md): when the rule-based readers cannot read a
// launch config well, the optional LLM backend (llm/client.h, off by default) is asked once
// per distinct config for the schema fields; its answer is validated strictly and merged
// only into the fields the readers did not find, each marked `llm` (origin key
// "llm:<model>", confidence kLlmConfidence). A located field is never overridden.
//
// The rule (NeedsLlm): ask when the readers recognised no framework, or located fewer than
// kLlmMinFields of the 19 schema fields (any provenance, derived ones included).
//
// One question per distinct config: the cache key is the config's normalised text
// (NormaliseConfig) with the model and the prompt template (its hash; the template names its
// version), so the same file under another name, with other line endings or trailing blanks,
// is not asked again. Answers are kept as the model gave them and validated again when used.
// A transport failure or timeout is a warning, never kept: a later process asks again.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "base/result.h"
#include "llm/client.h"
#include "semantic/inspect.h"
#include "semantic/schema.h"

namespace orrery::semantic {

inline constexpr size_t kLlmMinFields = 4;
inline constexpr double kLlmConfidence = 0.3;  // below every rule-based provenance (file name: 0.4)
inline constexpr std::string_view kLlmKind = "config";  // the cache entries' kind

enum class LlmNeed : uint8_t { kNone, kNoFramework, kTooFewFields };
LlmNeed NeedsLlm(const LaunchSchema& s);
std::string_view LlmNeedName(LlmNeed n);  // "", "no framework recognised", "fewer than 4 fields located"

// CR LF and lone CR to LF, trailing blanks of each line and blank lines dropped.
std::string NormaliseConfig(std::string_view text);

// The system prompt (template, with its version) and the user message for one file.
std::string_view SchemaPrompt();
std::string SchemaQuestion(std::string_view file_name, std::string_view normalised, size_t max_bytes);

// A validated answer: a value per field, nullopt where the answer has null (or no key).
using LlmFields = std::array<std::optional<Value>, kNumFields>;

// Validates an answer: a JSON object (a Markdown fence around it is allowed) whose keys are
// schema field names only; each value null or of the field's type and range; and, over the
// answer's values together with the fields `located` has (those win), tp·pp·dp dividing
// nodes·gpus_per_node, micro_batch ≤ global_batch, num_heads dividing hidden_size, and
// params_billion within [0.5·12·L·h², 64·(12·L·h² + 256000·h)] / 1e9 of num_layers L ×
// hidden_size h (dense layers at least; MoE experts and vocabulary at most), each check made
// only when one of its fields comes from the answer. The error is the first violation.
Result<LlmFields> ParseLlmSchema(std::string_view content, const LaunchSchema& located);

// Adds the answer's fields the schema lacks (source `llm:<model>`); the parameter estimate is
// recomputed when the schema had none. Returns the number of fields added.
size_t MergeLlmFields(LaunchSchema* s, const LlmFields& fields, const std::string& model);

enum class LlmOutcome : uint8_t {
  kNotNeeded,  // the readers read it well (NeedsLlm: kNone)
  kMerged,     // a valid answer (asked now or kept from before) was merged
  kRejected,   // the answer was invalid: a warning, nothing merged
  kNoAnswer,   // transport failure or timeout: a warning, nothing merged, nothing kept
  kPending,    // FromCache only: not in the cache; the caller asks (Question) in the background
};

class LlmSchemaFiller {
 public:
  // `client` may be null (FromCache only). `cache` keeps answers (in memory at least).
  LlmSchemaFiller(llm::ChatClient* client, llm::LlmCache* cache, std::string model, size_t max_context_bytes);

  // Synchronous (orrery inspect): the rule, then the cache, else one question.
  LlmOutcome Fill(LaunchSchema* s, const InputFile& file);
  // Never waits (orrery serve): the rule, then the cache; kPending when it must be asked.
  LlmOutcome FromCache(LaunchSchema* s, const InputFile& file);
  // An answer that arrived in the background: kept, then applied as a cached one would be.
  LlmOutcome Answered(LaunchSchema* s, const InputFile& file, const Result<std::string>& answer);

  // What to ask about `file` (for a background asker): its cache key and user message.
  std::string Key(const InputFile& file) const;
  std::string Question(const InputFile& file) const;

  uint64_t calls() const { return calls_; }
  uint64_t cache_hits() const { return hits_; }

 private:
  LlmOutcome Apply(LaunchSchema* s, const std::string& answer);
  LlmOutcome NoAnswer(LaunchSchema* s, const Error& e);

  llm::ChatClient* client_;
  llm::LlmCache* cache_;
  std::string model_;
  size_t max_context_;
  std::set<std::string> failed_;  // keys whose question failed in this process (not asked again here)
  uint64_t calls_ = 0, hits_ = 0;
};

}  // namespace orrery::semantic
