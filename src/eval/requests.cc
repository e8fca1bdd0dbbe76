#include "eval/requests.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "base/io.h"
#include "base/parse.h"
#include "eval/executor.h"
#include "eval/strategy.h"

namespace orrery::eval {

namespace {

// ---------------------------------------------------------------- the request CSV

enum class Col : uint8_t { kName, kSubmit, kSuite, kModelSize, kStrategy, kGpus, kPartition, kCpuPartition, kDatasets };
struct ColInfo {
  Col col;
  std::string_view name;
  bool required;
};
constexpr std::array<ColInfo, 9> kCols = {{
    {Col::kName, "name", true},
    {Col::kSubmit, "submit_s", true},
    {Col::kSuite, "suite", true},
    {Col::kModelSize, "model_size", true},
    {Col::kStrategy, "strategy", false},
    {Col::kGpus, "gpus", false},
    {Col::kPartition, "partition", false},
    {Col::kCpuPartition, "cpu_partition", false},
    {Col::kDatasets, "datasets", false},
}};
constexpr size_t kMaxRequests = 1'000'000;

struct Header {
  std::array<int, kCols.size()> index;
  int operator[](Col c) const { return index[static_cast<size_t>(c)]; }
};

Result<Header> ReadHeader(const std::vector<Field>& fields, const std::string& file, uint64_t line) {
  Header h;
  h.index.fill(-1);
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string_view name = Trim(fields[i].text);
    auto it = std::find_if(kCols.begin(), kCols.end(), [&](const ColInfo& c) { return c.name == name; });
    const SourcePos pos{file, line, fields[i].col};
    if (it == kCols.end())
      return MakeError(FormatPos(pos) + ": unknown column " + Quote(name) +
                       " (expected name, submit_s, suite, model_size, strategy, gpus, partition, cpu_partition, datasets)");
    int& slot = h.index[static_cast<size_t>(it - kCols.begin())];
    if (slot >= 0) return MakeError(FormatPos(pos) + ": column " + Quote(name) + " appears twice");
    slot = static_cast<int>(i);
  }
  for (const ColInfo& c : kCols)
    if (c.required && h[c.col] < 0)
      return MakeError(file + ":" + std::to_string(line) + ":1: missing column '" + std::string(c.name) +
                       "' (a request needs name, submit_s, suite, model_size)");
  return h;
}

std::vector<std::string> SplitNames(std::string_view s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    const size_t semi = s.find(';', pos);
    const std::string_view tok = Trim(s.substr(pos, semi == std::string_view::npos ? std::string_view::npos : semi - pos));
    if (!tok.empty()) out.emplace_back(tok);
    if (semi == std::string_view::npos) break;
    pos = semi + 1;
  }
  return out;
}

Result<EvalRequest> ReadRow(const Header& h, const std::vector<Field>& f, const std::string& file, uint64_t line,
                            const std::string& base_dir) {
  auto has = [&](Col c) { return h[c] >= 0; };
  auto text = [&](Col c) { return has(c) ? Trim(f[static_cast<size_t>(h[c])].text) : std::string_view(); };
  auto pos = [&](Col c) { return SourcePos{file, line, has(c) ? f[static_cast<size_t>(h[c])].col : 1u}; };
  EvalRequest r;
  r.where = file + ":" + std::to_string(line);
  r.name = std::string(text(Col::kName));
  if (r.name.empty()) return FieldError(pos(Col::kName), "name", "a request name", "");
  int64_t submit = 0;
  if (!ParseI64(text(Col::kSubmit), &submit) || submit < 0 || submit > int64_t{1} << 40)
    return FieldError(pos(Col::kSubmit), "submit_s", "seconds since the trace's epoch (an integer >= 0)", text(Col::kSubmit));
  r.submit = submit;
  const std::string_view suite = text(Col::kSuite);
  if (suite.empty()) return FieldError(pos(Col::kSuite), "suite", "a suite CSV path", "");
  const std::filesystem::path sp(suite);
  r.suite = sp.is_absolute() || base_dir.empty() ? std::string(suite) : (std::filesystem::path(base_dir) / sp).string();
  r.model_size = std::string(text(Col::kModelSize));
  if (Result<ModelSpec> m = ParseModelSize(r.model_size); !m.ok())
    return FieldError(pos(Col::kModelSize), "model_size", "a model size such as 7B, 13B or 350M", r.model_size);
  r.strategy = std::string(text(Col::kStrategy));
  if (!r.strategy.empty())
    if (auto s = MakeStrategy(r.strategy); !s.ok())
      return MakeError(FormatPos(pos(Col::kStrategy)) + ": field 'strategy': " + s.error().message);
  if (!text(Col::kGpus).empty()) {
    int64_t g = 0;
    if (!ParseI64(text(Col::kGpus), &g) || g < 1 || g > 65536)
      return FieldError(pos(Col::kGpus), "gpus", "an integer in [1, 65536] or empty", text(Col::kGpus));
    r.gpus = static_cast<uint32_t>(g);
  }
  r.partition = std::string(text(Col::kPartition));
  r.cpu_partition = std::string(text(Col::kCpuPartition));
  r.datasets = SplitNames(text(Col::kDatasets));
  return r;
}

}  // namespace

Result<std::vector<EvalRequest>> ParseRequests(std::string_view text, const std::string& name,
                                               const std::string& base_dir) {
  if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  std::vector<EvalRequest> out;
  std::optional<Header> header;
  std::vector<Field> f;
  std::vector<std::string> scratch;
  uint64_t line = 0;
  size_t pos = 0;
  std::string_view l;
  while (NextLine(text, &pos, &l)) {
    ++line;
    if (Trim(l).empty() || Trim(l).front() == '#') continue;
    uint32_t bad = 0;
    if (!SplitLine(l, ',', &f, &scratch, &bad))
      return MakeError(name + ":" + std::to_string(line) + ":" + std::to_string(bad) + ": unterminated quote");
    if (!header) {
      ORR_ASSIGN_OR_RETURN(header, ReadHeader(f, name, line));
      continue;
    }
    size_t width = 0;
    for (int i : header->index) width = std::max<size_t>(width, static_cast<size_t>(i + 1));
    if (f.size() < width)
      return MakeError(name + ":" + std::to_string(line) + ":1: expected " + std::to_string(width) + " fields, got " +
                       std::to_string(f.size()));
    ORR_ASSIGN_OR_RETURN(EvalRequest r, ReadRow(*header, f, name, line, base_dir));
    for (const EvalRequest& e : out)
      if (e.name == r.name)
        return MakeError(r.where + ":1: request name " + Quote(r.name) + " also at " + e.where + " (names are unique)");
    out.push_back(std::move(r));
    if (out.size() > kMaxRequests) return MakeError(name + ": more than 1000000 requests");
  }
  if (!header) return MakeError(name + ":1:1: empty request file (expected a header: name,submit_s,suite,model_size,...)");
  if (out.empty()) return MakeError(name + ": no request (only a header)");
  return out;
}

Result<std::vector<EvalRequest>> LoadRequests(const std::string& path) {
  ORR_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseRequests(text, path, std::filesystem::path(path).parent_path().string());
}

// ---------------------------------------------------------------- requests from pretraining jobs

namespace {
// The first "<number>b" token of a job name ("internlm_20b_pretrain" -> "20B"), or "".
std::string SizeFromName(std::string_view name) {
  size_t pos = 0;
  while (pos <= name.size()) {
    size_t end = name.find_first_of("_-./", pos);
    if (end == std::string_view::npos) end = name.size();
    const std::string_view tok = name.substr(pos, end - pos);
    if (tok.size() >= 2 && (tok.back() == 'b' || tok.back() == 'B')) {
      const std::string_view num = tok.substr(0, tok.size() - 1);
      double v = 0;
      if (std::all_of(num.begin(), num.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; }) &&
          ParseF64(num, &v) && v > 0)
        return std::string(num) + "B";
    }
    pos = end + 1;
  }
  return "";
}
}  // namespace

std::vector<EvalRequest> RequestsFromPretraining(const Trace& trace, const PretrainEvalOptions& o) {
  std::vector<EvalRequest> out;
  if (o.interval <= 0) return out;
  for (const Job& j : trace.jobs) {
    if (j.kind != JobKind::kPretrain || j.duration < o.interval) continue;
    const std::string name = j.name.valid() ? std::string(trace.names.Get(j.name.v)) : std::string();
    std::string size = SizeFromName(name);
    if (size.empty() || !ParseModelSize(size).ok()) size = o.default_size;
    for (int64_t k = 1; k * o.interval <= j.duration && (o.max_per_job == 0 || k <= o.max_per_job); ++k) {
      EvalRequest r;
      r.name = fmt::format("job{}-ckpt{}", j.id.v, k);
      r.submit = j.submit + k * o.interval;
      r.suite = o.suite;
      r.model_size = size;
      r.strategy = o.strategy;
      r.gpus = o.gpus;
      r.partition = j.vc.valid() ? std::string(trace.vcs.Get(j.vc.v)) : std::string();
      r.cpu_partition = o.cpu_partition;
      r.where = fmt::format("checkpoint {} of pretraining job {}", k, j.id.v);
      out.push_back(std::move(r));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const EvalRequest& a, const EvalRequest& b) { return a.submit < b.submit; });
  return out;
}

// ---------------------------------------------------------------- expansion into jobs

namespace {

// A plan and everything derived from it, shared by requests with the same inputs.
struct Prepared {
  Workload w;
  Plan plan;
  double alone_makespan_s = 0;
};

class Expander {
 public:
  Expander(const ExpandOptions& o, Trace* t) : o_(o), t_(*t) {}

  Result<ExpandedRequest> Add(const EvalRequest& r, uint32_t index) {
    ORR_ASSIGN_OR_RETURN(const Prepared* p, Prepare(r));
    ExpandedRequest e;
    e.name = r.name;
    e.strategy = r.strategy.empty() ? o_.strategy : r.strategy;
    e.model = r.model_size;
    e.suite = r.suite;
    e.submit = r.submit;
    e.gpus = r.gpus ? r.gpus : o_.gpus;
    e.gpus_per_trial = p->w.gpus_per_trial;
    e.datasets = static_cast<uint32_t>(p->w.datasets.size());
    e.alone_makespan_s = p->alone_makespan_s;
    const VcId gpu_vc = Vc(r.partition);
    const std::string cpu_part = !r.cpu_partition.empty() ? r.cpu_partition : !o_.cpu_partition.empty() ? o_.cpu_partition : r.partition;
    const VcId cpu_vc = Vc(cpu_part);
    const UserId user = UserId(t_.users.Intern("eval:" + r.name));
    for (size_t g = 0; g < p->plan.gpu_jobs.size(); ++g) {
      e.gpu_jobs.push_back(static_cast<uint32_t>(t_.jobs.size()));
      e.infer_s.push_back(Secs(InferSeconds(p->w, p->plan.gpu_jobs[g])));
      AddTrial(r, *p, p->plan.gpu_jobs[g], index, g, gpu_vc, user);
    }
    for (size_t m = 0; m < p->plan.metric_jobs.size(); ++m) {
      e.metric_jobs.push_back(static_cast<uint32_t>(t_.jobs.size()));
      AddMetric(r, *p, p->plan.metric_jobs[m], e.gpu_jobs, cpu_vc, user);
    }
    return e;
  }

 private:
  static int64_t Secs(double s) { return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(s - 1e-9))); }

  VcId Vc(const std::string& name) {
    if (name.empty()) return VcId();
    return VcId(static_cast<uint16_t>(t_.vcs.Intern(name)));
  }

  Result<const Prepared*> Prepare(const EvalRequest& r) {
    const std::string strategy = r.strategy.empty() ? o_.strategy : r.strategy;
    const uint32_t gpus = r.gpus ? r.gpus : o_.gpus;
    std::string key = r.suite + '\n' + r.model_size + '\n' + strategy + '\n' + std::to_string(gpus) + '\n';
    for (const std::string& d : r.datasets) key += d + ';';
    if (auto it = cache_.find(key); it != cache_.end()) return it->second.get();
    auto fail = [&](const Error& e) { return MakeError(r.where + ": request '" + r.name + "': " + e.message); };
    Result<const Suite*> suite = LoadCached(r.suite);
    if (!suite) return fail(suite.error());
    Result<Suite> chosen = SelectDatasets(**suite, r.datasets);
    if (!chosen) return fail(chosen.error());
    std::vector<std::string> dropped;
    Result<Suite> sized = RequireSized(*chosen, o_.skip_unsized, &dropped);
    if (!sized) return fail(sized.error());
    Result<ModelSpec> model = ParseModelSize(r.model_size);
    if (!model) return fail(model.error());
    Result<GpuSpec> gpu = GpuByName(o_.gpu);
    if (!gpu) return fail(gpu.error());
    CalibratedCostModel cost;
    auto p = std::make_unique<Prepared>();
    Result<Workload> w = BuildWorkload(*sized, *model, *gpu, o_.gpus_per_node, cost, nullptr);
    if (!w) return fail(w.error());
    p->w = std::move(*w);
    ClusterSpec c;
    // `gpus` GPUs: whole nodes, or part of one node when fewer than a node's.
    c.gpus_per_node = std::min(gpus, o_.gpus_per_node);
    c.nodes = std::max<uint32_t>(1, (gpus + o_.gpus_per_node - 1) / o_.gpus_per_node);
    c.storage_bytes_per_s = o_.storage.aggregate_bytes_per_s;
    c.node_storage_bytes_per_s = o_.storage.node_bytes_per_s;
    c.cache_bytes_per_s = o_.storage.cache_bytes_per_s;
    if (Status v = ValidateCluster(c); !v.ok()) return fail(v.error());
    Result<std::unique_ptr<Strategy>> s = MakeStrategy(strategy);
    if (!s) return fail(s.error());
    Result<Plan> plan = BuildPlan(**s, strategy, p->w, c);
    if (!plan) return fail(plan.error());
    p->plan = std::move(*plan);
    Result<Schedule> alone = Execute(p->w, p->plan, c);
    if (!alone) return fail(alone.error());
    p->alone_makespan_s = alone->makespan_s;
    return (cache_[key] = std::move(p)).get();
  }

  Result<const Suite*> LoadCached(const std::string& path) {
    if (auto it = suites_.find(path); it != suites_.end()) return &it->second;
    ORR_ASSIGN_OR_RETURN(Suite s, LoadSuite(path));
    return &(suites_[path] = std::move(s));
  }

  static orrery::Phase MakePhase(orrery::PhaseKind kind, int64_t steps, const Demand& d) {
    orrery::Phase p;
    p.kind = kind;
    p.steps = steps;
    p.seconds_per_step = 1.0;
    p.demand = d;
    p.checkpoint.on_preempt = false;  // a stopped trial starts over (docs/design/eval.md)
    p.checkpoint.durable_at_end = false;
    return p;
  }

  // The fastest a load can be: alone at the node's link, or from the cache.
  int64_t NominalLoad(double bytes, bool cacheable) const {
    const double rate = cacheable ? std::max(o_.storage.node_bytes_per_s, o_.storage.cache_bytes_per_s)
                                  : std::min(o_.storage.node_bytes_per_s, o_.storage.aggregate_bytes_per_s);
    return Secs(bytes / rate);
  }

  Job BaseJob(const EvalRequest& r, UserId user, VcId vc, const std::string& name) {
    Job j;
    j.id = JobId(static_cast<uint32_t>(t_.jobs.size()));
    j.user = user;
    j.vc = vc;
    j.name = NameId(t_.names.Intern(name));
    j.submit = r.submit;
    j.state = JobState::kCompleted;
    j.kind = JobKind::kEval;
    return j;
  }

  void Push(Job j, WorkSpec w, std::vector<uint32_t> after) {
    j.duration = w.total_steps();
    // A generous limit: twice the nominal time, rounded up to 10 minutes.
    j.walltime = ((2 * j.duration + 599) / 600) * 600;
    if (!t_.source_ids.empty()) t_.source_ids.push_back(std::string(t_.names.Get(j.name.v)));
    t_.jobs.push_back(j);
    t_.work.push_back(std::move(w));
    t_.after.push_back(std::move(after));
  }

  void AddTrial(const EvalRequest& r, const Prepared& p, const GpuJob& g, uint32_t index, size_t k, VcId vc, UserId user) {
    Job j = BaseJob(r, user, vc, r.name + "/trial" + std::to_string(k));
    j.gpus = p.w.gpus_per_trial;
    j.nodes = 1;
    j.cpu_milli = o_.trial_cpu_milli_per_gpu * j.gpus;
    const Demand d = DemandOf(j);
    WorkSpec w;
    const std::vector<eval::Phase> phases = ExpandGpuJob(p.w, p.plan, g);
    for (const eval::Phase& ph : phases) {
      switch (ph.kind) {
        case eval::PhaseKind::kStartup:
          if (ph.seconds > 0) w.phases.push_back(MakePhase(orrery::PhaseKind::kEvalTrial, Secs(ph.seconds), d));
          break;
        case eval::PhaseKind::kLoad: {
          const bool cacheable = p.plan.load == LoadSource::kNodeCache;
          orrery::Phase load = MakePhase(orrery::PhaseKind::kLoad, NominalLoad(ph.bytes, cacheable), d);
          load.load = LoadSpec{ph.bytes, index, cacheable};
          w.phases.push_back(load);
          break;
        }
        case eval::PhaseKind::kInfer:
          w.phases.push_back(MakePhase(orrery::PhaseKind::kEvalTrial, Secs(ph.seconds), d));
          break;
        case eval::PhaseKind::kMetric:
          if (ph.seconds > 0) w.phases.push_back(MakePhase(orrery::PhaseKind::kMetric, Secs(ph.seconds), d));
          break;
        case eval::PhaseKind::kPreload:
          break;  // the simulator's node caches fill on a node's first read (storage model)
      }
    }
    Push(j, std::move(w), {});
  }

  void AddMetric(const EvalRequest& r, const Prepared& p, const MetricJob& m, const std::vector<uint32_t>& trials,
                 VcId vc, UserId user) {
    Job j = BaseJob(r, user, vc, r.name + "/metric:" + p.w.datasets[m.dataset].name);
    j.gpus = 0;
    j.gpu_milli = 0;
    j.nodes = 1;
    j.cpu_milli = o_.metric_cpu_milli;
    WorkSpec w;
    w.phases.push_back(MakePhase(orrery::PhaseKind::kMetric, Secs(MetricPhase(p.w, m.dataset).seconds), DemandOf(j)));
    std::vector<uint32_t> after;
    for (uint32_t g : m.after) after.push_back(trials[g]);
    Push(j, std::move(w), std::move(after));
  }

  const ExpandOptions& o_;
  Trace& t_;
  std::map<std::string, Suite> suites_;
  std::map<std::string, std::unique_ptr<Prepared>> cache_;
};

}  // namespace

Result<std::vector<ExpandedRequest>> AddRequests(const std::vector<EvalRequest>& requests, const ExpandOptions& o,
                                                 Trace* trace) {
  if (trace->work.size() < trace->jobs.size()) trace->work.resize(trace->jobs.size());
  if (trace->after.size() < trace->jobs.size()) trace->after.resize(trace->jobs.size());
  Expander x(o, trace);
  std::vector<ExpandedRequest> out;
  for (size_t i = 0; i < requests.size(); ++i) {
    ORR_ASSIGN_OR_RETURN(ExpandedRequest e, x.Add(requests[i], static_cast<uint32_t>(i)));
    out.push_back(std::move(e));
  }
  return out;
}

// ---------------------------------------------------------------- the report

bool HasEvaluationJobs(const Trace& trace) {
  return std::any_of(trace.jobs.begin(), trace.jobs.end(), [](const Job& j) { return j.kind == JobKind::kEval; });
}

namespace {

DelayStats Stats(std::vector<double> v) {
  DelayStats s;
  s.jobs = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean_s = sum / static_cast<double>(v.size());
  // Nearest-rank percentiles.
  auto rank = [&](double q) { return v[static_cast<size_t>(std::ceil(q * static_cast<double>(v.size()))) - 1]; };
  s.p50_s = rank(0.50);
  s.p95_s = rank(0.95);
  return s;
}

RequestResult ResultOf(const ExpandedRequest& e, const Trace& trace, const std::vector<JobOutcome>& out,
                      const std::vector<Duration>& load) {
  RequestResult r;
  r.request = &e;
  r.complete = true;
  double trial_wait = 0, metric_wait = 0;
  auto see = [&](uint32_t i) {
    const JobOutcome& o = out[i];
    if (o.status != OutcomeStatus::kFinished) {
      r.complete = false;
      return false;
    }
    if (r.first_start == kNoTime || o.start < r.first_start) r.first_start = o.start;
    if (r.end == kNoTime || o.end > r.end) r.end = o.end;
    return true;
  };
  for (size_t k = 0; k < e.gpu_jobs.size(); ++k) {
    const uint32_t i = e.gpu_jobs[k];
    if (!see(i)) continue;
    const double g = trace.jobs[i].gpus;
    r.gpu_hours += static_cast<double>(out[i].run) * g / 3600.0;
    r.gpu_idle_hours += static_cast<double>(out[i].run - e.infer_s[k]) * g / 3600.0;
    if (i < load.size()) r.load_gpu_hours += static_cast<double>(load[i]) * g / 3600.0;
    trial_wait += static_cast<double>(out[i].wait);
  }
  for (uint32_t i : e.metric_jobs)
    if (see(i)) metric_wait += static_cast<double>(out[i].wait);
  if (r.end != kNoTime) r.makespan_s = static_cast<double>(r.end - e.submit);
  if (!e.gpu_jobs.empty()) r.trial_wait_s = trial_wait / static_cast<double>(e.gpu_jobs.size());
  if (!e.metric_jobs.empty()) r.metric_wait_s = metric_wait / static_cast<double>(e.metric_jobs.size());
  return r;
}

double Round3(double v) { return std::round(v * 1000) / 1000; }

nlohmann::ordered_json StatsJson(const DelayStats& s) {
  return {{"jobs", s.jobs}, {"mean_s", Round3(s.mean_s)}, {"p50_s", Round3(s.p50_s)}, {"p95_s", Round3(s.p95_s)}};
}

}  // namespace

EvalReport Summarize(const std::vector<ExpandedRequest>& requests, const Trace& trace,
                     const std::vector<JobOutcome>& outcomes, const std::vector<Duration>& load_seconds) {
  EvalReport rep;
  for (const ExpandedRequest& e : requests) rep.requests.push_back(ResultOf(e, trace, outcomes, load_seconds));
  std::vector<double> eg, ec, og;
  for (size_t i = 0; i < trace.jobs.size() && i < outcomes.size(); ++i) {
    const JobOutcome& o = outcomes[i];
    if (o.status != OutcomeStatus::kFinished) continue;
    const Job& j = trace.jobs[i];
    const double w = static_cast<double>(o.wait);
    if (j.kind == JobKind::kEval)
      (j.gpus > 0 ? eg : ec).push_back(w);
    else if (j.gpus > 0)
      og.push_back(w);
  }
  rep.eval_gpu = Stats(std::move(eg));
  rep.eval_cpu = Stats(std::move(ec));
  rep.other_gpu = Stats(std::move(og));
  return rep;
}

nlohmann::ordered_json ReportJson(const EvalReport& r) {
  nlohmann::ordered_json j;
  nlohmann::ordered_json q;
  q["definition"] = "seconds pending before each start (from submission, or from release for jobs with dependencies), finished jobs";
  q["eval_gpu_jobs"] = StatsJson(r.eval_gpu);
  q["eval_cpu_jobs"] = StatsJson(r.eval_cpu);
  q["other_gpu_jobs"] = StatsJson(r.other_gpu);
  j["queueing_delay"] = q;
  if (r.requests.empty()) return j;
  std::vector<double> mk;
  double gh = 0, idle = 0, load = 0;
  uint64_t complete = 0;
  for (const RequestResult& x : r.requests) {
    if (!x.complete) continue;
    ++complete;
    mk.push_back(x.makespan_s);
    gh += x.gpu_hours;
    idle += x.gpu_idle_hours;
    load += x.load_gpu_hours;
  }
  const DelayStats m = Stats(mk);
  nlohmann::ordered_json req;
  req["requests"] = r.requests.size();
  req["complete"] = complete;
  req["makespan_s"] = {{"mean", Round3(m.mean_s)}, {"p50", Round3(m.p50_s)}, {"p95", Round3(m.p95_s)}};
  req["gpu_hours"] = Round3(gh);
  req["gpu_idle_hours"] = Round3(idle);
  req["gpu_load_hours"] = Round3(load);
  req["idle_share"] = gh > 0 ? std::round(idle / gh * 10000) / 10000 : 0.0;
  j["requests"] = req;
  return j;
}

namespace {
std::string CsvField(const std::string& v) {
  if (v.find_first_of(",\"\n") == std::string::npos) return v;
  std::string q = "\"";
  for (char c : v) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}
}  // namespace

std::string RequestsCsv(const EvalReport& r) {
  std::string b =
      "request,submit,strategy,model,datasets,gpus,gpu_jobs,metric_jobs,complete,first_start,end,makespan_s,"
      "alone_makespan_s,gpu_hours,gpu_idle_hours,gpu_load_hours,trial_wait_s,metric_wait_s\n";
  for (const RequestResult& x : r.requests) {
    const ExpandedRequest& e = *x.request;
    auto t = [](Time v) { return v == kNoTime ? std::string() : std::to_string(v); };
    b += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{:.0f},{:.1f},{:.4f},{:.4f},{:.4f},{:.1f},{:.1f}\n", CsvField(e.name),
                     e.submit, CsvField(e.strategy), CsvField(e.model), e.datasets, e.gpus, e.gpu_jobs.size(), e.metric_jobs.size(), x.complete ? 1 : 0,
                     t(x.first_start), t(x.end), x.makespan_s, e.alone_makespan_s, x.gpu_hours, x.gpu_idle_hours,
                     x.load_gpu_hours, x.trial_wait_s, x.metric_wait_s);
  }
  return b;
}

}  // namespace orrery::eval
