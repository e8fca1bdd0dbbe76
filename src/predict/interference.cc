#include "predict/interference.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>

#include "base/io.h"
#include "base/parse.h"
#include "base/rng.h"

namespace orrery {

std::string Workload::Label() const {
  return model + "/" + dataset + "/b" + std::to_string(batch) + (amp ? "/amp" : "/fp32");
}

ColocationTable ColocationTable::FromParts(std::vector<Workload> w, std::vector<ColocPair> p) {
  ColocationTable t;
  t.workloads_ = std::move(w);
  t.pairs_ = std::move(p);
  t.Index();
  return t;
}

void ColocationTable::Index() {
  const size_t n = workloads_.size();
  index_.assign(n * n, -1);
  for (size_t i = 0; i < pairs_.size(); ++i) {
    index_[pairs_[i].a * n + pairs_[i].b] = static_cast<int32_t>(i);
    index_[pairs_[i].b * n + pairs_[i].a] = static_cast<int32_t>(i);
  }
}

Result<ColocationTable> ColocationTable::Load(const std::string& path) {
  ORR_ASSIGN_OR_RETURN(auto reader, LineReader::Open(path));
  static const char* kCols[] = {"",          "model1", "dataset1", "gpu_num1", "batchsize1", "amp1",
                                "speed1",    "model2", "dataset2", "gpu_num2", "batchsize2", "amp2",
                                "speed2",    "gpu_util", "gmem_util", "gmem"};
  ColocationTable t;
  std::map<std::tuple<std::string, std::string, int64_t, bool>, uint16_t> ids;
  std::vector<Field> f;
  std::vector<std::string> scratch;
  std::string_view line;
  uint64_t lineno = 0;
  while (reader->Next(&line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    uint32_t bad = 0;
    if (!SplitLine(line, ',', &f, &scratch, &bad))
      return MakeError(FormatPos({path, lineno, bad}) + ": unterminated quote");
    if (lineno == 1) {
      if (f.size() != 16) return MakeError(path + ":1:1: expected the 16-column colocate_info.csv header, got " +
                                           Quote(line));
      for (size_t i = 1; i < 16; ++i)
        if (f[i].text != kCols[i])
          return FieldError({path, 1, f[i].col}, "header", std::string("column '") + kCols[i] + "'", f[i].text);
      continue;
    }
    if (f.size() != 16)
      return MakeError(FormatPos({path, lineno, 1}) + ": expected 16 fields, got " + std::to_string(f.size()));
    auto num = [&](size_t i, double lo, double hi, double* out) -> Status {
      if (!ParseF64(f[i].text, out) || !(*out >= lo && *out <= hi))
        return FieldError({path, lineno, f[i].col}, kCols[i],
                          "a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]", f[i].text);
      return Status::Ok();
    };
    uint16_t w[2];
    double speed[2];
    for (int s = 0; s < 2; ++s) {
      size_t b = 1 + 6 * s;
      double gpus = 0, batch = 0, amp = 0;
      ORR_RETURN_IF_ERROR(num(b + 2, 1, 1, &gpus));
      ORR_RETURN_IF_ERROR(num(b + 3, 1, 65535, &batch));
      ORR_RETURN_IF_ERROR(num(b + 4, 0, 1, &amp));
      ORR_RETURN_IF_ERROR(num(b + 5, 0.01, 10, &speed[s]));
      if (f[b].text.empty()) return FieldError({path, lineno, f[b].col}, kCols[b], "a model name", f[b].text);
      auto key = std::make_tuple(std::string(f[b].text), std::string(f[b + 1].text), static_cast<int64_t>(batch),
                                 amp != 0);
      auto it = ids.find(key);
      if (it == ids.end()) {
        if (t.workloads_.size() >= 255) return MakeError(path + ": more than 255 workloads");
        Workload wl;
        wl.model = std::get<0>(key);
        wl.dataset = std::get<1>(key);
        wl.batch = static_cast<uint16_t>(batch);
        wl.amp = amp != 0;
        it = ids.emplace(key, static_cast<uint16_t>(t.workloads_.size())).first;
        t.workloads_.push_back(wl);
      }
      w[s] = it->second;
    }
    double gu = 0, gmu = 0, gm = 0;
    ORR_RETURN_IF_ERROR(num(13, 0, 100, &gu));
    ORR_RETURN_IF_ERROR(num(14, 0, 100, &gmu));
    ORR_RETURN_IF_ERROR(num(15, 0, 1 << 20, &gm));
    ColocPair p;
    p.a = w[0];
    p.b = w[1];
    p.speed_a = static_cast<float>(speed[0]);
    p.speed_b = static_cast<float>(speed[1]);
    p.gpu_util = static_cast<float>(gu);
    p.gmem_util = static_cast<float>(gmu);
    p.gmem = static_cast<float>(gm);
    t.pairs_.push_back(p);
  }
  if (lineno == 0) return MakeError(path + ": empty file");
  if (t.pairs_.empty()) return MakeError(path + ": no co-location pairs");
  t.Index();
  return t;
}

namespace {

// Solves (A + ridge I) x = b in place (Gaussian elimination with partial pivoting).
std::vector<double> SolveRidge(std::vector<double> a, std::vector<double> b, size_t n, double ridge) {
  for (size_t i = 0; i < n; ++i) a[i * n + i] += ridge;
  for (size_t c = 0; c < n; ++c) {
    size_t piv = c;
    for (size_t r = c + 1; r < n; ++r)
      if (std::abs(a[r * n + c]) > std::abs(a[piv * n + c])) piv = r;
    if (piv != c) {
      for (size_t k = 0; k < n; ++k) std::swap(a[c * n + k], a[piv * n + k]);
      std::swap(b[c], b[piv]);
    }
    double d = a[c * n + c];
    if (std::abs(d) < 1e-12) continue;
    for (size_t r = c + 1; r < n; ++r) {
      double m = a[r * n + c] / d;
      if (m == 0) continue;
      for (size_t k = c; k < n; ++k) a[r * n + k] -= m * a[c * n + k];
      b[r] -= m * b[c];
    }
  }
  std::vector<double> x(n, 0);
  for (size_t c = n; c-- > 0;) {
    double s = b[c];
    for (size_t k = c + 1; k < n; ++k) s -= a[c * n + k] * x[k];
    x[c] = std::abs(a[c * n + c]) < 1e-12 ? 0 : s / a[c * n + c];
  }
  return x;
}

}  // namespace

void DeriveProfiles(ColocationTable* table, const std::vector<size_t>& rows) {
  auto& ws = table->workloads();
  const size_t n = ws.size();
  std::vector<double> ata(n * n, 0);
  std::vector<uint32_t> seen(n, 0);
  std::vector<double> atb[3] = {std::vector<double>(n, 0), std::vector<double>(n, 0), std::vector<double>(n, 0)};
  double mean[3] = {0, 0, 0};
  for (size_t r : rows) {
    const ColocPair& p = table->pairs()[r];
    ata[p.a * n + p.a] += 1;
    ata[p.b * n + p.b] += 1;
    ata[p.a * n + p.b] += 1;
    ata[p.b * n + p.a] += 1;
    ++seen[p.a];
    ++seen[p.b];
    const double y[3] = {p.gpu_util, p.gmem_util, p.gmem};
    for (int k = 0; k < 3; ++k) {
      atb[k][p.a] += y[k];
      atb[k][p.b] += y[k];
      mean[k] += y[k] / 2;
    }
  }
  for (double& m : mean) m = rows.empty() ? 0 : m / static_cast<double>(rows.size());
  for (int k = 0; k < 3; ++k) {
    std::vector<double> x = SolveRidge(ata, atb[k], n, 1e-3);
    for (size_t i = 0; i < n; ++i) {
      double v = seen[i] ? x[i] : mean[k];
      if (k < 2) v = std::clamp(v, 0.0, 100.0);
      else v = std::max(v, 0.0);
      float fv = static_cast<float>(v);
      if (k == 0) ws[i].gpu_util = fv;
      else if (k == 1) ws[i].gmem_util = fv;
      else ws[i].gmem = fv;
    }
  }
}

const std::vector<std::string>& InterferenceModel::FeatureNames() {
  static const std::vector<std::string> k = {
      "self_gpu_util", "self_gmem_util", "self_gmem", "self_amp", "self_batch",
      "other_gpu_util", "other_gmem_util", "other_gmem", "other_amp", "other_batch",
      "sum_gpu_util", "sum_gmem_util"};
  return k;
}

std::vector<float> InterferenceModel::Features(const Workload& s, const Workload& o) {
  return {s.gpu_util, s.gmem_util, s.gmem, s.amp ? 1.f : 0.f, static_cast<float>(s.batch),
          o.gpu_util, o.gmem_util, o.gmem, o.amp ? 1.f : 0.f, static_cast<float>(o.batch),
          s.gpu_util + o.gpu_util, s.gmem_util + o.gmem_util};
}

#define ORR_XGB_CALL(call)                                                                    \
  do {                                                                                        \
    if ((call) != 0) return MakeError(std::string("xgboost: ") + #call + ": " + XGBGetLastError()); \
  } while (0)

Result<InterferenceModel> InterferenceModel::Fit(const ColocationTable& table, const std::vector<size_t>& rows,
                                                 Options o) {
  const size_t nf = FeatureNames().size();
  const auto& ws = table.workloads();
  std::vector<float> x, y;
  x.reserve(rows.size() * 2 * nf);
  for (size_t r : rows) {
    const ColocPair& p = table.pairs()[r];
    auto fa = Features(ws[p.a], ws[p.b]);
    auto fb = Features(ws[p.b], ws[p.a]);
    x.insert(x.end(), fa.begin(), fa.end());
    y.push_back(p.speed_a);
    x.insert(x.end(), fb.begin(), fb.end());
    y.push_back(p.speed_b);
  }
  if (y.empty()) return MakeError("interference model: no training pairs");
  DMatrixHandle dm = nullptr;
  ORR_XGB_CALL(XGDMatrixCreateFromMat(x.data(), y.size(), nf, std::numeric_limits<float>::quiet_NaN(), &dm));
  std::unique_ptr<void, int (*)(DMatrixHandle)> dm_guard(dm, XGDMatrixFree);
  ORR_XGB_CALL(XGDMatrixSetFloatInfo(dm, "label", y.data(), y.size()));
  BoosterHandle b = nullptr;
  ORR_XGB_CALL(XGBoosterCreate(&dm, 1, &b));
  std::unique_ptr<void, int (*)(BoosterHandle)> b_guard(b, XGBoosterFree);
  const std::pair<const char*, std::string> params[] = {
      {"verbosity", "0"},           {"nthread", "1"},
      {"seed", "0"},                {"objective", "reg:squarederror"},
      {"tree_method", "hist"},      {"max_depth", std::to_string(o.max_depth)},
      {"eta", std::to_string(o.eta)}, {"min_child_weight", "2"},
      {"subsample", "1"},           {"colsample_bytree", "1"},
  };
  for (const auto& [k, v] : params) ORR_XGB_CALL(XGBoosterSetParam(b, k, v.c_str()));
  for (int it = 0; it < o.rounds; ++it) ORR_XGB_CALL(XGBoosterUpdateOneIter(b, it, dm));
  // Tabulate every ordered workload pair.
  const size_t n = ws.size();
  std::vector<float> all;
  all.reserve(n * n * nf);
  for (size_t a = 0; a < n; ++a)
    for (size_t c = 0; c < n; ++c) {
      auto fa = Features(ws[a], ws[c]);
      all.insert(all.end(), fa.begin(), fa.end());
    }
  DMatrixHandle pm = nullptr;
  ORR_XGB_CALL(XGDMatrixCreateFromMat(all.data(), n * n, nf, std::numeric_limits<float>::quiet_NaN(), &pm));
  std::unique_ptr<void, int (*)(DMatrixHandle)> pm_guard(pm, XGDMatrixFree);
  bst_ulong len = 0;
  const float* out = nullptr;
  ORR_XGB_CALL(XGBoosterPredict(b, pm, 0, 0, 0, &len, &out));
  if (len != n * n) return MakeError("interference model: xgboost returned " + std::to_string(len) + " predictions");
  InterferenceModel m;
  m.n_ = n;
  m.speed_.assign(out, out + len);
  return m;
}

Result<CvReport> CrossValidate(const ColocationTable& table, int folds, uint64_t seed, InterferenceModel::Options o,
                               double limit) {
  const size_t np = table.pairs().size();
  if (folds < 2 || static_cast<size_t>(folds) > np) return MakeError("cross-validation: need 2 ≤ folds ≤ pairs");
  std::vector<size_t> perm(np);
  std::iota(perm.begin(), perm.end(), 0);
  Rng rng(seed, "interference-cv");
  for (size_t i = np; i > 1; --i) std::swap(perm[i - 1], perm[rng.Below(i)]);
  CvReport rep;
  rep.folds = folds;
  rep.pairs = np;
  rep.limit = limit;
  double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
  size_t agree = 0, false_accept = 0;
  for (int k = 0; k < folds; ++k) {
    std::vector<size_t> train, test;
    for (size_t i = 0; i < np; ++i) (static_cast<int>(i % folds) == k ? test : train).push_back(perm[i]);
    ColocationTable t = table;  // profiles from the training folds only
    DeriveProfiles(&t, train);
    ORR_ASSIGN_OR_RETURN(InterferenceModel m, InterferenceModel::Fit(t, train, o));
    double mean = 0;
    for (size_t r : train) mean += (t.pairs()[r].speed_a + t.pairs()[r].speed_b) / 2.0;
    mean /= static_cast<double>(train.size());
    for (size_t r : test) {
      const ColocPair& p = t.pairs()[r];
      const double pred[2] = {m.Speed(p.a, p.b), m.Speed(p.b, p.a)};
      const double meas[2] = {p.speed_a, p.speed_b};
      for (int s = 0; s < 2; ++s) {
        double e = std::abs(pred[s] - meas[s]);
        rep.mae += e;
        rep.rmse += e * e;
        rep.mape += e / meas[s];
        rep.base_mae += std::abs(mean - meas[s]);
        rep.base_mape += std::abs(mean - meas[s]) / meas[s];
        sx += pred[s];
        sy += meas[s];
        sxx += pred[s] * pred[s];
        syy += meas[s] * meas[s];
        sxy += pred[s] * meas[s];
        ++rep.predictions;
      }
      bool ok_pred = std::min(pred[0], pred[1]) >= limit, ok_meas = std::min(meas[0], meas[1]) >= limit;
      agree += ok_pred == ok_meas;
      false_accept += ok_pred && !ok_meas;
    }
  }
  const double n = static_cast<double>(rep.predictions);
  rep.mae /= n;
  rep.rmse = std::sqrt(rep.rmse / n);
  rep.mape = 100 * rep.mape / n;
  rep.base_mae /= n;
  rep.base_mape = 100 * rep.base_mape / n;
  double cov = sxy / n - (sx / n) * (sy / n), vx = sxx / n - (sx / n) * (sx / n), vy = syy / n - (sy / n) * (sy / n);
  rep.corr = (vx > 0 && vy > 0) ? cov / std::sqrt(vx * vy) : 0;
  rep.decision_accuracy = static_cast<double>(agree) / static_cast<double>(np);
  rep.false_accept = static_cast<double>(false_accept) / static_cast<double>(np);
  return rep;
}

float ColocationContext::PredictedSpeed(uint16_t a, uint16_t b) const {
  return std::clamp(model.Speed(a, b), 0.05f, 1.0f);
}

uint8_t SharingScoreOf(double mean_speed) { return mean_speed < 0.85 ? 2 : (mean_speed < 0.95 ? 1 : 0); }

uint16_t AssignWorkload(uint64_t seed, uint32_t job_id, size_t n) {
  uint64_t x = seed ^ Fnv1a64("colocation-workload") ^ (static_cast<uint64_t>(job_id) * 0x9e3779b97f4a7c15ULL);
  uint64_t r = SplitMix64(x);
  return static_cast<uint16_t>((static_cast<__uint128_t>(r) * n) >> 64);
}

std::string DefaultColocationPath() {
  const std::string rel = "/traces/lucid-colocation/colocate_info.csv";
  if (const char* e = std::getenv("ORRERY_SHARED_DIR"); e && *e) return std::string(e) + rel;
  std::error_code ec;
  if (std::filesystem::exists("../shared" + rel, ec)) return "../shared" + rel;
#ifdef ORRERY_DEFAULT_SHARED_DIR
  if (std::filesystem::exists(std::string(ORRERY_DEFAULT_SHARED_DIR) + rel, ec))
    return std::string(ORRERY_DEFAULT_SHARED_DIR) + rel;
#endif
  return "../shared" + rel;
}

Result<std::shared_ptr<const ColocationContext>> BuildColocationContext(const std::string& path, const Trace* trace,
                                                                        uint64_t seed) {
  auto ctx = std::make_shared<ColocationContext>();
  auto table = ColocationTable::Load(path);
  if (!table.ok())
    return MakeError("GPU sharing needs Lucid's co-location table (set colocation=PATH or ORRERY_SHARED_DIR): " +
                     table.error().message);
  ctx->table = std::move(*table);
  ctx->source = path;
  ctx->seed = seed;
  std::vector<size_t> all(ctx->table.pairs().size());
  std::iota(all.begin(), all.end(), 0);
  DeriveProfiles(&ctx->table, all);
  ORR_ASSIGN_OR_RETURN(ctx->model, InterferenceModel::Fit(ctx->table, all, {}));
  const size_t n = ctx->n();
  ctx->truth.assign(n * n, 1.0f);
  ctx->mean_speed.assign(n, 1.0f);
  ctx->sharing_score.assign(n, 0);
  for (size_t a = 0; a < n; ++a) {
    double sum = 0;
    for (size_t b = 0; b < n; ++b) {
      const uint16_t ua = static_cast<uint16_t>(a), ub = static_cast<uint16_t>(b);
      int32_t p = ctx->table.Find(ua, ub);
      float s;
      if (p >= 0) {
        const ColocPair& cp = ctx->table.pairs()[static_cast<size_t>(p)];
        s = cp.a == ua ? cp.speed_a : cp.speed_b;
        if (cp.a == cp.b) s = std::min(cp.speed_a, cp.speed_b);
      } else {
        s = ctx->model.Speed(ua, ub);
      }
      ctx->truth[a * n + b] = std::clamp(s, 0.05f, 1.0f);
      sum += ctx->PredictedSpeed(ua, ub);
    }
    ctx->mean_speed[a] = static_cast<float>(sum / static_cast<double>(n));
    ctx->sharing_score[a] = SharingScoreOf(ctx->mean_speed[a]);
  }
  if (trace) {
    ctx->job_workload.resize(trace->jobs.size());
    for (size_t i = 0; i < trace->jobs.size(); ++i)
      ctx->job_workload[i] = static_cast<uint8_t>(AssignWorkload(seed, static_cast<uint32_t>(i), n));
  }
  return std::shared_ptr<const ColocationContext>(std::move(ctx));
}

}  // namespace orrery
