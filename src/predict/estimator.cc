#include "predict/estimator.h"

#include <algorithm>
#include <cmath>

#include "base/io.h"
#include "base/parse.h"
#include "base/rng.h"

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
  return MakeError("unknown estimator '" + spec + "' (expected oracle, walltime, noisy-oracle or table:<csv>)");
}

}  // namespace orrery
