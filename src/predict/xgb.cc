#include "predict/xgb.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "base/rng.h"

namespace orrery {

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

constexpr const char* kFeatureNameList[] = {
    "gpus",              // 0
    "cpus",              // 1
    "nodes",             // 2
    "mem_gib",           // 3
    "log_walltime",      // 4  NaN when no walltime
    "vc",                // 5  VC id (NaN if none)
    "hour",              // 6  hour of day (UTC of the trace epoch)
    "weekday",           // 7
    "user_bucket",       // 8  hash(user) mod 4096
    "user_count",        // 9  finished jobs of the user so far
    "user_mean_log",     // 10
    "user_median_log",   // 11 median of the user's last 20
    "user_last_log",     // 12
    "user_ewma_log",     // 13
    "user_gpus_mean_log",// 14
    "user_gpus_count",   // 15
    "name_mean_log",     // 16 all users' jobs with this exact name
    "name_count",        // 17
    "user_name_mean_log",// 18
    "user_name_count",   // 19
    "user_name_last_log",// 20
    "stem_mean_log",     // 21 name with digits removed
    "user_stem_mean_log",// 22
    "user_stem_count",   // 23
    "token_mean_log",    // 24 first name token
    "token_bucket",      // 25 hash(first token) mod 4096
    "name_len",          // 26
    "name_digits",       // 27
    "vc_mean_log",       // 28
    "log_since_user_submit",  // 29 seconds since the user's previous submission
    "global_mean_log",   // 30
};
const std::vector<std::string> kFeatureNames(std::begin(kFeatureNameList), std::end(kFeatureNameList));

uint64_t Mix(uint64_t a, uint64_t b) {
  uint64_t x = a ^ (b + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
  return SplitMix64(x);
}

float Log(double seconds) { return static_cast<float>(std::log(std::max(seconds, 1.0))); }

std::string ParamStr(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

uint64_t NameStemHash(std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : name) {
    if (c >= '0' && c <= '9') continue;
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

uint64_t NameFirstTokenHash(std::string_view name) {
  size_t i = 0;
  auto alnum = [](unsigned char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80; };
  while (i < name.size() && !alnum(name[i])) ++i;
  size_t j = i;
  while (j < name.size() && alnum(name[j])) ++j;
  return Fnv1a64(name.substr(i, j - i));
}

const std::vector<std::string>& XgbEstimator::FeatureNames() { return kFeatureNames; }

XgbEstimator::Options XgbEstimator::WindowOptions(Options o) {
  // Chosen on measurements (docs/predict.md, docs/benchmarks.md): on generated Venus the
  // ranking is within 0.003 Spearman of full retraining, at a fixed cost per retraining.
  o.retrain = Retrain::kWindow;
  o.max_rows = 10000;
  o.rounds = 30;
  o.eta = 0.15;
  o.max_bin = 32;
  return o;
}

XgbEstimator::Options XgbEstimator::Ga2mOptions(Options o) {
  // Interpretable columns (FeatureNames() indices): the request, the calendar and a few
  // named history statistics; no hashed buckets.
  o.columns = {0, 1, 4, 5, 6, 7, 9, 10, 12, 14, 16, 18, 21};
  // Positions in that subset: 0 gpus, 1 cpus, 2 log_walltime, 3 vc, 4 hour, 5 weekday,
  // 6 user_count, 7 user_mean_log, 8 user_last_log, 9 user_gpus_mean_log, 10 name_mean_log,
  // 11 user_name_mean_log, 12 stem_mean_log. Depth-2 trees inside one set: main effects of
  // every feature plus the pairs gpus×user_mean_log, vc×hour, user_last_log×user_name_mean_log,
  // gpus×log_walltime.
  o.interaction_constraints = "[[0,7],[3,4],[8,11],[0,2],[1],[5],[6],[9],[10],[12]]";
  o.max_depth = 2;
  o.rounds = 200;
  o.label = "ga2m";
  return o;
}

std::vector<std::string> XgbEstimator::UsedFeatureNames() const {
  if (o_.columns.empty()) return kFeatureNames;
  std::vector<std::string> out;
  for (int c : o_.columns) out.push_back(kFeatureNames[static_cast<size_t>(c)]);
  return out;
}

void XgbEstimator::SelectInto(const float* full, float* out) const {
  if (o_.columns.empty()) {
    std::copy(full, full + kAll, out);
    return;
  }
  for (int c : o_.columns) *out++ = full[static_cast<size_t>(c)];
}
int XgbEstimator::NumFeatures() { return static_cast<int>(kFeatureNames.size()); }

void XgbEstimator::Running::Add(double l) {
  ewma_log = n == 0 ? l : 0.3 * l + 0.7 * ewma_log;
  ++n;
  sum_log += l;
  last_log = l;
}

float XgbEstimator::Running::Mean() const { return n ? static_cast<float>(sum_log / static_cast<double>(n)) : kNaN; }

XgbEstimator::XgbEstimator(const Trace* trace, Options o) : trace_(trace), o_(o), pending_(Cols()) {
  static_assert(std::size(kFeatureNameList) == kAll);
}

XgbEstimator::~XgbEstimator() {
  if (booster_) XGBoosterFree(booster_);
}

XgbEstimator::UserState& XgbEstimator::User(UserId u) {
  if (u.v >= users_.size()) users_.resize(static_cast<size_t>(u.v) + 1);
  return users_[u.v];
}

XgbEstimator::NameState& XgbEstimator::Name(NameId n) {
  if (n.v >= names_.size()) names_.resize(static_cast<size_t>(n.v) + 1);
  NameState& ns = names_[n.v];
  if (!ns.stem_stats) {
    const std::string& nm = trace_->names.Get(n.v);
    const uint64_t token = NameFirstTokenHash(nm);
    ns.stem = NameStemHash(nm);
    ns.stem_stats = &stem_[ns.stem];
    ns.token_stats = &token_[token];
    ns.token_bucket = static_cast<float>(token % 4096);
    ns.length = static_cast<float>(nm.size());
    ns.digits = static_cast<float>(std::count_if(nm.begin(), nm.end(), [](char c) { return c >= '0' && c <= '9'; }));
  }
  return ns;
}

void XgbEstimator::UserState::AddLast(double seconds) {
  auto end = sorted.begin() + last_n;
  if (last_n == kUserWindow) {  // the window is full: the oldest value leaves
    const auto oldest = std::lower_bound(sorted.begin(), end, last[last_next]);
    std::copy(oldest + 1, end, oldest);
    --end;
  } else {
    ++last_n;
  }
  const auto at = std::upper_bound(sorted.begin(), end, seconds);
  std::copy_backward(at, end, end + 1);
  *at = seconds;
  last[last_next] = seconds;
  last_next = static_cast<uint8_t>((last_next + 1) % kUserWindow);
  const size_t n = last_n;
  median_log = Log(n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]));
}

XgbEstimator::Running& XgbEstimator::UserState::Gpus(uint32_t gpus) {
  for (auto& [g, r] : by_gpus)
    if (g == gpus) return r;
  return by_gpus.emplace_back(gpus, Running{}).second;
}

XgbEstimator::UserNameState& XgbEstimator::UserName(UserId u, NameId n, uint64_t stem) {
  const auto [i, fresh] = user_name_index_.Emplace((static_cast<uint64_t>(u.v) << 32) | n.v,
                                                   static_cast<uint32_t>(user_names_.size()));
  if (fresh) user_names_.emplace_back();
  UserNameState& un = user_names_[i];
  if (!un.user_stem) un.user_stem = &user_stem_[Mix(u.v, stem)];
  return un;
}

XgbEstimator::Running& XgbEstimator::Vc(VcId v) {
  if (v.v >= vcs_.size()) vcs_.resize(static_cast<size_t>(v.v) + 1);
  return vcs_[v.v];
}

std::vector<float> XgbEstimator::Features(const Job& job, Time) {
  std::vector<float> f(kAll);
  FillFeatures(job, f.data());
  return f;
}

float XgbEstimator::UserBucket(UserId u, UserState& us) const {
  if (us.bucket < 0)
    us.bucket = trace_ && u.v < trace_->users.size() ? static_cast<float>(Fnv1a64(trace_->users.Get(u.v)) % 4096)
                                                     : static_cast<float>(u.v % 4096);
  return us.bucket;
}

// A key without finished jobs reads as absent: count 0, means NaN (Running::Mean()).
XgbEstimator::UserNameState* XgbEstimator::FillFeatures(const Job& job, float* f) {
  std::fill(f, f + kAll, kNaN);
  f[0] = static_cast<float>(job.gpus) * static_cast<float>(job.gpu_milli) / 1000.0f;
  f[1] = job.cpu_milli ? static_cast<float>(job.cpu_milli) / 1000.0f : kNaN;
  f[2] = job.nodes ? static_cast<float>(job.nodes) : kNaN;
  f[3] = job.mem_mib ? static_cast<float>(job.mem_mib) / 1024.0f : kNaN;
  f[4] = (o_.use_walltime && job.walltime > 0) ? Log(static_cast<double>(job.walltime)) : kNaN;
  f[5] = job.vc.valid() ? static_cast<float>(job.vc.v) : kNaN;
  const int64_t abs_t = (trace_ ? trace_->epoch_unix : 0) + job.submit;
  const int64_t day = abs_t >= 0 ? abs_t / 86400 : (abs_t - 86399) / 86400;
  f[6] = static_cast<float>((abs_t - day * 86400) / 3600);
  f[7] = static_cast<float>(((day % 7) + 7 + 3) % 7);  // 1970-01-01 was a Thursday; 0 = Monday
  f[30] = global_.Mean();
  if (job.user.valid()) {
    UserState& us = User(job.user);
    f[8] = UserBucket(job.user, us);
    f[9] = static_cast<float>(us.all.n);
    f[10] = us.all.Mean();
    if (us.last_n) f[11] = us.median_log;
    if (us.all.n) {
      f[12] = static_cast<float>(us.all.last_log);
      f[13] = static_cast<float>(us.all.ewma_log);
    }
    const Running& ug = us.Gpus(job.gpus);
    f[15] = static_cast<float>(ug.n);
    f[14] = ug.Mean();
    if (us.submitted) f[29] = Log(static_cast<double>(job.submit - us.last_submit) + 1.0);
    us.submitted = true;
    us.last_submit = job.submit;
  }
  UserNameState* un = nullptr;
  if (HasName(job)) {
    const NameState& ns = Name(job.name);
    f[17] = static_cast<float>(ns.stats.n);
    f[16] = ns.stats.Mean();
    f[21] = ns.stem_stats->Mean();
    f[24] = ns.token_stats->Mean();
    f[25] = ns.token_bucket;
    f[26] = ns.length;
    f[27] = ns.digits;
    if (job.user.valid()) {
      un = &UserName(job.user, job.name, ns.stem);
      f[19] = static_cast<float>(un->stats.n);
      f[18] = un->stats.Mean();
      if (un->stats.n) f[20] = static_cast<float>(un->stats.last_log);
      f[23] = static_cast<float>(un->user_stem->n);
      f[22] = un->user_stem->Mean();
    }
  }
  if (job.vc.valid()) f[28] = Vc(job.vc).Mean();
  return un;
}

uint32_t XgbEstimator::AddPending(const Job& job) {
  std::array<float, kAll> full;
  UserNameState* un = FillFeatures(job, full.data());
  const uint32_t slot = pending_.Add(job.id.v);
  SelectInto(full.data(), pending_.row(slot));
  pending_.extra(slot) = un;
  return slot;
}

void XgbEstimator::Update(const Job& job, double l, UserNameState* un) {
  global_.Add(l);
  if (job.user.valid()) {
    UserState& us = User(job.user);
    us.all.Add(l);
    us.AddLast(std::exp(l));
    us.Gpus(job.gpus).Add(l);
  }
  if (HasName(job)) {
    NameState& ns = Name(job.name);
    ns.stats.Add(l);
    ns.stem_stats->Add(l);
    ns.token_stats->Add(l);
    if (job.user.valid()) {
      if (!un) un = &UserName(job.user, job.name, ns.stem);
      un->stats.Add(l);
      un->user_stem->Add(l);
    }
  }
  if (job.vc.valid()) Vc(job.vc).Add(l);
}

void XgbEstimator::Observe(const Job& job, Duration actual) {
  if (actual < 0) return;
  const uint32_t found = pending_.Find(job.id.v);
  const uint32_t slot = found != PendingRows<UserNameState*>::kNone ? found : AddPending(job);
  const double l = Log(static_cast<double>(actual));
  const float* row = pending_.row(slot);
  x_.insert(x_.end(), row, row + Cols());
  y_.push_back(static_cast<float>(l));
  Update(job, l, pending_.extra(slot));
  pending_.Remove(job.id.v);
}

bool XgbEstimator::ShouldTrain(Time now) const {
  const size_t rows = Rows();
  if (rows < o_.min_train) return false;
  if (!booster_) return rows_at_last_train_ == 0 || rows >= 2 * rows_at_last_train_;  // retry a failed first training later
  if (rows == rows_at_last_train_) return false;
  if (o_.retrain_jobs > 0 && rows - rows_at_last_train_ >= o_.retrain_jobs) return true;
  if (o_.retrain_seconds > 0 && now - last_train_time_ >= o_.retrain_seconds) return true;
  return false;
}

#define ORR_XGB(call)                                                     \
  do {                                                                    \
    if ((call) != 0) {                                                    \
      error_ = std::string("xgboost: ") + #call + ": " + XGBGetLastError(); \
      return MakeError(error_);                                           \
    }                                                                     \
  } while (0)

Status XgbEstimator::SetParams(void* b) {
  const std::pair<const char*, std::string> params[] = {
      {"verbosity", "0"},
      {"nthread", std::to_string(o_.nthread)},
      {"seed", std::to_string(o_.seed)},
      {"objective", "reg:squarederror"},
      {"tree_method", "hist"},
      {"max_bin", std::to_string(o_.max_bin)},
      {"max_depth", std::to_string(o_.max_depth)},
      {"eta", ParamStr(o_.eta)},
      {"min_child_weight", ParamStr(o_.min_child_weight)},
      {"lambda", ParamStr(o_.lambda)},
      {"subsample", "1"},
      {"colsample_bytree", "1"},
  };
  for (const auto& [k, v] : params) ORR_XGB(XGBoosterSetParam(b, k, v.c_str()));
  if (!o_.interaction_constraints.empty())
    ORR_XGB(XGBoosterSetParam(b, "interaction_constraints", o_.interaction_constraints.c_str()));
  return Status::Ok();
}

// Adds `rounds` trees to `b` (iterations from..from+rounds-1), fitted to the rows
// [first, first + n). A null `b` creates the booster (with that matrix cached, as XGBoost's
// own training does) and sets the parameters first.
Status XgbEstimator::Boost(void** b, size_t first, size_t n, int from, int rounds) {
  DMatrixHandle dm = nullptr;
  ORR_XGB(XGDMatrixCreateFromMat(Row(first), n, Cols(), kNaN, &dm));
  std::unique_ptr<void, int (*)(DMatrixHandle)> dm_guard(dm, XGDMatrixFree);
  ORR_XGB(XGDMatrixSetFloatInfo(dm, "label", y_.data() + (first - row_base_), n));
  if (*b == nullptr) {
    ORR_XGB(XGBoosterCreate(&dm, 1, b));
    ORR_RETURN_IF_ERROR(SetParams(*b));
  }
  for (int it = 0; it < rounds; ++it) ORR_XGB(XGBoosterUpdateOneIter(*b, from + it, dm));
  return Status::Ok();
}

Status XgbEstimator::Train(Time at) {
  auto t0 = std::chrono::steady_clock::now();
  const size_t rows = Rows();
  const bool update = o_.retrain == Retrain::kIncremental && booster_ != nullptr;
  const size_t first = update ? rows_at_last_train_ : rows > o_.max_rows ? rows - o_.max_rows : 0;
  const size_t n = rows - first;
  if (n == 0) return MakeError("xgboost: no training rows");
  if (update) {
    int done = 0;
    ORR_XGB(XGBoosterBoostedRounds(booster_, &done));
    Status st = Boost(&booster_, first, n, done, o_.update_rounds);
    LoadForest(first, n);  // even after a failure: evaluate whatever trees the booster holds now
    ORR_RETURN_IF_ERROR(st);
  } else {
    void* b = nullptr;
    Status st = Boost(&b, first, n, 0, o_.rounds);
    if (!st.ok()) {
      if (b) XGBoosterFree(b);
      return st;
    }
    if (booster_) XGBoosterFree(booster_);
    booster_ = b;
    LoadForest(first, n);
  }
  int trees = 0;
  ORR_XGB(XGBoosterBoostedRounds(booster_, &trees));
  ++trainings_;
  history_.push_back({at, first, n, trees});
  rows_at_last_train_ = rows;
  // The next training reads the rows after this one (incremental) or the newest max_rows.
  DropRowsBefore(o_.retrain == Retrain::kIncremental ? rows : rows - std::min<size_t>(rows, o_.max_rows));
  train_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return Status::Ok();
}

void XgbEstimator::DropRowsBefore(size_t keep) {
  const size_t dead = keep - row_base_;
  if (dead == 0 || dead < y_.size() / 2) return;  // amortized: drop once half the stored rows are dead
  x_.erase(x_.begin(), x_.begin() + static_cast<std::ptrdiff_t>(dead * Cols()));
  y_.erase(y_.begin(), y_.begin() + static_cast<std::ptrdiff_t>(dead));
  row_base_ = keep;
}

// Loads the new model into forest_ if it predicts an evenly spread sample of its training
// rows [first, first + n) exactly as XGBoost does; otherwise forest_ stays empty.
void XgbEstimator::LoadForest(size_t first, size_t n) {
  forest_.reset();
  bst_ulong len = 0;
  const char* buf = nullptr;
  if (XGBoosterSaveModelToBuffer(booster_, R"({"format": "ubj"})", &len, &buf) != 0) return;
  Result<XgbForest> f = XgbForest::FromUbjson(std::string_view(buf, len));
  const size_t nf = Cols();
  if (!f.ok() || f->num_features() != nf) return;
  constexpr size_t kSample = 64;
  const size_t step = std::max<size_t>(1, n / kSample);
  std::vector<float> rows;
  for (size_t i = 0; i < n; i += step) rows.insert(rows.end(), Row(first + i), Row(first + i) + nf);
  const size_t k = rows.size() / nf;
  DMatrixHandle dm = nullptr;
  if (XGDMatrixCreateFromMat(rows.data(), k, nf, kNaN, &dm) != 0) return;
  std::unique_ptr<void, int (*)(DMatrixHandle)> dm_guard(dm, XGDMatrixFree);
  const float* out = nullptr;
  if (XGBoosterPredict(booster_, dm, 0, 0, 0, &len, &out) != 0 || len != k) return;
  for (size_t i = 0; i < k; ++i) {
    const float mine = f->Predict(rows.data() + i * nf);
    if (std::memcmp(&out[i], &mine, sizeof mine) != 0) return;  // bit-identical, NaN included
  }
  forest_ = std::move(*f);
}

Result<double> XgbEstimator::PredictLog(const std::vector<float>& row) { return PredictLog(row.data(), row.size()); }

Result<double> XgbEstimator::PredictLog(const float* row, size_t n) {
  if (!booster_) return MakeError("xgboost: no model");
  if (forest_ && n == forest_->num_features()) return static_cast<double>(forest_->Predict(row));
  return LibraryPredictLog(row, n);
}

Result<double> XgbEstimator::LibraryPredictLog(const std::vector<float>& row) {
  return LibraryPredictLog(row.data(), row.size());
}

Result<double> XgbEstimator::LibraryPredictLog(const float* row, size_t n) {
  DMatrixHandle dm = nullptr;
  ORR_XGB(XGDMatrixCreateFromMat(row, 1, n, kNaN, &dm));
  std::unique_ptr<void, int (*)(DMatrixHandle)> dm_guard(dm, XGDMatrixFree);
  bst_ulong len = 0;
  const float* out = nullptr;
  ORR_XGB(XGBoosterPredict(booster_, dm, 0, 0, 0, &len, &out));
  if (len != 1) return MakeError("xgboost: unexpected prediction length");
  return static_cast<double>(out[0]);
}

bool XgbEstimator::Explain(const Job& job, Time, EstimateExplanation* out) {
  out->scale = "log-seconds";
  out->terms.clear();
  const uint32_t slot = pending_.Find(job.id.v);
  if (!booster_ || slot == PendingRows<UserNameState*>::kNone) {
    out->base = FallbackLog(job);
    out->note = booster_ ? "job not estimated yet" : "no model trained yet: the user's (or global) mean log duration";
    return true;
  }
  const std::vector<float> row(pending_.row(slot), pending_.row(slot) + Cols());
  DMatrixHandle dm = nullptr;
  if (XGDMatrixCreateFromMat(row.data(), 1, row.size(), kNaN, &dm) != 0) return false;
  std::unique_ptr<void, int (*)(DMatrixHandle)> dm_guard(dm, XGDMatrixFree);
  bst_ulong len = 0;
  const float* v = nullptr;
  if (XGBoosterPredict(booster_, dm, 16 /* pred_interactions */, 0, 0, &len, &v) != 0) return false;
  const size_t n = row.size() + 1;  // features + bias
  if (len != n * n) return false;
  const std::vector<std::string> names = UsedFeatureNames();
  out->base = v[(n - 1) * n + (n - 1)];
  for (size_t i = 0; i + 1 < n; ++i) out->terms.emplace_back(names[i], v[i * n + i]);
  for (size_t i = 0; i + 1 < n; ++i)
    for (size_t k = i + 1; k + 1 < n; ++k) {
      const double pair = static_cast<double>(v[i * n + k]) + static_cast<double>(v[k * n + i]);
      if (std::abs(pair) > 1e-6) out->terms.emplace_back(names[i] + " x " + names[k], pair);
    }
  out->note = "SHAP interaction values of " + std::to_string(trainings_) + " training(s)' model";
  return true;
}

double XgbEstimator::FallbackLog(const Job& job) const {
  if (job.user.valid() && job.user.v < users_.size()) {
    const Running& all = users_[job.user.v].all;
    if (all.n) return all.sum_log / static_cast<double>(all.n);
  }
  if (global_.n) return global_.sum_log / static_cast<double>(global_.n);
  return std::log(static_cast<double>(std::max<Duration>(o_.fallback, 1)));
}

Duration XgbEstimator::Estimate(const Job& job, Time now) {
  uint32_t slot = pending_.Find(job.id.v);
  if (slot == PendingRows<UserNameState*>::kNone) slot = AddPending(job);
  if (ShouldTrain(now)) {
    Status st = Train(now);
    last_train_time_ = now;
    if (!st.ok() && trainings_ == 0) rows_at_last_train_ = Rows();  // don't retry every call
  }
  double l;
  if (booster_) {
    Result<double> p = PredictLog(pending_.row(slot), Cols());
    l = p.ok() ? *p : FallbackLog(job);
  } else {
    if (o_.zero_when_untrained) return 0;
    l = FallbackLog(job);
  }
  l = std::clamp(l, 0.0, 40.0);
  return std::max<Duration>(1, static_cast<Duration>(std::llround(std::exp(l))));
}

}  // namespace orrery
