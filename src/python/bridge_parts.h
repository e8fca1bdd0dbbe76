// What the Python policy bridge's files share (bridge.cc: the order and the views;
// policy_plugins.cc: admit, place and cycle). Not an interface: include only from src/python.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include <pybind11/pybind11.h>

#include "base/result.h"
#include "model/cluster.h"
#include "model/trace.h"
#include "sched/framework/api/policy_parts.h"

// Hidden, as pybind11's own types are: these hold Python objects.
#pragma GCC visibility push(hidden)
namespace orrery::python::bridge {

// What a Python policy sees of a job: the request and the scheduler's belief, never the
// truth. Valid during the call it is passed to (it reads the trace's names lazily); after
// the call it refuses to be read.
struct JobView {
  const JobRequest* job = nullptr;
  const Trace* trace = nullptr;
  Duration estimate = -1;
  Duration attained = 0;
  Time enqueued = 0;
  Time started = kNoTime;  // start of the current run (running jobs), else kNoTime
  uint32_t slot = kNoSlot;  // the scheduler's slot (a cycle's decisions name jobs by it)
  uint32_t attempts = 0, preemptions = 0, failures = 0;
  bool running = false;
};

JobView ViewOf(const SchedJob& j, uint32_t slot, const Trace* trace);

// The state one Python policy's plugins share: its bound methods, what they read of the run,
// and the first failure. The GIL is taken to drop the Python references (the run itself holds
// no GIL).
struct PolicyState {
  std::string spec;
  pybind11::object priority, admit, place, cycle;  // admit/place/cycle: null when not overridden
  pybind11::object start_type, preempt_type;      // orrery.Start, orrery.Preempt (with cycle only)
  std::string cycle_at;                      // "file:line" of cycle's definition
  pybind11::object view;                         // the one JobView the priority calls are handed
  JobView* slot = nullptr;
  const Trace* trace = nullptr;
  const Cluster* cluster = nullptr;
  std::deque<std::string> reasons;  // admit()'s refusal texts (PluginStatus keeps a pointer)
  Status fault = Status::Ok();
  ~PolicyState();
  void Fail(std::string why) {
    if (fault.ok()) fault = MakeError(std::move(why));
  }
};

// Holds the GIL for one call into Python (PyGILState: cheap when uncontended).
class CallGil {
 public:
  CallGil() : state_(PyGILState_Ensure()) {}
  ~CallGil() { PyGILState_Release(state_); }
  CallGil(const CallGil&) = delete;
  CallGil& operator=(const CallGil&) = delete;

 private:
  PyGILState_STATE state_;
};

// The located message of the Python exception being handled.
std::string DescribeError(pybind11::error_already_set& e);

// The plugins of the optional methods (policy_plugins.cc). Call with the GIL held.
std::unique_ptr<AdmitPlugin> MakeAdmitPlugin(std::shared_ptr<PolicyState> s);
std::unique_ptr<PlacePlugin> MakePlacePlugin(std::shared_ptr<PolicyState> s, std::unique_ptr<PlacePlugin> fallback);
std::unique_ptr<ReschedulePlugin> MakeCyclePlugin(std::shared_ptr<PolicyState> s);
// The view classes of admit, place and cycle (module-local, as JobView).
void BindPolicyViews(pybind11::module_& m);

}  // namespace orrery::python::bridge
#pragma GCC visibility pop
