// `orrery simulate`: replays a trace (any supported format) or a generated workload on
// a cluster under one or more policies, checks conservation, writes the documented
// outputs and prints a side-by-side table. No arguments = the embedded default
// scenario (a generated Helios-Venus-like month on the Venus cluster, five policies).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <mutex>

#include "base/json_text.h"
#include "analysis/failure_metrics.h"
#include "analysis/sim_output.h"
#include "base/io.h"
#include "base/parallel.h"
#include "base/parse.h"
#include "cli/commands.h"
#include "cli/flag_rules.h"
#include "cli/out_dir.h"
#include "cli/simulate_eval.h"
#include "cli/simulate_rl.h"
#include "cli/workload_flags.h"
#include "cli/shape_study.h"
#include "config/cluster_config.h"
#include "config/cluster_file.h"
#include "run/run.h"
#include "config/infer_cluster.h"
#include "sched/plugins/ces.h"
#include "sched/plugins/placers.h"
#include "sched/plugins/policies.h"
#include "sched/plugins/policy_registry.h"
#include "sim/failure_inject.h"
#include "signals/log_signals.h"
#include "signals/signal_set.h"
#include "sim/helios_compat.h"
#include "sim/simulator.h"
#include "trace/import.h"
#include "workload/cluster_of.h"
#include "workload/generator.h"
#include "workload/spec.h"

namespace orrery::cli {

namespace {

// --failures / --recovery: the injected failure list and what summary.json says about it.
// Off (empty spec): nothing, and every output is as without the option.
struct FailureSetup {
  std::vector<InjectedFailure> list;
  nlohmann::ordered_json json;
  FailureModel model;
  uint32_t gpus_per_node = 0;
};
constexpr int kMaxModelAttempts = 8;

Result<FailureSetup> SetUpFailures(const std::string& spec, const std::string& recovery, const Trace& trace,
                                   const Cluster& cluster, uint64_t seed) {
  FailureSetup out;
  if (spec.empty() || spec == "off") return out;
  Result<RecoveryPolicy> policy = MakeRecovery(recovery);
  if (!policy) return policy.error().With("--recovery");
  uint32_t per_node = 0;
  for (const Node& n : cluster.nodes) per_node = std::max<uint32_t>(per_node, n.gpus);
  InjectedSummary sum;
  const bool recorded = spec == "trace" || spec.rfind("trace:", 0) == 0;
  if (!recorded && spec.rfind("model:", 0) != 0)
    return MakeError("--failures: expected off, trace[:MODEL] or model:MODEL[:key=value,...], got \"" + spec + "\"");
  Result<FailureModel> model = MakeFailureModel(recorded ? (spec == "trace" ? "acme" : spec.substr(6)) : spec.substr(6));
  if (!model) return model.error().With("--failures");
  out.model = *model;
  out.gpus_per_node = per_node;
  out.list = recorded ? RecordedFailures(trace, *model, *policy, per_node, seed, &sum)
                      : DrawFailures(trace, *model, *policy, per_node, seed, kMaxModelAttempts, &sum);
  out.json["spec"] = spec;
  out.json["recovery"] = recovery;
  out.json["injected"] = out.list.size();
  out.json["retried"] = sum.retried;
  out.json["held_gpu_hours"] = std::round(sum.held_gpu_seconds / 3600.0 * 1000) / 1000;
  out.json["not_retried"] = sum.not_retried;
  nlohmann::ordered_json cat;
  for (int c = 0; c < kNumFailureCategories; ++c)
    cat[std::string(FailureCategoryName(static_cast<FailureCategory>(c)))] = sum.by_category[c];
  cat["timeout"] = sum.timeouts;
  out.json["by_category"] = cat;
  return out;
}

nlohmann::ordered_json FailureMetricsJson(const FailureMetrics& m) {
  const auto r = [](double v) { return std::round(v * 1000) / 1000; };
  nlohmann::ordered_json j;
  j["jobs_with_failures"] = m.jobs_with_failures;
  j["failed_attempts"] = m.failed_attempts;
  j["recovered"] = m.recovered;
  nlohmann::ordered_json kinds;
  for (int k = 1; k < kNumFailureKinds; ++k) kinds[std::string(FailureKindName(static_cast<FailureKind>(k)))] = m.by_kind[k];
  j["by_kind"] = kinds;
  j["lost_work_gpu_hours"] = r(m.lost_work_gpu_hours);
  j["overhead_gpu_hours"] = r(m.overhead_gpu_hours);
  j["waiting_gpu_hours"] = r(m.waiting_gpu_hours);
  j["mttr_s"] = r(m.mttr_s);
  j["ettr_failed_jobs"] = std::round(m.ettr * 100000) / 100000;
  return j;
}

// GPU sharing, profiler and fragmentation figures of one run (absent keys when not used).
void AddSharingJson(const Trace& trace, const SimResult& r, nlohmann::ordered_json* run) {
  if (!r.workload_assignment.empty()) {
    double shared = 0;
    for (size_t i = 0; i < r.shared_run.size(); ++i)
      shared += static_cast<double>(r.shared_run[i]) * trace.jobs[i].gpus / 2.0;  // GPU-seconds, each GPU once
    nlohmann::ordered_json sh;
    sh["workload_assignment"] = r.workload_assignment;
    sh["packed_starts"] = r.packed_starts;
    sh["shared_gpu_hours"] = std::round(shared / 3600.0 * 1000) / 1000;
    (*run)["sharing"] = sh;
  }
  if (r.profiled) {
    nlohmann::ordered_json pr;
    pr["profiled_jobs"] = r.profiled;
    pr["finished_in_profiler"] = r.done_in_profiler;
    (*run)["profiler"] = pr;
  }
  if (!r.fragmentation.empty()) {
    double ratio = 0, frag = 0, free = 0;
    for (const FragSample& f : r.fragmentation) {
      ratio += f.ratio();
      frag += f.fragmented_gpus;
      free += f.free_gpus;
    }
    const double n = static_cast<double>(r.fragmentation.size());
    nlohmann::ordered_json fr;
    fr["definition"] = "FGD-style (GPU dimension): expected share of free GPU capacity unusable by a task drawn from the trace's demand mix";
    fr["samples"] = r.fragmentation.size();
    fr["mean_ratio"] = std::round(ratio / n * 10000) / 10000;
    fr["mean_fragmented_gpus"] = std::round(frag / n * 1000) / 1000;
    fr["mean_free_gpus"] = std::round(free / n * 1000) / 1000;
    (*run)["fragmentation"] = fr;
  }
}

// packing.csv (job, workload, packed partner, explanation) and fragmentation.csv.
Status WriteSharingCsvs(const std::string& dir, const Trace& trace, const SimResult& r) {
  auto quote = [](const std::string& v) {
    std::string q = "\"";
    for (char c : v) {
      if (c == '"') q += '"';
      q += c;
    }
    return q + "\"";
  };
  if (!r.explain.empty() || !r.packs.empty()) {
    std::vector<int64_t> partner(trace.jobs.size(), -1);
    for (const auto& [j, p] : r.packs) partner[j] = p;
    std::string b = "job_id,packed_with,explanation\n";
    for (const auto& [j, why] : r.explain) {
      b += trace.source_ids.size() > j && !trace.source_ids[j].empty() ? trace.source_ids[j] : std::to_string(j);
      b += ',';
      if (partner[j] >= 0) b += std::to_string(partner[j]);
      b += ',';
      b += quote(why);
      b += '\n';
    }
    ORR_RETURN_IF_ERROR(WriteFileAtomic(dir + "/packing.csv", b));
  }
  if (!r.fragmentation.empty()) {
    std::string b = "time,free_gpus,fragmented_gpus,frag_ratio\n";
    char buf[96];
    for (const FragSample& f : r.fragmentation) {
      std::snprintf(buf, sizeof buf, "%lld,%.3f,%.3f,%.4f\n", static_cast<long long>(f.t), f.free_gpus,
                    f.fragmented_gpus, f.ratio());
      b += buf;
    }
    ORR_RETURN_IF_ERROR(WriteFileAtomic(dir + "/fragmentation.csv", b));
  }
  return Status::Ok();
}


struct Options {
  std::string trace;
  std::string format = "auto";
  std::string cluster;
  std::vector<std::string> policies;
  std::string placer = "consolidate";
  uint64_t seed = 1;
  std::string out_dir = "orrery-out";
  bool no_output = false;
  bool force = false;            // replace another run's outputs in out_dir
  bool helios_compat = false;
  bool list_policies = false;
  std::string tie_order;
  bool cpu_jobs = false;
  bool renege = false;
  bool model_cpu_mem = false;
  std::string preset;
  WorkloadModelFlags model;      // --arrivals, --batches, --long-runs, --long-run-sizes
  bool swf_procs_as_gpus = false;
  uint64_t jobs = 0;
  double days = 0;
  double load = 0;
  int64_t sample_interval = 60;
  bool quiet = false;
  bool vc_table = false;
  bool skip_bad_rows = false;
  std::string energy;            // "" or "off" = no energy saving
  int64_t wake_latency = 300;
  double resume_failure = 0;
  std::string power_model;       // documented defaults for nodes whose config has none
  unsigned threads = 0;          // policies simulated at once; 0 = every available core
  std::string failures;          // "" = off; trace[:MODEL] or model:MODEL_SPEC
  std::string recovery = "requeue";
  std::string checkpoint;        // with --failures: periodic checkpoints of every GPU job
  std::string signals;           // "advisor,tracker" (docs/design/signals.md); "" = none
  std::string tracker_options;   // LogSignalOptions, "interval=600,jitter=0.05"
  EvalSimOptions eval;           // evaluation requests (cli/simulate_eval.h)
  RlSimOptions rl;               // RL post-training jobs (cli/simulate_rl.h)
  const CLI::App* cmd = nullptr;  // the command line, for flags refused when they do not apply
};

constexpr const char* kDefaultPolicies = "fifo,sjf,srtf,qssf,easy";
constexpr double kDefaultScenarioDays = 30;

// "fifo,easy:estimator=oracle,bf_max_job_test=10" → {"fifo", "easy:estimator=oracle,bf_max_job_test=10"}
std::vector<std::string> SplitPolicies(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (const std::string& a : args) {
    size_t pos = 0;
    while (pos <= a.size()) {
      size_t c = a.find(',', pos);
      std::string tok = a.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
      if (!tok.empty()) {
        bool param = tok.find('=') != std::string::npos && tok.find(':') == std::string::npos;
        if (param && !out.empty()) out.back() += "," + tok;
        else out.push_back(tok);
      }
      if (c == std::string::npos) break;
      pos = c + 1;
    }
  }
  return out;
}

std::string Slug(const std::string& policy) {
  std::string s;
  for (char c : policy) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') s.push_back(c);
    else if (c == ':' || c == ',' || c == '=') s.push_back('_');
    if (s.size() >= 60) break;
  }
  return s;
}

Result<std::vector<uint32_t>> ReadTieOrder(const std::string& path, size_t jobs) {
  ORR_ASSIGN_OR_RETURN(auto r, LineReader::Open(path));
  std::vector<uint32_t> seq(jobs, UINT32_MAX);
  std::string_view line;
  std::vector<Field> f;
  std::vector<std::string> scratch;
  bool header = true;
  while (r->Next(&line)) {
    if (header) {
      header = false;
      continue;
    }
    uint32_t bad = 0;
    SourcePos pos{path, r->line_number(), 1};
    int64_t id = 0, s = 0;
    if (!SplitLine(line, ',', &f, &scratch, &bad) || f.size() != 2)
      return FieldError(pos, "job_id,seq", "two integers", line);
    if (!ParseI64(f[0].text, &id) || id < 0 || static_cast<size_t>(id) >= jobs) {
      pos.col = f[0].col;
      return FieldError(pos, "job_id", "a job index below " + std::to_string(jobs), f[0].text);
    }
    if (!ParseI64(f[1].text, &s) || s < 0 || s > UINT32_MAX) {
      pos.col = f[1].col;
      return FieldError(pos, "seq", "a non-negative integer", f[1].text);
    }
    seq[id] = static_cast<uint32_t>(s);
  }
  if (!r->error().empty()) return MakeError(r->error());
  for (size_t i = 0; i < jobs; ++i)
    if (seq[i] == UINT32_MAX) return MakeError(path + ": no seq for job " + std::to_string(i));
  return seq;
}

// Progress of one or more simulations running at once (updated from their threads): one bar
// over the summed progress, labelled with the policy when only one runs.
class Progress {
 public:
  Progress(bool enabled, std::vector<std::string> labels)
      : enabled_(enabled && isatty(2)), labels_(std::move(labels)), done_(labels_.size()), total_(labels_.size()) {}
  void Update(size_t run, uint64_t done, uint64_t total) {
    if (!enabled_) return;
    std::lock_guard<std::mutex> lock(mu_);
    done_[run] = done;
    total_[run] = total;
    uint64_t d = 0, t = 0;
    size_t active = 0, last = run;
    for (size_t i = 0; i < done_.size(); ++i) {
      d += done_[i];
      t += total_[i];
      if (total_[i] && done_[i] < total_[i]) ++active, last = i;
    }
    if (t == 0) return;
    int pct = static_cast<int>(100 * d / t);
    if (pct == last_) return;
    last_ = pct;
    int bar = pct / 4;
    const std::string label = active > 1 ? std::to_string(active) + " policies" : labels_[last];
    std::fprintf(stderr, "\r%-24.24s [%.*s%*s] %3d%%", label.c_str(), bar, "#########################", 25 - bar, "", pct);
  }
  // Called on the consuming thread once run `run` is complete.
  void Done(size_t run) {
    if (!enabled_) return;
    std::lock_guard<std::mutex> lock(mu_);
    done_[run] = total_[run];
    if (last_ >= 0) std::fprintf(stderr, "\r%*s\r", 60, "");
    last_ = -1;
  }

 private:
  bool enabled_;
  std::vector<std::string> labels_;
  std::mutex mu_;
  std::vector<uint64_t> done_, total_;
  int last_ = -1;
};

// Where the cluster came from, for the header line and the energy power model.
struct ClusterChoice {
  Cluster cluster;
  std::string toml;  // the TOML file it was loaded from ("" = embedded default or inferred)
  std::string note;  // printed when the cluster was inferred
};

// --cluster FILE (TOML, openb node list or slurm.conf), auto (inferred from the workload), or nothing:
// a generated preset's own cluster (the embedded Venus for the default scenario), an SWF
// log's header machine, else the embedded Venus cluster.
Result<ClusterChoice> SelectCluster(const Options& o, const workload::WorkloadSpec* spec, TraceFormat fmt) {
  ClusterChoice c;
  const bool auto_cluster = o.cluster == "auto";
  if (!o.cluster.empty() && !auto_cluster) {
    ORR_ASSIGN_OR_RETURN(c.cluster, LoadClusterFile(o.cluster));
    if (ClusterFileKindOf(o.cluster) == ClusterFileKind::kToml) c.toml = o.cluster;
    return c;
  }
  if (spec != nullptr && (auto_cluster || spec->name != workload::kDefaultPreset)) {
    c.cluster = workload::ClusterOf(*spec);
    const StartLatency& l = spec->start_latency;
    const auto FormatNum = [](double x) {
      char b[32];
      std::snprintf(b, sizeof b, "%g", x);
      return std::string(b);
    };
    const std::string latency = l.active() ? ", start latency " + FormatNum(l.min_s) + " s + lognormal, median " +
                                                 FormatNum(l.median_s) + " s (docs/formats/cluster.md)"
                                           : "";
    c.note = "cluster of preset '" + spec->name + "' (its VCs, " + std::to_string(spec->gpus_per_node) +
             " GPUs per node" + latency + "); --cluster FILE.toml to choose another";
    return c;
  }
  if (spec == nullptr && fmt == TraceFormat::kSwf) {
    ORR_ASSIGN_OR_RETURN(auto m, ReadSwfMachine(o.trace));
    ORR_ASSIGN_OR_RETURN(c.cluster, SwfCluster(m, o.trace));
    c.note = "cluster inferred from the SWF header (MaxProcs " + std::to_string(m.max_procs) + ", MaxNodes " +
             (m.max_nodes ? std::to_string(m.max_nodes) : std::string("absent")) + "): one pool of " +
             std::to_string(c.cluster.nodes.size()) + " nodes, each processor counted as a GPU; --cluster FILE.toml to choose another";
    return c;
  }
  if (auto_cluster)
    return MakeError("--cluster auto: a " + std::string(TraceFormatName(fmt)) +
                     " trace does not describe its cluster (auto works for generated workloads and SWF logs); "
                     "pass --cluster FILE.toml (configs/ has examples)");
  ORR_ASSIGN_OR_RETURN(c.cluster, DefaultCluster());
  return c;
}


constexpr std::string_view kLlmPreset = "llm";

// --generate llm: the planner-described GPT pre-training workload of `orrery plan
// shape-study` (cli/shape_study.h) on the cluster's first GPU type: --jobs (default 64),
// --seed, --load (mean interarrival 900 s / load).
Result<Trace> GenerateLlmTrace(const Options& o, const Cluster& cluster) {
  if (cluster.gpu_types.size() == 0 || cluster.nodes.empty())
    return MakeError("the cluster has no typed GPU nodes (the planner times jobs per GPU type)");
  ORR_ASSIGN_OR_RETURN(std::shared_ptr<const PlannerCost> cost, PlannerCostFor(cluster));
  LlmWorkloadSpec spec;
  if (o.jobs) spec.jobs = static_cast<uint32_t>(o.jobs);
  spec.seed = o.seed;
  if (o.load > 0) spec.mean_interarrival_s /= o.load;
  const GpuTypeId type = cluster.nodes.front().gpu_type;
  return GenerateLlmWorkload(spec, *cost, type, cluster.nodes.front().gpus);
}

// The simulator configuration of one policy's run.
SimConfig MakeSimConfig(const Options& o, const std::string& policy, const std::vector<uint32_t>& tie,
                        const std::string& energy, const std::vector<PowerModel>& node_power) {
  SimConfig cfg;
  cfg.policy = policy;
  cfg.placer = o.placer;
  cfg.seed = o.seed;
  cfg.sample_interval = o.no_output ? 0 : o.sample_interval;  // timeseries.csv is the only reader
  // Evaluation requests have CPU metric jobs that run on CPU capacity.
  cfg.model_cpu_mem = o.model_cpu_mem || o.eval.any();
  cfg.run_cpu_jobs = o.cpu_jobs || o.eval.any();
  cfg.storage = o.eval.expand.storage;
  cfg.renege = o.renege;
  cfg.tie_order = tie;
  cfg.energy = energy;
  cfg.wake_latency = o.wake_latency;
  cfg.resume_failure = o.resume_failure;
  cfg.node_power = node_power;
  cfg.explain = !o.no_output;  // packing.csv is the only reader
  cfg.record_attempts = !o.no_output && !o.helios_compat;  // attempts.csv is the only reader
  return cfg;
}

// What one policy's run hands back to be printed in policy order (its files are written by
// then).
struct PolicyRun {
  Status status;
  RunSummary summary;
  nlohmann::ordered_json json;
  std::vector<std::string> notes;
  double seconds = 0;  // simulation and conservation check
};

// One output folder per policy, named after its spec; two specs with the same slug never
// share a folder ("fifo", "fifo-2").
std::vector<std::string> RunDirs(const std::string& out_dir, const std::vector<std::string>& policies) {
  std::vector<std::string> slugs;
  for (const std::string& p : policies) {
    std::string slug = Slug(p);
    for (int k = 2; std::find(slugs.begin(), slugs.end(), slug) != slugs.end(); ++k) slug = Slug(p) + "-" + std::to_string(k);
    slugs.push_back(slug);
  }
  for (std::string& s : slugs) s = out_dir + "/" + s;
  return slugs;
}

// jobs.csv, attempts.csv (when recorded), timeseries.csv and the sharing CSVs of one run, in
// its folder.
Status WriteRunFiles(const std::string& dir, const Trace& trace, const Cluster& cluster, const SimConfig& cfg,
                     const SimResult& r) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return MakeError(dir + ": cannot create directory: " + ec.message(), kExitRuntime);
  ORR_RETURN_IF_ERROR(WriteJobsCsv(dir + "/jobs.csv", trace, r.outcomes, r.vc_names, r.reasons));
  if (cfg.record_attempts) ORR_RETURN_IF_ERROR(WriteAttemptsCsv(dir + "/attempts.csv", trace, r.attempts, cluster));
  ORR_RETURN_IF_ERROR(
      WriteTimeSeriesCsv(dir + "/timeseries.csv", r.samples, r.total_gpus, r.has_energy ? &r.powered_samples : nullptr));
  return WriteSharingCsvs(dir, trace, r);
}

// The summary, summary.json entry and notes of one finished run.
void SummariseRun(const Trace& trace, const SimConfig& cfg, const SimResult& r, PolicyRun* out) {
  const std::string& p = cfg.policy;
  out->summary = SummaryOf(r, trace);
  out->json = SummaryToJson(out->summary);
  AddSharingJson(trace, r, &out->json);
  if (!r.workload_assignment.empty()) out->notes.push_back(p + ": job attributes for packing: " + r.workload_assignment);
  if (!r.fragmentation.empty()) {
    double mean = 0;
    for (const FragSample& f : r.fragmentation) mean += f.ratio();
    mean /= static_cast<double>(r.fragmentation.size());
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s: mean fragmentation ratio %.3f (FGD-style, %zu samples every %llds)", p.c_str(),
                  mean, r.fragmentation.size(), static_cast<long long>(cfg.frag_interval));
    out->notes.push_back(buf);
  }
}

// --failures: the console table's failure rows (failed and cancelled jobs, cordoned capacity)
// and the warning when repairs took more than kRepairWarnShare of the capacity.
void AddFailureSummary(const Trace& trace, const SimResult& r, PolicyRun* out) {
  RunSummary& s = out->summary;
  s.has_failures = true;
  s.cancelled = s.withdrawn;
  for (const Job& j : trace.jobs) s.cancelled += j.state == JobState::kCancelled;
  s.cordons = r.cordoned_nodes;
  s.cordoned_node_hours = r.cordoned_node_seconds / 3600.0;
  const double capacity = static_cast<double>(r.total_gpus) * static_cast<double>(std::max<Time>(0, r.last_end - r.first_submit));
  s.cordoned_capacity_share = capacity > 0 ? r.cordoned_gpu_seconds / capacity : 0;
  if (std::string w = RepairCapacityWarning(s); !w.empty()) out->notes.push_back(std::move(w));
}

// Simulates one policy, checks conservation, summarises the run and writes its files to
// `dir` (none when empty). Independent of every other policy's run, so several run at once
// on worker threads.
PolicyRun RunPolicy(const Options& o, const Trace& trace, const Cluster& cluster, const SimConfig& cfg,
                    const std::string& dir, const nlohmann::ordered_json& failures_json,
                    const signals::LogSignalOptions* tracker_opts, const std::vector<eval::ExpandedRequest>& requests,
                    const rl::RlExpansion& rl_jobs) {
  PolicyRun out;
  // --signals tracker: this run's own simulated job logs, read by the real progress tracker.
  std::unique_ptr<signals::LogSignals> tracker;
  SimConfig run_cfg = cfg;
  if (tracker_opts) tracker = std::make_unique<signals::LogSignals>(o.seed, *tracker_opts);
  run_cfg.signals = tracker.get();
  auto t0 = std::chrono::steady_clock::now();
  Result<SimResult> r = SimulateChecked(trace, cluster, run_cfg, o.helios_compat);
  if (!r.ok()) {
    out.status = r.error();
    return out;
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  SummariseRun(trace, cfg, *r, &out);
  if (!failures_json.empty()) {  // --failures: the setup, and the metrics computed from attempts
    AddFailureSummary(trace, *r, &out);
    nlohmann::ordered_json f = failures_json;
    f["cordoned_nodes"] = r->cordoned_nodes;
    f["cordoned_node_hours"] = std::round(out.summary.cordoned_node_hours * 1000) / 1000;
    f["cordoned_capacity_share"] = std::round(out.summary.cordoned_capacity_share * 100000) / 100000;
    if (cfg.record_attempts) f["metrics"] = FailureMetricsJson(ComputeFailureMetrics(trace, r->outcomes, r->attempts));
    out.json["failures"] = f;
  }
  if (!requests.empty() || eval::HasEvaluationJobs(trace)) {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    Result<nlohmann::ordered_json> ev = EvalReportOf(requests, trace, *r, dir);
    if (!ev) {
      out.status = ev.error().With("policy " + cfg.policy);
      return out;
    }
    out.json["evaluation"] = std::move(*ev);
  }
  if (!rl_jobs.jobs.empty()) {
    const rl::RlReport rep = rl::SummarizeRl(rl_jobs, r->outcomes, r->harvest);
    out.json["rl"] = RlReportJson(rep);
    out.notes.push_back(RlNote(cfg.policy, rep));
  }
  if (tracker) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "%s: tracker read %llu Megatron log lines (%.1f MB) every %llds", cfg.policy.c_str(),
                  static_cast<unsigned long long>(tracker->lines_written()), static_cast<double>(tracker->bytes_written()) / 1e6,
                  static_cast<long long>(tracker_opts->interval));
    out.notes.push_back(buf);
  }
  if (!dir.empty()) out.status = WriteRunFiles(dir, trace, cluster, cfg, *r);
  return out;
}

// Flags that do not apply to the chosen input are refused before any work (docs/cli.md).
Status CheckFlagsApply(const Options& o, const CLI::App& cmd) {
  if (!o.trace.empty())
    ORR_RETURN_IF_ERROR(RefuseGiven(cmd, {"--jobs", "--days", "--load", "--arrivals", "--batches", "--long-runs", "--long-run-sizes"},
                                    "it shapes a generated workload, and " + o.trace + " is a trace, replayed as recorded"));
  else
    ORR_RETURN_IF_ERROR(RefuseGiven(cmd, {"--format", "--skip-bad-rows", "--swf-procs-as-gpus"},
                                    "it reads a trace file, and none is given (the workload is generated)"));
  if (o.preset == kLlmPreset)
    ORR_RETURN_IF_ERROR(RefuseGiven(cmd, {"--days", "--arrivals", "--batches", "--long-runs", "--long-run-sizes"},
                                    "--generate llm is shaped by --jobs, --load and --seed only"));
  if (o.energy.empty() || o.energy == "off")
    ORR_RETURN_IF_ERROR(RefuseGiven(cmd, {"--wake-latency", "--resume-failure", "--power-model"},
                                    "it tunes energy saving, which is off (--energy ces[:key=value,...] turns it on)"));
  if (o.failures.empty() || o.failures == "off")
    ORR_RETURN_IF_ERROR(RefuseGiven(cmd, {"--recovery"}, "it sets how failed jobs recover, and failures are off (see --failures)"));
  if (o.no_output)
    ORR_RETURN_IF_ERROR(RefuseGiven(cmd, {"--out-dir", "--force", "--sample-interval"}, "--no-output writes no files"));
  return Status::Ok();
}

// The workload to replay and how it is described in the header line and summary.json.
struct Workload {
  Trace trace;
  std::string scenario;
  std::optional<workload::WorkloadSpec> spec;  // a generated preset's
  TraceFormat fmt = TraceFormat::kAuto;        // a trace file's
};

Result<Workload> ReadTraceFile(const Options& o) {
  if (!o.preset.empty()) return MakeError("give either a trace or --generate, not both");
  Workload w;
  ORR_ASSIGN_OR_RETURN(w.fmt, ParseTraceFormat(o.format));
  if (w.fmt == TraceFormat::kAuto) {
    ORR_ASSIGN_OR_RETURN(w.fmt, DetectTraceFormat(o.trace));
  }
  ImportOptions io;
  io.skip_bad_rows = o.skip_bad_rows;
  // An SWF log on its header's machine: processors are the schedulable devices.
  io.swf_procs_as_gpus = o.swf_procs_as_gpus || (w.fmt == TraceFormat::kSwf && (o.cluster.empty() || o.cluster == "auto"));
  ImportReport rep;
  ORR_ASSIGN_OR_RETURN(w.trace, LoadTrace(o.trace, w.fmt, io, &rep));
  w.scenario = o.trace;
  if (rep.rows_skipped) std::fprintf(stderr, "note: %llu bad rows skipped\n", static_cast<unsigned long long>(rep.rows_skipped));
  return w;
}

// "generated 'helios-venus' (seed 1, 30 days, open-loop arrivals, ...)": the preset, its size
// and the workload models that differ from the defaults.
std::string GeneratedScenario(const std::string& preset, uint64_t seed, const workload::WorkloadSpec& spec) {
  std::string batches = spec.batches == workload::BatchModel::kSingle
                            ? std::string()
                            : ", " + std::string(workload::BatchModelName(spec.batches));
  if (spec.long_runs != workload::LongRunArrivals::kWeekly)
    batches += ", long runs " + std::string(workload::LongRunArrivalsName(spec.long_runs));
  if (spec.long_run_sizes != workload::LongRunSizes::kClassMix)
    batches += ", long-run sizes " + std::string(workload::LongRunSizesName(spec.long_run_sizes));
  char buf[160];
  std::snprintf(buf, sizeof buf, "generated '%s' (seed %llu, %s, %s arrivals%s)", preset.c_str(),
                static_cast<unsigned long long>(seed),
                spec.jobs ? (std::to_string(spec.jobs) + " jobs").c_str()
                          : (std::to_string(static_cast<int>(spec.days)) + " days").c_str(),
                std::string(workload::ArrivalModelName(spec.arrivals)).c_str(), batches.c_str());
  return buf;
}

// A generated preset (with no trace and no --generate: the default scenario), shaped by
// --jobs, --days, --load and the workload model flags.
Result<Workload> GeneratePreset(const Options& o) {
  Workload w;
  std::string preset = o.preset.empty() ? std::string(workload::kDefaultPreset) : o.preset;
  ORR_ASSIGN_OR_RETURN(w.spec, workload::GetPreset(preset));
  workload::WorkloadSpec& spec = *w.spec;
  if (o.jobs) spec.jobs = o.jobs;
  if (o.days > 0) spec.days = o.days;
  if (o.preset.empty() && !o.jobs && o.days <= 0) spec.days = kDefaultScenarioDays;
  if (o.load > 0) spec.load = o.load;
  ORR_RETURN_IF_ERROR(ApplyWorkloadModelFlags(o.model, &spec));
  ORR_RETURN_IF_ERROR(workload::ValidateSpec(spec));
  w.trace = workload::GenerateWorkload(spec, o.seed);
  w.scenario = GeneratedScenario(preset, o.seed, spec);
  return w;
}

Result<Workload> LoadWorkload(const Options& o) {
  if (!o.trace.empty()) return ReadTraceFile(o);
  if (o.preset == kLlmPreset) {
    Workload w;  // its trace is generated once the cluster is known
    w.scenario = "generated LLM pre-training workload (seed " + std::to_string(o.seed) + ")";
    return w;
  }
  return GeneratePreset(o);
}

// Everything a run needs, read and checked before any simulation or output.
struct Setup {
  Workload workload;
  ClusterChoice choice;
  std::vector<eval::ExpandedRequest> requests;
  rl::RlExpansion rl;
  std::vector<uint32_t> tie;
  std::vector<std::string> policies;
  signals::SignalSet sig;
  signals::LogSignalOptions tracker_opts;
  std::vector<std::string> notes;  // printed after the table
  std::string energy;              // "" = off
  std::vector<PowerModel> node_power;
  FailureSetup failures;
};

// --policy (split into specs), --signals and --tracker-options; with the advisor, each policy
// reads its estimates. Every policy and the placer are built once here, so that a bad spec
// fails before any work or output.
Status SetUpPolicies(const Options& o, const Trace& trace, const Cluster& cluster, Setup* s) {
  s->policies = SplitPolicies(o.policies.empty() ? std::vector<std::string>{kDefaultPolicies} : o.policies);
  if (s->policies.empty()) return MakeError("no policy given");
  ORR_ASSIGN_OR_RETURN(s->sig, signals::ParseSignalSet(o.signals));
  ORR_ASSIGN_OR_RETURN(s->tracker_opts, signals::ParseLogSignalOptions(o.tracker_options));
  if (!o.tracker_options.empty() && !s->sig.tracker) return MakeError("--tracker-options needs --signals tracker");
  if (s->sig.any() && o.helios_compat) return MakeError("--signals cannot be combined with --helios-compat");
  if (o.renege && o.helios_compat) return MakeError("--renege cannot be combined with --helios-compat");
  if (s->sig.advisor) {
    for (std::string& p : s->policies) {
      if (!signals::ReadsEstimate(p)) s->notes.push_back(p + ": reads no duration estimate (--signals advisor has nothing to feed it)");
      ORR_ASSIGN_OR_RETURN(p, signals::WithAdvisor(p));
    }
  }
  for (const std::string& p : s->policies) {
    PolicyEnv env{&trace, &cluster, nullptr, {}};
    auto parts = MakePolicyFor(p, o.seed, &env);
    if (!parts.ok()) return parts.error().With("policy " + p);
    for (const std::string& n : parts->notes) s->notes.push_back("warning: " + p + ": " + n);
  }
  if (auto pl = MakePlacer(o.placer, o.seed); !pl.ok()) return pl.error();
  return Status::Ok();
}

// --energy: the spec checked, and each node's power model: the cluster TOML's (the embedded
// one's by default), else --power-model's documented defaults.
Status SetUpEnergy(const Options& o, const ClusterChoice& choice, Setup* s) {
  s->energy = o.energy == "off" ? std::string() : o.energy;
  if (s->energy.empty()) return Status::Ok();
  const Cluster& cluster = choice.cluster;
  if (o.helios_compat) return MakeError("--energy cannot be combined with --helios-compat");
  if (auto e = ParseCesSpec(s->energy); !e.ok()) return e.error();
  if (o.resume_failure < 0 || o.resume_failure > 0.9)
    return MakeError("--resume-failure: expected a probability in [0, 0.9], got " + std::to_string(o.resume_failure));
  std::vector<PowerModel>& node_power = s->node_power;
  const bool embedded = o.cluster.empty() && choice.toml.empty() && choice.note.empty();
  if (embedded || !choice.toml.empty()) {
    auto cs = embedded ? ParseClusterSpecString(EmbeddedDefaultClusterToml(), "<embedded configs/helios-venus.toml>")
                       : LoadClusterSpec(choice.toml);
    if (!cs.ok()) return cs.error();
    for (size_t i = 0; i < cluster.nodes.size(); ++i) node_power.push_back(cs->node_power(NodeId(static_cast<uint32_t>(i))));
  }
  if (!o.power_model.empty()) {
    if (!DefaultPowerModel(o.power_model, 8).known())
      return MakeError("--power-model: expected V100, A100 or H100, got \"" + o.power_model + "\"");
    node_power.resize(cluster.nodes.size());
    for (size_t i = 0; i < node_power.size(); ++i)
      if (!node_power[i].known()) node_power[i] = DefaultPowerModel(o.power_model, cluster.nodes[i].gpus);
  }
  return Status::Ok();
}

// --checkpoint: periodic checkpoints of every GPU job (needs a failure model).
Status AddCheckpoints(const Options& o, Trace* trace, FailureSetup* failures) {
  if (o.checkpoint.empty()) return Status::Ok();
  if (failures->json.empty()) return MakeError("--checkpoint needs --failures");
  if (!trace->work.empty()) return MakeError("--checkpoint: the trace already has phases");
  Result<CheckpointPlan> plan = MakeCheckpointPlan(o.checkpoint);
  if (!plan) return plan.error().With("--checkpoint");
  trace->work = CheckpointedWork(*trace, failures->model, *plan, failures->gpus_per_node);
  failures->json["checkpoint"] = o.checkpoint;
  return Status::Ok();
}

// The workload, the cluster and every option, in the order their errors are reported. `o` is
// not const: the evaluation requests' expansion keeps what it read in o.eval.
Result<Setup> SetUp(Options& o) {
  Setup s;
  ORR_ASSIGN_OR_RETURN(s.workload, LoadWorkload(o));
  Trace& trace = s.workload.trace;
  ORR_ASSIGN_OR_RETURN(s.choice, SelectCluster(o, s.workload.spec ? &*s.workload.spec : nullptr, s.workload.fmt));
  const Cluster& cluster = s.choice.cluster;
  if (o.preset == kLlmPreset) {
    if (o.cluster.empty() || o.cluster == "auto")
      return MakeError("--generate llm: pass --cluster FILE.toml whose GPU types have planner profiles "
                       "(e.g. configs/h200-16x8.toml)");
    auto llm = GenerateLlmTrace(o, cluster);
    if (!llm.ok()) return llm.error().With("--generate llm");
    trace = std::move(*llm);
  }
  if (o.eval.any() && o.helios_compat)
    return MakeError("--eval-requests/--eval-every cannot be combined with --helios-compat (it has no job phases or dependencies)");
  ORR_ASSIGN_OR_RETURN(s.requests, AddEvalRequests(o.eval, cluster, &trace));
  if (o.rl.any() && o.helios_compat)
    return MakeError("--rl-jobs/--rl-share cannot be combined with --helios-compat (it has no job phases)");
  ORR_ASSIGN_OR_RETURN(s.rl, AddRlSimJobs(o.rl, *o.cmd, cluster, o.seed, &trace));
  if (!o.tie_order.empty()) {
    ORR_ASSIGN_OR_RETURN(s.tie, ReadTieOrder(o.tie_order, trace.jobs.size()));
  }
  ORR_RETURN_IF_ERROR(SetUpPolicies(o, trace, cluster, &s));
  ORR_RETURN_IF_ERROR(SetUpEnergy(o, s.choice, &s));
  ORR_ASSIGN_OR_RETURN(s.failures, SetUpFailures(o.failures, o.recovery, trace, cluster, o.seed));
  ORR_RETURN_IF_ERROR(AddCheckpoints(o, &trace, &s.failures));
  return s;
}

// The table, the wall times, the notes and (--vc-table) the per-VC tables.
void PrintResults(const Options& o, size_t jobs, const std::vector<RunSummary>& summaries,
                  const std::vector<double>& wall, const std::vector<std::string>& notes) {
  if (!o.quiet) std::printf("\n");
  std::printf("%s", FormatSummaryTable(summaries).c_str());
  if (!o.quiet) {
    std::printf("simulation wall time:");
    for (size_t i = 0; i < wall.size(); ++i)
      std::printf(" %s %.3f s (%.0f jobs/s)%s", summaries[i].policy.c_str(), wall[i],
                  wall[i] > 0 ? static_cast<double>(jobs) / wall[i] : 0.0, i + 1 < wall.size() ? "," : "\n");
  }
  for (const std::string& n : notes) std::printf(n.rfind("warning: ", 0) == 0 ? "%s\n" : "note: %s\n", n.c_str());
  if (o.vc_table)
    for (const auto& s : summaries) std::printf("\n%s\n%s", s.policy.c_str(), FormatVcTable(s).c_str());
}

// Simulates every policy, prints the results and writes summary.json (the runs' files are
// written as each run ends).
int SimulateAll(const Options& o, Setup& s) {
  const Trace& trace = s.workload.trace;
  const Cluster& cluster = s.choice.cluster;
  const std::vector<std::string>& policies = s.policies;
  if (!o.quiet) {
    std::printf("Orrery simulate: %s\n", s.workload.scenario.c_str());
    std::printf("  %zu jobs on cluster '%s' (%zu nodes, %llu GPUs, %zu VCs), placer %s%s\n", trace.jobs.size(),
                cluster.name.c_str(), cluster.nodes.size(), static_cast<unsigned long long>(cluster.total_gpus()),
                cluster.vcs.size(), o.placer.c_str(), o.helios_compat ? ", Helios-compatible mode" : "");
  }
  if (!s.choice.note.empty()) std::fprintf(stderr, "note: %s\n", s.choice.note.c_str());
  Progress progress(!o.quiet, policies);
  std::vector<SimConfig> cfgs;
  for (size_t i = 0; i < policies.size(); ++i) {
    cfgs.push_back(MakeSimConfig(o, policies[i], s.tie, s.energy, s.node_power));
    cfgs.back().progress = [&progress, i](uint64_t d, uint64_t t) { progress.Update(i, d, t); };
    cfgs.back().failures = s.failures.list;
    cfgs.back().harvest = rl::HarvestPlans(s.rl);
  }
  const std::vector<std::string> dirs =
      o.no_output ? std::vector<std::string>(policies.size()) : RunDirs(o.out_dir, policies);
  // The policies' runs are independent: they go on up to --threads cores, and what they hand
  // back is gathered here in policy order (the same bytes as one thread).
  nlohmann::ordered_json all = nlohmann::ordered_json::object();
  all["scenario"] = s.workload.scenario;
  all["cluster"] = cluster.name;
  all["seed"] = o.seed;
  all["jobs"] = trace.jobs.size();
  if (s.sig.any()) all["signals"] = {{"advisor", s.sig.advisor}, {"tracker", s.sig.tracker}};
  if (!o.no_output)
    if (Status st = ClaimOutDir(o.out_dir, all, policies, dirs, o.force); !st.ok()) return Fail("simulate", st.error());
  all["runs"] = nlohmann::ordered_json::array();
  std::vector<RunSummary> summaries;
  std::vector<double> wall;
  Error failed = MakeError("");
  const signals::LogSignalOptions* tracker_opts = s.sig.tracker ? &s.tracker_opts : nullptr;
  const bool ok = RunOrdered<PolicyRun>(
      policies.size(), o.threads ? o.threads : AvailableCpus(),
      [&](size_t i) { return RunPolicy(o, trace, cluster, cfgs[i], dirs[i], s.failures.json, tracker_opts, s.requests, s.rl); },
      [&](size_t i, PolicyRun& run) {
        progress.Done(i);
        if (!run.status.ok()) {
          failed = run.status.error();
          return false;
        }
        summaries.push_back(std::move(run.summary));
        all["runs"].push_back(std::move(run.json));
        s.notes.insert(s.notes.end(), run.notes.begin(), run.notes.end());
        wall.push_back(run.seconds);
        return true;
      });
  if (!ok) return Fail("simulate", failed);
  PrintResults(o, trace.jobs.size(), summaries, wall, s.notes);
  if (!o.no_output) {
    Status w = WriteFileAtomic(o.out_dir + "/summary.json", DumpJson(all, 2) + "\n");
    if (!w.ok()) return Fail("simulate", w.error());
    if (!o.quiet) std::printf("\noutputs: %s/summary.json and %s/<policy>/{jobs,timeseries}.csv\n", o.out_dir.c_str(),
                              o.out_dir.c_str());
  }
  return kExitOk;
}

int Run(Options o, const CLI::App& cmd) {
  if (o.list_policies) {
    if (Status st = RefuseAllBut(cmd, "--list-policies", "--list-policies prints the policy registry and runs nothing");
        !st.ok())
      return Fail("simulate", st.error());
    std::fputs(PolicyListMarkdown().c_str(), stdout);
    return 0;
  }
  if (Status st = CheckFlagsApply(o, cmd); !st.ok()) return Fail("simulate", st.error());
  Result<Setup> setup = SetUp(o);
  if (!setup) return Fail("simulate", setup.error());
  return SimulateAll(o, *setup);
}

}  // namespace

void RegisterSimulate(CLI::App& app, int* exit_code) {
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("simulate", "Replay a trace (or a generated workload) under scheduling policies");
  SetExamples(cmd, {"./build/orrery simulate --generate helios-venus --days 3 --policy fifo,easy --no-output",
                    "./build/orrery simulate tests/fixtures/swf/tiny.swf --policy fifo,sjf,easy --no-output",
                    "./build/orrery simulate ../shared/traces/philly-pollux/philly.part-A.submit-before-2017-11-01.csv "
                    "--cluster configs/philly.toml --policy fifo,qssf,easy:estimator=oracle --out-dir /tmp/orrery-example-sim",
                    "./build/orrery simulate tests/fixtures/eval_sim/train.csv --cluster tests/fixtures/eval_sim/tiny.toml "
                    "--eval-requests tests/fixtures/eval_sim/requests.csv --policy fifo,fifo:eval_share=0.25 --no-output"});
  cmd->add_option("trace", opts->trace, "Trace file (any supported format, .gz ok); omit to generate a workload");
  cmd->add_option("--format", opts->format, "Trace format: auto, canonical, helios, philly, openb, swf, sacct, acme");
  cmd->add_option("--cluster", opts->cluster,
                  "Cluster config (TOML, see configs/), an openb node list CSV, a slurm.conf (its partitions' nodes), or auto (inferred: a generated "
                  "preset's VCs, an SWF header's MaxProcs/MaxNodes). Default: auto for --generate and SWF logs, "
                  "else the embedded helios-venus");
  cmd->add_option("--policy", opts->policies,
                  "Policies, comma-separated, each name[:key=value,...]: " + PolicyNameList() +
                      " (default: fifo,sjf,srtf,qssf,easy; --list-policies gives each one's options)");
  cmd->add_flag("--list-policies", opts->list_policies,
                "Print every policy with its options, defaults and whether orrery serve runs it (docs/policies.md), "
                "and exit");
  cmd->add_option("--placer", opts->placer, "consolidate (default), first-fit, spread, random");
  cmd->add_option("--seed", opts->seed, "Seed for generators, noisy estimators and the random placer (default 1)");
  cmd->add_option("--out-dir", opts->out_dir, "Output directory (default orrery-out)");
  cmd->add_flag("--no-output", opts->no_output, "Print the table only; write no files");
  cmd->add_flag("--force", opts->force,
                "Replace the outputs of another run found in --out-dir (by default such a folder is refused; the "
                "same run's outputs are always replaced)");
  cmd->add_flag("--helios-compat", opts->helios_compat,
                "Reproduce the Helios artifact simulator exactly (fifo, sjf, qssf; consolidate)");
  cmd->add_option("--tie-order", opts->tie_order, "CSV job_id,seq ordering same-second arrivals and equal keys");
  cmd->add_flag("--cpu-jobs", opts->cpu_jobs, "Simulate jobs without GPUs too (skipped by default)");
  cmd->add_flag("--renege", opts->renege,
                "Users cancel pending jobs: a job recorded CANCELLED leaves the queue at submit + its recorded run "
                "time if it has not started (status withdrawn; its wait counts)");
  cmd->add_flag("--model-cpu-mem", opts->model_cpu_mem, "Account CPU and memory where nodes declare them");
  AddEvalSimFlags(cmd, &opts->eval);
  AddRlSimFlags(cmd, &opts->rl);
  opts->cmd = cmd;
  cmd->add_option("--generate", opts->preset,
                  "Generate a workload from a preset instead of reading a trace (llm: GPT pre-training jobs the planner "
                  "times, with --cluster FILE.toml; for shape=goodput policies)");
  AddWorkloadModelFlags(cmd, &opts->model);
  cmd->add_flag("--swf-procs-as-gpus", opts->swf_procs_as_gpus,
                "SWF: count processors as GPUs (always on when the cluster is inferred from the SWF header)");
  cmd->add_option("--jobs", opts->jobs, "Generated jobs (with --generate or the default scenario)")
      ->check(CountInRange(1, 100'000'000, "jobs"));
  cmd->add_option("--days", opts->days, "Generated days (default scenario: 30)")->check(InRange(0, 3650, true, "days"));
  cmd->add_option("--load", opts->load, "Arrival-rate multiplier for generated workloads")
      ->check(InRange(0, 1000, true, "times the preset's arrival rate"));
  cmd->add_option("--sample-interval", opts->sample_interval, "Time-series period in seconds (default 60; 0 = off)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--skip-bad-rows", opts->skip_bad_rows, "Skip malformed trace rows instead of failing");
  cmd->add_flag("--vc-table", opts->vc_table, "Also print per-VC tables");
  cmd->add_option("--signals", opts->signals,
                  "Semantic signals fed to the policies: advisor (estimate at submit from the job's launch config: "
                  "estimator=semantic), tracker (progress and ETA from the job's log while it runs); e.g. advisor,tracker");
  cmd->add_option("--tracker-options", opts->tracker_options,
                  "With --signals tracker: interval=S (log read period, 600), jitter=X (step-time noise, 0.05), "
                  "max_lines=N (8), min_line_s=S (10)");
  cmd->add_option("--energy", opts->energy,
                  "Energy saving: ces[:key=value,...] (docs/energy.md) powers idle nodes off and on; default off");
  cmd->add_option("--wake-latency", opts->wake_latency, "With --energy: seconds a powered-up node boots (default 300)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--resume-failure", opts->resume_failure,
                  "With --energy: probability that a boot fails and the node stays off (default 0, at most 0.9)");
  cmd->add_option("--power-model", opts->power_model,
                  "With --energy: use the documented 8-GPU V100, A100 or H100 power defaults for nodes whose "
                  "config gives no power model");
  cmd->add_option("--threads", opts->threads,
                  "Policies simulated at once (default 0 = one per available core); outputs are identical "
                  "for every value")
      ->check(CountInRange(0, 4096, "threads"));
  cmd->add_option("--failures", opts->failures,
                  "Failures (off by default): trace[:acme|llama3] honours recorded FAILED/NODE_FAIL/TIMEOUT; "
                  "model:llama3[:key=value,...] draws them (docs/design/failures.md)");
  cmd->add_option("--checkpoint", opts->checkpoint,
                  "With --failures: checkpoint every GPU job, e.g. async:every=young-daly or sync:every=1h");
  cmd->add_option("--recovery", opts->recovery, "With --failures: none, requeue[:from=...] (default), acme[:spares=N]");
  cmd->add_flag("-q,--quiet", opts->quiet, "Print only the table");
  cmd->callback([opts, exit_code, cmd] { *exit_code = Run(*opts, *cmd); });
}

}  // namespace orrery::cli
