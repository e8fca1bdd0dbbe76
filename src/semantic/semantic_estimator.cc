#include "semantic/semantic_estimator.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace orrery::semantic {

std::optional<double> FlopsStepTimeModel::StepSeconds(const LaunchSchema& s, double gpus) const {
  std::optional<double> params;
  if (s.params_estimate) params = s.params_estimate->billions;
  else params = s.number(FieldId::kParamsBillion);
  auto global = s.number(FieldId::kGlobalBatch), seq = s.number(FieldId::kSeqLen);
  if (!params || !global || !seq || gpus <= 0 || peak_ <= 0 || mfu_ <= 0) return std::nullopt;
  return 6.0 * *params * 1e9 * *global * *seq / (gpus * peak_ * mfu_);
}

namespace {

bool EndedEarly(JobState s) {
  switch (s) {
    case JobState::kFailed:
    case JobState::kCancelled:
    case JobState::kNodeFail:
    case JobState::kTimeout: return true;
    case JobState::kUnknown:
    case JobState::kCompleted:
    case JobState::kRunning:
    case JobState::kPending:
    case JobState::kPreempted: return false;
  }
  return false;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

constexpr size_t kCandidatesPerIndex = 64;  // bounds each estimate's work: O(k log) per job

}  // namespace

SemanticEstimator::SemanticEstimator(PayloadSource payloads, std::unique_ptr<StepTimeModel> step_model, Options o)
    : schemas_(ReadEach(std::move(payloads))), step_model_(std::move(step_model)), o_(o) {}

SchemaSource SemanticEstimator::ReadEach(PayloadSource payloads) {
  if (!payloads) return {};
  return [payloads = std::move(payloads)](const Job& job) -> std::optional<LaunchSchema> {
    std::optional<InputFile> file = payloads(job);
    if (!file) return std::nullopt;
    return InspectText(file->name, file->text);
  };
}

const SemanticEstimator::Features& SemanticEstimator::FeaturesOf(const Job& job) {
  auto it = features_.find(job.id.v);
  if (it != features_.end()) return it->second;
  Features f;
  f.user = job.user.valid() ? job.user.v : UINT32_MAX;
  f.name = job.name.valid() ? job.name.v : UINT32_MAX;
  f.gpus = job.gpus;
  if (std::optional<LaunchSchema> read = schemas_ ? schemas_(job) : std::nullopt) {
    const LaunchSchema& s = *read;
    if (auto fw = s.text(FieldId::kFramework)) f.framework = *fw;
    if (s.params_estimate) f.params_b = s.params_estimate->billions;
    double gpus = s.gpus().value_or(std::max<uint32_t>(1, job.gpus));
    auto steps = s.number(FieldId::kTrainSteps);
    auto step_s = step_model_->StepSeconds(s, gpus);
    if (steps && step_s) f.semantic_s = *steps * *step_s;
  }
  return features_.emplace(job.id.v, std::move(f)).first->second;
}

double SemanticEstimator::Similarity(const Features& a, const Features& b) {
  double s = 0;
  if (a.user != UINT32_MAX && a.user == b.user) s += 3;
  if (a.name != UINT32_MAX && a.name == b.name) s += 2;
  if (!a.framework.empty() && a.framework == b.framework) s += 1;
  if (a.params_b > 0 && b.params_b > 0 && std::fabs(std::log(a.params_b / b.params_b)) < 0.3) s += 1;
  if (a.gpus == b.gpus) s += 1;
  return s;
}

std::vector<const SemanticEstimator::Past*> SemanticEstimator::Neighbours(const Features& f) const {
  std::vector<size_t> cand;
  auto add_tail = [&](const std::vector<size_t>& v) {
    size_t b = v.size() > kCandidatesPerIndex ? v.size() - kCandidatesPerIndex : 0;
    cand.insert(cand.end(), v.begin() + static_cast<long>(b), v.end());
  };
  if (auto it = by_user_.find(f.user); it != by_user_.end()) add_tail(it->second);
  if (auto it = by_name_.find(f.name); it != by_name_.end()) add_tail(it->second);
  add_tail(recent_);
  std::sort(cand.begin(), cand.end());
  cand.erase(std::unique(cand.begin(), cand.end()), cand.end());
  std::vector<std::pair<double, size_t>> scored;
  scored.reserve(cand.size());
  for (size_t i : cand) scored.push_back({Similarity(f, history_[i].f), i});
  size_t k = std::min<size_t>(o_.k, scored.size());
  std::partial_sort(scored.begin(), scored.begin() + static_cast<long>(k), scored.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second > b.second;  // most similar, then most recent
  });
  std::vector<const Past*> out;
  for (size_t i = 0; i < k; ++i) out.push_back(&history_[scored[i].second]);
  return out;
}

double SemanticEstimator::EarlyFailureChance(const Job& job) {
  std::vector<const Past*> nb = Neighbours(FeaturesOf(job));
  size_t early = 0;
  for (const Past* p : nb) early += p->ended_early;
  return (static_cast<double>(early) + 0.5) / (static_cast<double>(nb.size()) + 1.0);  // Jeffreys-like prior: 1/2
}

Duration SemanticEstimator::Estimate(const Job& job, Time) {
  const Features& f = FeaturesOf(job);
  std::vector<const Past*> nb = Neighbours(f);
  double t = 0;
  // Repeated runs of the same job (same user and name): their durations, which already
  // show how often it ends early, beat any plan.
  std::vector<double> same;
  for (const Past* p : nb) {
    if (f.name != UINT32_MAX && p->f.name == f.name && p->f.user == f.user) same.push_back(p->actual);
  }
  if (same.size() >= 3) return static_cast<Duration>(std::llround(Median(same)));
  if (f.semantic_s) {
    // actual / planned of similar finished jobs: it absorbs both the cluster's efficiency and
    // how often (and how early) such jobs end before their planned steps.
    std::vector<double> ratios;
    for (const Past* p : nb) {
      if (p->f.semantic_s && *p->f.semantic_s > 0) ratios.push_back(p->actual / (*p->f.semantic_s + o_.overhead_s));
    }
    t = *f.semantic_s + o_.overhead_s;
    ++semantic_estimates_;
    if (ratios.size() >= 3) return static_cast<Duration>(std::llround(std::max(1.0, t * Median(ratios))));
  } else if (!nb.empty()) {
    std::vector<double> d;
    for (const Past* p : nb) d.push_back(p->actual);
    return static_cast<Duration>(std::llround(Median(d)));  // neighbours' durations already include early ends
  } else {
    return o_.fallback;
  }
  // Too few calibrated neighbours: the expectation over an early end at a uniform point.
  double p_early = EarlyFailureChance(job);
  return static_cast<Duration>(std::llround(std::max(1.0, (1 - p_early) * t + p_early * t / 2)));
}

void SemanticEstimator::Observe(const Job& job, Duration actual) {
  Past p;
  p.f = FeaturesOf(job);
  p.actual = static_cast<double>(actual);
  p.ended_early = EndedEarly(job.state);
  features_.erase(job.id.v);
  size_t i = history_.size();
  history_.push_back(std::move(p));
  const Features& f = history_.back().f;
  if (f.user != UINT32_MAX) by_user_[f.user].push_back(i);
  if (f.name != UINT32_MAX) by_name_[f.name].push_back(i);
  recent_.push_back(i);
}

bool SemanticEstimator::Explain(const Job& job, Time now, EstimateExplanation* out) {
  const Features& f = FeaturesOf(job);
  out->scale = "seconds";
  out->base = 0;
  out->terms.clear();
  if (f.semantic_s) {
    out->terms.push_back({"steps x step time", *f.semantic_s});
    out->terms.push_back({"overhead", o_.overhead_s});
  }
  double est = static_cast<double>(Estimate(job, now));
  double sum = f.semantic_s ? *f.semantic_s + o_.overhead_s : 0;
  out->terms.push_back({f.semantic_s ? "calibration and early-failure chance" : "neighbours' median", est - sum});
  std::ostringstream note;
  note << "early-failure chance " << EarlyFailureChance(job) << (f.semantic_s ? "" : "; no step count: retrieval over history");
  out->note = note.str();
  return true;
}

namespace {

Result<std::unique_ptr<DurationEstimator>> BuildSemantic(const std::string& options, uint64_t seed, const Trace* trace) {
  double peak = PayloadOptions{}.peak_flops, mfu = PayloadOptions{}.mfu_median;
  SemanticEstimator::Options o;
  std::stringstream ss(options);
  std::string kv;
  while (std::getline(ss, kv, ',')) {
    if (kv.empty()) continue;
    size_t eq = kv.find('=');
    std::string key = kv.substr(0, eq);
    char* end = nullptr;
    double v = eq == std::string::npos ? 0 : std::strtod(kv.c_str() + eq + 1, &end);
    if (eq == std::string::npos || end == nullptr || *end != '\0' || !(v > 0))
      return MakeError("estimator 'semantic': option '" + kv + "': expected key=positive number");
    if (key == "peak") peak = v;
    else if (key == "mfu") mfu = v;
    else if (key == "k") o.k = static_cast<uint32_t>(v);
    else if (key == "fallback") o.fallback = static_cast<Duration>(v);
    else return MakeError("estimator 'semantic': unknown option '" + key + "' (expected peak, mfu, k or fallback)");
  }
  // A trace's jobs carry no launch files: each gets its generated payload. Without a trace (a
  // live driver) there is none until the driver supplies its jobs' files (SetPayloads).
  PayloadSource source;
  if (trace != nullptr) {
    source = [seed, po = PayloadOptions{}](const Job& job) -> std::optional<InputFile> {
      SemanticPayload p = GeneratePayload(job, seed, po);
      return InputFile{p.file_name, p.text};
    };
  }
  return std::unique_ptr<DurationEstimator>(
      new SemanticEstimator(std::move(source), std::make_unique<FlopsStepTimeModel>(peak, mfu), o));
}

}  // namespace

void RegisterSemanticEstimator() { RegisterEstimatorBuilder("semantic", BuildSemantic); }

}  // namespace orrery::semantic
