#include "predict/estimator.h"

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
    bool header = true;
    while (reader->Next(&line)) {
      if (header) {
        header = false;
        continue;
      }
      uint32_t bad = 0;
      SourcePos pos{path, reader->line_number(), 1};
      if (!SplitLine(line, ',', &f, &scratch, &bad) || f.size() < 2) {
        return FieldError(pos, "job_id,estimate", "two comma-separated integers", line);
      }
      int64_t id = 0, est = 0;
      if (!ParseI64(f[0].text, &id) || id < 0 || id > 100000000) {
        pos.col = f[0].col;
        return FieldError(pos, "job_id", "a job index", f[0].text);
      }
      if (!ParseI64Lenient(f[1].text, &est)) {
        pos.col = f[1].col;
        return FieldError(pos, "estimate", "an integer number of seconds", f[1].text);
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
