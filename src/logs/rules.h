// Diagnosis rules: a data file of line patterns (configs/logs/diagnose-rules.toml, embedded as
// the default; docs/formats/diagnose-rules.md). Each rule names the failure it stands for
// (category, subtype, retry), a priority (root causes above their symptoms) and what a line
// must contain. Matching is literal (substring, ASCII case-blind unless case_sensitive) or
// structural (a Python exception line of a named class), never regex: a rule costs a few
// substring searches per kept line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace orrery::logs {

enum class Category { kInfrastructure, kFramework, kScript, kUnknown };
std::string_view CategoryName(Category c);
std::optional<Category> ParseCategory(std::string_view s);  // the three rule categories only

// Where a matched line names the faulty place.
enum class SuspectKind {
  kNone,
  kPci,        // "PCI:0000:9b:00" (NVRM Xid lines)
  kNcclHost,   // "host:pid:tid [dev] NCCL ..." NCCL debug prefix
  kSlurmNode,  // "*** JOB 7 ON node12 CANCELLED", "Node failure on node12", "srun: error: node12: task"
  kStorageServer,  // "(at 10.20.0.12@o2ib)" (Lustre), "nfs: server fs01 not responding"
};
std::optional<SuspectKind> ParseSuspectKind(std::string_view s);
std::string_view SuspectKindName(SuspectKind k);

// Among matches of equal priority: the last line, the first, or the last with Python
// exception chains followed back to their root ("The above exception was the direct cause
// of the following exception", "During handling of the above exception").
enum class TieBreak { kChainRoot, kFirst, kLast };

struct Rule {
  std::string name;
  Category category = Category::kUnknown;
  std::string subtype;
  bool retry = false;
  int priority = 0;
  double confidence = 0.8;
  std::vector<std::string> any;        // the line contains at least one (if non-empty)
  std::vector<std::string> all;        // ... and every one of these
  std::vector<std::string> unless;     // ... and none of these
  std::vector<std::string> exception;  // ... or is a Python exception line of one of these classes ("*": any)
  std::vector<std::string> near;       // one of these occurs in the line or the `window` kept lines before it
  uint32_t window = 0;
  uint32_t min_count = 1;              // matching lines (counting repeats) needed
  bool case_sensitive = false;         // any/all/unless/near compare ASCII case-blind unless set (stored lowercase)
  SuspectKind suspect = SuspectKind::kNone;
  std::string why;                     // the reasoning, for people (and --explain)
  uint32_t line = 0;                   // where it was declared
};

// Log compression: per Drain template the first keep_first lines and the last one are kept,
// and the last tail_lines lines of the log verbatim (the final error block whole, even where
// its lines' templates repeat: interleaved ranks, frames of the same file).
struct CompressOptions {
  uint32_t keep_first = 2;
  uint32_t tail_lines = 100;
};

struct RuleSet {
  std::vector<Rule> rules;
  TieBreak tie_break = TieBreak::kChainRoot;
  CompressOptions compress;
  double llm_below = 0.6;       // ask the LLM backend (when configured) below this confidence
  double unknown_below = 0;     // below this confidence the category is withheld: "unknown"
  std::string source;           // file name, or "<embedded>"
};

Result<RuleSet> ParseRules(std::string_view text, const std::string& file);
Result<RuleSet> LoadRules(const std::string& path);
// The embedded configs/logs/diagnose-rules.toml (parsed once).
const RuleSet& DefaultRules();
// `extra`'s rules replace those of `base` with the same name and are added otherwise.
RuleSet MergeRules(RuleSet base, const RuleSet& extra);

// The class name of a Python exception line ("KeyError: 'x'", "[rank1]: torch.cuda.
// OutOfMemoryError: CUDA out of memory" -> "OutOfMemoryError"), or "" when it is none.
std::string_view PythonException(std::string_view line);
// ASCII lowercase copy (how case-blind rules and lines are compared).
std::string AsciiLower(std::string_view s);
// The suspect named on `line`, or "".
std::string ExtractSuspect(SuspectKind kind, std::string_view line);

}  // namespace orrery::logs
