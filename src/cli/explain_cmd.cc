// `orrery explain`: why did a job get the schedule it got? Runs the simulation with one
// watched job (SimConfig::watch_job) and prints the notes the framework and the policy's
// plugins recorded about it: its estimate and per-feature contributions (estimators with
// DurationEstimator::Explain), its priority/queue (Plugin::Describe), why it was pending
// whenever the blocking reason changed (Scheduler::last_block), starts, preemptions with
// their overhead, policy decisions (SchedulerHandle::Note, e.g. Tiresias demotions and
// promotions, Lucid packing), and its outcome. Text or --json (docs/formats/explain.md).
#include <cstdio>

#include <nlohmann/json.hpp>

#include "analysis/sim_output.h"
#include "base/json_text.h"
#include "base/io.h"
#include "base/parse.h"
#include "cli/commands.h"
#include "cli/simulate_rl.h"
#include "config/cluster_config.h"
#include "config/cluster_file.h"
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
  RlSimOptions rl;  // RL jobs added to the workload, as `orrery simulate` adds them
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

// What a run explains: the trace (with any RL jobs added), the cluster, the job's index.
struct Inputs {
  Trace trace;
  Cluster cluster;
  rl::RlExpansion rl;
  int64_t idx = -1;
};

Result<Cluster> LoadCluster(const std::string& path) {
  if (path.empty()) return DefaultCluster();
  return LoadClusterFile(path);
}

// The job: an index (job_id of jobs.csv, RL jobs after the trace's own) or, with --source-id,
// the trace's own id.
Result<int64_t> JobIndex(const Options& o, const Trace& trace) {
  if (o.by_source_id) {
    for (size_t i = 0; i < trace.source_ids.size(); ++i)
      if (trace.source_ids[i] == o.job) return static_cast<int64_t>(i);
    return MakeError("no job with source id \"" + o.job + "\" in " + o.trace, kExitBadInput);
  }
  int64_t idx = -1;
  if (!ParseI64(o.job, &idx) || idx < 0 || static_cast<size_t>(idx) >= trace.jobs.size())
    return MakeError("JOB: expected a job index in [0, " + std::to_string(trace.jobs.size()) + "), got \"" + o.job +
                         "\" (use --source-id for the trace's own ids)",
                     kExitBadInput);
  return idx;
}

Result<Inputs> LoadInputs(const Options& o, const CLI::App& cmd) {
  Inputs in;
  ORR_ASSIGN_OR_RETURN(TraceFormat fmt, ParseTraceFormat(o.format));
  ORR_ASSIGN_OR_RETURN(in.trace, LoadTrace(o.trace, fmt));
  ORR_ASSIGN_OR_RETURN(in.cluster, LoadCluster(o.cluster));
  ORR_ASSIGN_OR_RETURN(in.rl, AddRlSimJobs(o.rl, cmd, in.cluster, o.seed, &in.trace));
  ORR_ASSIGN_OR_RETURN(in.idx, JobIndex(o, in.trace));
  return in;
}

const rl::ExpandedRlJob* RlJobOf(const rl::RlExpansion& x, int64_t idx) {
  for (const rl::ExpandedRlJob& j : x.jobs)
    if (static_cast<int64_t>(j.job) == idx) return &j;
  return nullptr;
}

double Round3(double v) { return std::round(v * 1000) / 1000; }

// An RL job's steps (docs/formats/explain.md, "RL jobs"): the strategy's step against sync's,
// where its time goes, and the rollout GPUs left idle by the long tail.
nlohmann::ordered_json RlJson(const std::string& strategy, const rl::ExpandedRlJob& x) {
  const rl::StepResult& s = x.cost->step;
  nlohmann::ordered_json j;
  j["strategy"] = strategy;
  j["steps"] = x.steps;
  j["step_time_s"] = Round3(s.step_time_s);
  j["sync_step_time_s"] = Round3(x.cost->sync.step_time_s);
  j["speedup_vs_sync"] = Round3(x.cost->sync.step_time_s / s.step_time_s);
  j["breakdown_s"] = {{"rollout", Round3(s.rollout_s)}, {"tail", Round3(s.tail_s)}, {"reward", Round3(s.reward_s)},
                      {"train", Round3(s.train_s)},     {"sync", Round3(s.sync_s)}, {"other", Round3(s.other_s)}};
  j["idle_rollout_gpu_frac"] = Round3(s.idle_gpu_frac);
  j["gpu_hours"] = Round3(static_cast<double>(x.steps) * s.step_time_s * x.gpus / 3600);
  return j;
}

void PrintRl(const nlohmann::ordered_json& j) {
  const auto& b = j["breakdown_s"];
  std::printf("RL job: %u steps under %s, %.1f s each (sync %.1f s: %.2fx)\n", j["steps"].get<uint32_t>(),
              j["strategy"].get<std::string>().c_str(), j["step_time_s"].get<double>(),
              j["sync_step_time_s"].get<double>(), j["speedup_vs_sync"].get<double>());
  std::printf("  a step: rollout %.1f s (the long tail %.1f s of it), reward and log-probs %.1f s, train %.1f s, "
              "weight sync %.1f s, other %.1f s\n",
              b["rollout"].get<double>(), b["tail"].get<double>(), b["reward"].get<double>(), b["train"].get<double>(),
              b["sync"].get<double>(), b["other"].get<double>());
  std::printf("  rollout GPUs idle %.1f %% of each step; %.2f GPU-hours in all\n",
              100 * j["idle_rollout_gpu_frac"].get<double>(), j["gpu_hours"].get<double>());
}

nlohmann::ordered_json NoteJson(const ExplainNote& n) {
  nlohmann::ordered_json e;
  e["t"] = n.t;
  e["plugin"] = n.plugin;
  e["kind"] = n.kind;
  e["text"] = n.text;
  e["fields"] = nlohmann::ordered_json::object();
  for (const auto& [k, v] : n.fields) e["fields"][k] = v;
  return e;
}

// What the run says of the job, for --json and --out.
nlohmann::ordered_json ExplainJson(const Options& o, const Inputs& in, const SimResult& r,
                                   const std::vector<ExplainNote>& notes) {
  const size_t i = static_cast<size_t>(in.idx);
  const Job& j = in.trace.jobs[i];
  const JobOutcome& out = r.outcomes[i];
  nlohmann::ordered_json doc;
  doc["job_id"] = in.idx;
  doc["source_id"] = i < in.trace.source_ids.size() ? in.trace.source_ids[i] : "";
  doc["policy"] = o.policy;
  doc["placer"] = o.placer;
  doc["cluster"] = in.cluster.name;
  doc["submit"] = j.submit;
  doc["gpus"] = j.gpus;
  doc["duration"] = j.duration;
  doc["status"] = OutcomeStatusName(out.status);
  if (out.status == OutcomeStatus::kFinished) {
    doc["start"] = out.start;
    doc["end"] = out.end;
    doc["queue_delay"] = out.wait;
    doc["jct"] = out.end - j.submit;
    doc["preemptions"] = out.preemptions;
  } else if (out.status == OutcomeStatus::kPreempted) {  // ended by a preemption that cancels it
    doc["start"] = out.start;
    doc["end"] = out.end;
    doc["queue_delay"] = out.wait;
    doc["run"] = out.run;
    doc["preemptions"] = out.preemptions;
  }
  if (const rl::ExpandedRlJob* x = RlJobOf(in.rl, in.idx)) doc["rl"] = RlJson(in.rl.strategy, *x);
  doc["notes"] = nlohmann::ordered_json::array();
  for (const ExplainNote& n : notes) doc["notes"].push_back(NoteJson(n));
  return doc;
}

void PrintNote(const ExplainNote& n) {
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

void PrintText(const Options& o, const Inputs& in, const SimResult& r, const std::vector<ExplainNote>& notes) {
  const size_t i = static_cast<size_t>(in.idx);
  const Job& j = in.trace.jobs[i];
  const JobOutcome& out = r.outcomes[i];
  const std::string sid = i < in.trace.source_ids.size() ? in.trace.source_ids[i] : "";
  std::printf("job %lld%s: submit %lld, %u GPUs, %lld s of work, under %s on %s\n", static_cast<long long>(in.idx),
              sid.empty() ? "" : (" (" + sid + ")").c_str(), static_cast<long long>(j.submit), j.gpus,
              static_cast<long long>(j.duration), o.policy.c_str(), in.cluster.name.c_str());
  if (const rl::ExpandedRlJob* x = RlJobOf(in.rl, in.idx)) PrintRl(RlJson(in.rl.strategy, *x));
  for (const ExplainNote& n : notes) PrintNote(n);
  if (out.status == OutcomeStatus::kFinished) {
    std::printf("outcome: started %lld, ended %lld, queue delay %lld s, JCT %lld s, %u preemption(s)\n",
                static_cast<long long>(out.start), static_cast<long long>(out.end), static_cast<long long>(out.wait),
                static_cast<long long>(out.end - j.submit), out.preemptions);
  } else if (out.status == OutcomeStatus::kPreempted) {
    std::printf("outcome: started %lld, preempted and cancelled at %lld, queue delay %lld s, ran %lld s\n",
                static_cast<long long>(out.start), static_cast<long long>(out.end), static_cast<long long>(out.wait),
                static_cast<long long>(out.run));
  } else {
    std::printf("outcome: %s (%s)\n", std::string(OutcomeStatusName(out.status)).c_str(),
                out.reject_reason < r.reasons.size() ? r.reasons[out.reject_reason].c_str() : "");
  }
}

int Run(const Options& o, const CLI::App& cmd) {
  auto fail = [](const Error& e) {
    std::fprintf(stderr, "orrery explain: %s\n", e.message.c_str());
    return e.exit_code;
  };
  auto in = LoadInputs(o, cmd);
  if (!in.ok()) return fail(in.error());
  std::vector<ExplainNote> notes;
  SimConfig cfg;
  cfg.policy = o.policy;
  cfg.placer = o.placer;
  cfg.seed = o.seed;
  cfg.sample_interval = 0;
  cfg.watch_job = in->idx;
  cfg.watch_notes = &notes;
  cfg.stop_after_watch = !o.full_run;
  cfg.harvest = rl::HarvestPlans(in->rl);
  auto r = Simulate(in->trace, in->cluster, cfg);
  if (!r.ok()) return fail(r.error().With("policy " + o.policy));
  if (o.json || !o.out.empty()) {
    const std::string text = DumpJson(ExplainJson(o, *in, *r, notes), 2) + "\n";
    if (!o.out.empty()) {
      Status w = WriteFileAtomic(o.out, text);
      if (!w.ok()) return fail(w.error());
    }
    if (o.json) std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitOk;
  }
  PrintText(o, *in, *r, notes);
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
  cmd->add_option("--cluster", opts->cluster, "Cluster config (TOML), openb node list or slurm.conf; default: embedded helios-venus");
  cmd->add_option("--policy", opts->policy, "One policy spec, e.g. tiresias:preset=lucid or qssf:estimator=ga2m (default fifo)");
  cmd->add_option("--placer", opts->placer, "consolidate (default), first-fit, spread, random");
  cmd->add_option("--seed", opts->seed, "Seed (default 1)");
  cmd->add_flag("--json", opts->json, "Print JSON (docs/formats/explain.md) instead of text");
  cmd->add_option("--out", opts->out, "Write the JSON to FILE (atomically) instead of printing text");
  cmd->add_flag("--full-run", opts->full_run, "Simulate the whole trace (default: stop once the job is done)");
  AddRlSimFlags(cmd, &opts->rl);
  cmd->callback([opts, exit_code, cmd] { *exit_code = Run(*opts, *cmd); });
}

}  // namespace orrery::cli
