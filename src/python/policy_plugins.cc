// The optional methods of a Python policy (docs/python.md, docs/design/python.md) as the core's
// plugins: admit(job, cluster) → AdmitPlugin, place(job, free_nodes) → PlacePlugin, and
// cycle(view) → ReschedulePlugin, whose decisions are checked here before the core applies
// them. A bad return value is the policy's fault (PolicyParts::fault), as an exception is.
#include <algorithm>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "python/bridge_parts.h"
#include "sched/framework/api/decision.h"
#include "sched/plugins/placers.h"

namespace py = pybind11;

namespace orrery::python::bridge {

namespace {

// Whether node n (VC-local index `local`) is offered to placement: not drained, powered, not
// blocked (reserved).
bool Offered(const ClusterState& st, NodeId n, size_t local, const NodeMask* blocked) {
  return !st.drained(n) && st.powered(n) && !(blocked && blocked->Test(local));
}

// {node id: wholly free GPUs} of the offered nodes of `vc` that have any.
py::dict FreeNodes(const ClusterState& st, VcId vc, const NodeMask* blocked) {
  py::dict free;
  const std::vector<NodeId>& nodes = st.vc_nodes(vc);
  for (size_t i = 0; i < nodes.size(); ++i)
    if (Offered(st, nodes[i], i, blocked) && st.free_gpus(nodes[i]) > 0) free[py::int_(nodes[i].v)] = st.free_gpus(nodes[i]);
  return free;
}

// ---------------------------------------------------------------- cycle(view)

// One cycle of one VC: what its view shows and the job views handed out, which the end of
// the cycle invalidates (Python may keep them; they then refuse to be read).
struct CycleData {
  SchedulerHandle* h = nullptr;
  const PolicyState* s = nullptr;
  VcId vc;
  Time now = 0;
  bool valid = false;
  bool pending_listed = false;
  std::vector<uint32_t> pending, running;
  // Views handed out, by list and index (created on first access, so the same object is
  // returned for the same job), and the wake-ups asked for.
  std::vector<py::object> pending_views, running_views;
  std::vector<Time> wakes;

  void Check() const {
    if (!valid) throw py::value_error("this cycle view is no longer valid: a view is valid during its cycle call only");
  }
  const std::vector<uint32_t>& Pending() {
    if (!pending_listed) {
      pending_listed = true;
      pending.reserve(h->pending_count(vc));
      h->ForEachPending(vc, [this](const PendingEntry& e) -> int64_t {
        pending.push_back(e.slot);
        return INT64_MAX;
      });
    }
    return pending;
  }
  py::object View(bool of_running, size_t i) {
    std::vector<py::object>& views = of_running ? running_views : pending_views;
    const std::vector<uint32_t>& slots = of_running ? running : Pending();
    if (views.size() < slots.size()) views.resize(slots.size());
    if (!views[i]) views[i] = py::cast(ViewOf(h->job(slots[i]), slots[i], s->trace));
    return views[i];
  }
  void Invalidate() {
    valid = false;
    for (auto* list : {&pending_views, &running_views})
      for (py::object& o : *list)
        if (o) o.cast<JobView*>()->job = nullptr;
    pending_views.clear();
    running_views.clear();
    h = nullptr;
  }
};

// view.pending / view.running: a sequence of JobViews.
struct CycleJobs {
  std::shared_ptr<CycleData> d;
  bool of_running = false;
  size_t size() const {
    d->Check();
    return of_running ? d->running.size() : d->Pending().size();
  }
};

struct CycleView {
  std::shared_ptr<CycleData> d;
};

// One decision as read from the list cycle() returned: its kind, the job's slot and how the
// message names it.
struct ParsedDecision {
  Decision d;
  std::string what;  // "Start(job 17)"
};

const char* const kLeftPending = "left pending by the policy's cycle()";
const char* const kNoPlacement = "started by the policy's cycle() but the placer found no nodes (fragmentation)";

class PythonCycle final : public ReschedulePlugin {
 public:
  explicit PythonCycle(std::shared_ptr<PolicyState> s) : s_(std::move(s)) {}
  std::string_view name() const override { return s_->spec; }

  void JobStarted(SchedulerHandle& h, uint32_t slot) override {
    const SchedJob& j = h.job(slot);
    Running(j.vc).insert({j.started, j.seq, slot});
  }
  void JobStopped(SchedulerHandle& h, uint32_t slot, EndCause, bool) override {
    const SchedJob& j = h.job(slot);
    Running(j.vc).erase({j.started, j.seq, slot});
  }
  void Advance(SchedulerHandle& h) override {
    while (!wakes_.empty() && wakes_.begin()->first <= h.now()) {
      h.MarkDirty(wakes_.begin()->second);
      wakes_.erase(wakes_.begin());
    }
  }
  Time NextWakeup() const override { return wakes_.empty() ? kNoTime : wakes_.begin()->first; }

  Next Run(SchedulerHandle& h, VcId vc, PluginStatus* block) override {
    if (!s_->fault.ok()) return Next::kWalk;  // failed: the run ends with the fault, no more calls
    if (h.pending_count(vc) == 0) return Next::kStop;
    std::vector<ParsedDecision> decisions;
    if (!Call(h, vc, &decisions)) return Next::kWalk;
    Apply(h, vc, decisions, block);
    if (block->ok() && h.pending_count(vc) > 0) *block = PluginStatus::Unschedulable(kLeftPending);
    return s_->fault.ok() ? Next::kStop : Next::kWalk;
  }

 private:
  struct RunKey {
    Time started;
    uint32_t seq, slot;
    auto operator<=>(const RunKey&) const = default;
  };
  std::set<RunKey>& Running(VcId vc) {
    if (running_.size() <= vc.v) running_.resize(vc.v + 1u);
    return running_[vc.v];
  }
  std::string Where(const SchedulerHandle& h, VcId vc) const {
    std::string at = "cycle(VC " + VcName(vc) + ", t=" + std::to_string(h.now()) + ")";
    return s_->cycle_at.empty() ? at : at + " (cycle defined at " + s_->cycle_at + ")";
  }
  std::string VcName(VcId vc) const {
    if (s_->cluster && vc.v < s_->cluster->vcs.size()) return s_->cluster->vcs[vc.v].name;
    return std::to_string(vc.v);
  }

  // Calls cycle(view) and reads its decisions; false (with the fault kept) when it raised or
  // returned something that is not a list of decisions.
  bool Call(SchedulerHandle& h, VcId vc, std::vector<ParsedDecision>* out) {
    CallGil gil;
    auto d = std::make_shared<CycleData>();
    d->h = &h;
    d->s = s_.get();
    d->vc = vc;
    d->now = h.now();
    d->valid = true;
    for (const RunKey& k : Running(vc)) d->running.push_back(k.slot);
    bool ok = true;
    try {
      py::object r = s_->cycle(py::cast(CycleView{d}));
      ok = Parse(h, vc, *d, r, out);
    } catch (py::error_already_set& e) {
      s_->Fail(Where(h, vc) + " raised " + DescribeError(e));
      ok = false;
    } catch (py::cast_error&) {
      s_->Fail(Where(h, vc) + " returned a job id out of range");
      ok = false;
    }
    for (Time t : d->wakes) wakes_.insert({t, vc});
    d->Invalidate();
    return ok;
  }

  // The slot a decision's job names: a JobView of this cycle or a job id of one of its lists.
  bool JobSlot(const CycleData& d, py::handle job, uint32_t* slot, std::string* what) {
    if (py::isinstance<JobView>(job)) {
      const JobView& v = job.cast<const JobView&>();
      if (!v.job || v.slot == kNoSlot) {
        *what = "a job view that is not one of this cycle's";
        return false;
      }
      *slot = v.slot;
      *what = "job " + std::to_string(v.job->id.v);
      return true;
    }
    if (!PyLong_Check(job.ptr())) {
      *what = std::string(py::repr(job));
      return false;
    }
    const int64_t id = job.cast<int64_t>();
    *what = "job " + std::to_string(id);
    if (ids_of_ != &d) {  // the id index of this cycle's lists, built on first use
      ids_.clear();
      for (const auto* list : {&d.pending, &d.running})
        for (uint32_t sl : *list) ids_[d.h->job(sl).job->id.v] = sl;
      ids_of_ = &d;
    }
    auto it = ids_.find(id);
    if (it == ids_.end()) return false;
    *slot = it->second;
    return true;
  }

  bool Parse(SchedulerHandle& h, VcId vc, CycleData& d, const py::object& r, std::vector<ParsedDecision>* out) {
    if (r.is_none()) return true;
    if (!py::isinstance<py::list>(r) && !py::isinstance<py::tuple>(r)) {
      s_->Fail(Where(h, vc) + " returned " + std::string(py::repr(r)) +
               ": expected a list of orrery.Start(job) and orrery.Preempt(job)");
      return false;
    }
    d.Pending();  // job ids may name pending jobs
    ids_of_ = nullptr;
    size_t i = 0;
    for (py::handle item : r) {
      const bool start = py::isinstance(item, s_->start_type), preempt = py::isinstance(item, s_->preempt_type);
      uint32_t slot = kNoSlot;
      std::string what;
      const std::string at = Where(h, vc) + ": decision " + std::to_string(i++);
      if (!start && !preempt) {
        s_->Fail(at + " is " + std::string(py::repr(item)) + ": expected orrery.Start(job) or orrery.Preempt(job)");
        return false;
      }
      const char* verb = start ? "Start" : "Preempt";
      if (!JobSlot(d, item.attr("job"), &slot, &what)) {
        s_->Fail(at + ", " + verb + "(" + what + "): " +
                 (what.starts_with("job ") ? "no such job is pending or running in VC " + VcName(vc)
                                           : std::string("expected a job view of this cycle or a job id")));
        return false;
      }
      out->push_back({start ? Decision{StartDecision{slot}} : Decision{PreemptDecision{slot}},
                      at + ", " + verb + "(" + what + ")"});
    }
    return true;
  }

  // Checks each decision against the state it meets and applies it, in the list's order.
  void Apply(SchedulerHandle& h, VcId vc, const std::vector<ParsedDecision>& decisions, PluginStatus* block) {
    decided_.clear();
    for (const ParsedDecision& pd : decisions) {
      const uint32_t slot = orrery::SlotOf(pd.d);
      SchedJob& j = h.job(slot);
      if (std::find(decided_.begin(), decided_.end(), slot) != decided_.end()) {
        s_->Fail(pd.what + ": the job was already decided on in this cycle (a job is started or preempted at most "
                           "once per cycle)");
        return;
      }
      decided_.push_back(slot);
      const std::string why = std::visit(
          Overloaded{[&](const StartDecision&) { return StartJob(h, vc, slot, j, block); },
                     [&](const PreemptDecision&) { return PreemptJob(h, slot, j); }},
          pd.d);
      if (!why.empty()) {
        s_->Fail(pd.what + ": " + why);
        return;
      }
    }
  }

  std::string StartJob(SchedulerHandle& h, VcId vc, uint32_t slot, SchedJob& j, PluginStatus* block) {
    if (j.running) return "the job is running";
    const JobRequest& req = *j.job;
    const uint64_t free = h.state().vc_free_gpus(vc);
    if (!req.is_fractional() && req.gpus > free)
      return "the job needs " + std::to_string(req.gpus) + " GPUs and VC " + VcName(vc) + " has " +
             std::to_string(free) + " free";
    alloc_.clear();
    if (h.placer().Place(j, h.state(), nullptr, &alloc_).ok()) {
      h.Start(slot, std::move(alloc_));
    } else if (s_->fault.ok() && block->ok()) {
      *block = PluginStatus::Unschedulable(kNoPlacement);  // stays pending, as tiresias' admitted jobs do
    }
    alloc_.clear();
    return "";
  }

  std::string PreemptJob(SchedulerHandle& h, uint32_t slot, const SchedJob& j) {
    if (!j.running) return "the job is pending";
    h.Preempt(slot);
    return "";
  }

  std::shared_ptr<PolicyState> s_;
  std::vector<std::set<RunKey>> running_;  // per VC: running jobs by (start, tie order)
  std::set<std::pair<Time, VcId>> wakes_;  // cycles asked for (view.wake)
  std::unordered_map<int64_t, uint32_t> ids_;  // job id → slot of one cycle's lists
  const CycleData* ids_of_ = nullptr;
  std::vector<uint32_t> decided_;
  Allocation alloc_;
};

// ---------------------------------------------------------------- admit(job, cluster)

// What admit() sees of the cluster: the job's VC and the whole cluster's size, valid during
// the call.
struct AdmitData {
  const ClusterState* st = nullptr;
  const Cluster* cluster = nullptr;
  VcId vc;
  const ClusterState& State() const {
    if (!st) throw py::value_error("this cluster view is no longer valid: a view is valid during its admit call only");
    return *st;
  }
};
struct AdmitView {
  std::shared_ptr<AdmitData> d;
};

class PythonAdmit final : public AdmitPlugin {
 public:
  explicit PythonAdmit(std::shared_ptr<PolicyState> s) : s_(std::move(s)) {}
  std::string_view name() const override { return s_->spec; }
  PluginStatus Admit(const SchedJob& j, const ClusterState& state) override {
    if (!s_->fault.ok()) return PluginStatus::Ok();
    CallGil gil;
    auto d = std::make_shared<AdmitData>(AdmitData{&state, s_->cluster, j.vc});
    py::object job = py::cast(ViewOf(j, kNoSlot, s_->trace));
    PluginStatus st = PluginStatus::Ok();
    const std::string at = "admit(job " + std::to_string(j.job->id.v) + ")";
    try {
      py::object r = s_->admit(job, py::cast(AdmitView{d}));
      if (py::isinstance<py::str>(r)) {
        st = PluginStatus::Never(Reason("refused by the policy: " + r.cast<std::string>()));
      } else if (r.is_none() || PyBool_Check(r.ptr())) {
        if (!r.is_none() && !r.cast<bool>()) st = PluginStatus::Never("refused by the policy's admit()");
      } else {
        s_->Fail(at + " returned " + std::string(py::repr(r)) +
                 ": expected True or None (admit), False or a reason string (refuse)");
      }
    } catch (py::error_already_set& e) {
      s_->Fail(at + " raised " + DescribeError(e));
    }
    d->st = nullptr;
    job.cast<JobView*>()->job = nullptr;
    return s_->fault.ok() ? st : PluginStatus::Ok();
  }

 private:
  // A refusal's text, kept for the run (PluginStatus holds a pointer); equal texts share one.
  const char* Reason(std::string text) {
    auto it = reasons_.find(text);
    if (it == reasons_.end()) {
      s_->reasons.push_back(text);
      it = reasons_.emplace(std::move(text), s_->reasons.back().c_str()).first;
    }
    return it->second;
  }
  std::shared_ptr<PolicyState> s_;
  std::unordered_map<std::string, const char*> reasons_;
};

// ---------------------------------------------------------------- place(job, free_nodes)

const char* const kPlaceNone = "the policy's place() found no nodes";

class PythonPlace final : public PlacePlugin {
 public:
  PythonPlace(std::shared_ptr<PolicyState> s, std::unique_ptr<PlacePlugin> fallback)
      : s_(std::move(s)), fallback_(std::move(fallback)) {}
  std::string_view name() const override { return s_->spec; }
  // Whole-GPU jobs go to place(); fractional and CPU-only ones (and every job after a fault)
  // to the run's placer.
  PluginStatus Place(const SchedJob& j, const ClusterState& st, const NodeMask* blocked, Allocation* out) override {
    const JobRequest& req = *j.job;
    if (!s_->fault.ok() || req.gpus == 0 || req.gpu_milli != 1000) return fallback_->Place(j, st, blocked, out);
    CallGil gil;
    const std::string at = "place(job " + std::to_string(req.id.v) + ")";
    py::object job = py::cast(ViewOf(j, kNoSlot, s_->trace));
    PluginStatus result = PluginStatus::Unschedulable(kPlaceNone);
    try {
      py::object r = s_->place(job, FreeNodes(st, j.vc, blocked));
      if (!r.is_none()) {
        const std::string why = Fill(j, st, blocked, r, out);
        if (why.empty()) result = PluginStatus::Ok();
        else s_->Fail(at + " returned " + std::string(py::repr(r)) + ": " + why);
      }
    } catch (py::error_already_set& e) {
      s_->Fail(at + " raised " + DescribeError(e));
    } catch (py::cast_error&) {
      s_->Fail(at + " returned a number out of range (node ids and GPU counts are whole numbers)");
    }
    job.cast<JobView*>()->job = nullptr;
    if (!result.ok()) out->clear();
    return result;
  }

 private:
  // The allocation of place()'s answer ({node: GPUs} or (node, GPUs) pairs), or why it is not one.
  std::string Fill(const SchedJob& j, const ClusterState& st, const NodeMask* blocked, const py::object& r,
                   Allocation* out) {
    const JobRequest& req = *j.job;
    py::object items = py::isinstance<py::dict>(r) ? py::object(r.attr("items")()) : r;
    const std::vector<NodeId>& nodes = st.vc_nodes(j.vc);
    uint64_t total = 0;
    out->clear();
    const char* const expected = "expected {node: GPUs} or a list of (node, GPUs) pairs of whole numbers";
    if (!PySequence_Check(items.ptr()) && !py::isinstance<py::iterable>(items)) return expected;
    for (py::handle item : items) {
      if (!PySequence_Check(item.ptr()) || PyUnicode_Check(item.ptr()) || PySequence_Size(item.ptr()) != 2) return expected;
      py::tuple pair = py::reinterpret_borrow<py::object>(item).cast<py::tuple>();
      if (!PyLong_Check(pair[0].ptr()) || !PyLong_Check(pair[1].ptr())) return expected;
      const int64_t node = pair[0].cast<int64_t>(), gpus = pair[1].cast<int64_t>();
      const auto it = std::find_if(nodes.begin(), nodes.end(), [&](NodeId n) { return n.v == node; });
      if (it == nodes.end()) return "node " + std::to_string(node) + " is not in the job's VC";
      const NodeId n = *it;
      if (!Offered(st, n, static_cast<size_t>(it - nodes.begin()), blocked))
        return "node " + std::to_string(node) + " is not offered (drained, off or reserved)";
      if (gpus < 1 || gpus > st.free_gpus(n))
        return std::to_string(gpus) + " GPUs on node " + std::to_string(node) + ", which has " +
               std::to_string(st.free_gpus(n)) + " free";
      for (const Slot& sl : *out)
        if (sl.node == n) return "node " + std::to_string(node) + " is named twice";
      total += static_cast<uint64_t>(gpus);
      if (total > req.gpus) break;
      const uint32_t cpu = static_cast<uint32_t>(static_cast<uint64_t>(req.cpu_milli) * gpus / req.gpus);
      const uint32_t mem = static_cast<uint32_t>(static_cast<uint64_t>(req.mem_mib) * gpus / req.gpus);
      if (st.models_cpu_mem() && !st.CpuMemFits(n, cpu, mem))
        return "node " + std::to_string(node) + " lacks the CPU or memory for its share";
      const auto count = static_cast<uint16_t>(gpus);
      out->push_back(Slot{n, count, 1000, PickWholeGpus(st, n, count), cpu, mem});
    }
    if (total != req.gpus)
      return std::to_string(total) + " GPUs in all, the job asks for " + std::to_string(req.gpus);
    return "";
  }
  std::shared_ptr<PolicyState> s_;
  std::unique_ptr<PlacePlugin> fallback_;
};

}  // namespace

std::unique_ptr<ReschedulePlugin> MakeCyclePlugin(std::shared_ptr<PolicyState> s) {
  return std::make_unique<PythonCycle>(std::move(s));
}

std::unique_ptr<AdmitPlugin> MakeAdmitPlugin(std::shared_ptr<PolicyState> s) {
  return std::make_unique<PythonAdmit>(std::move(s));
}

std::unique_ptr<PlacePlugin> MakePlacePlugin(std::shared_ptr<PolicyState> s, std::unique_ptr<PlacePlugin> fallback) {
  return std::make_unique<PythonPlace>(std::move(s), std::move(fallback));
}

namespace {

struct CycleJobsIter {
  CycleJobs jobs;
  size_t i = 0;
};

}  // namespace

void BindPolicyViews(py::module_& m) {
  py::class_<CycleJobs>(m, "CycleJobs", py::module_local(),
                        "A cycle's pending (queue order) or running (start order) jobs, as JobViews.")
      .def("__len__", &CycleJobs::size)
      .def("__getitem__", [](const CycleJobs& l, int64_t i) {
        const int64_t n = static_cast<int64_t>(l.size());
        if (i < 0) i += n;
        if (i < 0 || i >= n) throw py::index_error("job index out of range");
        return l.d->View(l.of_running, static_cast<size_t>(i));
      })
      .def("__iter__", [](const CycleJobs& l) { return CycleJobsIter{l, 0}; });
  py::class_<CycleJobsIter>(m, "CycleJobsIterator", py::module_local())
      .def("__iter__", [](CycleJobsIter& it) -> CycleJobsIter& { return it; },
           py::return_value_policy::reference_internal)
      .def("__next__", [](CycleJobsIter& it) {
        if (it.i >= it.jobs.size()) throw py::stop_iteration();
        return it.jobs.d->View(it.jobs.of_running, it.i++);
      });
  py::class_<CycleView>(m, "CycleView", py::module_local(),
                        "One virtual cluster at one decision, as a live scheduler knows it "
                        "(valid during the cycle call).")
      .def_property_readonly("now", [](const CycleView& v) { return v.d->Check(), v.d->now; },
                             "time of the decision (s)")
      .def_property_readonly("vc", [](const CycleView& v) -> py::object {
        v.d->Check();
        const Cluster* c = v.d->s->cluster;
        return c && v.d->vc.v < c->vcs.size() ? py::object(py::str(c->vcs[v.d->vc.v].name)) : py::object(py::none()); },
        "the virtual cluster's name")
      .def_property_readonly("total_gpus",
                             [](const CycleView& v) { return v.d->Check(), v.d->h->state().vc_total_gpus(v.d->vc); },
                             "GPUs of the virtual cluster")
      .def_property_readonly("free_gpus",
                             [](const CycleView& v) { return v.d->Check(), v.d->h->state().vc_free_gpus(v.d->vc); },
                             "wholly free GPUs of the virtual cluster now")
      .def_property_readonly("free_nodes",
                             [](const CycleView& v) { return v.d->Check(), FreeNodes(v.d->h->state(), v.d->vc, nullptr); },
                             "{node id: wholly free GPUs} of the virtual cluster's nodes with any")
      .def_property_readonly("pending", [](const CycleView& v) { return v.d->Check(), CycleJobs{v.d, false}; },
                             "pending jobs in queue order (priority, then submission)")
      .def_property_readonly("running", [](const CycleView& v) { return v.d->Check(), CycleJobs{v.d, true}; },
                             "running jobs by start time")
      .def("wake", [](const CycleView& v, int64_t t) {
        v.d->Check();
        if (t <= v.d->now)
          throw py::value_error("wake(" + std::to_string(t) + "): not after now (" + std::to_string(v.d->now) + ")");
        v.d->wakes.push_back(t);
      }, py::arg("t"), "asks for another cycle of this virtual cluster at time t (s), even if nothing happens by then")
      .def("__repr__", [](const CycleView& v) {
        if (!v.d->valid) return std::string("CycleView(no longer valid)");
        return "CycleView(t=" + std::to_string(v.d->now) + ", " + std::to_string(v.d->Pending().size()) + " pending, " +
               std::to_string(v.d->running.size()) + " running)";
      });
  py::class_<AdmitView>(m, "ClusterView", py::module_local(),
                        "The cluster as admit() sees it: the job's virtual cluster (valid during the call).")
      .def_property_readonly("vc", [](const AdmitView& v) -> py::object {
        v.d->State();
        const Cluster* c = v.d->cluster;
        return c && v.d->vc.v < c->vcs.size() ? py::object(py::str(c->vcs[v.d->vc.v].name)) : py::object(py::none()); },
        "the job's virtual cluster")
      .def_property_readonly("vc_gpus", [](const AdmitView& v) { return v.d->State().vc_total_gpus(v.d->vc); },
                             "GPUs of the job's virtual cluster")
      .def_property_readonly("vc_free_gpus", [](const AdmitView& v) { return v.d->State().vc_free_gpus(v.d->vc); },
                             "its wholly free GPUs now")
      .def_property_readonly("vc_nodes", [](const AdmitView& v) { return v.d->State().vc_nodes(v.d->vc).size(); },
                             "its nodes")
      .def_property_readonly("max_node_gpus", [](const AdmitView& v) { return v.d->State().vc_max_node_gpus(v.d->vc); },
                             "GPUs of its largest node")
      .def_property_readonly("gpus", [](const AdmitView& v) {
        v.d->State();
        return v.d->cluster ? v.d->cluster->total_gpus() : uint64_t{0}; }, "GPUs of the whole cluster");
}

}  // namespace orrery::python::bridge
