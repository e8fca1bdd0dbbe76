// `orrery eval submit`: a plan on a real Slurm. The work folder gets the plan (plan.json),
// one small variables file per job (jobs/), three generated batch scripts and, after the run,
// one result file per job (results/). Submission order: one preload job per node (node-cache
// strategies), the GPU trial jobs as one job array (index = plan order), then one CPU metric
// job per dataset with --dependency=afterok on the array tasks holding its slices (or on the
// whole array when metrics wait for the whole inference stage). Without --trial-command the
// jobs sleep for the modelled phase times x --time-scale (emulation; the real-Slurm test).
// `orrery eval record DIR --history DB` (also run by `submit --wait`) reads the results into
// the per-dataset history and compares the measured makespan with the prediction.
#include "cli/commands.h"
#include "cli/eval_submit.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/io.h"
#include "base/parse.h"
#include "cli/eval_setup.h"
#include "eval/history.h"
#include "eval/report.h"
#include "eval/strategy.h"
#include "live/batch_submit.h"

namespace orrery::cli {

namespace {

namespace fs = std::filesystem;

struct SubmitArgs {
  EvalArgs eval;
  std::string strategy = "acme";
  std::string partition, cpu_partition, workdir;
  double time_scale = 1.0;
  std::string trial_command, metric_command, preload_command;
  bool wait = false, json = false;
  double max_wall = 0;  // 0: 3 x predicted + 120 s
  std::string slurm_conf, bin_dir;
  int timeout_ms = 15000;
};

struct RecordArgs {
  std::string workdir, history;
  bool json = false;
};

double NowUnix() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// A value as a single-quoted shell word.
std::string ShellQuote(std::string_view s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string Secs(double s) { return fmt::format("{:.3f}", std::max(0.0, s)); }

// --- the generated scripts (sleep emulation unless a command is given)
std::string TrialScript(const std::string& dir, const std::string& command) {
  // The modelled startup, load and on-GPU metric are slept only in emulation; a real trial
  // command does them itself (it still waits for the node cache).
  auto sleep = [&](const char* var) { return command.empty() ? "sleep \"$" + std::string(var) + "\"\n" : std::string(); };
  const std::string run_slice = command.empty()
      ? "    sleep \"${INFER_S[$k]}\"\n"
      : "    ORRERY_EVAL_DATASET=\"$(sed -n \"$((ds + 1))p\" \"$D/jobs/datasets.txt\")\" ORRERY_EVAL_BEGIN=$b "
        "ORRERY_EVAL_END=$e ORRERY_EVAL_CACHE=\"$D/cache\" bash -c " + ShellQuote(command) + "\n";
  return "#!/bin/bash\n"
         "# orrery eval submit: GPU trial job (array task). Generated; docs/design/eval.md.\n"
         "set -eu\n"
         "D=" + ShellQuote(dir) + "\n"
         "I=${SLURM_ARRAY_TASK_ID:?not an array task}\n"
         ". \"$D/jobs/gpu-$I.env\"\n"
         "NODE=${SLURMD_NODENAME:-$(hostname)}\n"
         "now() { date +%s.%N; }\n"
         "echo \"gpu-$I $(now) $NODE\" >> \"$D/runs.log\"\n"
         "out=\"$D/results/gpu-$I.tsv\"; tmp=\"$out.tmp.$$\"; : > \"$tmp\"\n"
         "t0=$(now)\n"
         + sleep("STARTUP_S") +
         "l0=$(now)\n"
         "if [ \"$LOAD\" = node-cache ]; then\n"
         "  while [ ! -e \"$D/cache/$NODE.ready\" ]; do sleep 0.05; done\n"
         "fi\n"
         + sleep("LOAD_S") +
         "l1=$(now)\n"
         "k=0\n"
         "for s in $SLICES; do\n"
         "  IFS=: read -r ds b e <<< \"$s\"\n"
         "  a=$(now)\n" + run_slice +
         "  printf 'slice\\t%s\\t%s\\t%s\\t%s\\t%s\\t%s\\t%s\\n' \"$I\" \"$k\" \"$ds\" \"$b\" \"$e\" \"$a\" \"$(now)\" >> \"$tmp\"\n"
         "  k=$((k + 1))\n"
         "done\n"
         + sleep("METRIC_S") +
         "printf 'job\\t%s\\t%s\\t%s\\t%s\\t%s\\t%s\\n' \"$I\" \"$t0\" \"$(now)\" \"$l0\" \"$l1\" \"$NODE\" >> \"$tmp\"\n"
         "mv \"$tmp\" \"$out\"\n";
}

std::string MetricScript(const std::string& dir, const std::string& command) {
  const std::string work = command.empty()
      ? "sleep \"$METRIC_S\"\n"
      : "ORRERY_EVAL_DATASET=\"$(sed -n \"$((DS + 1))p\" \"$D/jobs/datasets.txt\")\" bash -c " + ShellQuote(command) + "\n";
  return "#!/bin/bash\n"
         "# orrery eval submit: CPU metric job of one dataset. Generated; docs/design/eval.md.\n"
         "set -eu\n"
         "D=" + ShellQuote(dir) + "\n"
         "M=${ORRERY_EVAL_METRIC:?}\n"
         ". \"$D/jobs/metric-$M.env\"\n"
         "now() { date +%s.%N; }\n"
         "echo \"metric-$M $(now)\" >> \"$D/runs.log\"\n"
         "a=$(now)\n" + work +
         "printf 'metric\\t%s\\t%s\\t%s\\t%s\\n' \"$M\" \"$DS\" \"$a\" \"$(now)\" > \"$D/results/metric-$M.tsv.tmp.$$\"\n"
         "mv \"$D/results/metric-$M.tsv.tmp.$$\" \"$D/results/metric-$M.tsv\"\n";
}

std::string PreloadScript(const std::string& dir, const std::string& command) {
  const std::string work = command.empty()
      ? "sleep \"$PRELOAD_S\"\n"
      : "ORRERY_EVAL_CACHE=\"$D/cache\" bash -c " + ShellQuote(command) + "\n";
  return "#!/bin/bash\n"
         "# orrery eval submit: per-node preload of the checkpoint into the node cache. Generated.\n"
         "set -eu\n"
         "D=" + ShellQuote(dir) + "\n"
         "N=${ORRERY_EVAL_PRELOAD:?}\n"
         ". \"$D/jobs/preload-$N.env\"\n"
         "NODE=${SLURMD_NODENAME:-$(hostname)}\n"
         "now() { date +%s.%N; }\n"
         "echo \"preload-$N $(now) $NODE\" >> \"$D/runs.log\"\n"
         "a=$(now)\n" + work +
         "touch \"$D/cache/$NODE.ready\"\n"
         "printf 'preload\\t%s\\t%s\\t%s\\t%s\\n' \"$N\" \"$NODE\" \"$a\" \"$(now)\" > \"$D/results/preload-$N.tsv.tmp.$$\"\n"
         "mv \"$D/results/preload-$N.tsv.tmp.$$\" \"$D/results/preload-$N.tsv\"\n";
}

// --- the work folder
struct Submission {
  eval::Plan plan;
  eval::Schedule predicted;
  std::vector<std::string> nodes;  // Slurm names of executor nodes 0..N-1
};

Status WriteJobFiles(const SubmitArgs& a, const EvalSetup& s, const Submission& sub) {
  const std::string dir = a.workdir;
  const double k = a.time_scale;
  std::string names;
  for (const eval::DatasetWork& d : s.workload.datasets) names += d.name + "\n";
  ORR_RETURN_IF_ERROR(WriteFileAtomic(dir + "/jobs/datasets.txt", names));
  for (size_t i = 0; i < sub.plan.gpu_jobs.size(); ++i) {
    const eval::JobRun& r = sub.predicted.gpu_jobs[i];
    const eval::PhaseRun& load = r.phases[1];
    std::string slices, infer;
    for (const eval::Slice& sl : sub.plan.gpu_jobs[i].slices) {
      slices += fmt::format("{}{}:{}:{}", slices.empty() ? "" : " ", sl.dataset, sl.begin, sl.end);
      infer += (infer.empty() ? "" : " ") +
               Secs(s.workload.datasets[sl.dataset].infer_s_per_example * static_cast<double>(sl.examples()) * k);
    }
    const double inline_metric = r.phases.size() > 3 ? r.phases[3].end - r.phases[3].start : 0;
    const std::string env = fmt::format(
        "STARTUP_S={}\nLOAD={}\nLOAD_S={}\nSLICES=\"{}\"\nINFER_S=({})\nMETRIC_S={}\n", Secs(s.workload.startup_s * k),
        eval::LoadSourceName(sub.plan.load), Secs((load.end - load.start - load.wait_s) * k), slices, infer,
        Secs(inline_metric * k));
    ORR_RETURN_IF_ERROR(WriteFileAtomic(fmt::format("{}/jobs/gpu-{}.env", dir, i), env));
  }
  for (size_t m = 0; m < sub.plan.metric_jobs.size(); ++m) {
    const eval::Phase ph = eval::MetricPhase(s.workload, sub.plan.metric_jobs[m].dataset);
    ORR_RETURN_IF_ERROR(WriteFileAtomic(fmt::format("{}/jobs/metric-{}.env", dir, m),
                                        fmt::format("DS={}\nMETRIC_S={}\n", sub.plan.metric_jobs[m].dataset,
                                                    Secs(ph.seconds * k))));
  }
  for (size_t n = 0; n < sub.predicted.preloads.size(); ++n) {
    const eval::JobRun& p = sub.predicted.preloads[n];
    ORR_RETURN_IF_ERROR(WriteFileAtomic(fmt::format("{}/jobs/preload-{}.env", dir, n),
                                        fmt::format("PRELOAD_S={}\n", Secs((p.end - p.start) * k))));
  }
  ORR_RETURN_IF_ERROR(WriteFileAtomic(dir + "/trial.sh", TrialScript(dir, a.trial_command)));
  ORR_RETURN_IF_ERROR(WriteFileAtomic(dir + "/metric.sh", MetricScript(dir, a.metric_command)));
  return WriteFileAtomic(dir + "/preload.sh", PreloadScript(dir, a.preload_command));
}

Status MakeWorkdir(const std::string& dir) {
  std::error_code ec;
  for (const char* sub : {"", "/jobs", "/results", "/cache", "/logs"}) {
    fs::create_directories(dir + sub, ec);
    if (ec) return MakeError("cannot create " + dir + sub + ": " + ec.message(), kExitRuntime);
  }
  if (!fs::is_empty(dir + "/results", ec))
    return MakeError(dir + " holds results of an earlier submission (results/ is not empty): use a fresh --workdir");
  return Status::Ok();
}

// Up nodes of the GPU partition, by name; fills the cluster's node count and GPUs per node.
Result<std::vector<std::string>> PartitionNodes(live::ExecSlurmClient& slurm, const SubmitArgs& a,
                                                EvalArgs* eval_args) {
  ORR_ASSIGN_OR_RETURN(auto nodes, slurm.Nodes({a.partition}));
  std::vector<std::string> names;
  uint32_t gpus = UINT32_MAX;
  for (const live::SlurmNode& n : nodes)
    if (n.avail == live::NodeAvail::kUp && n.gpus > 0) {
      names.push_back(n.name);
      gpus = std::min<uint32_t>(gpus, n.gpus);
    }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  if (names.empty()) return MakeError("partition " + a.partition + " has no up node with GPUs");
  if (eval_args->nodes == 0) eval_args->nodes = static_cast<uint32_t>(names.size());
  if (eval_args->nodes > names.size())
    return MakeError(fmt::format("--nodes {}: partition {} has {} up GPU node(s)", eval_args->nodes, a.partition,
                                 names.size()));
  names.resize(eval_args->nodes);
  eval_args->gpus_per_node = gpus;
  return names;
}

struct SlurmIds {
  std::vector<uint32_t> preloads, metrics;
  uint32_t array = 0;
};

Result<SlurmIds> SubmitAll(live::ExecSlurmClient& slurm, const SubmitArgs& a, const EvalSetup& s,
                           const Submission& sub) {
  SlurmIds ids;
  const std::string dir = a.workdir;
  // Preloads first: trials wait for their node's cache file, so a preload must never queue
  // behind array tasks that fill the node.
  for (size_t n = 0; n < sub.predicted.preloads.size(); ++n) {
    live::BatchSpec b;
    b.name = "orrery-eval-preload";
    b.partition = a.partition;
    b.script = dir + "/preload.sh";
    b.workdir = dir;
    b.output = dir + "/logs/preload-" + std::to_string(n) + ".out";
    b.nodelist = sub.nodes[n];
    b.env = {"ORRERY_EVAL_PRELOAD=" + std::to_string(n)};
    ORR_ASSIGN_OR_RETURN(uint32_t id, live::SubmitBatch(slurm, b));
    ids.preloads.push_back(id);
  }
  live::BatchSpec arr;
  arr.name = "orrery-eval-trial";
  arr.partition = a.partition;
  arr.script = dir + "/trial.sh";
  arr.workdir = dir;
  arr.output = dir + "/logs/trial-%a.out";
  arr.array_size = static_cast<uint32_t>(sub.plan.gpu_jobs.size());
  arr.gpus_per_node = s.workload.gpus_per_trial;
  ORR_ASSIGN_OR_RETURN(ids.array, live::SubmitBatch(slurm, arr));
  for (size_t m = 0; m < sub.plan.metric_jobs.size(); ++m) {
    live::BatchSpec b;
    b.name = "orrery-eval-metric";
    b.partition = a.cpu_partition;
    b.script = dir + "/metric.sh";
    b.workdir = dir;
    b.output = dir + "/logs/metric-" + std::to_string(m) + ".out";
    b.env = {"ORRERY_EVAL_METRIC=" + std::to_string(m)};
    if (sub.plan.release == eval::MetricRelease::kAllInferenceDone) {
      b.after_ok = {std::to_string(ids.array)};
    } else {
      for (uint32_t j : sub.plan.metric_jobs[m].after) b.after_ok.push_back(fmt::format("{}_{}", ids.array, j));
    }
    ORR_ASSIGN_OR_RETURN(uint32_t id, live::SubmitBatch(slurm, b));
    ids.metrics.push_back(id);
  }
  return ids;
}

nlohmann::json SubmissionJson(const SubmitArgs& a, const EvalSetup& s, const Submission& sub, const SlurmIds& ids,
                              double submit_unix) {
  nlohmann::json ds = nlohmann::json::array();
  for (const eval::DatasetWork& d : s.workload.datasets) ds.push_back({{"name", d.name}, {"examples", d.examples}});
  return {{"format", "orrery-eval-submission"}, {"version", 1},
          {"run_id", std::to_string(ids.array)}, {"submit_unix", submit_unix}, {"time_scale", a.time_scale},
          {"strategy", a.strategy}, {"model_size", s.model.label}, {"model_params", s.model.params},
          {"gpu", s.gpu.name}, {"gpus_per_trial", s.workload.gpus_per_trial}, {"nodes", sub.nodes},
          {"predicted_makespan_s", sub.predicted.makespan_s * a.time_scale},
          {"gpu_jobs", sub.plan.gpu_jobs.size()}, {"metric_jobs", sub.plan.metric_jobs.size()},
          {"preloads", sub.predicted.preloads.size()}, {"datasets", std::move(ds)},
          {"slurm", {{"array", ids.array}, {"preloads", ids.preloads}, {"metrics", ids.metrics}}}};
}

// --- results
struct RunResults {
  std::vector<eval::TrialRecord> records;
  double first_start = INFINITY, last_end = 0;
  size_t gpu_jobs = 0, metric_jobs = 0, preloads = 0;
};

Result<nlohmann::json> ReadJson(const std::string& path) {
  ORR_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseJson(text, path);
}

// One results/*.tsv file into records (slices and metrics) and counts.
Status ReadResultFile(const std::string& path, const nlohmann::json& subm, RunResults* out) {
  ORR_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  auto reader = LineReader::FromString(text, path);
  const std::string run = subm.at("run_id").get<std::string>();
  const auto& datasets = subm.at("datasets");
  std::vector<Field> f;
  std::vector<std::string> scratch;
  std::string_view line;
  std::vector<eval::TrialRecord> slices;
  double load_s = 0;
  while (reader->Next(&line)) {
    uint32_t bad = 0;
    const std::string where = path + ":" + std::to_string(reader->line_number()) + ":1: ";
    if (!SplitLine(line, '\t', &f, &scratch, &bad)) return MakeError(where + "unterminated quoted field");
    auto num = [&](size_t i, double* v) { return i < f.size() && ParseF64(Trim(f[i].text), v); };
    double d[6] = {0, 0, 0, 0, 0, 0};
    const std::string_view kind = f.empty() ? "" : f[0].text;
    if (kind == "slice" && f.size() == 8 && num(2, &d[0]) && num(3, &d[1]) && num(4, &d[2]) && num(5, &d[3]) &&
        num(6, &d[4]) && num(7, &d[5]) && d[1] >= 0 && d[1] < static_cast<double>(datasets.size())) {
      eval::TrialRecord r;
      r.key = fmt::format("{}/gpu-{}/{}", run, std::string(f[1].text), static_cast<int64_t>(d[0]));
      r.dataset = datasets[static_cast<size_t>(d[1])].at("name").get<std::string>();
      r.examples = static_cast<uint64_t>(d[3] - d[2]);
      r.infer_s = d[5] - d[4];
      slices.push_back(std::move(r));
    } else if (kind == "job" && f.size() == 7 && num(2, &d[0]) && num(3, &d[1]) && num(4, &d[2]) && num(5, &d[3])) {
      load_s = d[3] - d[2];
      out->first_start = std::min(out->first_start, d[0]);
      out->last_end = std::max(out->last_end, d[1]);
      ++out->gpu_jobs;
    } else if (kind == "metric" && f.size() == 5 && num(2, &d[0]) && num(3, &d[1]) && num(4, &d[2]) && d[0] >= 0 &&
               d[0] < static_cast<double>(datasets.size())) {
      eval::TrialRecord r;
      r.key = fmt::format("{}/metric-{}", run, std::string(f[1].text));
      r.dataset = datasets[static_cast<size_t>(d[0])].at("name").get<std::string>();
      r.examples = datasets[static_cast<size_t>(d[0])].at("examples").get<uint64_t>();
      r.metric_s = d[2] - d[1];
      out->last_end = std::max(out->last_end, d[2]);
      out->records.push_back(std::move(r));
      ++out->metric_jobs;
    } else if (kind == "preload" && f.size() == 5 && num(3, &d[0]) && num(4, &d[1])) {
      out->first_start = std::min(out->first_start, d[0]);
      out->last_end = std::max(out->last_end, d[1]);
      ++out->preloads;
    } else {
      return MakeError(where + "expected a slice, job, metric or preload record, got " + Quote(line));
    }
  }
  for (eval::TrialRecord& r : slices) {
    r.load_s = load_s;
    out->records.push_back(std::move(r));
  }
  return Status::Ok();
}

Result<RunResults> ReadResults(const std::string& dir, const nlohmann::json& subm) {
  RunResults out;
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir + "/results", ec))
    if (e.path().extension() == ".tsv") files.push_back(e.path().string());
  if (ec) return MakeError("cannot read " + dir + "/results: " + ec.message());
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) ORR_RETURN_IF_ERROR(ReadResultFile(f, subm, &out));
  const double scale = subm.at("time_scale").get<double>();
  for (eval::TrialRecord& r : out.records) {
    r.model_params = subm.at("model_params").get<double>();
    r.gpu = subm.at("gpu").get<std::string>();
    r.gpus = subm.at("gpus_per_trial").get<uint32_t>();
    r.time_scale = scale;
    r.recorded_unix = static_cast<int64_t>(out.last_end);
  }
  return out;
}

// Results expected by the submission: gpu jobs + metric jobs + preloads.
size_t Expected(const nlohmann::json& subm) {
  return subm.at("gpu_jobs").get<size_t>() + subm.at("metric_jobs").get<size_t>() + subm.at("preloads").get<size_t>();
}

size_t ResultFiles(const std::string& dir) {
  size_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir + "/results", ec)) n += e.path().extension() == ".tsv";
  return n;
}

int Record(const std::string& cmd, const RecordArgs& a) {
  nlohmann::json subm;
  try {
    auto j = ReadJson(a.workdir + "/submission.json");
    if (!j.ok()) return EvalFail(cmd.c_str(), j.error());
    subm = *j;
    auto res = ReadResults(a.workdir, subm);
    if (!res.ok()) return EvalFail(cmd.c_str(), res.error());
    uint64_t added = 0;
    if (!a.history.empty()) {
      auto h = eval::History::Open(a.history, /*create=*/true);
      if (!h.ok()) return EvalFail(cmd.c_str(), h.error());
      auto ins = (*h)->RecordAll(res->records);
      if (!ins.ok()) return EvalFail(cmd.c_str(), ins.error());
      added = *ins;
    }
    const double measured = res->last_end - subm.at("submit_unix").get<double>();
    const double predicted = subm.at("predicted_makespan_s").get<double>();
    const size_t expected = Expected(subm), seen = res->gpu_jobs + res->metric_jobs + res->preloads;
    nlohmann::json out = {{"measured_makespan_s", measured}, {"predicted_makespan_s", predicted},
                          {"error", predicted > 0 ? (measured - predicted) / predicted : 0.0},
                          {"gpu_jobs", res->gpu_jobs}, {"metric_jobs", res->metric_jobs},
                          {"preloads", res->preloads}, {"expected_jobs", expected}, {"history_records_added", added}};
    if (a.json) fmt::print("{}\n", DumpJson(out, 2));
    else
      fmt::print("orrery eval {}: {} of {} jobs reported; measured makespan {:.1f} s, predicted {:.1f} s ({:+.1f} %); "
                 "{} history record(s) added{}\n",
                 cmd, seen, expected, measured, predicted, predicted > 0 ? 100 * (measured - predicted) / predicted : 0.0,
                 added, a.history.empty() ? " (no --history)" : " to " + a.history);
    return seen == expected ? kExitOk : kExitRuntime;
  } catch (const nlohmann::json::exception& e) {
    return EvalFail(cmd.c_str(), MakeError(a.workdir + "/submission.json: unexpected content: " + e.what()));
  }
}

int RunSubmit(SubmitArgs a) {
  if (a.workdir.empty() || a.workdir[0] != '/') return EvalFail("submit", MakeError("--workdir must be an absolute path"));
  if (!(a.time_scale > 0 && std::isfinite(a.time_scale))) return EvalFail("submit", MakeError("--time-scale must be positive"));
  a.eval.history_may_be_new = true;
  live::ExecSlurmClient slurm(live::ExecSlurmOptions{a.bin_dir, a.slurm_conf, a.timeout_ms});
  Submission sub;
  auto nodes = PartitionNodes(slurm, a, &a.eval);
  if (!nodes.ok()) return EvalFail("submit", nodes.error());
  sub.nodes = *nodes;
  auto setup = PrepareEval(a.eval);
  if (!setup.ok()) return EvalFail("submit", setup.error());
  auto strategy = eval::MakeStrategy(a.strategy);
  if (!strategy.ok()) return EvalFail("submit", strategy.error());
  auto plan = eval::BuildPlan(**strategy, a.strategy, setup->workload, setup->cluster);
  if (!plan.ok()) return EvalFail("submit", plan.error());
  sub.plan = std::move(*plan);
  auto sched = eval::Execute(setup->workload, sub.plan, setup->cluster);
  if (!sched.ok()) return EvalFail("submit", sched.error());
  sub.predicted = std::move(*sched);
  if (Status st = MakeWorkdir(a.workdir); !st.ok()) return EvalFail("submit", st.error());
  if (Status st = WriteJobFiles(a, *setup, sub); !st.ok()) return EvalFail("submit", st.error());
  eval::PlanReport rep{a.eval.suite, &setup->workload, &sub.plan, &sub.predicted, setup->cluster, setup->priors};
  if (Status st = WriteFileAtomic(a.workdir + "/plan.json", DumpJson(eval::PlanJson(rep), 2) + "\n"); !st.ok())
    return EvalFail("submit", st.error());
  const double submit_unix = NowUnix();
  auto ids = SubmitAll(slurm, a, *setup, sub);
  if (!ids.ok()) return EvalFail("submit", ids.error());
  const nlohmann::json subm = SubmissionJson(a, *setup, sub, *ids, submit_unix);
  if (Status st = WriteFileAtomic(a.workdir + "/submission.json", DumpJson(subm, 2) + "\n"); !st.ok())
    return EvalFail("submit", st.error());
  fmt::print(stderr,
             "orrery eval submit: {} preload job(s), array {} with {} GPU trial job(s), {} CPU metric job(s) on {}; "
             "predicted makespan {:.1f} s\n",
             ids->preloads.size(), ids->array, sub.plan.gpu_jobs.size(), ids->metrics.size(), a.cpu_partition,
             sub.predicted.makespan_s * a.time_scale);
  if (!a.wait) return kExitOk;
  const double limit = a.max_wall > 0 ? a.max_wall : 3 * sub.predicted.makespan_s * a.time_scale + 120;
  const size_t expected = Expected(subm);
  while (ResultFiles(a.workdir) < expected) {
    if (NowUnix() - submit_unix > limit)
      return EvalFail("submit", MakeError(fmt::format("{} of {} jobs reported after {:.0f} s (see {}/logs)",
                                                  ResultFiles(a.workdir), expected, limit, a.workdir), kExitRuntime));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return Record("submit", RecordArgs{a.workdir, a.eval.history, a.json});
}

}  // namespace

void RegisterEvalSubmit(CLI::App* ev, int* exit_code) {
  auto sa = std::make_shared<SubmitArgs>();
  CLI::App* sub = ev->add_subcommand("submit", "submit a plan to Slurm (preloads, a trial job array, CPU metric jobs)");
  SetExamples(sub, {}, {"./build/orrery eval submit tests/fixtures/eval_sim/suite.csv --model 7B --partition gpu --cpu-partition cpu --workdir /tmp/orrery-eval --wait"});
  AddEvalFlags(sub, &sa->eval, /*nodes_required=*/false);
  sub->add_option("--strategy", sa->strategy, "strategy spec (as eval plan; default acme)");
  sub->add_option("--partition", sa->partition, "GPU partition for the trial jobs and preloads")->required();
  sub->add_option("--cpu-partition", sa->cpu_partition, "CPU partition for the metric jobs")->required();
  sub->add_option("--workdir", sa->workdir, "absolute work folder (scripts, job files, results, logs)")->required();
  sub->add_option("--time-scale", sa->time_scale, "emulation: sleep modelled seconds x this (default 1)");
  sub->add_option("--trial-command", sa->trial_command,
                  "run this per slice instead of sleeping (env ORRERY_EVAL_DATASET, _BEGIN, _END, _CACHE)");
  sub->add_option("--metric-command", sa->metric_command, "run this per dataset instead of sleeping (env ORRERY_EVAL_DATASET)");
  sub->add_option("--preload-command", sa->preload_command, "run this per node instead of sleeping (env ORRERY_EVAL_CACHE)");
  sub->add_flag("--wait", sa->wait, "wait for every job, then record the results (into --history if given)");
  sub->add_flag("--json", sa->json, "with --wait: print the measured-vs-predicted summary as JSON");
  sub->add_option("--max-wall", sa->max_wall, "with --wait: give up after S seconds (default 3 x predicted + 120)");
  sub->add_option("--slurm-conf", sa->slurm_conf, "SLURM_CONF for the Slurm tools");
  sub->add_option("--bin-dir", sa->bin_dir, "directory of sbatch/sinfo (default: PATH)");
  sub->add_option("--timeout-ms", sa->timeout_ms, "timeout of one Slurm command");
  sub->callback([=] { *exit_code = RunSubmit(*sa); });

  auto ra = std::make_shared<RecordArgs>();
  CLI::App* rec = ev->add_subcommand("record", "read a submission's results into the per-dataset history");
  SetExamples(rec, {}, {"./build/orrery eval record /tmp/orrery-eval --history /tmp/orrery-eval-history.db"});
  rec->add_option("WORKDIR", ra->workdir, "work folder of an `orrery eval submit`")->required();
  rec->add_option("--history", ra->history, "per-dataset history (SQLite; created if missing)");
  rec->add_flag("--json", ra->json, "print the summary as JSON");
  rec->callback([=] { *exit_code = Record("record", *ra); });
}

}  // namespace orrery::cli
