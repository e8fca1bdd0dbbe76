// Metric tracker: streaming extraction of training progress from a job's output.
//
// Every line goes through the Drain miner (drain.h). The first time a template is seen its
// *plan* is learned: which of the line's numbers is the step, the total, the epoch, the
// loss, the time per step (and in which unit), from the words printed before and after each
// number (progress_plan.cc). Later lines of the template are parsed with that plan alone
// (checked against the tokens it was learned on; relearned if they differ). A FormatOracle
// (the optional LLM backend) is asked for templates that look like progress but yield no
// plan. Design: docs/design/logs.md.
//
// The live daemon feeds tailed bytes with its clock (Feed), asks latest() for the reading
// and Stalled(now) for hang detection; the simulator does the same with simulated time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/time.h"
#include "logs/drain.h"
#include "logs/lines.h"

namespace orrery::logs {

enum class Framework {
  kUnknown,
  kMegatron,
  kNemo,
  kTorchtitan,
  kFairseq,
  kVerl,
  kDeepSpeed,
  kNanoGpt,
  kHfTrainer,
  kAxolotl,
  kLightning,
  kMmengine,    // MMEngine and mmcv runners (MMDetection, MMSegmentation, ...)
  kDetectron2,
  kTimm,
  kKeras,
};
std::string_view FrameworkName(Framework f);  // the corpus names: "megatron-lm", "hf_trainer", ...

// Which generic reader found a line's values when no framework rule recognised the line
// (progress_plan.cc): a tqdm bar's counter, a rich bar's counter, a bracketed or leading
// `N/M` counter, a JSON object's keys, or `key=value` / `key: value` words.
enum class GenericReader { kKeyValue, kJson, kTqdm, kRich, kCounter, kTable };
std::string_view GenericReaderName(GenericReader g);  // "tqdm", "rich", "counter", "json", "keyvalue"

// What one number on a progress line means.
enum class Field { kStep, kTotal, kEpoch, kLoss, kSeconds, kBarStep, kBarTotal, kBarSeconds };

struct FieldRef {
  Field field = Field::kStep;
  uint32_t param = 0;       // index among the line's masked numbers
  double scale = 1;         // value × scale (ms -> s: 0.001)
  bool invert = false;      // value is a rate (it/s, updates/s): seconds = scale / value
  int rank = 0;             // among several losses or times: lower wins
  uint32_t token = 0;       // token the number is in ...
  std::string token_text;   // ... and that token's masked text, to check a line fits
};

struct Plan {
  std::vector<FieldRef> refs;
  size_t param_count = 0;
  Framework framework = Framework::kUnknown;  // the framework rule that recognised the line
  GenericReader generic = GenericReader::kKeyValue;  // the reader when no framework rule did
  bool eval = false;       // an evaluation/validation line: never the training progress
  bool from_oracle = false;
  bool elapsed_rate = false;  // a bar without a rate: seconds per step = its elapsed time / its count
  bool progress() const { return !eval && !refs.empty(); }
};

// Learns the plan of a line from its words (progress_plan.cc).
Plan LearnPlan(const MaskedLine& line);
// A tqdm bar's elapsed time ("[00:41<00:10]" -> 41), if the line shows one.
std::optional<double> ElapsedBefore(std::string_view line);
// Column names of a table header ("Step<TAB>Training Loss", "epoch  train_loss  valid_loss"):
// cells split at tabs or runs of two spaces; empty unless one names a step, epoch or loss.
std::vector<std::string> TableHeader(std::string_view line);
// The meaning of a table column: 0 step, 1 epoch, 2 loss; -1 none.
int TableColumn(std::string_view name);
// Cells of a line split like a header's.
std::vector<std::string_view> TableCells(std::string_view line);

// Optional helper for formats the built-in plan learner does not understand (the LLM
// backend implements it). Returns a plan, or nullopt to leave the template unparsed.
class FormatOracle {
 public:
  virtual ~FormatOracle() = default;
  virtual std::optional<Plan> Explain(const MaskedLine& line, const std::string& template_text) = 0;
};

enum class AnomalyKind { kLossNan, kLossSpike };
std::string_view AnomalyKindName(AnomalyKind k);

struct Anomaly {
  AnomalyKind kind = AnomalyKind::kLossNan;
  std::optional<int64_t> step;
  double loss = 0;
  double baseline = 0;  // smoothed loss before it
};

// The reader that answered, as printed: "rule:<framework>", "generic:<reader>", "llm", or "".
std::string ReaderName(const Plan& plan);

struct Reading {
  Framework framework = Framework::kUnknown;
  std::string reader;  // ReaderName of the last progress line's plan
  std::optional<int64_t> step, total_steps;  // total_steps: from the step's line or an adjacent one
  std::optional<int64_t> planned_total;      // the last total printed anywhere (a run banner's): the ETA's
  std::optional<double> epoch, loss;
  std::optional<double> seconds_per_step;  // as printed (or following from one line alone)
  std::optional<double> smoothed_step_s;   // EMA of printed times, else of time between steps
  std::optional<double> eta_s;             // (total - step) × smoothed_step_s
  Time updated = kNoTime;                  // caller's clock when the step last changed
};

struct TrackerOptions {
  double ema_alpha = 0.3;        // step-time smoothing
  double hang_factor = 10;       // stalled after hang_factor × the usual interval ...
  Duration min_hang_s = 300;     // ... and at least this long
  double spike_factor = 4;       // loss > mean + spike_factor × mean deviation ...
  double spike_min_rel = 0.25;   // ... and > mean × (1 + spike_min_rel)
  size_t spike_warmup = 10;      // losses seen before spikes are judged
  size_t max_anomalies = 100;
};

class ProgressTracker {
 public:
  explicit ProgressTracker(TrackerOptions opts = {}, FormatOracle* oracle = nullptr);
  // Feeds bytes of the log in any chunking; `now` is the caller's clock (kNoTime: unknown).
  void Feed(std::string_view bytes, Time now);
  // End of input: the last line without a newline counts too.
  void Finish(Time now);
  Reading latest() const;
  // No new step for hang_factor × the usual interval between steps (caller's clock).
  bool Stalled(Time now) const;
  std::optional<double> usual_interval_s() const { return interval_ema_; }
  const std::vector<Anomaly>& anomalies() const { return anomalies_; }
  uint64_t lines() const { return lines_; }
  uint64_t progress_lines() const { return progress_lines_; }
  uint64_t plans_learned() const { return plans_learned_; }
  size_t templates() const { return drain_.cluster_count(); }

 private:
  struct Values;
  void OnLine(std::string_view raw, Time now);
  void OnTextLine(std::string_view line, Time now);
  bool TableRow(std::string_view line, Values* v);
  const Plan* PlanFor(uint32_t cluster, bool created);
  void Apply(const Plan& plan, const MaskedLine& line, Time now, const Values* table);
  void Update(const Values& v, const Plan& plan, Time now, std::optional<Time> stamp);
  void ObserveLoss(double loss);
  void ObserveStepTime(const Values& v, Time now, std::optional<Time> stamp);

  TrackerOptions opts_;
  FormatOracle* oracle_;
  LineSplitter split_;
  Drain drain_;
  MaskedLine masked_;
  std::string scratch_;
  std::vector<std::unique_ptr<Plan>> plans_;  // by cluster id
  Framework hint_ = Framework::kUnknown;      // from non-progress lines ("axolotl", "NeMo")
  Reading cur_;
  std::optional<double> printed_ema_, derived_ema_, interval_ema_;
  std::optional<int64_t> last_step_;
  std::optional<Time> last_stamp_;   // log timestamp of the last step change
  Time last_change_now_ = kNoTime;
  double loss_mean_ = 0, loss_dev_ = 0;
  size_t loss_n_ = 0;
  std::vector<Anomaly> anomalies_;
  uint64_t lines_ = 0, progress_lines_ = 0, plans_learned_ = 0;
  uint64_t reading_line_ = 0;                 // the last line that gave the current reading a value
  std::optional<int64_t> planned_total_;      // the last total printed anywhere (for the ETA)
  std::string record_;                        // a dict printed over several lines, so far
  int record_depth_ = 0;
  size_t record_lines_ = 0;
  std::vector<std::string> table_;            // the column names of the table being printed
  uint64_t table_line_ = 0;                   // its header's or last row's line
};

// A leading "YYYY-MM-DD HH:MM:SS" in the first 64 bytes of a line (log timestamps).
std::optional<Time> LineTimestamp(std::string_view line);

}  // namespace orrery::logs
