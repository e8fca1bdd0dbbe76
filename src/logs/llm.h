// The log readers' questions to the optional LLM backend (transport, config and cache:
// llm/client.h; off by default). Used
//  * by diagnosis for low-confidence cases: the compressed log goes in, the answer must be a
//    JSON object {category, subtype, retry, suspect_node, evidence} of the output schema;
//    anything else (HTTP error, timeout, not JSON, wrong types, unknown category) falls back
//    to the rules' diagnosis, with the reason in Diagnosis::note;
//  * by the progress tracker once per unknown line format (FormatOracle): the answer maps
//    field names to indices of the line's numbers, validated against the line.
// Answers are cached by a hash of the request: one question per compressed log or template,
// for the life of the process, and across processes in the config's cache_file (LlmCache,
// llm/cache.h). Format of the config: docs/formats/llm-config.md.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/result.h"
#include "llm/client.h"
#include "logs/diagnose.h"
#include "logs/progress.h"

namespace orrery::logs {

// Validates an answer against the diagnosis schema.
Result<Diagnosis> ParseLlmDiagnosis(std::string_view content);

class LlmDiagnoser {
 public:
  // Asks `client` when the rules' confidence is below rules.llm_below; answers are looked up
  // in and added to `cache` when given.
  LlmDiagnoser(const Diagnoser* rules, llm::ChatClient* client, size_t max_context_bytes = 12000, llm::LlmCache* cache = nullptr);
  Diagnosis Diagnose(std::string_view tail);
  uint64_t calls() const { return calls_; }      // questions sent to the endpoint
  uint64_t cache_hits() const { return hits_; }  // answered from this process's or the file's cache

 private:
  Result<std::string> Answer(const std::string& ctx);
  const Diagnoser* rules_;
  llm::ChatClient* client_;
  size_t max_context_;
  llm::LlmCache* persistent_;
  std::unordered_map<uint64_t, Result<Diagnosis>> cache_;
  uint64_t calls_ = 0, hits_ = 0;
};

class LlmFormatOracle final : public FormatOracle {
 public:
  explicit LlmFormatOracle(llm::ChatClient* client, llm::LlmCache* cache = nullptr) : client_(client), persistent_(cache) {}
  std::optional<Plan> Explain(const MaskedLine& line, const std::string& template_text) override;
  uint64_t calls() const { return calls_; }  // questions sent to the endpoint

 private:
  std::optional<std::string> Ask(const MaskedLine& line, const std::string& template_text);
  llm::ChatClient* client_;
  llm::LlmCache* persistent_;
  std::unordered_map<std::string, std::optional<Plan>> cache_;
  uint64_t calls_ = 0;
};

// A plan from the oracle's JSON answer ({"step": 0, "loss": 2, "seconds_per_step": 3,
// "seconds_unit": "ms", ...}: indices into the line's numbers), validated against `line`.
Result<Plan> ParseLlmPlan(std::string_view content, const MaskedLine& line);

}  // namespace orrery::logs
