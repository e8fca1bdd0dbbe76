#include "signals/log_signals.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "base/parse.h"
#include "semantic/payload.h"

namespace orrery::signals {

namespace {

// The smallest k of 1, 2, 5, 10, 20, 50, ... with k × step_s ≥ min_line_s (at most the run).
int64_t LogEvery(double step_s, double min_line_s, int64_t steps) {
  static constexpr int64_t kMant[] = {1, 2, 5};
  for (int64_t scale = 1; scale <= 1000000; scale *= 10)
    for (int64_t m : kMant)
      if (static_cast<double>(m * scale) * step_s >= min_line_s || m * scale >= steps) return std::min(m * scale, std::max<int64_t>(1, steps));
  return std::max<int64_t>(1, steps);
}

Error BadOption(const std::string& key, const std::string& what, const std::string& got) {
  return MakeError("tracker option '" + key + "': expected " + what + ", got \"" + got + "\"");
}

}  // namespace

Result<LogSignalOptions> ParseLogSignalOptions(const std::string& spec) {
  LogSignalOptions o;
  size_t pos = 0;
  while (pos < spec.size()) {
    size_t comma = spec.find(',', pos);
    const std::string item = spec.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? spec.size() : comma + 1;
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) return MakeError("tracker options: expected key=value, got \"" + item + "\"");
    const std::string key = item.substr(0, eq), v = item.substr(eq + 1);
    int64_t n = 0;
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    const bool is_num = !v.empty() && *end == '\0';
    if (key == "interval") {
      if (!ParseI64(v, &n) || n < 1 || n > 86400) return BadOption(key, "seconds in [1, 86400]", v);
      o.interval = n;
    } else if (key == "jitter") {
      if (!is_num || !(x >= 0) || x > 2) return BadOption(key, "a log-normal sigma in [0, 2]", v);
      o.jitter = x;
    } else if (key == "max_lines") {
      if (!ParseI64(v, &n) || n < 1 || n > 100000) return BadOption(key, "an integer in [1, 100000]", v);
      o.max_lines = static_cast<uint32_t>(n);
    } else if (key == "min_line_s") {
      if (!is_num || !(x >= 0) || x > 86400) return BadOption(key, "seconds in [0, 86400]", v);
      o.min_line_s = x;
    } else {
      return MakeError("tracker options: unknown key '" + key + "' (expected interval, jitter, max_lines, min_line_s)");
    }
  }
  return o;
}

int64_t LogTruth::StepsAt(double done_s) const {
  const double s = std::floor((done_s - startup_s) / step_s + 1e-9);
  return std::clamp<int64_t>(static_cast<int64_t>(std::max(0.0, s)), 0, steps);
}

LogTruth TruthOf(const Job& job, uint64_t seed, const LogSignalOptions& o) {
  const semantic::SemanticPayload p = semantic::GeneratePayload(job, seed);
  LogTruth t;
  t.steps = static_cast<int64_t>(std::max<uint64_t>(1, p.steps));
  t.step_s = std::max(1e-6, p.step_s);
  t.startup_s = std::max(0.0, p.planned_s - static_cast<double>(t.steps) * t.step_s);
  t.log_every = LogEvery(t.step_s, o.min_line_s, t.steps);
  return t;
}

void LogSignals::AttemptStarted(uint32_t job, const Job& j, uint16_t attempt, Time, Duration done_s) {
  LogTruth truth = TruthOf(j, seed_, o_);
  auto run = std::make_unique<Run>(Run{truth, Rng(seed_, "signals-log/" + std::to_string(job) + "/" + std::to_string(attempt)),
                                       logs::ProgressTracker(), 0});
  // A resumed attempt prints from the step after its checkpoint.
  run->printed = truth.StepsAt(static_cast<double>(done_s));
  runs_[job] = std::move(run);
}

std::string LogSignals::Line(const Run& run, int64_t step, double ms, Time now) const {
  // Megatron-LM's training log line (megatron/training/training.py, training_log), with the
  // timestamp its launcher scripts prepend.
  const std::time_t when = static_cast<std::time_t>(1704067200 + std::max<Time>(0, now));  // 2024-01-01 + t
  std::tm tm{};
  gmtime_r(&when, &tm);
  const double frac = static_cast<double>(step) / static_cast<double>(run.truth.steps);
  const double loss = 2.0 + 8.0 * std::exp(-6.0 * frac);
  char b[400];
  std::snprintf(b, sizeof b,
                "[%04d-%02d-%02d %02d:%02d:%02d] iteration %8lld/%8lld | consumed samples: %12lld | "
                "elapsed time per iteration (ms): %.1f | learning rate: 3.000E-04 | global batch size: %5d | "
                "lm loss: %.6E | loss scale: 1.0 | grad norm: 1.000 | number of skipped iterations:   0 | "
                "number of nan iterations:   0 |\n",
                tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(step), static_cast<long long>(run.truth.steps),
                static_cast<long long>(step) * 256, ms, 256, loss);
  return b;
}

SignalReading LogSignals::Read(uint32_t job, Time now, Duration done_s) {
  auto it = runs_.find(job);
  if (it == runs_.end()) return {};
  Run& run = *it->second;
  const int64_t reached = run.truth.StepsAt(static_cast<double>(done_s));
  const int64_t k = run.truth.log_every;
  // Lines at the multiples of k (and the last step) in (printed, reached]; only the newest
  // max_lines of them are read (computed directly: no work for the skipped ones).
  steps_.clear();
  const int64_t last_multiple = reached / k * k;
  const int64_t first = std::max((run.printed / k + 1) * k, last_multiple - static_cast<int64_t>(o_.max_lines) * k);
  for (int64_t s = first; s <= reached; s += k) steps_.push_back(s);
  if (reached == run.truth.steps && reached > run.printed && (steps_.empty() || steps_.back() != reached))
    steps_.push_back(reached);
  const size_t skip = steps_.size() > o_.max_lines ? steps_.size() - o_.max_lines : 0;
  buf_.clear();
  for (size_t i = skip; i < steps_.size(); ++i) {
    const double noise = std::exp(o_.jitter * run.rng.Normal() - 0.5 * o_.jitter * o_.jitter);  // mean 1
    buf_ += Line(run, steps_[i], run.truth.step_s * 1000.0 * noise, now);
    ++lines_;
  }
  bytes_ += buf_.size();
  if (!steps_.empty()) run.printed = steps_.back();
  run.tracker.Feed(buf_, now);
  const logs::Reading r = run.tracker.latest();
  SignalReading out;
  if (r.step) out.step = *r.step;
  if (r.planned_total) out.total = *r.planned_total;  // a run banner's total counts here too
  if (r.eta_s) out.eta_s = *r.eta_s;
  return out;
}

}  // namespace orrery::signals
