// An evaluation suite: the datasets one checkpoint is evaluated on, read from a CSV with the
// columns of ../shared/corpora/eval-suite/datasets.csv (docs/formats/eval-suite.md).
//
//   name,examples,task_type,max_out_len,few_shot,source      (required: all but source)
//   candidates,prompt_tokens,metric                           (optional overrides)
//
// Every failure is located ("suite.csv:7:12: field 'examples': expected ..., got ...").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace orrery::eval {

// How OpenCompass runs the dataset (its inferencer).
enum class TaskType : uint8_t {
  kGeneration,     // GenInferencer: generates up to max_out_len tokens per example
  kPerplexity,     // PPLInferencer: one forward pass per candidate answer
  kLoglikelihood,  // LLInferencer: log-likelihood of each continuation
};
std::string_view TaskTypeName(TaskType t);

// What computing the dataset's metric costs (CPU side).
enum class MetricKind : uint8_t {
  kMatch,  // answer extraction + comparison, BLEU/ROUGE: milliseconds per example
  kCode,   // program execution against unit tests (HumanEval, MBPP)
  kJudge,  // a judge model scores each answer (seconds per example)
};
std::string_view MetricKindName(MetricKind m);

struct Dataset {
  std::string name;
  std::optional<uint64_t> examples;       // empty when the suite does not know the count
  TaskType task = TaskType::kGeneration;
  std::optional<uint32_t> max_out_len;    // generation limit; empty = the model config's default
  uint32_t few_shot = 0;
  std::string source;
  std::optional<uint32_t> candidates;     // scoring tasks: candidate answers per example
  std::optional<uint32_t> prompt_tokens;  // tokens of one prompt, in-context examples included
  MetricKind metric = MetricKind::kMatch;
  uint64_t line = 0;                      // CSV line (for messages)
};

struct Suite {
  std::string path;
  std::vector<Dataset> datasets;
};

// Parses a suite CSV held in memory; `name` stands for the path in messages.
Result<Suite> ParseSuite(std::string_view text, const std::string& name);
// Reads and parses a suite file.
Result<Suite> LoadSuite(const std::string& path);

// The metric a dataset gets when the CSV has no `metric` column or leaves it empty: program
// execution for the code benchmarks (names matching humaneval* / *mbpp*, case-insensitive),
// answer matching for everything else.
MetricKind DefaultMetric(std::string_view name);

// Keeps the datasets named in `only` (in the suite's order). A name the suite lacks is an
// error naming it (exit 2). An empty list keeps everything.
Result<Suite> SelectDatasets(const Suite& suite, const std::vector<std::string>& only);

// A suite every planner can use: at least one dataset, every dataset with a positive example
// count. Datasets without a count are dropped (and listed in *dropped) when skip_unsized,
// otherwise they are an error naming each one with its line.
Result<Suite> RequireSized(const Suite& suite, bool skip_unsized, std::vector<std::string>* dropped);

// Shell-style match with '*' only (fnmatch as OpenCompass uses it on dataset abbrs).
bool GlobMatch(std::string_view pattern, std::string_view text);

}  // namespace orrery::eval
