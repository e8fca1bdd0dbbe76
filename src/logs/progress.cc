#include "logs/progress.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "base/parse.h"

namespace orrery::logs {

std::string_view AnomalyKindName(AnomalyKind k) {
  switch (k) {
    case AnomalyKind::kLossNan: return "loss_nan";
    case AnomalyKind::kLossSpike: return "loss_spike";
  }
  return "";
}

namespace {

bool HasDigit(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<double> ParseNumber(std::string_view t) {
  if (!t.empty() && t[0] == '+') t.remove_prefix(1);
  double v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || p != t.data() + t.size()) return std::nullopt;
  return v;
}

bool ContainsNoCase(std::string_view s, std::string_view lower_needle) {
  if (s.size() < lower_needle.size()) return false;
  for (size_t i = 0; i + lower_needle.size() <= s.size(); ++i) {
    size_t j = 0;
    while (j < lower_needle.size() && (s[i + j] | 0x20) == lower_needle[j]) ++j;
    if (j == lower_needle.size()) return true;
  }
  return false;
}

// Framework named by a (non-progress) line: launchers and loggers print their name.
Framework HintOf(std::string_view line) {
  if (ContainsNoCase(line, "axolotl")) return Framework::kAxolotl;
  if (ContainsNoCase(line, "nemo")) return Framework::kNemo;
  if (ContainsNoCase(line, "lightning")) return Framework::kLightning;
  return Framework::kUnknown;
}

// Worth asking the oracle about: a line the plan learner found nothing in, but which speaks
// of steps, epochs, losses or rates (most unparsed lines are routine: NCCL INFO, loading).
bool LooksLikeProgress(std::string_view line) {
  for (std::string_view w : {"step", "iter", "epoch", "loss", "it/s", "s/it", "%||", "batch"})
    if (ContainsNoCase(line, w)) return true;
  return false;
}

// Lines without digits are searched for a framework's name only this early in a log.
constexpr uint64_t kHintLines = 2000;

Framework Combine(Framework detected, Framework hint) {
  if (detected == Framework::kHfTrainer && hint == Framework::kAxolotl) return hint;
  if (detected == Framework::kLightning && hint == Framework::kNemo) return hint;
  if (detected == Framework::kUnknown) return hint;
  return detected;
}

void Ema(std::optional<double>* ema, double x, double alpha) {
  *ema = ema->has_value() ? alpha * x + (1 - alpha) * **ema : x;
}

}  // namespace

std::optional<Time> LineTimestamp(std::string_view line) {
  std::string_view head = line.substr(0, 64);
  for (size_t i = 0; i + 19 <= head.size(); ++i) {
    if (head[i] != '2' || head[i + 4] != '-' || head[i + 7] != '-') continue;
    int64_t t = 0;
    if (ParseDateTime(line.substr(i, 19), &t)) return t;
  }
  return std::nullopt;
}

struct ProgressTracker::Values {
  std::optional<double> step, total, bar_step, bar_total, epoch, loss, seconds, bar_seconds;
  int step_rank = 99, total_rank = 99, loss_rank = 99;
  bool step_rounded = false;  // the named step was printed in exponent form ("global_step=3.2e+4")
};

ProgressTracker::ProgressTracker(TrackerOptions opts, FormatOracle* oracle) : opts_(opts), oracle_(oracle) {}

void ProgressTracker::Feed(std::string_view bytes, Time now) {
  split_.Feed(bytes, [&](std::string_view line) { OnLine(line, now); });
}

void ProgressTracker::Finish(Time now) {
  split_.Finish([&](std::string_view line) { OnLine(line, now); });
}

// Brace depth change of a line (quotes not tracked: keys and values of printed dicts rarely hold braces).
static int BraceDelta(std::string_view s) {
  int d = 0;
  for (char c : s) d += c == '{' ? 1 : c == '}' ? -1 : 0;
  return d;
}

void ProgressTracker::OnLine(std::string_view raw, Time now) {
  ++lines_;
  // A dict printed over several lines (pprint.pformat, json.dumps(indent=2)) is one record:
  // its lines are joined and read as one line when its braces close.
  {
    std::string_view t = raw;
    while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
    // A dict's next line starts with a key, a value or a closing brace; anything else (an
    // unbalanced brace inside a string, a record cut short) ends the record as it is.
    if (!record_.empty() && !(t.empty() || std::strchr("'\"}]{[-0123456789", t.front()) != nullptr)) {
      std::string joined = std::move(record_);
      record_.clear();
      record_depth_ = 0;
      OnTextLine(joined, now);
    }
    if (!record_.empty()) {
      record_ += ' ';
      record_.append(t.data(), t.size());
      record_depth_ += BraceDelta(t);
      ++record_lines_;
      if (record_depth_ <= 0 || record_lines_ > 64 || record_.size() > 16384) {
        std::string joined = std::move(record_);
        record_.clear();
        record_depth_ = 0;
        OnTextLine(joined, now);
      }
      return;
    }
    if (!t.empty() && t.front() == '{' && BraceDelta(t) > 0) {
      record_.assign(t.data(), t.size());
      record_depth_ = BraceDelta(t);
      record_lines_ = 1;
      return;
    }
  }
  OnTextLine(raw, now);
}

void ProgressTracker::OnTextLine(std::string_view raw, Time now) {
  if (!HasDigit(raw)) {  // every progress line has a number; banners ("[axolotl] ...") may name the framework
    if (hint_ == Framework::kUnknown && lines_ <= kHintLines) hint_ = HintOf(raw);
    std::string_view l = CleanLine(raw, &scratch_);
    if (std::vector<std::string> h = TableHeader(l); !h.empty()) {
      table_ = std::move(h);
      table_line_ = lines_;
    }
    return;
  }
  std::string_view line = CleanLine(raw, &scratch_);
  Values row;
  const bool is_row = TableRow(line, &row);
  Mask(line, &masked_);
  DrainMatch m = drain_.Add(masked_);
  if (m.created) {
    Framework h = HintOf(line);
    if (h != Framework::kUnknown) hint_ = h;
  }
  const Plan* plan = PlanFor(m.cluster, m.created);
  if (plan == nullptr) return;
  Apply(*plan, masked_, now, is_row ? &row : nullptr);
}

// A row under a table header: as many cells (or more: a bar may follow the row), the first a
// number ("14<TAB>1.021900", "2  0.318705  0.233912  0.071719  00:50", YOLO's "13/100  3.39G ...").
bool ProgressTracker::TableRow(std::string_view line, Values* v) {
  if (table_.empty()) return false;
  if (lines_ > table_line_ + 1) {  // a table's rows follow its header without a gap
    table_.clear();
    return false;
  }
  std::vector<std::string_view> cells = TableCells(line);
  if (cells.size() < table_.size() || cells.empty() || !(cells[0][0] >= '0' && cells[0][0] <= '9')) {
    table_.clear();
    return false;
  }
  bool any = false;
  for (size_t i = 0; i < table_.size(); ++i) {
    int col = TableColumn(table_[i]);
    if (col < 0) continue;
    std::string_view c = cells[i];
    if (size_t sl = c.find('/'); sl != std::string_view::npos && col != 2) c = c.substr(0, sl);  // "13/100": the 13th
    std::optional<double> x = ParseNumber(c);
    if (!x) continue;
    any = true;
    if (col == 0) v->step = *x, v->step_rank = 1;
    if (col == 1) v->epoch = *x;
    if (col == 2) v->loss = *x, v->loss_rank = 1;
  }
  if (any) table_line_ = lines_;
  else table_.clear();
  return any;
}

const Plan* ProgressTracker::PlanFor(uint32_t cluster, bool created) {
  if (cluster >= plans_.size()) plans_.resize(cluster + 1);
  std::unique_ptr<Plan>& p = plans_[cluster];
  auto fits = [&](const Plan& plan) {
    if (plan.param_count != masked_.params.size()) return false;
    for (const FieldRef& r : plan.refs)
      if (r.token >= masked_.tokens.size() || masked_.tokens[r.token] != r.token_text) return false;
    return true;
  };
  if (p != nullptr && fits(*p)) return p.get();
  Plan learned = LearnPlan(masked_);
  ++plans_learned_;
  if (!learned.progress() && !learned.eval && oracle_ != nullptr && created && LooksLikeProgress(masked_.source)) {
    if (auto o = oracle_->Explain(masked_, drain_.cluster(cluster).Template()); o.has_value()) learned = std::move(*o);
  }
  p = std::make_unique<Plan>(std::move(learned));
  return p.get();
}

void ProgressTracker::Apply(const Plan& plan, const MaskedLine& line, Time now, const Values* table) {
  if (!plan.progress() && (table == nullptr || plan.eval)) return;
  Values v;
  if (table != nullptr) v = *table;
  bool seconds_set = false;
  for (const FieldRef& r : plan.refs) {
    std::optional<double> x = ParseNumber(line.params[r.param].text);
    if (!x) continue;
    double val = r.invert ? (*x > 0 ? r.scale / *x : NAN) : *x * r.scale;
    if (std::isnan(val) && r.field != Field::kLoss) continue;
    switch (r.field) {
      case Field::kStep:
        if (r.rank < v.step_rank) {
          v.step = val;
          v.step_rank = r.rank;
          v.step_rounded = line.params[r.param].text.find_first_of("eE") != std::string_view::npos;
        }
        break;
      case Field::kTotal:
        if (r.rank < v.total_rank) v.total = val, v.total_rank = r.rank;
        break;
      case Field::kEpoch: v.epoch = val; break;
      case Field::kLoss:
        if (r.rank < v.loss_rank) v.loss = val, v.loss_rank = r.rank;
        break;
      case Field::kSeconds:
        // Several durations of one step on a line: the step holds its parts, so the largest.
        if (!seconds_set || val > *v.seconds) v.seconds = val;
        seconds_set = true;
        break;
      case Field::kBarStep: v.bar_step = val; break;
      case Field::kBarTotal: v.bar_total = val; break;
      case Field::kBarSeconds: v.bar_seconds = val; break;
    }
  }
  if (plan.elapsed_rate && !v.seconds && !v.bar_seconds && v.bar_step && *v.bar_step > 0) {
    if (std::optional<double> e = ElapsedBefore(line.source); e && *e > 0) v.bar_seconds = *e / *v.bar_step;
  }
  ++progress_lines_;
  Update(v, plan, now, LineTimestamp(line.source));
  if (!plan.progress()) cur_.reader = "generic:" + std::string(GenericReaderName(GenericReader::kTable));
}

void ProgressTracker::Update(const Values& v, const Plan& plan, Time now, std::optional<Time> stamp) {
  // The step: a named counter, else the bar's. A bar beside a named counter that differs
  // counts batches of the epoch: its total is not the run's.
  std::optional<double> step = v.step ? v.step : v.bar_step;
  // NeMo's bar prints "global_step=3.2e+4" beside the exact count 32040/500150: same counter.
  bool bar_same = v.bar_step && (!v.step || *v.bar_step == *v.step ||
                                 (v.step_rounded && std::fabs(*v.bar_step - *v.step) <= 0.05 * std::fabs(*v.step)));
  if (bar_same) step = v.bar_step;
  std::optional<double> total = v.total;
  if (!total && v.bar_total && bar_same) total = v.bar_total;
  std::optional<int64_t> istep;
  if (step && std::isfinite(*step) && std::fabs(*step) < 9e15) istep = static_cast<int64_t>(std::llround(*step));
  bool new_step = istep && istep != cur_.step;
  // A line without a step of its own adds its total to the reading only right after the
  // reading's own lines (HF Trainer's bar, then its dict): a run banner printed earlier is not
  // the reading's (its total stays the ETA's plan). The epoch of a header ("Epoch 3/10")
  // carries over to the steps printed under it.
  const bool adjacent = new_step || !cur_.step || lines_ <= reading_line_ + 1 || (istep && istep == cur_.step);
  if (new_step) {
    // A new step starts a new reading; the framework and the epoch carry over.
    Reading next;
    next.framework = cur_.framework;
    next.epoch = cur_.epoch;
    cur_ = next;
    cur_.step = istep;
  }
  if (total && std::isfinite(*total) && *total > 0 && *total < 9e15) {
    planned_total_ = static_cast<int64_t>(std::llround(*total));
    if (adjacent) cur_.total_steps = planned_total_;
  }
  if (v.epoch) cur_.epoch = v.epoch;
  reading_line_ = lines_;
  if (v.loss) {
    cur_.loss = v.loss;
    ObserveLoss(*v.loss);
  }
  if (v.seconds) cur_.seconds_per_step = v.seconds;
  else if (v.bar_seconds) cur_.seconds_per_step = v.bar_seconds;
  cur_.reader = ReaderName(plan);
  Framework f = Combine(plan.framework, hint_);
  if (f != Framework::kUnknown) cur_.framework = f;
  ObserveStepTime(v, now, new_step ? stamp : std::nullopt);
  if (new_step) {
    if (now != kNoTime && last_change_now_ != kNoTime && now > last_change_now_)
      Ema(&interval_ema_, static_cast<double>(now - last_change_now_), opts_.ema_alpha);
    if (now != kNoTime) last_change_now_ = now;
    cur_.updated = now;
    last_step_ = istep;
  }
}

void ProgressTracker::ObserveStepTime(const Values& v, Time now, std::optional<Time> stamp) {
  std::optional<double> printed = v.seconds ? v.seconds : v.bar_seconds;
  if (printed && *printed > 0 && std::isfinite(*printed)) Ema(&printed_ema_, *printed, opts_.ema_alpha);
  // Without a printed time: log timestamps between steps, else the caller's clock.
  if (!printed && cur_.step && last_step_ && *cur_.step > *last_step_) {
    double steps = static_cast<double>(*cur_.step - *last_step_);
    if (stamp && last_stamp_ && *stamp >= *last_stamp_) {
      Ema(&derived_ema_, static_cast<double>(*stamp - *last_stamp_) / steps, opts_.ema_alpha);
    } else if (!stamp && now != kNoTime && last_change_now_ != kNoTime && now > last_change_now_) {
      Ema(&derived_ema_, static_cast<double>(now - last_change_now_) / steps, opts_.ema_alpha);
    }
  }
  if (stamp) last_stamp_ = stamp;
}

void ProgressTracker::ObserveLoss(double loss) {
  if (!std::isfinite(loss)) {
    if (anomalies_.size() < opts_.max_anomalies) anomalies_.push_back({AnomalyKind::kLossNan, cur_.step, loss, loss_mean_});
    return;
  }
  if (loss_n_ >= opts_.spike_warmup) {
    double excess = loss - loss_mean_;
    if (excess > opts_.spike_factor * loss_dev_ && loss > loss_mean_ + opts_.spike_min_rel * std::fabs(loss_mean_)) {
      if (anomalies_.size() < opts_.max_anomalies) anomalies_.push_back({AnomalyKind::kLossSpike, cur_.step, loss, loss_mean_});
      return;  // a spike does not move the baseline
    }
  }
  ++loss_n_;
  const double a = loss_n_ < 5 ? 1.0 / static_cast<double>(loss_n_) : 0.1;
  loss_dev_ = loss_n_ == 1 ? 0 : (1 - a) * loss_dev_ + a * std::fabs(loss - loss_mean_);
  loss_mean_ = loss_n_ == 1 ? loss : (1 - a) * loss_mean_ + a * loss;
}

Reading ProgressTracker::latest() const {
  Reading r = cur_;
  r.smoothed_step_s = printed_ema_ ? printed_ema_ : derived_ema_;
  // A total printed elsewhere (a run banner's "total number of steps 372") is the run's total as
  // the corpus labels it (P008), when no line of the step prints one of its own.
  if (!r.total_steps) r.total_steps = planned_total_;
  r.planned_total = r.total_steps;
  std::optional<int64_t> total = r.planned_total;
  if (r.smoothed_step_s && r.step && total && *total >= *r.step)
    r.eta_s = static_cast<double>(*total - *r.step) * *r.smoothed_step_s;
  return r;
}

bool ProgressTracker::Stalled(Time now) const {
  if (now == kNoTime || last_change_now_ == kNoTime || !interval_ema_) return false;
  double limit = std::max(static_cast<double>(opts_.min_hang_s), opts_.hang_factor * *interval_ema_);
  return static_cast<double>(now - last_change_now_) > limit;
}

}  // namespace orrery::logs
