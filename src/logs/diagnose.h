// Failure diagnosis from a job's output: compress the log with the Drain miner (drop
// routine lines, keep the error context, as in Acme's log agent), then classify the kept
// lines with the rules (rules.h). Pure functions of their input: the live daemon calls
// Diagnose() on the tail it read, `orrery diagnose` on files.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "logs/rules.h"

namespace orrery::logs {

struct KeptLine {
  std::string text;
  std::string lower;      // text in ASCII lowercase (case-blind rules)
  uint64_t line_no = 0;   // 1-based, in the input
  uint32_t cluster = 0;   // Drain template id
  uint64_t repeats = 1;   // lines of this template in the whole input
};

struct CompressedLog {
  std::vector<KeptLine> lines;  // in input order
  uint64_t total_lines = 0;
  uint64_t templates = 0;
  uint64_t truncated_lines = 0;  // lines cut at kMaxLineBytes
  // The kept lines, one per line, "(xN)" after a template seen N > 1 times; at most
  // max_bytes, the end kept (the error is at the end).
  std::string Text(size_t max_bytes = 16384) const;
};

CompressedLog Compress(std::string_view text, const CompressOptions& opts);

enum class DiagnosisSource { kRules, kLlm, kNone };
std::string_view DiagnosisSourceName(DiagnosisSource s);

struct Diagnosis {
  Category category = Category::kUnknown;
  std::string subtype = "unknown";
  bool retry = false;
  std::string suspect_node;           // "" when the log names none; several comma-separated
  std::vector<std::string> evidence;  // the deciding lines
  std::string rule;                   // the deciding rule ("" for kNone / kLlm)
  double confidence = 0;
  DiagnosisSource source = DiagnosisSource::kNone;
  std::string note;                   // e.g. why the LLM's answer was not used
};

class Diagnoser {
 public:
  explicit Diagnoser(RuleSet rules = DefaultRules());
  Diagnosis Diagnose(std::string_view tail) const;
  Diagnosis Classify(const CompressedLog& log) const;
  const RuleSet& rules() const { return rules_; }

 private:
  struct Match {
    size_t rule;
    size_t line;  // index into CompressedLog::lines
  };
  std::vector<Match> Matches(const CompressedLog& log) const;
  bool LineMatches(const Rule& r, const CompressedLog& log, size_t i) const;
  size_t Decide(const CompressedLog& log, const std::vector<Match>& m) const;
  Diagnosis Explain(const CompressedLog& log, const std::vector<Match>& m, size_t winner) const;

  RuleSet rules_;
};

}  // namespace orrery::logs
