// The harvest of idle rollout GPUs in the simulator (docs/design/rl.md, "Harvest in the
// simulator"). An RL job with a plan (model/harvest.h) reports, step by step, which of its
// rollout workers went idle; the driver shrinks its allocation by their GPUs (Scheduler::
// Resize), so the scheduler's next cycle sees them as free capacity and places queued jobs
// there (borrowers). At the return (rollout end + return wait) the borrowers that hold the
// node's GPUs are preempted and requeued (Scheduler::Requeue, their restart cost charged by
// the truth as for any preemption) and the RL job gets its allocation back (Resize). The
// schedule comes from the step model; nothing here reads a job's true duration.
//
// Borrowers: every job that is not an RL job (no rollout phase) may be placed on lent GPUs;
// RL jobs never are (HarvestPlacer): a gang that lands on GPUs due back within minutes would be
// preempted at every return. A borrower is every job started on a node while it holds lent GPUs. At the return the node's
// borrowers are preempted newest first until the node has the lent GPUs free again; jobs
// started before the node lent anything are never touched, and an RL job lends nothing while
// it is itself a borrower, so the lent GPUs are always free once the borrowers are gone.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "model/harvest.h"
#include "sched/framework/internal/scheduler.h"

namespace orrery {

// GPUs lent now per node (written by HarvestSim, read by HarvestPlacer) and the jobs that may
// not borrow them (by trace index).
struct LentGpus {
  std::vector<uint32_t> per_node;
  std::vector<uint8_t> no_borrow;
  const Job* first_job = nullptr;  // trace.jobs.data(): a request's trace index
};

// The policy's placer, with one rule added: a job that may not borrow is placed as if the lent
// GPUs were busy (its placement is asked again with the nodes holding lent GPUs blocked when
// the first one used them). Lent GPUs change only with Scheduler::Resize, which moves the VC's
// version, so the placer stays as pure as the one it wraps.
class HarvestPlacer final : public PlacePlugin {
 public:
  HarvestPlacer(std::unique_ptr<PlacePlugin> inner, std::shared_ptr<const LentGpus> lent)
      : inner_(std::move(inner)), lent_(std::move(lent)) {}
  std::string_view name() const override { return inner_->name(); }
  PluginStatus Place(const SchedJob& j, const ClusterState& state, const NodeMask* blocked, Allocation* out) override;
  bool pure() const override { return inner_->pure(); }
  std::unique_ptr<PlacePlugin> Clone(PluginCopies& copies) const override;

 private:
  bool UsesLent(const Allocation& a, const ClusterState& state) const;
  std::unique_ptr<PlacePlugin> inner_;
  std::shared_ptr<const LentGpus> lent_;
};

class HarvestSim {
 public:
  // `lent`: shared with the run's HarvestPlacer; its per_node is sized and kept here.
  HarvestSim(const std::vector<HarvestPlan>& plans, size_t jobs, size_t nodes, std::shared_ptr<LentGpus> lent);

  // An attempt of trace job `job` started in `slot` at `t` on `alloc` (generation `gen`).
  // Records it as a borrower when it landed on a node with lent GPUs (returns true then). An RL
  // job with a plan begins its steps at t + `restore`, from step `from` of `total`; returns the
  // time of its first lending event (kNoTime: none).
  bool NoteStart(uint32_t slot, uint32_t gen, const Allocation& alloc, Time t);
  Time Started(uint32_t slot, uint32_t job, Time t, Duration restore, int64_t from, int64_t total);

  enum class Action : uint8_t { kNone, kLend, kReturn };
  // What the RL job in `slot` does at its event time `t`.
  Action Due(uint32_t slot, Time t) const;
  // Lends the GPUs of the workers idle by `t`, taken from the end of its allocation; returns
  // the GPUs lent (0: nothing left to lend).
  uint32_t Lend(uint32_t slot, Time t, Scheduler& sched);
  // The return: running borrowers to preempt so that every lent GPU is free (newest first per
  // node, each once), appended to *out. `running(slot, gen)`: whether that attempt still runs.
  template <class Running>
  void Victims(uint32_t slot, const Scheduler& sched, Running&& running, std::vector<uint32_t>* out);
  // After the victims were requeued: the RL job's allocation regains its lent GPUs; returns them.
  uint32_t Reclaim(uint32_t slot, Time t, Scheduler& sched);
  // The RL job's next event after the one just handled (kNoTime: none).
  Time Next(uint32_t slot);
  // Any attempt of `slot` ended at `t`: an RL job's lease ends (its lent GPUs stay with the
  // scheduler), a borrower's harvested time is counted.
  void Stopped(uint32_t slot, Time t);
  void NoteBorrowerPreempted() { ++stats_.borrower_preemptions; }
  const HarvestStats& stats() const { return stats_; }

 private:
  struct Part {  // GPUs of one node lent by a lease
    uint32_t node;
    uint16_t gpus;
    Time since;
  };
  struct Lease {
    const HarvestPlan* plan = nullptr;
    Time t0 = 0;          // the attempt's first step begins
    int64_t step = 0;     // step of the attempt being run
    int64_t steps = 0;    // steps the attempt has left
    size_t next = 0;      // next release of the step (plan->releases.size(): the return)
    std::vector<Part> lent;
  };
  struct Borrower {  // an attempt on a node with lent GPUs
    uint32_t slot, gen;
    Time start;
    uint16_t counted;  // of its GPUs on the node, those counted as harvested
  };
  double StepStart(const Lease& l) const { return static_cast<double>(l.t0) + l.step * l.plan->step_s; }
  Time ReturnAt(const Lease& l) const;
  Time ReleaseAt(const Lease& l, size_t i) const;
  void AddLent(uint32_t node, uint16_t gpus);
  void DropLent(uint32_t node, uint16_t gpus, Time t);  // the node's borrowers stop counting at 0
  void CloseBorrower(uint32_t node, uint32_t slot, uint32_t gen, Time t);
  bool Borrowing(uint32_t slot) const;  // an attempt of `slot` is a borrower on some node now

  std::vector<int32_t> plan_of_;  // per trace job: index in plans_, -1 none
  std::vector<HarvestPlan> plans_;
  std::unordered_map<uint32_t, Lease> leases_;  // by slot: RL jobs running with a plan
  std::shared_ptr<LentGpus> lent_;
  std::vector<uint32_t>& node_lent_;            // lent_->per_node: GPUs lent now per node
  std::vector<uint32_t> node_counted_;          // per node: borrowers' GPUs counted as harvested
  std::vector<std::vector<Borrower>> borrowers_;  // per node
  std::unordered_map<uint32_t, std::vector<std::pair<uint32_t, uint32_t>>> borrowing_;  // slot -> (node, gen)
  uint64_t nodes_lending_ = 0;
  HarvestStats stats_;
};

template <class Running>
void HarvestSim::Victims(uint32_t slot, const Scheduler& sched, Running&& running, std::vector<uint32_t>* out) {
  const Lease& l = leases_.at(slot);
  std::vector<std::pair<uint32_t, uint32_t>> need;  // (node, GPUs lent by this lease)
  for (const Part& p : l.lent) {
    auto it = std::find_if(need.begin(), need.end(), [&](const auto& n) { return n.first == p.node; });
    if (it == need.end()) need.emplace_back(p.node, p.gpus);
    else it->second += p.gpus;
  }
  for (const auto& [node_id, gpus] : need) {
    const uint32_t node = node_id;  // a plain variable: clang 14 lambdas cannot capture a structured binding
    const auto on_node = [&](uint32_t v) {
      uint32_t g = 0;
      for (const Slot& s : sched.view(v).alloc) g += s.node.v == node ? s.gpus : 0;
      return g;
    };
    uint32_t free = sched.cluster_state().free_gpus(NodeId(node));
    for (uint32_t v : *out) free += on_node(v);  // chosen for another node: it leaves this one too
    std::vector<const Borrower*> cand;
    for (const Borrower& b : borrowers_[node])
      if (b.slot != slot && running(b.slot, b.gen)) cand.push_back(&b);  // an RL job never preempts itself
    std::sort(cand.begin(), cand.end(), [](const Borrower* a, const Borrower* b) {
      return a->start != b->start ? a->start > b->start : a->slot > b->slot;
    });
    for (const Borrower* b : cand) {
      if (free >= gpus) break;
      if (std::find(out->begin(), out->end(), b->slot) != out->end()) continue;
      free += on_node(b->slot);
      out->push_back(b->slot);
    }
  }
}

}  // namespace orrery
