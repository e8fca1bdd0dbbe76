// The `orrery` Python module's compiled part, `orrery._orrery` (docs/python.md): traces,
// clusters, and simulations whose outputs come back as columns (numpy arrays, one per column
// of jobs.csv, attempts.csv and timeseries.csv) that python/orrery/__init__.py turns into
// pandas DataFrames. A run is the CLI's (run/run.h); errors carry the CLI's messages.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "analysis/sim_output.h"
#include "base/json_text.h"
#include "base/parallel.h"
#include "config/cluster_config.h"
#include "logs/diagnose.h"
#include "logs/progress.h"
#include "plan/infer.h"
#include "plan/registry.h"
#include "plan/sailor_search.h"
#include "python/bridge.h"
#include "run/run.h"
#include "semantic/inspect.h"
#include "trace/import.h"
#include "workload/generator.h"
#include "workload/spec.h"

namespace py = pybind11;

namespace orrery::python {

namespace {

// orrery.OrreryError (a ValueError): the CLI's message of a failed step.
struct OrreryError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <class T>
T Take(Result<T> r) {
  if (!r.ok()) throw OrreryError(r.error().message);
  return std::move(*r);
}

struct PyTrace {
  std::shared_ptr<const Trace> t;
};
struct PyCluster {
  std::shared_ptr<const Cluster> c;
};

// Policy objects handed to simulate(), by their spec, while the call runs (leaked on
// purpose: never destroyed after the interpreter).
std::map<std::string, py::object>& Instances() {
  static auto* m = new std::map<std::string, py::object>();
  return *m;
}

Result<PolicyParts> BuildPythonPolicy(const std::string& spec, uint64_t seed, PolicyEnv* env) {
  py::gil_scoped_acquire gil;
  auto it = Instances().find(spec);
  if (it != Instances().end()) return PolicyFromObject(it->second, spec, seed, env);
  return PolicyFromSpec(spec, seed, env);
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <class T>
py::array_t<T> Column(size_t n) {
  return py::array_t<T>(static_cast<py::ssize_t>(n));
}

// v as the CSV files write it (%.Nf) and a reader reads it back: the same number.
double Rounded(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return std::strtod(buf, nullptr);
}

py::object Str(const std::string& s) { return s.empty() ? py::none() : py::object(py::str(s)); }

// jobs.csv as columns (docs/formats/sim-output.md): empty fields are NaN / None.
py::dict JobsColumns(const Trace& trace, const SimResult& r) {
  const size_t n = r.outcomes.size();
  auto id = Column<int64_t>(n), gpus = Column<int64_t>(n), milli = Column<int64_t>(n), submit = Column<int64_t>(n),
       pre = Column<int64_t>(n);
  auto start = Column<double>(n), end = Column<double>(n), wait = Column<double>(n), jct = Column<double>(n),
       bsld = Column<double>(n), run = Column<double>(n);
  py::list source(n), vc(n), status(n), reason(n);
  auto a_id = id.mutable_unchecked<1>(), a_gpus = gpus.mutable_unchecked<1>(), a_milli = milli.mutable_unchecked<1>(),
       a_submit = submit.mutable_unchecked<1>(), a_pre = pre.mutable_unchecked<1>();
  auto a_start = start.mutable_unchecked<1>(), a_end = end.mutable_unchecked<1>(), a_wait = wait.mutable_unchecked<1>(),
       a_jct = jct.mutable_unchecked<1>(), a_bsld = bsld.mutable_unchecked<1>(), a_run = run.mutable_unchecked<1>();
  for (size_t i = 0; i < n; ++i) {
    const JobOutcome& o = r.outcomes[i];
    const py::ssize_t k = static_cast<py::ssize_t>(i);
    a_id(k) = static_cast<int64_t>(i);
    source[i] = i < trace.source_ids.size() ? Str(trace.source_ids[i]) : py::none();
    std::string vc_name;
    if (o.vc.valid() && o.vc.v < r.vc_names.size()) vc_name = r.vc_names[o.vc.v];
    else if (i < trace.jobs.size() && trace.jobs[i].vc.valid() && trace.jobs[i].vc.v < trace.vcs.size())
      vc_name = trace.vcs.Get(trace.jobs[i].vc.v);
    vc[i] = Str(vc_name);
    a_gpus(k) = o.gpus;
    a_milli(k) = o.gpu_milli;
    const Time sub = i < trace.jobs.size() ? trace.jobs[i].submit : 0;
    a_submit(k) = sub;
    const bool done = o.status == OutcomeStatus::kFinished, gone = o.status == OutcomeStatus::kWithdrawn;
    a_start(k) = done || gone ? static_cast<double>(o.start) : kNaN;
    a_end(k) = done || gone ? static_cast<double>(o.end) : kNaN;
    a_wait(k) = done || gone ? static_cast<double>(o.wait) : kNaN;
    a_jct(k) = done ? static_cast<double>(o.end - sub) : kNaN;
    a_bsld(k) = done ? Rounded(std::max(1.0, static_cast<double>(o.end - sub) /
                                                 static_cast<double>(std::max<Duration>(o.run, kSlowdownTau))),
                               4)
                     : kNaN;
    a_run(k) = done ? static_cast<double>(o.run) : kNaN;
    a_pre(k) = o.preemptions;
    status[i] = py::str(std::string(OutcomeStatusName(o.status)));
    const bool why = o.status == OutcomeStatus::kRejected || o.status == OutcomeStatus::kSkipped;
    reason[i] = why && o.reject_reason < r.reasons.size() ? Str(r.reasons[o.reject_reason]) : py::none();
  }
  py::dict d;
  d["job_id"] = id, d["source_id"] = source, d["vc"] = vc, d["gpus"] = gpus, d["gpu_milli"] = milli;
  d["submit"] = submit, d["start"] = start, d["end"] = end, d["queue_delay"] = wait, d["jct"] = jct;
  d["bounded_slowdown"] = bsld, d["run"] = run, d["preemptions"] = pre, d["status"] = status, d["reason"] = reason;
  return d;
}

// attempts.csv as columns (docs/formats/attempts.md).
py::dict AttemptsColumns(const Trace& trace, const Cluster& cluster, const AttemptLog& log) {
  const size_t n = log.attempts.size();
  std::vector<py::array_t<int64_t>> ints;
  for (int c = 0; c < 8; ++c) ints.push_back(Column<int64_t>(n));
  py::list source(n), nodes(n), cause(n), failure(n), restartable(n);
  for (size_t i = 0; i < n; ++i) {
    const Attempt& a = log.attempts[i];
    const int64_t v[8] = {a.job.v, a.index, a.start, a.end, a.end - a.start, a.gpus, a.steps_done, a.steps_durable};
    for (int c = 0; c < 8; ++c) ints[c].mutable_at(static_cast<py::ssize_t>(i)) = v[c];
    source[i] = a.job.v < trace.source_ids.size() ? Str(trace.source_ids[a.job.v]) : py::none();
    std::string names;
    for (uint32_t k = 0; k < a.node_count; ++k) {
      const NodeId nd = log.nodes[a.nodes_at + k];
      if (k) names.push_back(' ');
      names += nd.v < cluster.nodes.size() && !cluster.nodes[nd.v].name.empty() ? cluster.nodes[nd.v].name
                                                                                 : std::to_string(nd.v);
    }
    nodes[i] = Str(names);
    cause[i] = py::str(std::string(EndCauseName(a.cause)));
    failure[i] = Str(std::string(FailureKindName(a.failure)));
    restartable[i] = a.cause == EndCause::kFailed ? py::object(py::bool_(a.restartable)) : py::none();
  }
  py::dict d;
  d["job_id"] = ints[0], d["source_id"] = source, d["attempt"] = ints[1], d["start"] = ints[2], d["end"] = ints[3];
  d["run"] = ints[4], d["gpus"] = ints[5], d["nodes"] = nodes, d["steps_done"] = ints[6];
  d["steps_durable"] = ints[7], d["cause"] = cause, d["failure"] = failure, d["restartable"] = restartable;
  return d;
}


// timeseries.csv as columns.
py::dict TimeseriesColumns(const SimResult& r) {
  const size_t n = r.samples.size();
  auto t = Column<int64_t>(n), running = Column<int64_t>(n), pending = Column<int64_t>(n);
  auto busy = Column<double>(n), util = Column<double>(n), pgpus = Column<double>(n);
  auto powered = Column<int64_t>(n);
  const double total = static_cast<double>(r.total_gpus);
  for (size_t i = 0; i < n; ++i) {
    const TimeSample& s = r.samples[i];
    const py::ssize_t k = static_cast<py::ssize_t>(i);
    t.mutable_at(k) = s.t;
    busy.mutable_at(k) = Rounded(static_cast<double>(s.busy_gpu_milli) / 1000.0, 3);
    util.mutable_at(k) = total > 0 ? Rounded(static_cast<double>(s.busy_gpu_milli) / 1000.0 / total, 4) : 0.0;
    running.mutable_at(k) = s.running;
    pending.mutable_at(k) = s.pending;
    pgpus.mutable_at(k) = Rounded(static_cast<double>(s.pending_gpu_milli) / 1000.0, 3);
    if (r.has_energy) powered.mutable_at(k) = i < r.powered_samples.size() ? r.powered_samples[i] : 0;
  }
  py::dict d;
  d["time"] = t, d["busy_gpus"] = busy, d["utilization"] = util, d["running_jobs"] = running;
  d["pending_jobs"] = pending, d["pending_gpus"] = pgpus;
  if (r.has_energy) d["powered_nodes"] = powered;
  return d;
}

struct RunOut {
  Status status = Status::Ok();
  std::unique_ptr<SimResult> result;
};

// One run per spec, on up to `threads` threads, without the GIL (Python policies take it
// for each call); the columns are built afterwards, with it.
py::list SimulateSpecs(const PyTrace& trace, const PyCluster& cluster, const std::vector<std::string>& specs,
                       uint64_t seed, unsigned threads, const std::string& placer, int64_t sample_interval) {
  std::vector<RunOut> outs(specs.size());
  {
    py::gil_scoped_release release;
    const bool ok = RunOrdered<RunOut>(
        specs.size(), threads ? threads : AvailableCpus(),
        [&](size_t i) {
          SimConfig cfg;
          cfg.policy = specs[i];
          cfg.placer = placer;
          cfg.seed = seed;
          cfg.sample_interval = sample_interval;
          cfg.explain = false;
          cfg.record_attempts = true;
          RunOut out;
          Result<SimResult> r = SimulateChecked(*trace.t, *cluster.c, cfg);
          if (r.ok()) out.result = std::make_unique<SimResult>(std::move(*r));
          else out.status = r.error();
          return out;
        },
        [&](size_t i, RunOut& out) {
          outs[i] = std::move(out);
          return outs[i].status.ok();
        });
    (void)ok;
  }
  py::list runs;
  for (RunOut& out : outs) {
    if (!out.status.ok()) throw OrreryError(out.status.error().message);
    if (!out.result) continue;
    const SimResult& r = *out.result;
    py::dict run;
    run["policy"] = r.policy;
    run["summary"] = DumpJson(SummaryToJson(SummaryOf(r, *trace.t)), -1);
    run["jobs"] = JobsColumns(*trace.t, r);
    run["attempts"] = AttemptsColumns(*trace.t, *cluster.c, r.attempts);
    run["timeseries"] = TimeseriesColumns(r);
    runs.append(run);
  }
  return runs;
}

// policies: strings (built-in specs, "py:module.Class") or Policy objects.
py::list Simulate(const PyTrace& trace, const PyCluster& cluster, const py::list& policies, uint64_t seed,
                  unsigned threads, const std::string& placer, int64_t sample_interval) {
  std::vector<std::string> specs;
  Instances().clear();
  for (py::handle p : policies) {
    if (py::isinstance<py::str>(p)) {
      specs.push_back(p.cast<std::string>());
      continue;
    }
    std::string name = py::hasattr(p, "name") && !p.attr("name").is_none()
                           ? py::str(p.attr("name")).cast<std::string>()
                           : py::str(py::type::of(p).attr("__name__")).cast<std::string>();
    std::string spec = std::string(kPythonPolicyPrefix) + name;
    for (int k = 2; Instances().count(spec); ++k) spec = std::string(kPythonPolicyPrefix) + name + "-" + std::to_string(k);
    Instances()[spec] = py::reinterpret_borrow<py::object>(p);
    specs.push_back(spec);
  }
  if (specs.empty()) throw OrreryError("no policy given");
  try {
    py::list runs = SimulateSpecs(trace, cluster, specs, seed, threads, placer, sample_interval);
    Instances().clear();
    return runs;
  } catch (...) {
    Instances().clear();
    throw;
  }
}

PyTrace LoadTraceFile(const std::string& path, const std::string& format) {
  TraceFormat fmt = Take(ParseTraceFormat(format));
  return PyTrace{std::make_shared<const Trace>(Take(LoadTrace(path, fmt)))};
}

PyTrace TraceFromCanonical(const std::string& text, const std::string& name) {
  ImportReport rep;
  return PyTrace{std::make_shared<const Trace>(
      Take(ImportTraceFromString(TraceFormat::kCanonical, text, name, ImportOptions{}, &rep)))};
}

PyTrace Generate(const std::string& preset, double days, uint64_t jobs, double load, uint64_t seed) {
  workload::WorkloadSpec spec = Take(workload::GetPreset(preset));
  if (days > 0) spec.days = days;
  if (jobs > 0) spec.jobs = jobs;
  if (load > 0) spec.load = load;
  if (Status st = workload::ValidateSpec(spec); !st.ok()) throw OrreryError(st.error().message);
  return PyTrace{std::make_shared<const Trace>(workload::GenerateWorkload(spec, seed))};
}

// orrery.plan.estimate: one inference engine step (plan/infer.h, `orrery plan infer`).
py::dict EstimateInferStep(const std::string& model, const std::string& phase, uint32_t batch, double context,
                           uint32_t verify_tokens, uint32_t tp, const std::string& gpu) {
  const plan::DecoderShape shape = Take(plan::ParseDecoder(model));
  plan::InferStep step;
  step.phase = Take(plan::ParseInferPhase(phase));
  step.batch = batch;
  step.context = context;
  step.verify_tokens = verify_tokens;
  step.tp = tp;
  const plan::InferGpu g = Take(plan::InferGpuByName(gpu));
  const plan::InferEstimate e = Take(plan::EstimateInfer(shape, step, g));
  py::dict d;
  d["model"] = shape.name, d["step_time_s"] = e.step_time_s, d["gemm_s"] = e.gemm_s;
  d["attention_s"] = e.attention_s, d["elementwise_s"] = e.elementwise_s, d["comm_s"] = e.comm_s;
  d["fixed_s"] = e.fixed_s, d["kv_cache_gib"] = e.kv_cache_gib, d["weights_gib"] = e.weights_gib;
  d["max_batch"] = e.max_batch, d["fits"] = e.fits;
  return d;
}

// orrery.plan.search: the best plan over a pool of GPUs described by Sailor's profiles, as
// `orrery plan search --json` prints it; JSON text, parsed by the Python side.
std::string SearchPlansJson(const std::string& model, const std::string& pool, int global_batch,
                            const std::string& objective, double max_cost, double min_throughput, bool exhaustive) {
  plan::SailorSearchArgs a;
  a.model = model, a.pool = pool, a.global_batch = global_batch, a.objective = objective;
  a.max_cost = max_cost, a.min_throughput = min_throughput, a.exhaustive = exhaustive;
  const std::string dir = plan::DefaultProfilePaths().shared_dir + "/sailor-profiles";
  return DumpJson(Take(plan::SearchSailorPool(a, dir)), -1);
}

// orrery.diagnose: a failed job's log text classified by the default rules, as
// `orrery diagnose` does without an LLM backend.
py::dict DiagnoseText(const std::string& text) {
  static const logs::Diagnoser diagnoser;
  const logs::Diagnosis d = diagnoser.Diagnose(text);
  py::dict out;
  out["category"] = std::string(logs::CategoryName(d.category)), out["subtype"] = d.subtype, out["retry"] = d.retry;
  out["suspect_node"] = d.suspect_node, out["evidence"] = d.evidence, out["rule"] = d.rule;
  out["confidence"] = d.confidence, out["source"] = std::string(logs::DiagnosisSourceName(d.source));
  return out;
}

// orrery.progress: where a training job is, from its log text, as `orrery progress` reads a
// whole file (no LLM backend).
py::dict ProgressOfText(const std::string& text) {
  logs::ProgressTracker t;
  t.Feed(text, kNoTime);
  t.Finish(kNoTime);
  const logs::Reading r = t.latest();
  const std::string_view fw = logs::FrameworkName(r.framework);
  py::dict out;
  out["framework"] = fw.empty() ? py::object(py::none()) : py::object(py::str(std::string(fw)));
  out["step"] = r.step, out["total_steps"] = r.total_steps, out["epoch"] = r.epoch, out["loss"] = r.loss;
  out["seconds_per_step"] = r.seconds_per_step, out["eta_s"] = r.eta_s;
  out["reader"] = r.reader.empty() ? py::object(py::none()) : py::object(py::str(r.reader));
  py::list anomalies;
  for (const logs::Anomaly& a : t.anomalies()) anomalies.append(std::string(logs::AnomalyKindName(a.kind)));
  out["anomalies"] = anomalies;
  return out;
}

// orrery.inspect: the launch schema of each file (name → text), as `orrery inspect --json`
// prints it without an LLM backend; JSON text, parsed by the Python side.
std::vector<std::string> InspectTexts(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<semantic::InputFile> inputs;
  for (const auto& [name, text] : files) inputs.push_back(semantic::InputFile{name, text});
  std::vector<std::string> out;
  for (const semantic::LaunchSchema& s : semantic::InspectFiles(inputs)) out.push_back(DumpJson(semantic::ToJson(s)));
  return out;
}

void BindTypes(py::module_& m) {
  py::class_<PyTrace>(m, "Trace", "A job trace (docs/formats/trace.md).")
      .def("__len__", [](const PyTrace& t) { return t.t->jobs.size(); })
      .def_property_readonly("origin", [](const PyTrace& t) { return t.t->origin; })
      .def("__repr__", [](const PyTrace& t) {
        return "Trace(" + std::to_string(t.t->jobs.size()) + " jobs, origin '" + t.t->origin + "')";
      });
  py::class_<PyCluster>(m, "Cluster", "A cluster: nodes, GPUs, virtual clusters (docs/formats/cluster.md).")
      .def_static("from_toml", [](const std::string& path) {
        return PyCluster{std::make_shared<const Cluster>(Take(LoadClusterConfig(path)))};
      }, py::arg("path"), "The cluster of a TOML config file (docs/formats/cluster.md).")
      .def_static("from_toml_text", [](const std::string& text, const std::string& name) {
        return PyCluster{std::make_shared<const Cluster>(Take(ParseClusterConfigString(text, name)))};
      }, py::arg("text"), py::arg("name"), "The cluster of TOML text; `name` stands for the file in messages.")
      .def_static("default", [] { return PyCluster{std::make_shared<const Cluster>(Take(DefaultCluster()))}; },
                  "The embedded default cluster (configs/helios-venus.toml).")
      .def_property_readonly("name", [](const PyCluster& c) { return c.c->name; })
      .def_property_readonly("nodes", [](const PyCluster& c) { return c.c->nodes.size(); })
      .def_property_readonly("gpus", [](const PyCluster& c) { return c.c->total_gpus(); })
      .def("__repr__", [](const PyCluster& c) {
        return "Cluster('" + c.c->name + "', " + std::to_string(c.c->nodes.size()) + " nodes, " +
               std::to_string(c.c->total_gpus()) + " GPUs)";
      });
}

}  // namespace

}  // namespace orrery::python

PYBIND11_MODULE(_orrery, m) {
  using namespace orrery::python;
  m.doc() = "Orrery's simulator from Python (docs/python.md).";
  py::register_exception<OrreryError>(m, "OrreryError", PyExc_ValueError);
  BindViews(m);
  BindTypes(m);
  m.def("load_trace_file", &LoadTraceFile, py::arg("path"), py::arg("format") = "auto");
  m.def("trace_from_canonical", &TraceFromCanonical, py::arg("text"), py::arg("name"));
  m.def("generate", &Generate, py::arg("preset"), py::arg("days") = 0.0, py::arg("jobs") = 0, py::arg("load") = 0.0,
        py::arg("seed") = 1);
  m.def("simulate", &Simulate, py::arg("trace"), py::arg("cluster"), py::arg("policies"), py::arg("seed"),
        py::arg("threads"), py::arg("placer"), py::arg("sample_interval"));
  m.def("diagnose", &DiagnoseText, py::arg("text"),
        "Why a job failed, from its log text (the default rules of `orrery diagnose`): category, subtype, "
        "whether a retry may help, the suspect node, the deciding lines and rule.");
  m.def("progress", &ProgressOfText, py::arg("text"),
        "Where a training job is, from its log text (`orrery progress`): framework, step, total_steps, epoch, "
        "loss, seconds_per_step, eta_s, the reader that understood it and the loss anomalies seen.");
  m.def("inspect_texts", &InspectTexts, py::arg("files"));
  py::module_ plan = m.def_submodule("plan", "The planner's cost models (docs/design/inference.md).");
  plan.def("estimate", &EstimateInferStep, py::arg("model"), py::arg("phase") = "decode", py::arg("batch") = 1,
           py::arg("context") = 0.0, py::arg("verify_tokens") = 0, py::arg("tp") = 1, py::arg("gpu") = "h200",
           "One inference engine step of `model` (a preset such as qwen2.5-7b or a llama:... spec) on `gpu`: "
           "its time, the time's parts, the KV cache and weights per GPU and the largest batch that fits.");
  plan.def("search_json", &SearchPlansJson, py::arg("model"), py::arg("pool"), py::arg("global_batch"),
           py::arg("objective"), py::arg("max_cost"), py::arg("min_throughput"), py::arg("exhaustive"),
           "The best plan as JSON text (orrery.plan.search parses it).");
  orrery::SetPythonPolicyFactory(&BuildPythonPolicy);
}
