#include "rl/jobs.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "base/io.h"
#include "base/parse.h"
#include "base/rng.h"

namespace orrery::rl {

namespace {

// ---------------------------------------------------------------- the jobs file

enum class Col { kSubmit, kUser, kVc, kName, kModel, kGpu, kGpus, kTp, kPrompts, kSamples, kMaxResponse, kPromptLen, kLengths, kSeed, kSteps };
struct ColumnInfo {
  std::string_view name;
  Col col;
  bool required;
};
constexpr std::array<ColumnInfo, 15> kColumns = {{{"submit", Col::kSubmit, true},     {"user", Col::kUser, false},
                                                  {"vc", Col::kVc, false},            {"name", Col::kName, false},
                                                  {"model", Col::kModel, true},       {"gpu", Col::kGpu, false},
                                                  {"gpus", Col::kGpus, true},         {"tp", Col::kTp, false},
                                                  {"prompts", Col::kPrompts, false},  {"samples", Col::kSamples, false},
                                                  {"max_response", Col::kMaxResponse, false},
                                                  {"prompt_len", Col::kPromptLen, false},
                                                  {"lengths", Col::kLengths, false},  {"seed", Col::kSeed, false},
                                                  {"steps", Col::kSteps, true}}};

struct Header {
  std::vector<std::optional<Col>> cols;  // per field
};

Result<Header> ReadHeader(const std::vector<Field>& f, const SourcePos& at) {
  Header h;
  for (const Field& field : f) {
    auto it = std::find_if(kColumns.begin(), kColumns.end(), [&](const ColumnInfo& c) { return c.name == field.text; });
    if (it == kColumns.end()) {
      return MakeError(fmt::format("{}:{}:{}: unknown column {} (expected submit, user, vc, name, model, gpu, gpus, tp, prompts, "
                                   "samples, max_response, prompt_len, lengths, seed, steps)",
                                   at.file, at.line, field.col, Quote(field.text)));
    }
    if (std::find(h.cols.begin(), h.cols.end(), it->col) != h.cols.end()) {
      return MakeError(fmt::format("{}:{}:{}: column {} given twice", at.file, at.line, field.col, Quote(field.text)));
    }
    h.cols.push_back(it->col);
  }
  for (const ColumnInfo& c : kColumns) {
    if (c.required && std::find(h.cols.begin(), h.cols.end(), c.col) == h.cols.end()) {
      return MakeError(fmt::format("{}:{}:1: expected a column '{}' in the header", at.file, at.line, c.name));
    }
  }
  return h;
}

Result<uint64_t> Count(const Field& f, std::string_view name, SourcePos at, uint64_t lo, uint64_t hi) {
  int64_t v = 0;
  at.col = f.col;
  if (!ParseI64(f.text, &v) || v < static_cast<int64_t>(lo) || static_cast<uint64_t>(v) > hi) {
    return FieldError(at, name, fmt::format("an integer from {} to {}", lo, hi), f.text);
  }
  return static_cast<uint64_t>(v);
}

Status SetField(Col c, const Field& f, SourcePos at, RlJobSpec* s) {
  JobRequest& r = s->request;
  switch (c) {
    case Col::kSubmit: {
      int64_t v = 0;
      at.col = f.col;
      if (!ParseI64(f.text, &v) || v < -10000000000000 || v > 10000000000000) return FieldError(at, "submit", "seconds", f.text);
      s->submit = v;
      return Status::Ok();
    }
    case Col::kUser: s->user = std::string(f.text); return Status::Ok();
    case Col::kVc: s->vc = std::string(f.text); return Status::Ok();
    case Col::kName: s->name = std::string(f.text); return Status::Ok();
    case Col::kModel: r.model = std::string(f.text); return Status::Ok();
    case Col::kGpu: r.gpu = std::string(f.text); return Status::Ok();
    case Col::kLengths: r.lengths = std::string(f.text); return Status::Ok();
    case Col::kGpus: { ORR_ASSIGN_OR_RETURN(uint64_t v, Count(f, "gpus", at, 1, 100000)); r.gpus = static_cast<uint32_t>(v); return Status::Ok(); }
    case Col::kTp: { ORR_ASSIGN_OR_RETURN(uint64_t v, Count(f, "tp", at, 0, 1024)); r.tp = static_cast<uint32_t>(v); return Status::Ok(); }
    case Col::kPrompts: { ORR_ASSIGN_OR_RETURN(uint64_t v, Count(f, "prompts", at, 1, 65536)); r.prompts = static_cast<uint32_t>(v); return Status::Ok(); }
    case Col::kSamples: { ORR_ASSIGN_OR_RETURN(uint64_t v, Count(f, "samples", at, 1, 1024)); r.samples = static_cast<uint32_t>(v); return Status::Ok(); }
    case Col::kMaxResponse: { ORR_ASSIGN_OR_RETURN(uint64_t v, Count(f, "max_response", at, 2, 1048576)); r.max_response = static_cast<uint32_t>(v); return Status::Ok(); }
    case Col::kPromptLen: { ORR_ASSIGN_OR_RETURN(uint64_t v, Count(f, "prompt_len", at, 0, 1048576)); r.prompt_len = static_cast<uint32_t>(v); return Status::Ok(); }
    case Col::kSeed: { ORR_ASSIGN_OR_RETURN(uint64_t v, Count(f, "seed", at, 0, 1ULL << 53)); r.seed = v; return Status::Ok(); }
    case Col::kSteps: { ORR_ASSIGN_OR_RETURN(uint64_t v, Count(f, "steps", at, 1, 1000000)); s->steps = static_cast<uint32_t>(v); return Status::Ok(); }
  }
  return Status::Ok();
}

Result<std::vector<RlJobSpec>> ReadJobs(LineReader& in) {
  std::vector<RlJobSpec> out;
  std::vector<Field> f;
  std::vector<std::string> scratch;
  std::optional<Header> header;
  std::string_view line;
  while (in.Next(&line)) {
    const SourcePos at{in.path(), in.line_number(), 1};
    if (Trim(line).empty() || line.front() == '#') continue;
    uint32_t bad = 0;
    if (!SplitLine(line, ',', &f, &scratch, &bad)) return MakeError(fmt::format("{}:{}:{}: unterminated quote", at.file, at.line, bad));
    if (!header) {
      ORR_ASSIGN_OR_RETURN(header, ReadHeader(f, at));
      continue;
    }
    if (f.size() != header->cols.size()) {
      return MakeError(fmt::format("{}: expected {} fields, found {}", FormatPos(at), header->cols.size(), f.size()));
    }
    RlJobSpec s;
    s.where = fmt::format("{}:{}", at.file, at.line);
    for (size_t i = 0; i < f.size(); ++i) ORR_RETURN_IF_ERROR(SetField(*header->cols[i], f[i], at, &s));
    out.push_back(std::move(s));
  }
  if (!in.error().empty()) return MakeError(in.path() + ": " + in.error());
  if (out.empty()) return MakeError(in.path() + ": no RL jobs (expected a header and at least one row)");
  return out;
}

// ---------------------------------------------------------------- expansion

std::string SettingKey(const JobRequest& r) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", r.model, r.gpu, r.gpus, r.tp, r.prompts, r.samples, r.max_response,
                     r.prompt_len, r.lengths, r.seed);
}

Result<RlStepCost> CostOf(const RlJobSpec& spec, const std::string& strategy) {
  ORR_ASSIGN_OR_RETURN(CostSetup s, SetUpJob(spec.request));
  const CostTimer timer(s.model, s.gpu, s.job.tp, s.params);
  const CostPhaseModel phases(s.model, s.gpu, s.job.tp, s.params);
  RlEnv env;
  env.timer = &timer;
  env.phases = &phases;
  env.draft_steps = s.params.draft_steps;
  ORR_ASSIGN_OR_RETURN(std::vector<StepResult> rows, RunStrategies({"sync", strategy}, s.job, env));
  return RlStepCost{rows[1], rows[0], s.job.tp};
}

Job RlCoreJob(const RlJobSpec& s, const RlStepCost& c, Trace* t) {
  Job j;
  j.id = JobId(static_cast<uint32_t>(t->jobs.size()));
  j.user = UserId(t->users.Intern(s.user.empty() ? "rl" : s.user));
  if (!s.vc.empty()) j.vc = VcId(t->vcs.Intern(s.vc));
  j.name = NameId(t->names.Intern(s.name.empty() ? fmt::format("rl/{}", s.request.model) : s.name));
  j.submit = s.submit;
  j.gpus = s.request.gpus;
  j.duration = static_cast<Duration>(std::ceil(s.steps * c.step.step_time_s));
  j.state = JobState::kCompleted;
  j.kind = JobKind::kFinetune;
  return j;
}

}  // namespace

Result<std::vector<RlJobSpec>> LoadRlJobs(const std::string& path) {
  ORR_ASSIGN_OR_RETURN(std::unique_ptr<LineReader> in, LineReader::Open(path));
  return ReadJobs(*in);
}

Result<std::vector<RlJobSpec>> ParseRlJobs(std::string_view text, const std::string& name) {
  std::unique_ptr<LineReader> in = LineReader::FromString(text, name);
  return ReadJobs(*in);
}

Result<std::vector<RlJobSpec>> GenerateRlJobs(const Trace& trace, double share, uint32_t max_gpus, const std::string& vc,
                                              uint64_t seed) {
  if (!(share > 0 && share < 1)) return MakeError(fmt::format("--rl-share: expected a fraction greater than 0 and below 1, got {}", share));
  if (trace.jobs.empty()) return MakeError("--rl-share: the workload has no jobs to add RL jobs to");
  // The settings of docs/design/rl.md, "Generated RL jobs": TLT's 7B and 32B runs, DeepScaleR's
  // first 8k stage.
  struct Setting {
    const char* model;
    uint32_t gpus, prompts, samples, max_response;
    const char* lengths;
  };
  static constexpr std::array<Setting, 3> kSettings = {{{"qwen2.5-1.5b", 8, 128, 8, 8192, "deepscaler"},
                                                       {"qwen2.5-7b", 32, 64, 8, 32768, "verl"},
                                                       {"qwen2.5-32b", 128, 64, 8, 32768, "verl"}}};
  std::vector<const Setting*> fit;
  for (const Setting& s : kSettings)
    if (s.gpus <= max_gpus) fit.push_back(&s);
  if (fit.empty()) return MakeError(fmt::format("--rl-share: no RL setting fits in {} GPUs (the smallest needs 8)", max_gpus));
  auto [lo, hi] = std::minmax_element(trace.jobs.begin(), trace.jobs.end(), [](const Job& a, const Job& b) { return a.submit < b.submit; });
  const double n = std::max(1.0, std::round(share * trace.jobs.size() / (1 - share)));
  Rng rng(seed, "rl/generated-jobs");
  std::vector<RlJobSpec> out;
  for (uint64_t i = 0; i < static_cast<uint64_t>(n); ++i) {
    const Setting& s = *fit[rng.Below(fit.size())];
    RlJobSpec j;
    j.where = fmt::format("--rl-share job {}", i);
    j.submit = lo->submit + static_cast<int64_t>(rng.Uniform() * static_cast<double>(hi->submit - lo->submit));
    j.user = "rl";
    j.vc = vc;
    j.name = fmt::format("rl/{}", s.model);
    j.request.model = s.model;
    j.request.gpus = s.gpus;
    j.request.prompts = s.prompts;
    j.request.samples = s.samples;
    j.request.max_response = s.max_response;
    j.request.lengths = s.lengths;
    j.steps = 50 + static_cast<uint32_t>(rng.Below(351));
    out.push_back(std::move(j));
  }
  std::stable_sort(out.begin(), out.end(), [](const RlJobSpec& a, const RlJobSpec& b) { return a.submit < b.submit; });
  return out;
}

Result<RlExpansion> AddRlJobs(const std::vector<RlJobSpec>& specs, const std::string& strategy, Trace* trace) {
  RlExpansion x;
  x.strategy = strategy;
  if (trace->work.size() < trace->jobs.size()) trace->work.resize(trace->jobs.size());
  if (trace->after.size() < trace->jobs.size()) trace->after.resize(trace->jobs.size());
  for (const RlJobSpec& s : specs) {
    const std::string key = SettingKey(s.request);
    auto it = x.costs.find(key);
    if (it == x.costs.end()) {
      auto cost = CostOf(s, strategy);
      if (!cost.ok()) return cost.error().With(s.where);
      it = x.costs.emplace(key, *cost).first;
    }
    const Job j = RlCoreJob(s, it->second, trace);
    Phase p;
    p.kind = PhaseKind::kRollout;
    p.steps = s.steps;
    p.seconds_per_step = it->second.step.step_time_s;
    p.demand = DemandOf(j);
    p.checkpoint.on_preempt = true;
    if (!trace->source_ids.empty()) trace->source_ids.push_back(fmt::format("rl-{}", j.id.v));
    trace->jobs.push_back(j);
    trace->work.push_back(WorkSpec{{p}});
    trace->after.emplace_back();
    x.jobs.push_back({j.id.v, s.steps, s.request.gpus, &it->second});
  }
  return x;
}

std::vector<HarvestPlan> HarvestPlans(const RlExpansion& x) {
  std::vector<HarvestPlan> out;
  if (x.strategy != "harvest") return out;
  for (const ExpandedRlJob& j : x.jobs) {
    const StepResult& s = j.cost->step;
    HarvestPlan p;
    p.job = j.job;
    p.step_s = s.step_time_s;
    p.return_s = s.rollout_s + kHarvestReturnS;
    p.releases = HarvestReleases(s, j.gpus, j.cost->tp);
    if (!p.releases.empty()) out.push_back(std::move(p));
  }
  return out;
}

RlReport SummarizeRl(const RlExpansion& x, const std::vector<JobOutcome>& outcomes, const HarvestStats& harvest) {
  RlReport r;
  r.strategy = x.strategy;
  r.harvest = harvest;
  std::vector<bool> is_rl(outcomes.size(), false);
  double weighted = 0;
  for (const ExpandedRlJob& j : x.jobs) {
    if (j.job >= outcomes.size()) continue;
    is_rl[j.job] = true;
    const JobOutcome& o = outcomes[j.job];
    const StepResult& s = j.cost->step;
    ++r.jobs;
    const bool done = o.status == OutcomeStatus::kFinished;
    r.finished += done ? 1 : 0;
    const double steps = done ? j.steps : std::min<double>(j.steps, o.run / s.step_time_s);
    r.steps_run += steps;
    r.gpu_hours += j.gpus * static_cast<double>(o.run) / 3600;
    r.idle_gpu_hours += steps * s.idle_gpu_frac * s.step_time_s * j.gpus / 3600;
    weighted += steps;
    r.step_time_s += steps * s.step_time_s, r.rollout_s += steps * s.rollout_s, r.tail_s += steps * s.tail_s;
    r.reward_s += steps * s.reward_s, r.train_s += steps * s.train_s, r.sync_s += steps * s.sync_s;
    r.sync_step_time_s += steps * j.cost->sync.step_time_s;
  }
  r.gpu_hours -= harvest.lent_gpu_seconds / 3600;  // harvest: the lent GPUs were not held meanwhile
  if (weighted > 0) {
    for (double* v : {&r.step_time_s, &r.rollout_s, &r.tail_s, &r.reward_s, &r.train_s, &r.sync_s, &r.sync_step_time_s}) *v /= weighted;
  }
  double jct = 0;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    if (is_rl[i]) continue;
    r.other_preemptions += outcomes[i].preemptions;
    if (outcomes[i].status != OutcomeStatus::kFinished) continue;
    ++r.other_jobs;
    jct += static_cast<double>(outcomes[i].jct());
  }
  r.other_avg_jct_s = r.other_jobs > 0 ? jct / r.other_jobs : 0;
  return r;
}

}  // namespace orrery::rl
