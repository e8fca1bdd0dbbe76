#include "plan/infer_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <functional>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "base/gpu_names.h"
#include "base/io.h"
#include "base/parse.h"

namespace orrery::plan {

namespace {

constexpr std::array<std::string_view, 8> kColumns = {"model", "tp", "layers", "phase", "batch", "context",
                                                      "verify_tokens", "step_s"};

struct Columns {
  std::array<size_t, kColumns.size()> index{};
  size_t status = SIZE_MAX;
  size_t count = 0;
};

Result<Columns> MapColumns(const std::vector<Field>& header, const SourcePos& pos) {
  Columns c;
  c.count = header.size();
  for (size_t k = 0; k < kColumns.size(); ++k) {
    auto it = std::find_if(header.begin(), header.end(), [&](const Field& f) { return f.text == kColumns[k]; });
    if (it == header.end()) return MakeError(FormatPos(pos) + ": expected a header with column '" + std::string(kColumns[k]) + "'");
    c.index[k] = static_cast<size_t>(it - header.begin());
  }
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i].text == "status") c.status = i;
  }
  return c;
}

Result<int64_t> IntField(const std::vector<Field>& f, size_t i, std::string_view name, SourcePos pos, int64_t lo, int64_t hi) {
  int64_t v = 0;
  pos.col = f[i].col;
  if (!ParseI64(f[i].text, &v) || v < lo || v > hi) return FieldError(pos, name, fmt::format("an integer in [{}, {}]", lo, hi), f[i].text);
  return v;
}

Result<MeasuredInfer> ParseRow(const std::vector<Field>& f, const Columns& c, SourcePos pos) {
  MeasuredInfer m;
  pos.col = f[c.index[0]].col;
  auto shape = ParseDecoder(f[c.index[0]].text);
  if (!shape.ok()) return FieldError(pos, "model", "a decoder preset", f[c.index[0]].text);
  m.shape = shape.value();
  ORR_ASSIGN_OR_RETURN(int64_t tp, IntField(f, c.index[1], "tp", pos, 1, 1024));
  ORR_ASSIGN_OR_RETURN(int64_t layers, IntField(f, c.index[2], "layers", pos, 1, 1000));
  pos.col = f[c.index[3]].col;
  auto phase = ParseInferPhase(f[c.index[3]].text);
  if (!phase.ok()) return FieldError(pos, "phase", "prefill, decode or verify", f[c.index[3]].text);
  ORR_ASSIGN_OR_RETURN(int64_t batch, IntField(f, c.index[4], "batch", pos, 1, 1000000));
  ORR_ASSIGN_OR_RETURN(int64_t context, IntField(f, c.index[5], "context", pos, 0, 10000000));
  ORR_ASSIGN_OR_RETURN(int64_t k, IntField(f, c.index[6], "verify_tokens", pos, 0, 4096));
  double t = 0;
  pos.col = f[c.index[7]].col;
  if (!ParseF64(f[c.index[7]].text, &t) || !(t > 0) || t > 1e6) return FieldError(pos, "step_s", "a positive number of seconds", f[c.index[7]].text);
  m.shape.layers = static_cast<uint32_t>(layers);
  m.config = fmt::format("{}:{}", f[c.index[0]].text, tp);
  m.step = {phase.value(), static_cast<uint32_t>(batch), static_cast<double>(context), static_cast<uint32_t>(k),
            static_cast<uint32_t>(tp)};
  m.step_s = t;
  Status valid = CheckInferStep(m.shape, m.step);
  if (!valid.ok()) return MakeError(FormatPos({pos.file, pos.line, 1}) + ": " + valid.error().message);
  return m;
}

InferErrorRow Summarize(std::string group, const std::vector<double>& errors) {
  InferErrorRow r{std::move(group), errors.size(), 0, 0};
  for (double e : errors) {
    r.mean_abs_rel += e / errors.size();
    r.max_abs_rel = std::max(r.max_abs_rel, e);
  }
  return r;
}

// ---------------------------------------------------------------- the fit

// The fitted constants as an unconstrained vector: efficiencies through a logistic, the rest
// through a logarithm.
struct Param {
  double InferGpu::*field;
  bool fraction;
};
constexpr std::array<Param, 9> kParams = {{{&InferGpu::gemm_compute_eff, true},
                                           {&InferGpu::gemm_half_tokens, false},
                                           {&InferGpu::gemm_memory_eff, true},
                                           {&InferGpu::attn_memory_eff, true},
                                           {&InferGpu::attn_compute_eff, true},
                                           {&InferGpu::elementwise_passes, false},
                                           {&InferGpu::layer_s, false},
                                           {&InferGpu::host_layer_s, false},
                                           {&InferGpu::step_s, false}}};
using Vec = std::array<double, kParams.size()>;

Vec Encode(const InferGpu& g) {
  Vec x{};
  for (size_t i = 0; i < kParams.size(); ++i) {
    const double v = g.*kParams[i].field;
    x[i] = kParams[i].fraction ? std::log(v / (1 - std::min(v, 0.999))) : std::log(v);
  }
  return x;
}

InferGpu Decode(const Vec& x, InferGpu g) {
  for (size_t i = 0; i < kParams.size(); ++i) {
    g.*kParams[i].field = kParams[i].fraction ? 1 / (1 + std::exp(-x[i])) : std::exp(x[i]);
  }
  return g;
}

double Loss(const std::vector<const MeasuredInfer*>& pts, const InferGpu& g) {
  double sum = 0;
  for (const MeasuredInfer* p : pts) {
    const double r = std::log(InferStepTime(p->shape, p->step, g, kProfilerCounting).step_time_s / p->step_s);
    sum += r * r;
  }
  return sum / pts.size();
}

// Nelder–Mead with the standard coefficients (reflection 1, expansion 2, contraction 1/2,
// shrink 1/2) from a simplex of unit steps around x0.
Vec Minimize(const std::function<double(const Vec&)>& f, Vec x0, int iterations) {
  constexpr size_t n = kParams.size();
  std::array<Vec, n + 1> s;
  std::array<double, n + 1> v;
  for (size_t i = 0; i <= n; ++i) {
    s[i] = x0;
    if (i > 0) s[i][i - 1] += 1.0;
    v[i] = f(s[i]);
  }
  auto along = [&](const Vec& c, const Vec& w, double t) {
    Vec r;
    for (size_t k = 0; k < n; ++k) r[k] = c[k] + t * (w[k] - c[k]);
    return r;
  };
  for (int it = 0; it < iterations; ++it) {
    std::array<size_t, n + 1> o;
    for (size_t i = 0; i <= n; ++i) o[i] = i;
    std::sort(o.begin(), o.end(), [&](size_t a, size_t b) { return v[a] < v[b] || (v[a] == v[b] && a < b); });
    Vec c{};
    for (size_t i = 0; i < n; ++i)
      for (size_t k = 0; k < n; ++k) c[k] += s[o[i]][k] / n;
    const size_t worst = o[n];
    const Vec r = along(c, s[worst], -1.0);
    const double fr = f(r);
    if (fr < v[o[0]]) {
      const Vec e = along(c, s[worst], -2.0);
      const double fe = f(e);
      s[worst] = fe < fr ? e : r, v[worst] = std::min(fe, fr);
    } else if (fr < v[o[n - 1]]) {
      s[worst] = r, v[worst] = fr;
    } else {
      const Vec k = along(c, s[worst], 0.5);
      const double fk = f(k);
      if (fk < v[worst]) {
        s[worst] = k, v[worst] = fk;
      } else {
        for (size_t i = 1; i <= n; ++i) s[o[i]] = along(s[o[0]], s[o[i]], 0.5), v[o[i]] = f(s[o[i]]);
      }
    }
  }
  size_t best = 0;
  for (size_t i = 1; i <= n; ++i) best = v[i] < v[best] ? i : best;
  return s[best];
}

Result<std::vector<MeasuredInfer>> ReadRows(LineReader& reader);

}  // namespace

Result<std::vector<MeasuredInfer>> ReadInferSteps(const std::string& path) {
  ORR_ASSIGN_OR_RETURN(std::unique_ptr<LineReader> in, LineReader::Open(path));
  return ReadRows(*in);
}

Result<std::vector<MeasuredInfer>> ParseInferSteps(std::string_view text, const std::string& name) {
  std::unique_ptr<LineReader> in = LineReader::FromString(text, name);
  return ReadRows(*in);
}

namespace {

Result<std::vector<MeasuredInfer>> ReadRows(LineReader& reader) {
  LineReader* in = &reader;
  const std::string& path = reader.path();
  std::vector<MeasuredInfer> out;
  std::vector<Field> f;
  std::vector<std::string> scratch;
  std::optional<Columns> cols;
  std::string_view line;
  while (in->Next(&line)) {
    SourcePos pos{path, in->line_number(), 1};
    if (line.empty() || line.front() == '#') continue;
    uint32_t bad = 0;
    if (!SplitLine(line, ',', &f, &scratch, &bad)) return MakeError(FormatPos({path, pos.line, bad}) + ": unterminated quote");
    if (!cols) {
      ORR_ASSIGN_OR_RETURN(Columns c, MapColumns(f, pos));
      cols = c;
      continue;
    }
    if (f.size() != cols->count) return MakeError(FormatPos(pos) + fmt::format(": expected {} fields, found {}", cols->count, f.size()));
    if (cols->status != SIZE_MAX && f[cols->status].text != "ok") continue;
    ORR_ASSIGN_OR_RETURN(MeasuredInfer m, ParseRow(f, *cols, pos));
    out.push_back(std::move(m));
  }
  if (!in->error().empty()) return MakeError(path + ": " + in->error());
  if (!cols) return MakeError(path + ":1:1: expected a header line, found none");
  return out;
}

}  // namespace

InferValidation ValidateInfer(const std::vector<MeasuredInfer>& points, const InferGpu& g) {
  InferValidation v;
  std::map<std::string, std::vector<double>> phase;
  std::vector<std::pair<std::string, std::vector<double>>> config;
  std::vector<double> all;
  for (const MeasuredInfer& p : points) {
    const double e = std::abs(InferStepTime(p.shape, p.step, g, kProfilerCounting).step_time_s / p.step_s - 1);
    phase[std::string(InferPhaseName(p.step.phase))].push_back(e);
    if (config.empty() || config.back().first != p.config) {
      auto it = std::find_if(config.begin(), config.end(), [&](const auto& c) { return c.first == p.config; });
      if (it == config.end()) config.emplace_back(p.config, std::vector<double>{});
    }
    std::find_if(config.begin(), config.end(), [&](const auto& c) { return c.first == p.config; })->second.push_back(e);
    all.push_back(e);
  }
  for (InferPhase ph : {InferPhase::kPrefill, InferPhase::kDecode, InferPhase::kVerify}) {
    auto it = phase.find(std::string(InferPhaseName(ph)));
    if (it != phase.end()) v.by_phase.push_back(Summarize(it->first, it->second));
  }
  for (auto& [name, errors] : config) v.by_config.push_back(Summarize(name, errors));
  v.all = Summarize("all", all);
  return v;
}

Result<InferFit> FitInfer(const std::vector<MeasuredInfer>& points, const std::vector<std::string>& hold_out,
                          const InferGpu& start) {
  for (const std::string& h : hold_out) {
    if (std::none_of(points.begin(), points.end(), [&](const MeasuredInfer& p) { return p.config == h; })) {
      return MakeError(fmt::format("hold-out {}: no measured point of that configuration (expected model:tp)", Quote(h)));
    }
  }
  std::vector<MeasuredInfer> fit, held;
  for (const MeasuredInfer& p : points) {
    (std::find(hold_out.begin(), hold_out.end(), p.config) != hold_out.end() ? held : fit).push_back(p);
  }
  if (fit.empty()) return MakeError("fit: every measured point is held out; nothing to fit on");
  std::vector<const MeasuredInfer*> ptrs;
  for (const MeasuredInfer& p : fit) ptrs.push_back(&p);
  auto loss = [&](const Vec& x) { return Loss(ptrs, Decode(x, start)); };
  Vec x = Encode(start);
  for (int round = 0; round < 6; ++round) x = Minimize(loss, x, 1500);  // restarts escape a collapsed simplex
  InferFit out;
  out.gpu = Decode(x, start);
  out.fitted = ValidateInfer(fit, out.gpu);
  out.held_out = ValidateInfer(held, out.gpu);
  return out;
}

Result<InferGpu> InferDatasheet(std::string_view gpu) {
  const std::string_view canonical = CanonicalGpu(gpu);
  InferGpu g;
  g.peak_flops = 989.4e12;  // dense BF16 of the SXM parts (NVIDIA H100 and H200 datasheets)
  g.link_bytes_per_s = 340e9;  // all-reduce bus bandwidth of 1 GiB inside an H100 node, 329–361 GB/s
  g.allreduce_s = 10e-6;       // assumed small-message all-reduce inside an NVLink node; not measured
  if (canonical == "h100") {
    g.name = "h100", g.memory_bytes = 81559.0 * 1024 * 1024, g.hbm_bytes_per_s = 3.35e12;
  } else if (canonical == "h200") {
    g.name = "h200", g.memory_bytes = 143771.0 * 1024 * 1024, g.hbm_bytes_per_s = 4.8e12;
  } else {
    return MakeError(fmt::format("gpu {}: expected h100 or h200", Quote(gpu)));
  }
  return g;
}

}  // namespace orrery::plan
