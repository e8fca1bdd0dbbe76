// Scores the log readers on labelled JSON Lines files of the corpus schema
// (../shared/corpora/README.md): failure-logs records (text, category, subtype, retry,
// suspect_node) and progress-logs records (text, framework, step, total_steps, epoch,
// loss, seconds_per_step; "" = not shown). `orrery diagnose evaluate` / `orrery progress
// evaluate` print these; the corpus tests assert floors on them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/result.h"
#include "logs/diagnose.h"

namespace orrery::logs {

struct Tally {
  uint64_t right = 0, total = 0;
  double rate() const { return total ? static_cast<double>(right) / static_cast<double>(total) : 0.0; }
};

// Which records of a file count: those named in `only` (all when empty), less those in
// `except`. The hold-out figures score the held-out ids alone (docs/validation/logs.md).
struct RecordFilter {
  std::vector<std::string> only, except;
  bool Keep(const std::string& id) const;
};

struct DiagnoseMiss {
  std::string id, field, want, got;
};

struct DiagnoseScores {
  Tally category, subtype, suspect;
  std::map<std::string, Tally> by_category;  // keyed by the true category
  std::map<std::string, Tally> by_subtype;   // keyed by the true subtype
  // Category answers: `unknown` given for a record labelled otherwise (withheld), and a
  // category other than the label and other than `unknown` (confidently wrong).
  uint64_t withheld = 0, confident_wrong = 0;
  // Retry decision, "yes" = positive.
  uint64_t tp = 0, fp = 0, fn = 0, tn = 0;
  double retry_precision() const { return tp + fp ? static_cast<double>(tp) / static_cast<double>(tp + fp) : 0.0; }
  double retry_recall() const { return tp + fn ? static_cast<double>(tp) / static_cast<double>(tp + fn) : 0.0; }
  std::vector<DiagnoseMiss> misses;
};

// Runs `diagnose(text)` on every record of `path`. Errors name file:line.
template <class F>
Result<DiagnoseScores> EvaluateDiagnosis(const std::string& path, F&& diagnose, const RecordFilter& filter = {});

struct ProgressScores {
  // One tally per field: right when both are empty or both equal (relative 1e-6; 1 % for
  // seconds_per_step, whose printed values are rounded).
  std::map<std::string, Tally> fields;
  std::vector<DiagnoseMiss> misses;
};
Result<ProgressScores> EvaluateProgress(const std::string& path, const RecordFilter& filter = {});

// Formats scores as the text table the CLI prints, or as JSON.
std::string FormatDiagnoseScores(const DiagnoseScores& s, bool json);
std::string FormatProgressScores(const ProgressScores& s, bool json);

// Implementation detail of EvaluateDiagnosis: one labelled failure record.
struct FailureRecord {
  std::string id, text, category, subtype, suspect;
  bool retry = false;
};
Result<std::vector<FailureRecord>> ReadFailureRecords(const std::string& path);
void ScoreDiagnosis(const FailureRecord& rec, const Diagnosis& d, DiagnoseScores* s);

template <class F>
Result<DiagnoseScores> EvaluateDiagnosis(const std::string& path, F&& diagnose, const RecordFilter& filter) {
  ORR_ASSIGN_OR_RETURN(std::vector<FailureRecord> recs, ReadFailureRecords(path));
  DiagnoseScores s;
  for (const FailureRecord& r : recs)
    if (filter.Keep(r.id)) ScoreDiagnosis(r, diagnose(r.text), &s);
  return s;
}

}  // namespace orrery::logs
