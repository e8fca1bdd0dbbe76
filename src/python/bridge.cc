#include "python/bridge.h"

#include <bit>
#include <cmath>
#include <memory>
#include <utility>

#include "predict/estimator.h"
#include "python/bridge_parts.h"
#include "sched/plugins/tiresias.h"

namespace py = pybind11;

namespace orrery::python {

using bridge::CallGil;
using bridge::JobView;
using bridge::PolicyState;

namespace bridge {

JobView ViewOf(const SchedJob& j, uint32_t slot, const Trace* trace) {
  JobView v{j.job, trace, j.estimate, j.attained, j.enqueued, kNoTime, slot, j.attempts, j.preemptions, j.failures,
            j.running};
  if (j.running) v.started = j.started;
  return v;
}

PolicyState::~PolicyState() {
  py::gil_scoped_acquire gil;
  if (slot) *slot = JobView{};  // a view kept past the run refuses to be read
  priority = admit = place = cycle = py::object();
  start_type = preempt_type = py::object();
  view = py::object();
}

std::string DescribeError(py::error_already_set& e) { return DescribePythonError(e); }

}  // namespace bridge

namespace {

const JobRequest& Req(const JobView& v) {
  if (!v.job) throw py::value_error("this job view is no longer valid: a view is valid during the call it is passed to");
  return *v.job;
}

py::object Name(const StringPool& pool, uint32_t id, bool valid) {
  if (!valid || id >= pool.size()) return py::none();
  return py::str(pool.Get(id));
}

// A double as an int64 of the same order (negative numbers flipped; -0 as 0).
int64_t OrderedBits(double d) {
  if (d == 0) d = 0;
  const int64_t b = std::bit_cast<int64_t>(d);
  return b < 0 ? b ^ INT64_MAX : b;
}

bool NumberKey(py::handle h, int64_t* out) {
  const double d = PyFloat_AsDouble(h.ptr());
  if (d == -1.0 && PyErr_Occurred()) throw py::error_already_set();
  if (std::isnan(d)) return false;
  *out = OrderedBits(d);
  return true;
}

// Number → (k, 0); (a, b) → (a, b). False for anything else and for NaN.
bool KeyOf(py::handle r, SortKey* key) {
  if (PyTuple_Check(r.ptr())) {
    const Py_ssize_t n = PyTuple_GET_SIZE(r.ptr());
    if (n < 1 || n > 2) return false;
    if (!NumberKey(PyTuple_GET_ITEM(r.ptr(), 0), &key->k1)) return false;
    key->k2 = 0;
    return n == 1 || NumberKey(PyTuple_GET_ITEM(r.ptr(), 1), &key->k2);
  }
  if (!PyFloat_Check(r.ptr()) && !PyLong_Check(r.ptr()) && !PyNumber_Check(r.ptr())) return false;
  key->k2 = 0;
  return NumberKey(r, &key->k1);
}

class PythonSort final : public QueueSortPlugin {
 public:
  explicit PythonSort(std::shared_ptr<PolicyState> s) : s_(std::move(s)) {}
  std::string_view name() const override { return s_->spec; }
  SortKey Key(const SchedJob& j, Time now) override {
    if (!s_->fault.ok()) return {};  // failed: the run ends with the fault, no more calls
    CallGil gil;
    SortKey key;
    try {
      if (!s_->view) {
        s_->view = py::cast(JobView{});
        s_->slot = s_->view.cast<JobView*>();
      }
      *s_->slot = bridge::ViewOf(j, kNoSlot, s_->trace);
      py::object t = py::reinterpret_steal<py::object>(PyLong_FromLongLong(now));
      PyObject* args[2] = {s_->view.ptr(), t.ptr()};
      py::object r = py::reinterpret_steal<py::object>(PyObject_Vectorcall(s_->priority.ptr(), args, 2, nullptr));
      if (!r) throw py::error_already_set();
      if (!KeyOf(r, &key))
        s_->Fail("priority(job " + std::to_string(j.job->id.v) + ") returned " + std::string(py::repr(r)) +
                 ": expected a number or a pair of numbers (not NaN)");
    } catch (py::error_already_set& e) {
      s_->Fail("priority(job " + std::to_string(j.job->id.v) + ") raised " + DescribePythonError(e));
    }
    return key;
  }

 private:
  std::shared_ptr<PolicyState> s_;
};

}  // namespace

std::string DescribePythonError(py::error_already_set& e) {
  std::string out = py::str(e.type().attr("__name__")).cast<std::string>() + ": " + py::str(e.value()).cast<std::string>();
  py::object tb = e.trace();
  if (tb && !tb.is_none()) {
    while (!tb.attr("tb_next").is_none()) tb = tb.attr("tb_next");
    py::object code = tb.attr("tb_frame").attr("f_code");
    out += " (at " + py::str(code.attr("co_filename")).cast<std::string>() + ":" +
           py::str(tb.attr("tb_lineno")).cast<std::string>() + " in " +
           py::str(code.attr("co_name")).cast<std::string>() + ")";
  }
  return out;
}

namespace {

// The bound method `name` of `policy` when it is callable, else a null object.
py::object Method(const py::object& policy, const char* name) {
  if (!py::hasattr(policy, name)) return py::object();
  py::object m = policy.attr(name);
  return PyCallable_Check(m.ptr()) ? m : py::object();
}

// "file:line" of a method's definition ("" when it has no code object, e.g. a builtin).
std::string DefinedAt(const py::object& method) {
  py::object fn = py::getattr(method, "__func__", method);
  if (!py::hasattr(fn, "__code__")) return "";
  py::object code = fn.attr("__code__");
  return py::str(code.attr("co_filename")).cast<std::string>() + ":" +
         py::str(code.attr("co_firstlineno")).cast<std::string>();
}

// The class attributes besides the order: estimator, blocking, interval, restart_overhead.
Status ReadSettings(const py::object& policy, uint64_t seed, const Trace* trace, PolicyParts* parts) {
  const std::string est = py::hasattr(policy, "estimator") && !policy.attr("estimator").is_none()
                              ? py::str(policy.attr("estimator")).cast<std::string>()
                              : std::string();
  if (!est.empty()) {
    auto e = MakeEstimator(est, seed, trace);
    if (!e.ok()) return e.error().With("estimator");
    parts->estimator = std::move(*e);
  }
  if (py::hasattr(policy, "blocking")) parts->blocking = policy.attr("blocking").cast<bool>();
  if (py::hasattr(policy, "interval") && !policy.attr("interval").is_none()) {
    const int64_t interval = policy.attr("interval").cast<int64_t>();
    if (interval < 0 || interval > 86400)
      return MakeError("interval = " + std::to_string(interval) + ": expected seconds in [0, 86400] (0 = at events)");
    parts->tick = interval;
  }
  if (py::hasattr(policy, "restart_overhead") && !policy.attr("restart_overhead").is_none()) {
    const std::string o = py::str(policy.attr("restart_overhead")).cast<std::string>();
    if (o == "lucid")
      parts->preempt_overhead = &LucidPreemptionOverhead;
    else if (o != "helios")
      return MakeError("restart_overhead = '" + o + "': expected 'helios' (7 s for 1 GPU, 30 s for up to 8, 60 s "
                       "above) or 'lucid' (40 s for up to 8 GPUs, 60 s above)");
  }
  return Status::Ok();
}

}  // namespace

Result<PolicyParts> PolicyFromObject(py::object policy, const std::string& spec, uint64_t seed, PolicyEnv* env) {
  auto state = std::make_shared<PolicyState>();
  state->spec = spec;
  state->trace = env ? env->trace : nullptr;
  state->cluster = env ? env->cluster : nullptr;
  PolicyParts parts;
  try {
    state->priority = Method(policy, "priority");
    if (!state->priority) return MakeError(std::string(py::repr(policy)) + " has no method priority(job, now)");
    ORR_RETURN_IF_ERROR(ReadSettings(policy, seed, state->trace, &parts));
    // Only the methods the policy defines become plugins: a priority-only policy costs what it did.
    state->admit = Method(policy, "admit");
    state->place = Method(policy, "place");
    state->cycle = Method(policy, "cycle");
    if (state->cycle) {
      py::module_ orrery = py::module_::import("orrery");
      state->start_type = orrery.attr("Start");
      state->preempt_type = orrery.attr("Preempt");
      state->cycle_at = DefinedAt(state->cycle);
    }
  } catch (py::error_already_set& e) {
    return MakeError(DescribePythonError(e));
  } catch (py::cast_error& e) {
    return MakeError(e.what());
  }
  parts.sort = std::make_unique<PythonSort>(state);
  if (state->admit) parts.admit = bridge::MakeAdmitPlugin(state);
  if (state->place)
    parts.placer = [state](std::unique_ptr<PlacePlugin> run_placer) {
      return bridge::MakePlacePlugin(state, std::move(run_placer));
    };
  if (state->cycle) {
    parts.reschedule = bridge::MakeCyclePlugin(state);
    parts.blocking = false;
  }
  parts.fault = [state] { return state->fault; };
  return parts;
}

Result<PolicyParts> PolicyFromSpec(const std::string& spec, uint64_t seed, PolicyEnv* env) {
  const std::string path = spec.substr(kPythonPolicyPrefix.size());
  const size_t dot = path.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == path.size())
    return MakeError("expected py:module.Class, e.g. py:my_policies.ShortestFirst");
  py::gil_scoped_acquire gil;
  py::object policy;
  try {
    py::module_ sys = py::module_::import("sys");
    py::object cwd = py::module_::import("os").attr("getcwd")();
    if (!sys.attr("path").contains(cwd)) sys.attr("path").attr("insert")(0, cwd);
    py::module_ mod = py::module_::import(path.substr(0, dot).c_str());
    const std::string cls = path.substr(dot + 1);
    if (!py::hasattr(mod, cls.c_str()))
      return MakeError("module '" + path.substr(0, dot) + "' has no class '" + cls + "'");
    policy = mod.attr(cls.c_str())();
  } catch (py::error_already_set& e) {
    return MakeError(DescribePythonError(e));
  }
  return PolicyFromObject(policy, spec, seed, env);
}

void BindViews(py::module_& m) {
  py::class_<JobView>(m, "JobView", py::module_local(),
                      "A job as a live scheduler knows it (valid during the call it is passed to).")
      .def_property_readonly("id", [](const JobView& v) { return Req(v).id.v; }, "trace index (jobs.csv job_id)")
      .def_property_readonly("submit", [](const JobView& v) { return Req(v).submit; }, "submit time (s)")
      .def_property_readonly("gpus", [](const JobView& v) { return Req(v).gpus; }, "GPUs requested")
      .def_property_readonly("gpu_milli", [](const JobView& v) { return Req(v).gpu_milli; },
                             "share of each GPU in thousandths")
      .def_property_readonly("user", [](const JobView& v) {
        return Req(v), v.trace ? Name(v.trace->users, Req(v).user.v, Req(v).user.valid()) : py::none(); }, "user name or None")
      .def_property_readonly("vc", [](const JobView& v) {
        return Req(v), v.trace ? Name(v.trace->vcs, Req(v).vc.v, Req(v).vc.valid()) : py::none(); }, "virtual cluster or None")
      .def_property_readonly("name", [](const JobView& v) {
        return Req(v), v.trace ? Name(v.trace->names, Req(v).name.v, Req(v).name.valid()) : py::none(); }, "job name or None")
      .def_property_readonly("walltime", [](const JobView& v) -> py::object {
        return Req(v).walltime < 0 ? py::object(py::none()) : py::object(py::int_(Req(v).walltime)); }, "time limit (s) or None")
      .def_property_readonly("estimate", [](const JobView& v) -> py::object {
        Req(v);
        return v.estimate < 0 ? py::object(py::none()) : py::object(py::int_(v.estimate)); },
        "the policy estimator's duration (s), or None without one")
      .def_property_readonly("attained", [](const JobView& v) { return Req(v), v.attained; },
                             "GPU-seconds of service received so far")
      .def_property_readonly("enqueued", [](const JobView& v) { return Req(v), v.enqueued; }, "when it last entered the queue")
      .def_property_readonly("attempts", [](const JobView& v) { return Req(v), v.attempts; }, "runs started so far")
      .def_property_readonly("preemptions", [](const JobView& v) { return Req(v), v.preemptions; }, "times preempted")
      .def_property_readonly("failures", [](const JobView& v) { return Req(v), v.failures; }, "attempts that failed")
      .def_property_readonly("running", [](const JobView& v) { return Req(v), v.running; },
                             "whether it runs now (a cycle's running jobs)")
      .def_property_readonly("started", [](const JobView& v) -> py::object {
        Req(v);
        return v.running ? py::object(py::int_(v.started)) : py::object(py::none()); },
        "start of the current run (s) of a running job, else None")
      .def("__repr__", [](const JobView& v) {
        if (!v.job) return std::string("JobView(no longer valid)");
        return "JobView(id=" + std::to_string(Req(v).id.v) + ", submit=" + std::to_string(Req(v).submit) +
               ", gpus=" + std::to_string(Req(v).gpus) + ")";
      });
  bridge::BindPolicyViews(m);
}

}  // namespace orrery::python
