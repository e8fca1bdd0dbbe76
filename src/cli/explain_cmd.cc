// `orrery explain`: why did a job get the schedule it got? Runs the simulation with one
// watched job (SimConfig::watch_job) and prints the notes the framework and the policy's
// plugins recorded about it: its estimate and per-feature contributions (estimators with
// DurationEstimator::Explain), its priority/queue (Plugin::Describe), why it was pending
// whenever the blocking reason changed (Scheduler::last_block), starts, preemptions with
// their overhead, policy decisions (SchedulerHandle::Note, e.g. Tiresias demotions and
// promotions, Lucid packing), and its outcome. Text or --json (docs/formats/explain.md).
#include <cstdio>

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/io.h"
#include "base/parse.h"
#include "cli/commands.h"
#include "config/cluster_config.h"
#include "sched/framework/api/plugin.h"
#include "sim/simulator.h"
#include "trace/import.h"

namespace orrery::cli {

namespace {

struct Options {
  std::string trace;
  std::string job;
  bool by_source_id = false;
  std::string format = "auto";
  std::string cluster;
  std::string policy = "fifo";
  std::string placer = "consolidate";
  uint64_t seed = 1;
  bool json = false;
  std::string out;  // the JSON to this file (atomic)
  bool full_run = false;
};

std::string Compact(double v) {
  char b[48];
  if (std::abs(v) < 1e15 && v == std::floor(v)) {  // range first: an out-of-range cast is undefined
    std::snprintf(b, sizeof b, "%lld", static_cast<long long>(v));
  } else {
    std::snprintf(b, sizeof b, "%.4g", v);
  }
  return b;
}

int Run(const Options& o) {
  auto fail = [](const Error& e) {
    std::fprintf(stderr, "orrery explain: %s\n", e.message.c_str());
    return e.exit_code;
  };
  auto fmt = ParseTraceFormat(o.format);
  if (!fmt.ok()) return fail(fmt.error());
  auto trace = LoadTrace(o.trace, *fmt);
  if (!trace.ok()) return fail(trace.error());
  Result<Cluster> cluster = MakeError("no cluster");
  if (o.cluster.empty()) {
    cluster = DefaultCluster();
  } else if (o.cluster.find(".csv") != std::string::npos) {
    cluster = LoadOpenbNodeList(o.cluster);
  } else {
    cluster = LoadClusterConfig(o.cluster);
  }
  if (!cluster.ok()) return fail(cluster.error());

  // The job: an index (job_id of jobs.csv) or, with --source-id, the trace's own id.
  int64_t idx = -1;
  if (o.by_source_id) {
    for (size_t i = 0; i < trace->source_ids.size(); ++i)
      if (trace->source_ids[i] == o.job) {
        idx = static_cast<int64_t>(i);
        break;
      }
    if (idx < 0) return fail(MakeError("no job with source id \"" + o.job + "\" in " + o.trace, kExitBadInput));
  } else if (!ParseI64(o.job, &idx) || idx < 0 || static_cast<size_t>(idx) >= trace->jobs.size()) {
    return fail(MakeError("JOB: expected a job index in [0, " + std::to_string(trace->jobs.size()) + "), got \"" + o.job +
                              "\" (use --source-id for the trace's own ids)",
                          kExitBadInput));
  }

  std::vector<ExplainNote> notes;
  SimConfig cfg;
  cfg.policy = o.policy;
  cfg.placer = o.placer;
  cfg.seed = o.seed;
  cfg.sample_interval = 0;
  cfg.watch_job = idx;
  cfg.watch_notes = &notes;
  cfg.stop_after_watch = !o.full_run;
  auto r = Simulate(*trace, *cluster, cfg);
  if (!r.ok()) return fail(r.error().With("policy " + o.policy));

  const Job& j = trace->jobs[static_cast<size_t>(idx)];
  const JobOutcome& out = r->outcomes[static_cast<size_t>(idx)];
  const std::string sid = static_cast<size_t>(idx) < trace->source_ids.size() ? trace->source_ids[idx] : "";
  const char* status = out.status == OutcomeStatus::kFinished    ? "finished"
                       : out.status == OutcomeStatus::kRejected  ? "rejected"
                       : out.status == OutcomeStatus::kWithdrawn ? "withdrawn"
                                                                 : "skipped";
  if (o.json || !o.out.empty()) {
    nlohmann::ordered_json doc;
    doc["job_id"] = idx;
    doc["source_id"] = sid;
    doc["policy"] = o.policy;
    doc["placer"] = o.placer;
    doc["cluster"] = cluster->name;
    doc["submit"] = j.submit;
    doc["gpus"] = j.gpus;
    doc["duration"] = j.duration;
    doc["status"] = status;
    if (out.status == OutcomeStatus::kFinished) {
      doc["start"] = out.start;
      doc["end"] = out.end;
      doc["queue_delay"] = out.wait;
      doc["jct"] = out.end - j.submit;
      doc["preemptions"] = out.preemptions;
    }
    doc["notes"] = nlohmann::ordered_json::array();
    for (const ExplainNote& n : notes) {
      nlohmann::ordered_json e;
      e["t"] = n.t;
      e["plugin"] = n.plugin;
      e["kind"] = n.kind;
      e["text"] = n.text;
      e["fields"] = nlohmann::ordered_json::object();
      for (const auto& [k, v] : n.fields) e["fields"][k] = v;
      doc["notes"].push_back(std::move(e));
    }
    std::string text = DumpJson(doc, 2) + "\n";
    if (!o.out.empty()) {
      Status w = WriteFileAtomic(o.out, text);
      if (!w.ok()) return fail(w.error());
    }
    if (o.json) std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitOk;
  }
  std::printf("job %lld%s: submit %lld, %u GPUs, %lld s of work, under %s on %s\n", static_cast<long long>(idx),
              sid.empty() ? "" : (" (" + sid + ")").c_str(), static_cast<long long>(j.submit), j.gpus,
              static_cast<long long>(j.duration), o.policy.c_str(), cluster->name.c_str());
  for (const ExplainNote& n : notes) {
    std::printf("  t=%-10lld %-10s %s\n", static_cast<long long>(n.t), n.plugin.c_str(), n.text.c_str());
    if (n.kind == "estimate" && n.fields.size() > 2) {
      // Contributions, largest magnitude first (log-seconds: each multiplies the estimate by e^v).
      std::vector<std::pair<std::string, double>> terms(n.fields.begin() + 2, n.fields.end());
      std::stable_sort(terms.begin(), terms.end(),
                       [](const auto& a, const auto& b) { return std::abs(a.second) > std::abs(b.second); });
      std::printf("  %-12s %-10s base %s\n", "", "", Compact(n.fields[1].second).c_str());
      for (const auto& [k, v] : terms)
        if (std::abs(v) >= 1e-4) std::printf("  %-12s %-10s %+8.4f (x%.3g)  %s\n", "", "", v, std::exp(v), k.c_str());
    } else if (!n.fields.empty() && n.kind != "estimate") {
      std::string f;
      for (const auto& [k, v] : n.fields) f += (f.empty() ? "" : ", ") + k + "=" + Compact(v);
      std::printf("  %-12s %-10s (%s)\n", "", "", f.c_str());
    }
  }
  if (out.status == OutcomeStatus::kFinished) {
    std::printf("outcome: started %lld, ended %lld, queue delay %lld s, JCT %lld s, %u preemption(s)\n",
                static_cast<long long>(out.start), static_cast<long long>(out.end), static_cast<long long>(out.wait),
                static_cast<long long>(out.end - j.submit), out.preemptions);
  } else {
    std::printf("outcome: %s (%s)\n", status, out.reject_reason < r->reasons.size() ? r->reasons[out.reject_reason].c_str() : "");
  }
  return kExitOk;
}

}  // namespace

void RegisterExplain(CLI::App& app, int* exit_code) {
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("explain", "Explain one job's schedule: estimate and its contributions, priority, "
                                            "blocking reasons, starts, preemptions");
  SetExamples(cmd, {"./build/orrery explain tests/fixtures/explain/tiny.csv 1 --cluster tests/fixtures/explain/one-node.toml "
                    "--policy fifo",
                    "./build/orrery explain tests/fixtures/explain/tiny.csv 0 --cluster tests/fixtures/explain/one-node.toml "
                    "--policy tiresias:thresholds=100 --json"});
  cmd->add_option("trace", opts->trace, "Trace file (any supported format)")->required();
  cmd->add_option("job", opts->job, "Job index (job_id of jobs.csv), or the trace's own id with --source-id")->required();
  cmd->add_flag("--source-id", opts->by_source_id, "JOB is the trace's own job id (source_id of jobs.csv)");
  cmd->add_option("--format", opts->format, "Trace format: auto, canonical, helios, philly, openb, swf, sacct, acme");
  cmd->add_option("--cluster", opts->cluster, "Cluster config (TOML) or openb node list; default: embedded helios-venus");
  cmd->add_option("--policy", opts->policy, "One policy spec, e.g. tiresias:preset=lucid or qssf:estimator=ga2m (default fifo)");
  cmd->add_option("--placer", opts->placer, "consolidate (default), first-fit, spread, random");
  cmd->add_option("--seed", opts->seed, "Seed (default 1)");
  cmd->add_flag("--json", opts->json, "Print JSON (docs/formats/explain.md) instead of text");
  cmd->add_option("--out", opts->out, "Write the JSON to FILE (atomically) instead of printing text");
  cmd->add_flag("--full-run", opts->full_run, "Simulate the whole trace (default: stop once the job is done)");
  cmd->callback([opts, exit_code] { *exit_code = Run(*opts); });
}

}  // namespace orrery::cli
