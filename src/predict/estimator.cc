#include "predict/estimator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "base/io.h"
#include "base/parse.h"
#include "base/rng.h"
#include "model/trace.h"
#include "predict/blend.h"
#include "predict/history.h"
#include "predict/user_stats.h"
#include "predict/xgb.h"

namespace orrery {

Duration NoisyOracleEstimator::Estimate(const Job& job, Time) {
  Rng rng(seed_ ^ (0x9e3779b97f4a7c15ULL * (job.id.v + 1)), "noisy-oracle");
  double u = rng.Uniform();
  double lo, hi;
  if (u < 0.1) {
    lo = 0.0, hi = 0.1;
  } else if (u < 0.5) {
    lo = 0.1, hi = 0.5;
  } else if (u < 0.7) {
    lo = 0.5, hi = 1.0;
  } else if (u < 0.9) {
    lo = 1.0, hi = 10.0;
  } else {
    lo = 10.0, hi = 100.0;
  }
  double e = lo + (hi - lo) * rng.Uniform();
  if (rng.Uniform() < 0.5) e = -e;
  return static_cast<Duration>(std::llround(static_cast<double>(job.duration) * (1.0 + e)));
}

Result<std::unique_ptr<DurationEstimator>> MakeEstimator(const std::string& spec, uint64_t seed) {
  return MakeEstimator(spec, seed, nullptr);
}

namespace {

// "name:k=v,k=v" -> options; every key must be consumed (Check()). Options may also be
// separated by ':' ("xgboost:rounds=50:bins=64"), which is how a policy spec passes several
// (its own parameters are separated by ',').
class SpecOptions {
 public:
  static Result<SpecOptions> Parse(const std::string& spec, std::string* name) {
    SpecOptions o;
    o.spec_ = spec;
    size_t colon = spec.find(':');
    *name = spec.substr(0, colon);
    if (colon == std::string::npos) return o;
    std::string_view rest(spec);
    rest.remove_prefix(colon + 1);
    while (!rest.empty()) {
      size_t comma = rest.find_first_of(",:");
      std::string_view kv = rest.substr(0, comma);
      size_t eq = kv.find('=');
      if (eq == std::string_view::npos || eq == 0) {
        return MakeError("estimator '" + spec + "': expected key=value, got '" + std::string(kv) + "'");
      }
      o.kv_.emplace_back(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    return o;
  }
  // Reads a number option; false (with *err) when present but malformed or out of [lo, hi].
  bool Num(const std::string& key, double lo, double hi, double* out, std::string* err) {
    for (auto& [k, v] : kv_) {
      if (k != key) continue;
      used_.push_back(k);
      char* end = nullptr;
      double x = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(x >= lo && x <= hi)) {
        *err = "estimator '" + spec_ + "': " + key + " must be a number in [" + Fmt(lo) + ", " + Fmt(hi) + "], got '" + v + "'";
        return false;
      }
      *out = x;
    }
    return true;
  }
  bool Str(const std::string& key, std::string* out) {
    for (auto& [k, v] : kv_) {
      if (k == key) {
        used_.push_back(k);
        *out = v;
      }
    }
    return true;
  }
  const std::string& spec() const { return spec_; }
  std::string Unused() const {
    for (auto& [k, v] : kv_) {
      if (std::find(used_.begin(), used_.end(), k) == used_.end()) return k;
    }
    return "";
  }

 private:
  static std::string Fmt(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", v);
    return b;
  }
  std::string spec_;
  std::vector<std::pair<std::string, std::string>> kv_;
  std::vector<std::string> used_;
};

// Reads retrain= first: `window` brings its own defaults (XgbEstimator::WindowOptions), which
// the other keys then override.
Result<XgbEstimator::Retrain> RetrainScheme(SpecOptions& so, XgbEstimator::Retrain dflt) {
  static constexpr std::pair<XgbEstimator::Retrain, const char*> kNames[] = {
      {XgbEstimator::Retrain::kFull, "full"},
      {XgbEstimator::Retrain::kWindow, "window"},
      {XgbEstimator::Retrain::kIncremental, "incremental"},
  };
  std::string name;
  for (const auto& [r, n] : kNames)
    if (r == dflt) name = n;
  so.Str("retrain", &name);
  for (const auto& [r, n] : kNames)
    if (name == n) return r;
  return MakeError("estimator '" + so.spec() + "': retrain must be full, window or incremental, got '" + name + "'");
}

Result<XgbEstimator::Options> XgbOptions(SpecOptions& so, uint64_t seed, XgbEstimator::Options o = {}) {
  ORR_ASSIGN_OR_RETURN(o.retrain, RetrainScheme(so, o.retrain));
  if (o.retrain == XgbEstimator::Retrain::kWindow) o = XgbEstimator::WindowOptions(o);
  std::string err;
  double rounds = o.rounds, depth = o.max_depth, eta = o.eta, threads = o.nthread, min_train = o.min_train,
         retrain_jobs = o.retrain_jobs, retrain_days = static_cast<double>(o.retrain_seconds) / 86400.0,
         max_rows = o.max_rows, fallback = static_cast<double>(o.fallback), walltime = 1, bins = o.max_bin;
  if (!so.Num("rounds", 1, 10000, &rounds, &err) || !so.Num("depth", 1, 20, &depth, &err) ||
      !so.Num("eta", 1e-6, 1, &eta, &err) || !so.Num("threads", 1, 256, &threads, &err) ||
      !so.Num("min-train", 1, 1e9, &min_train, &err) || !so.Num("retrain-jobs", 0, 1e9, &retrain_jobs, &err) ||
      !so.Num("retrain-days", 0, 1e6, &retrain_days, &err) || !so.Num("max-rows", 1, 1e9, &max_rows, &err) ||
      !so.Num("fallback", 1, 1e9, &fallback, &err) || !so.Num("walltime", 0, 1, &walltime, &err) ||
      !so.Num("bins", 2, 65536, &bins, &err)) {
    return MakeError(err);
  }
  double update_rounds = o.update_rounds;
  if (!so.Num("update-rounds", 1, 10000, &update_rounds, &err)) return MakeError(err);
  o.update_rounds = static_cast<int>(update_rounds);
  o.use_walltime = walltime >= 0.5;
  o.rounds = static_cast<int>(rounds);
  o.max_depth = static_cast<int>(depth);
  o.eta = eta;
  o.nthread = static_cast<int>(threads);
  o.min_train = static_cast<uint32_t>(min_train);
  o.retrain_jobs = static_cast<uint32_t>(retrain_jobs);
  o.retrain_seconds = static_cast<int64_t>(std::llround(retrain_days * 86400.0));
  o.max_rows = static_cast<uint32_t>(max_rows);
  o.max_bin = static_cast<int>(bins);
  o.fallback = static_cast<Duration>(fallback);
  o.seed = static_cast<int>(seed & 0x7fffffff);
  return o;
}

}  // namespace

namespace {
std::map<std::string, EstimatorBuilder>& Builders() {
  static std::map<std::string, EstimatorBuilder> builders;
  return builders;
}
}  // namespace

void RegisterEstimatorBuilder(const std::string& name, EstimatorBuilder builder) { Builders()[name] = std::move(builder); }

Result<std::unique_ptr<DurationEstimator>> MakeEstimator(const std::string& spec, uint64_t seed, const Trace* trace) {
  const std::string head = spec.substr(0, spec.find(':'));
  if (auto it = Builders().find(head); it != Builders().end()) {
    return it->second(head.size() < spec.size() ? spec.substr(head.size() + 1) : std::string(), seed, trace);
  }
  if ((spec.rfind("table:", 0) != 0 && spec.find(':') != std::string::npos) || spec == "history" ||
      spec == "user-stats" || spec == "xgboost" || spec == "blend" || spec == "ga2m") {
    std::string name;
    ORR_ASSIGN_OR_RETURN(SpecOptions so, SpecOptions::Parse(spec, &name));
    std::string err;
    std::unique_ptr<DurationEstimator> out;
    if (name == "history") {
      if (!trace) return MakeError("estimator 'history' needs the trace (job names)");
      double fallback = 3600;
      if (!so.Num("fallback", 1, 1e9, &fallback, &err)) return MakeError(err);
      out.reset(new HeliosHistoryEstimator(trace, static_cast<Duration>(fallback)));
    } else if (name == "user-stats") {
      UserStatsEstimator::Options o;
      std::string stat = "median";
      double k = o.k, ewma = o.ewma_alpha, by_name = 0, fallback = static_cast<double>(o.fallback);
      so.Str("stat", &stat);
      if (!so.Num("k", 1, 1e6, &k, &err) || !so.Num("ewma", 1e-6, 1, &ewma, &err) ||
          !so.Num("name", 0, 1, &by_name, &err) || !so.Num("fallback", 1, 1e9, &fallback, &err)) {
        return MakeError(err);
      }
      if (stat == "mean") {
        o.stat = UserStatsEstimator::Stat::kMean;
      } else if (stat == "median") {
        o.stat = UserStatsEstimator::Stat::kMedian;
      } else if (stat == "ewma") {
        o.stat = UserStatsEstimator::Stat::kEwma;
      } else {
        return MakeError("estimator '" + spec + "': stat must be mean, median or ewma, got '" + stat + "'");
      }
      o.k = static_cast<uint32_t>(k);
      o.ewma_alpha = ewma;
      o.by_name = by_name >= 0.5;
      o.fallback = static_cast<Duration>(fallback);
      out.reset(new UserStatsEstimator(o));
    } else if (name == "xgboost") {
      ORR_ASSIGN_OR_RETURN(XgbEstimator::Options o, XgbOptions(so, seed));
      out.reset(new XgbEstimator(trace, o));
    } else if (name == "ga2m") {
      ORR_ASSIGN_OR_RETURN(XgbEstimator::Options o, XgbOptions(so, seed, XgbEstimator::Ga2mOptions({})));
      if (o.max_depth > 2) return MakeError("estimator '" + spec + "': ga2m needs depth <= 2 (pairwise terms at most)");
      out.reset(new XgbEstimator(trace, o));
    } else if (name == "blend") {
      if (!trace) return MakeError("estimator 'blend' needs the trace (job names)");
      double alpha = 0.1;
      if (!so.Num("alpha", 0, 1, &alpha, &err)) return MakeError(err);
      ORR_ASSIGN_OR_RETURN(XgbEstimator::Options o, XgbOptions(so, seed));
      o.zero_when_untrained = true;
      out.reset(new BlendEstimator(std::make_unique<HeliosHistoryEstimator>(trace, o.fallback),
                                   std::make_unique<XgbEstimator>(trace, o), alpha));
    } else {
      return MakeError("unknown estimator '" + spec +
                       "' (expected oracle, walltime, noisy-oracle, table:<csv>, history, user-stats, xgboost, blend or ga2m)");
    }
    if (std::string k = so.Unused(); !k.empty()) {
      return MakeError("estimator '" + spec + "': unknown option '" + k + "'");
    }
    return out;
  }
  if (spec == "oracle") return std::unique_ptr<DurationEstimator>(new OracleEstimator());
  if (spec == "walltime") return std::unique_ptr<DurationEstimator>(new WalltimeEstimator(3600));
  if (spec == "noisy-oracle") return std::unique_ptr<DurationEstimator>(new NoisyOracleEstimator(seed));
  if (spec.rfind("table:", 0) == 0) {
    std::string path = spec.substr(6);
    ORR_ASSIGN_OR_RETURN(auto reader, LineReader::Open(path));
    std::vector<Duration> table;
    std::string_view line;
    std::vector<Field> f;
    std::vector<std::string> scratch;
    // Header-aware: id column "job_id" or "jobname", value column "estimate" or "priority";
    // otherwise the first two columns.
    size_t id_col = 0, val_col = 1, ncols = 2;
    bool header = true;
    while (reader->Next(&line)) {
      uint32_t bad = 0;
      SourcePos pos{path, reader->line_number(), 1};
      if (!SplitLine(line, ',', &f, &scratch, &bad)) return FieldError(pos, "row", "CSV", line);
      if (header) {
        header = false;
        ncols = f.size();
        for (size_t i = 0; i < f.size(); ++i) {
          if (f[i].text == "job_id" || f[i].text == "jobname") id_col = i;
          if (f[i].text == "estimate" || f[i].text == "priority") val_col = i;
        }
        if (std::max(id_col, val_col) >= ncols)
          return FieldError(pos, "header", "a job id and an estimate column", line);
        continue;
      }
      if (f.size() != ncols) {
        return FieldError(pos, "row", std::to_string(ncols) + " comma-separated fields", line);
      }
      int64_t id = 0, est = 0;
      if (!ParseI64(f[id_col].text, &id) || id < 0 || id > 100000000) {
        pos.col = f[id_col].col;
        return FieldError(pos, "job_id", "a job index in [0, 100000000]", f[id_col].text);
      }
      if (!ParseI64Lenient(f[val_col].text, &est)) {
        pos.col = f[val_col].col;
        return FieldError(pos, "estimate", "an integer number of seconds", f[val_col].text);
      }
      if (table.size() <= static_cast<size_t>(id)) table.resize(id + 1, -1);
      table[id] = est;
    }
    if (!reader->error().empty()) return MakeError(reader->error());
    return std::unique_ptr<DurationEstimator>(new TableEstimator(std::move(table)));
  }
  return MakeError("unknown estimator '" + spec +
                   "' (expected oracle, walltime, noisy-oracle, table:<csv>, history, user-stats, xgboost, blend or ga2m)");
}

}  // namespace orrery
