#include "plan/validate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "base/parse.h"

namespace orrery::plan {

namespace {

struct Columns {
  std::map<std::string, size_t> index;
  Result<std::string_view> Get(const std::vector<Field>& f, const char* name, const SourcePos& pos) const {
    auto it = index.find(name);
    if (it == index.end() || it->second >= f.size()) {
      return MakeError(FormatPos(pos) + ": missing column '" + name + "'");
    }
    return f[it->second].text;
  }
};

Result<int64_t> IntField(const Columns& c, const std::vector<Field>& f, const char* name, SourcePos pos) {
  ORR_ASSIGN_OR_RETURN(std::string_view v, c.Get(f, name, pos));
  int64_t out = 0;
  pos.col = f[c.index.at(name)].col;
  if (!ParseI64(v, &out) || out < 0) return FieldError(pos, name, "a non-negative integer", v);
  return out;
}

Result<double> FloatField(const Columns& c, const std::vector<Field>& f, const char* name, SourcePos pos) {
  ORR_ASSIGN_OR_RETURN(std::string_view v, c.Get(f, name, pos));
  double out = 0;
  pos.col = f[c.index.at(name)].col;
  if (!ParseF64(v, &out) || !(out > 0)) return FieldError(pos, name, "a positive number", v);
  return out;
}

Result<MeasuredStep> ParseRow(const Columns& c, const std::vector<Field>& f, const SourcePos& pos) {
  MeasuredStep m;
  m.line = static_cast<int>(pos.line);
  ORR_ASSIGN_OR_RETURN(std::string_view id, c.Get(f, "id", pos));
  m.id = std::string(id);
  ORR_ASSIGN_OR_RETURN(std::string_view st, c.Get(f, "strategy", pos));
  m.strategy = std::string(st);
  ORR_ASSIGN_OR_RETURN(std::string_view model, c.Get(f, "model", pos));
  m.model = std::string(model);
  ORR_ASSIGN_OR_RETURN(int64_t gpus, IntField(c, f, "gpus", pos));
  ORR_ASSIGN_OR_RETURN(int64_t h, IntField(c, f, "h", pos));
  ORR_ASSIGN_OR_RETURN(int64_t L, IntField(c, f, "L", pos));
  ORR_ASSIGN_OR_RETURN(int64_t heads, IntField(c, f, "heads", pos));
  ORR_ASSIGN_OR_RETURN(m.seq, IntField(c, f, "s", pos));
  ORR_ASSIGN_OR_RETURN(int64_t b, IntField(c, f, "b", pos));
  ORR_ASSIGN_OR_RETURN(int64_t ck, IntField(c, f, "ckpt", pos));
  m.gpus = static_cast<int>(gpus), m.hidden = static_cast<int>(h), m.layers = static_cast<int>(L);
  m.heads = static_cast<int>(heads), m.micro_batch = static_cast<int>(b), m.ckpt = ck != 0;
  ORR_ASSIGN_OR_RETURN(std::string_view status, c.Get(f, "status", pos));
  if (status == "ok") {
    ORR_ASSIGN_OR_RETURN(m.t_median_s, FloatField(c, f, "t_median_s", pos));
    ORR_ASSIGN_OR_RETURN(m.peak_alloc_gib, FloatField(c, f, "peak_alloc_net_gib", pos));
  }
  return m;
}

}  // namespace

Result<std::vector<MeasuredStep>> ParseCalibrationCsv(std::string_view text, std::string_view file) {
  std::vector<MeasuredStep> out;
  std::istringstream in{std::string(text)};
  std::string line;
  Columns cols;
  std::vector<Field> fields;
  std::vector<std::string> scratch;
  for (uint64_t lineno = 1; std::getline(in, line); ++lineno) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    uint32_t bad = 0;
    SourcePos pos{file, lineno, 1};
    if (!SplitLine(line, ',', &fields, &scratch, &bad)) {
      pos.col = bad;
      return MakeError(FormatPos(pos) + ": unterminated quote");
    }
    if (cols.index.empty()) {
      for (size_t i = 0; i < fields.size(); ++i) cols.index[std::string(fields[i].text)] = i;
      continue;
    }
    ORR_ASSIGN_OR_RETURN(std::string_view status, cols.Get(fields, "status", pos));
    if (status != "ok" && status != "oom") continue;
    ORR_ASSIGN_OR_RETURN(MeasuredStep m, ParseRow(cols, fields, pos));
    out.push_back(std::move(m));
  }
  if (out.empty()) return MakeError(std::string(file) + ": no measured rows (status ok or oom)");
  return out;
}

Regime RegimeOf(const MeasuredStep& m) {
  const bool small = m.hidden <= 2048 && m.layers <= 24;
  return small && m.seq * m.micro_batch <= 2048 ? Regime::kHostBound : Regime::kGpuBound;
}

Split SplitOf(const MeasuredStep& m) { return m.model == "1.3B" ? Split::kFit : Split::kHeldOut; }

ErrorStats ValidationReport::Stats(Split split, std::optional<Regime> regime) const {
  ErrorStats s;
  for (const ValidationRow& r : rows) {
    if (r.split != split || (regime && r.regime != *regime)) continue;
    ++s.n;
    s.mean_time += r.err_time, s.mean_mem += r.err_mem;
    s.max_time = std::max(s.max_time, r.err_time), s.max_mem = std::max(s.max_mem, r.err_mem);
  }
  if (s.n > 0) s.mean_time /= s.n, s.mean_mem /= s.n;
  return s;
}

Result<ValidationReport> Validate(const std::vector<MeasuredStep>& rows, const GpuProfile& gpu) {
  ValidationReport rep;
  for (const MeasuredStep& m : rows) {
    Workload w;
    w.model = GptModel{m.model, m.layers, m.hidden, m.heads, 32000, 4 * m.hidden};
    w.seq = m.seq;
    w.micro_batch = m.micro_batch;
    ORR_ASSIGN_OR_RETURN(ParallelPlan p, ParseStrategy(m.strategy, m.gpus));
    p.recompute = m.ckpt ? Recompute::kFull : Recompute::kNone;
    Result<StepEstimate> e = EstimateStep(w, p, gpu, std::max(m.gpus, gpu.gpus_per_node));
    if (!e.ok()) return e.error().With(fmt::format("row {} ({})", m.line, m.id));
    if (m.t_median_s == 0) {
      ++rep.oom_rows;
      if (!e->fits) ++rep.oom_predicted;
      continue;
    }
    ValidationRow r;
    r.measured = m;
    r.regime = RegimeOf(m);
    r.split = SplitOf(m);
    r.pred_step_s = e->time.step_s;
    r.pred_peak_gib = e->memory.peak_bytes / double(1ull << 30);
    r.pred_fits = e->fits;
    r.err_time = std::abs(r.pred_step_s - m.t_median_s) / m.t_median_s;
    r.err_mem = std::abs(r.pred_peak_gib - m.peak_alloc_gib) / m.peak_alloc_gib;
    rep.rows.push_back(r);
  }
  return rep;
}

namespace {

bool IsTp(const MeasuredStep& m) { return m.strategy == "tp"; }
bool IsDataParallel(const MeasuredStep& m) { return m.gpus > 1 && !IsTp(m) && m.strategy != "tp_mega"; }

// Mean relative step-time error of `rows` under `gpu` (only rows with a measured time).
Result<double> MeanTimeError(const std::vector<MeasuredStep>& rows, const GpuProfile& gpu) {
  if (rows.empty()) return 0.0;
  ORR_ASSIGN_OR_RETURN(ValidationReport rep, Validate(rows, gpu));
  double sum = 0;
  for (const ValidationRow& r : rep.rows) sum += r.err_time;
  return rep.rows.empty() ? 0.0 : sum / static_cast<double>(rep.rows.size());
}

// The grid value minimising the error of `rows` when `field` of the constants takes it (the
// smallest on ties).
Result<std::pair<double, double>> FitOne(const std::vector<MeasuredStep>& rows, GpuProfile gpu,
                                         double ModelConstants::*field, const std::vector<double>& grid) {
  std::pair<double, double> best{gpu.constants.*field, 0};
  bool first = true;
  for (double v : grid) {
    gpu.constants.*field = v;
    ORR_ASSIGN_OR_RETURN(double e, MeanTimeError(rows, gpu));
    if (first || e < best.second) best = {v, e}, first = false;
  }
  return best;
}

}  // namespace

std::vector<double> SlowdownGrid() {
  std::vector<double> g;
  for (int i = 0; i <= 40; ++i) g.push_back(0.025 * i);  // 0 .. 1
  return g;
}

std::vector<double> DtensorFactorGrid() {
  std::vector<double> g;
  for (int i = 2; i <= 60; ++i) g.push_back(0.5 * i);  // 1 .. 30
  return g;
}

Result<LosoReport> LeaveOneSizeOut(const std::vector<MeasuredStep>& rows, const GpuProfile& gpu) {
  std::vector<std::string> sizes;
  for (const MeasuredStep& m : rows) {
    if (std::find(sizes.begin(), sizes.end(), m.model) == sizes.end()) sizes.push_back(m.model);
  }
  LosoReport out;
  sizes.push_back("none");  // the last pass fits on every size and predicts nothing
  for (const std::string& held : sizes) {
    std::vector<MeasuredStep> fit_dp, fit_tp, test;
    for (const MeasuredStep& m : rows) {
      if (m.model == held) {
        test.push_back(m);
        continue;
      }
      if (m.t_median_s == 0 || RegimeOf(m) != Regime::kGpuBound) continue;
      if (IsDataParallel(m)) fit_dp.push_back(m);
      if (IsTp(m)) fit_tp.push_back(m);
    }
    FoldFit f;
    f.held_out = held;
    GpuProfile g = gpu;
    ORR_ASSIGN_OR_RETURN(auto dp, FitOne(fit_dp, g, &ModelConstants::comm_compute_slowdown, SlowdownGrid()));
    ORR_ASSIGN_OR_RETURN(auto tp, FitOne(fit_tp, g, &ModelConstants::dtensor_op_factor, DtensorFactorGrid()));
    f.comm_compute_slowdown = g.constants.comm_compute_slowdown = dp.first;
    f.dtensor_op_factor = g.constants.dtensor_op_factor = tp.first;
    f.fit_error_dp = dp.second, f.fit_error_tp = tp.second;
    if (held == "none") {
      out.all = f;
      break;
    }
    out.folds.push_back(f);
    ORR_ASSIGN_OR_RETURN(ValidationReport rep, Validate(test, g));
    for (ValidationRow& r : rep.rows) {
      r.split = Split::kHeldOut;
      out.held_out.rows.push_back(r);
    }
    out.held_out.oom_rows += rep.oom_rows, out.held_out.oom_predicted += rep.oom_predicted;
  }
  return out;
}

ErrorStats LosoReport::Strategy(std::string_view strategy, std::optional<Regime> regime) const {
  ValidationReport sub;
  for (const ValidationRow& r : held_out.rows) {
    if (strategy.empty() || r.measured.strategy == strategy) sub.rows.push_back(r);
  }
  return sub.Stats(Split::kHeldOut, regime);
}

}  // namespace orrery::plan
