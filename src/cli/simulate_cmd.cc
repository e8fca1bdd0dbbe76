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

#include "analysis/sim_output.h"
#include "base/io.h"
#include "base/parse.h"
#include "cli/commands.h"
#include "config/cluster_config.h"
#include "sched/plugins/ces.h"
#include "sched/plugins/placers.h"
#include "sched/plugins/policies.h"
#include "signals/log_signals.h"
#include "signals/signal_set.h"
#include "sim/helios_compat.h"
#include "sim/simulator.h"
#include "trace/import.h"
#include "workload/generator.h"
#include "workload/spec.h"

namespace orrery::cli {

namespace {

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
  bool helios_compat = false;
  std::string tie_order;
  bool cpu_jobs = false;
  bool model_cpu_mem = false;
  std::string preset;
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
  std::string signals;           // "advisor,tracker" (docs/design/signals.md); "" = none
  std::string tracker_options;   // LogSignalOptions, "interval=600,jitter=0.05"
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

class Progress {
 public:
  explicit Progress(bool enabled) : enabled_(enabled && isatty(2)) {}
  void Update(const std::string& label, uint64_t done, uint64_t total) {
    if (!enabled_ || total == 0) return;
    int pct = static_cast<int>(100 * done / total);
    if (pct == last_) return;
    last_ = pct;
    int bar = pct / 4;
    std::fprintf(stderr, "\r%-24.24s [%.*s%*s] %3d%%", label.c_str(), bar, "#########################", 25 - bar, "", pct);
    if (done >= total) std::fprintf(stderr, "\r%*s\r", 60, "");
  }
  void Done() {
    if (enabled_ && last_ >= 0) std::fprintf(stderr, "\r%*s\r", 60, "");
    last_ = -1;
  }

 private:
  bool enabled_;
  int last_ = -1;
};

int Run(const Options& o) {
  auto fail = [](const Error& e) {
    std::fprintf(stderr, "orrery simulate: %s\n", e.message.c_str());
    return e.exit_code;
  };
  // --- workload
  Trace trace;
  std::string scenario;
  if (!o.trace.empty()) {
    if (!o.preset.empty()) return fail(MakeError("give either a trace or --generate, not both"));
    auto fmt = ParseTraceFormat(o.format);
    if (!fmt.ok()) return fail(fmt.error());
    ImportOptions io;
    io.skip_bad_rows = o.skip_bad_rows;
    ImportReport rep;
    auto t = LoadTrace(o.trace, *fmt, io, &rep);
    if (!t.ok()) return fail(t.error());
    trace = std::move(*t);
    scenario = o.trace;
    if (rep.rows_skipped) std::fprintf(stderr, "note: %llu bad rows skipped\n", static_cast<unsigned long long>(rep.rows_skipped));
  } else {
    std::string preset = o.preset.empty() ? std::string(workload::kDefaultPreset) : o.preset;
    auto spec = workload::GetPreset(preset);
    if (!spec.ok()) return fail(spec.error());
    if (o.jobs) spec->jobs = o.jobs;
    if (o.days > 0) spec->days = o.days;
    if (o.preset.empty() && !o.jobs && o.days <= 0) spec->days = kDefaultScenarioDays;
    if (o.load > 0) spec->load = o.load;
    Status v = workload::ValidateSpec(*spec);
    if (!v.ok()) return fail(v.error());
    trace = workload::GenerateWorkload(*spec, o.seed);
    char buf[128];
    std::snprintf(buf, sizeof buf, "generated '%s' (seed %llu, %s)", preset.c_str(),
                  static_cast<unsigned long long>(o.seed),
                  spec->jobs ? (std::to_string(spec->jobs) + " jobs").c_str()
                             : (std::to_string(static_cast<int>(spec->days)) + " days").c_str());
    scenario = buf;
  }
  // --- cluster
  Result<Cluster> cluster = MakeError("no cluster");
  if (o.cluster.empty()) {
    cluster = DefaultCluster();
  } else if (o.cluster.size() > 4 && (o.cluster.substr(o.cluster.size() - 4) == ".csv" ||
                                      o.cluster.find(".csv.gz") != std::string::npos)) {
    cluster = LoadOpenbNodeList(o.cluster);
  } else {
    cluster = LoadClusterConfig(o.cluster);
  }
  if (!cluster.ok()) return fail(cluster.error());

  std::vector<uint32_t> tie;
  if (!o.tie_order.empty()) {
    auto t = ReadTieOrder(o.tie_order, trace.jobs.size());
    if (!t.ok()) return fail(t.error());
    tie = std::move(*t);
  }
  std::vector<std::string> policies = SplitPolicies(o.policies.empty() ? std::vector<std::string>{kDefaultPolicies} : o.policies);
  if (policies.empty()) return fail(MakeError("no policy given"));
  auto sig = signals::ParseSignalSet(o.signals);
  if (!sig.ok()) return fail(sig.error());
  auto tracker_opts = signals::ParseLogSignalOptions(o.tracker_options);
  if (!tracker_opts.ok()) return fail(tracker_opts.error());
  if (!o.tracker_options.empty() && !sig->tracker) return fail(MakeError("--tracker-options needs --signals tracker"));
  if (sig->any() && o.helios_compat) return fail(MakeError("--signals cannot be combined with --helios-compat"));
  std::vector<std::string> notes;
  if (sig->advisor) {
    for (std::string& p : policies) {
      if (!signals::ReadsEstimate(p)) notes.push_back(p + ": reads no duration estimate (--signals advisor has nothing to feed it)");
      auto with = signals::WithAdvisor(p);
      if (!with.ok()) return fail(with.error());
      p = *with;
    }
  }

  // Validate every policy and the placer before any work or output.
  for (const std::string& p : policies) {
    auto parts = MakePolicy(p, o.seed, &trace);
    if (!parts.ok()) return fail(parts.error().With("policy " + p));
  }
  if (auto pl = MakePlacer(o.placer, o.seed); !pl.ok()) return fail(pl.error());
  // Energy saving: validate the spec and read the per-node power model.
  const std::string energy = o.energy == "off" ? std::string() : o.energy;
  std::vector<PowerModel> node_power;
  if (!energy.empty()) {
    if (o.helios_compat) return fail(MakeError("--energy cannot be combined with --helios-compat"));
    if (auto e = ParseCesSpec(energy); !e.ok()) return fail(e.error());
    if (o.resume_failure < 0 || o.resume_failure > 0.9)
      return fail(MakeError("--resume-failure: expected a probability in [0, 0.9], got " + std::to_string(o.resume_failure)));
    if (o.cluster.empty() || o.cluster.find(".csv") == std::string::npos) {
      auto spec = o.cluster.empty()
                      ? ParseClusterSpecString(EmbeddedDefaultClusterToml(), "<embedded configs/helios-venus.toml>")
                      : LoadClusterSpec(o.cluster);
      if (!spec.ok()) return fail(spec.error());
      for (size_t i = 0; i < cluster->nodes.size(); ++i) node_power.push_back(spec->node_power(NodeId(static_cast<uint32_t>(i))));
    }
    if (!o.power_model.empty()) {
      if (!DefaultPowerModel(o.power_model, 8).known())
        return fail(MakeError("--power-model: expected V100, A100 or H100, got \"" + o.power_model + "\""));
      node_power.resize(cluster->nodes.size());
      for (size_t i = 0; i < node_power.size(); ++i)
        if (!node_power[i].known()) node_power[i] = DefaultPowerModel(o.power_model, cluster->nodes[i].gpus);
    }
  }

  if (!o.quiet) {
    std::printf("Orrery simulate: %s\n", scenario.c_str());
    std::printf("  %zu jobs on cluster '%s' (%zu nodes, %llu GPUs, %zu VCs), placer %s%s\n", trace.jobs.size(),
                cluster->name.c_str(), cluster->nodes.size(), static_cast<unsigned long long>(cluster->total_gpus()),
                cluster->vcs.size(), o.placer.c_str(), o.helios_compat ? ", Helios-compatible mode" : "");
  }
  std::vector<RunSummary> summaries;
  nlohmann::ordered_json all = nlohmann::ordered_json::object();
  all["scenario"] = scenario;
  all["cluster"] = cluster->name;
  all["seed"] = o.seed;
  all["jobs"] = trace.jobs.size();
  if (sig->any()) all["signals"] = {{"advisor", sig->advisor}, {"tracker", sig->tracker}};
  all["runs"] = nlohmann::ordered_json::array();
  Progress progress(!o.quiet);
  std::vector<double> wall;
  std::vector<std::string> used_dirs;
  for (const std::string& p : policies) {
    SimConfig cfg;
    cfg.policy = p;
    cfg.placer = o.placer;
    cfg.seed = o.seed;
    cfg.sample_interval = o.sample_interval;
    cfg.model_cpu_mem = o.model_cpu_mem;
    cfg.run_cpu_jobs = o.cpu_jobs;
    cfg.tie_order = tie;
    cfg.energy = energy;
    cfg.wake_latency = o.wake_latency;
    cfg.resume_failure = o.resume_failure;
    cfg.node_power = node_power;
    cfg.explain = !o.no_output;  // packing.csv is the only reader
    cfg.record_attempts = !o.no_output && !o.helios_compat;  // attempts.csv is the only reader
    cfg.progress = [&](uint64_t d, uint64_t t) { progress.Update(p, d, t); };
    std::unique_ptr<signals::LogSignals> tracker;
    if (sig->tracker) tracker = std::make_unique<signals::LogSignals>(o.seed, *tracker_opts);
    cfg.signals = tracker.get();
    auto t0 = std::chrono::steady_clock::now();
    auto r = o.helios_compat ? SimulateHeliosCompat(trace, *cluster, cfg) : Simulate(trace, *cluster, cfg);
    progress.Done();
    if (!r.ok()) return fail(r.error().With("policy " + p));
    Status cons = CheckConservation(trace, *r);
    if (!cons.ok()) return fail(cons.error().With("policy " + p));
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    RunData rd{r->policy, r->placer, &r->outcomes, &r->vc_names, &r->reasons, r->total_gpus,
               r->first_submit, r->last_end, r->gpu_seconds_busy, r->oracle,
               r->has_energy ? &r->energy : nullptr};
    RunSummary s = Summarize(rd);
    summaries.push_back(s);
    all["runs"].push_back(SummaryToJson(s));
    AddSharingJson(trace, *r, &all["runs"].back());
    if (!r->workload_assignment.empty()) notes.push_back(p + ": job attributes for packing: " + r->workload_assignment);
    if (!r->fragmentation.empty()) {
      double mean = 0;
      for (const FragSample& f : r->fragmentation) mean += f.ratio();
      mean /= static_cast<double>(r->fragmentation.size());
      char buf[160];
      std::snprintf(buf, sizeof buf, "%s: mean fragmentation ratio %.3f (FGD-style, %zu samples every %llds)", p.c_str(),
                    mean, r->fragmentation.size(), static_cast<long long>(cfg.frag_interval));
      notes.push_back(buf);
    }
    if (tracker) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "%s: tracker read %llu Megatron log lines (%.1f MB) every %llds", p.c_str(),
                    static_cast<unsigned long long>(tracker->lines_written()), static_cast<double>(tracker->bytes_written()) / 1e6,
                    static_cast<long long>(tracker_opts->interval));
      notes.push_back(buf);
    }
    wall.push_back(secs);
    if (!o.no_output) {
      std::error_code ec;
      std::string slug = Slug(p);
      for (int k = 2; std::find(used_dirs.begin(), used_dirs.end(), slug) != used_dirs.end(); ++k)
        slug = Slug(p) + "-" + std::to_string(k);  // two specs with the same slug never share a folder
      used_dirs.push_back(slug);
      std::string dir = o.out_dir + "/" + slug;
      std::filesystem::create_directories(dir, ec);
      if (ec) return fail(MakeError(dir + ": cannot create directory: " + ec.message(), kExitRuntime));
      Status w = WriteJobsCsv(dir + "/jobs.csv", trace, r->outcomes, r->vc_names, r->reasons);
      if (!w.ok()) return fail(w.error());
      if (cfg.record_attempts) {
        w = WriteAttemptsCsv(dir + "/attempts.csv", trace, r->attempts, *cluster);
        if (!w.ok()) return fail(w.error());
      }
      w = WriteTimeSeriesCsv(dir + "/timeseries.csv", r->samples, r->total_gpus, r->has_energy ? &r->powered_samples : nullptr);
      if (!w.ok()) return fail(w.error());
      w = WriteSharingCsvs(dir, trace, *r);
      if (!w.ok()) return fail(w.error());
    }
  }
  if (!o.quiet) std::printf("\n");
  std::printf("%s", FormatSummaryTable(summaries).c_str());
  if (!o.quiet) {
    std::printf("simulation wall time:");
    for (size_t i = 0; i < wall.size(); ++i)
      std::printf(" %s %.3f s (%.0f jobs/s)%s", summaries[i].policy.c_str(), wall[i],
                  wall[i] > 0 ? static_cast<double>(trace.jobs.size()) / wall[i] : 0.0, i + 1 < wall.size() ? "," : "\n");
  }
  for (const std::string& n : notes) std::printf("note: %s\n", n.c_str());
  if (o.vc_table)
    for (const auto& s : summaries) std::printf("\n%s\n%s", s.policy.c_str(), FormatVcTable(s).c_str());
  if (!o.no_output) {
    Status w = WriteFileAtomic(o.out_dir + "/summary.json", all.dump(2) + "\n");
    if (!w.ok()) return fail(w.error());
    if (!o.quiet) std::printf("\noutputs: %s/summary.json and %s/<policy>/{jobs,timeseries}.csv\n", o.out_dir.c_str(),
                              o.out_dir.c_str());
  }
  return kExitOk;
}

}  // namespace

void RegisterSimulate(CLI::App& app, int* exit_code) {
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("simulate", "Replay a trace (or a generated workload) under scheduling policies");
  cmd->add_option("trace", opts->trace, "Trace file (any supported format, .gz ok); omit to generate a workload");
  cmd->add_option("--format", opts->format, "Trace format: auto, canonical, helios, philly, openb, swf, sacct, acme");
  cmd->add_option("--cluster", opts->cluster,
                  "Cluster config (TOML, see configs/) or an openb node list CSV; default: embedded helios-venus");
  cmd->add_option("--policy", opts->policies,
                  "Policies, comma-separated, each name[:key=value,...]: fifo, sjf, srtf, qssf, easy, tiresias "
                  "(default: fifo,sjf,srtf,qssf,easy)");
  cmd->add_option("--placer", opts->placer, "consolidate (default), first-fit, spread, random");
  cmd->add_option("--seed", opts->seed, "Seed for generators, noisy estimators and the random placer (default 1)");
  cmd->add_option("--out-dir", opts->out_dir, "Output directory (default orrery-out)");
  cmd->add_flag("--no-output", opts->no_output, "Print the table only; write no files");
  cmd->add_flag("--helios-compat", opts->helios_compat,
                "Reproduce the Helios artifact simulator exactly (fifo, sjf, qssf; consolidate)");
  cmd->add_option("--tie-order", opts->tie_order, "CSV job_id,seq ordering same-second arrivals and equal keys");
  cmd->add_flag("--cpu-jobs", opts->cpu_jobs, "Simulate jobs without GPUs too (skipped by default)");
  cmd->add_flag("--model-cpu-mem", opts->model_cpu_mem, "Account CPU and memory where nodes declare them");
  cmd->add_option("--generate", opts->preset, "Generate a workload from a preset instead of reading a trace");
  cmd->add_option("--jobs", opts->jobs, "Generated jobs (with --generate or the default scenario)");
  cmd->add_option("--days", opts->days, "Generated days (default scenario: 30)");
  cmd->add_option("--load", opts->load, "Arrival-rate multiplier for generated workloads");
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
  cmd->add_flag("-q,--quiet", opts->quiet, "Print only the table");
  cmd->callback([opts, exit_code] { *exit_code = Run(*opts); });
}

}  // namespace orrery::cli
