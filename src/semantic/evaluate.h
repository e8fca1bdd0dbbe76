// Field-by-field accuracy of the advisor's reader on a labelled corpus of the
// shared/corpora/launch-configs schema (`orrery inspect evaluate FILE.jsonl`).
//
// Scoring (docs/validation/signals.md, S1): every record with a
// stored text is inspected under the base name of its source path (the file name a user's
// file would have) and each of the 19 fields scores 1 when the prediction equals the label
// (both unknown counts as equal: a reader that invents a value is wrong). Records whose
// text is not stored (programs) are counted and skipped. Equality: numbers within 1e-6
// relative; time_limit verbatim; framework on the name before any parenthesis, ignoring case
// and punctuation; model_name strictly (same normalization) and leniently (one normalized
// name contains the other), both reported, the lenient one in the field table.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "semantic/schema.h"

namespace orrery::semantic {

struct LabelledRecord {
  std::string id;
  std::string kind;
  std::string file_name;  // base name of the source path ("train_gpt2.py")
  std::string text;       // empty when the corpus does not store the file
  std::array<std::optional<Value>, kNumFields> labels;  // nullopt = "" (not stated)
};

// One JSON object per line; errors are located ("file:line:col: ...").
Result<std::vector<LabelledRecord>> ParseLabelledCorpus(std::string_view jsonl, const std::string& file);

// Whether a prediction matches a label under the rules above (lenient for model_name).
bool ValuesMatch(FieldId f, const std::optional<Value>& predicted, const std::optional<Value>& label, bool strict);

struct FieldAccuracy {
  size_t correct = 0;       // of the evaluated records
  size_t stated = 0;        // records whose label is not empty
  size_t stated_correct = 0;
  size_t invented = 0;      // a value where the label is empty
};

struct RecordResult {
  std::string id;
  std::vector<std::string> misses;  // "field: predicted X, label Y"
};

struct CorpusAccuracy {
  size_t records = 0, evaluated = 0, skipped_no_text = 0;
  std::array<FieldAccuracy, kNumFields> fields{};
  size_t model_name_strict = 0;
  std::vector<RecordResult> per_record;
  // Records the LLM fallback's rule would send to an LLM (semantic::NeedsLlm): "id (reason)".
  std::vector<std::string> llm_triggers;
  double overall() const;  // mean over fields and evaluated records
};

CorpusAccuracy EvaluateCorpus(const std::vector<LabelledRecord>& records);

// The per-field table printed by `orrery inspect evaluate`.
std::string FormatAccuracy(const CorpusAccuracy& a, bool per_record);

}  // namespace orrery::semantic
