// Fair queueing for evaluation (Acme finding 5: small evaluation jobs queue longest because
// pretraining holds most of the capacity): a share of each VC's GPUs is reserved for
// evaluation jobs (Job::kind == JobKind::kEval). Usable with every queue policy
// (PolicyParts::reserve; policy option `eval_share=S`).
//
// The rule, in one place (ReservationLedger::Check):
//   * other GPU jobs may hold at most floor((1 − S) × VC GPUs) GPUs of their VC;
//   * evaluation jobs may use any free GPU;
//   * the reserve is a lane of its own: when a blocking policy's head of queue is an other job
//     that cannot start, evaluation jobs behind it may still start, but only inside the
//     reserve (evaluation GPUs ≤ ceil(S × VC GPUs)), so they never take a GPU the blocked
//     head could use. (Greedy and backfilling policies need no lane: they skip past jobs.)
// Reserved GPUs stay idle while no evaluation job needs them: that is the option's cost to
// the other jobs (docs/validation/eval.md measures it).
//
// Simulator only for now: live mode has no job kinds, so CheckLiveSupport refuses it.
//
// Enforcement: the scheduler wraps its placer (ReservingPlacer), so every placement -- the
// queue walk, backfill, preemption -- obeys the rule; the scheduler charges and refunds the
// ledger at every start and stop.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "model/cluster.h"
#include "sched/framework/api/plugin.h"

namespace orrery {

struct EvalReservation {
  double share = 0;  // of each VC's GPUs, in [0, 1); 0 = off
  bool active() const { return share > 0; }
};

// Whether a job counts as an evaluation job for the reservation.
inline bool IsEvaluation(const JobRequest& j) { return j.kind == JobKind::kEval; }
// Milli-GPUs an allocation holds.
uint64_t AllocatedMilli(const Allocation& a);

class ReservationLedger {
 public:
  ReservationLedger(const Cluster& cluster, EvalReservation r);
  // The VCs' capacities changed (a node joined): caps re-derived, charges kept.
  void SetCaps(const Cluster& cluster);
  // May `j` (pending in `vc`) take `gpus` more whole GPUs (in milli-GPUs) now? lane_only: it
  // passes a blocked head, so only the reserve is open to it.
  PluginStatus Check(const JobRequest& j, VcId vc, uint64_t milli, bool lane_only) const;
  // Bookkeeping of every start and stop (slot-indexed: a slot's charge is refunded exactly).
  void Charge(uint32_t slot, const JobRequest& j, VcId vc, uint64_t milli);
  void Refund(uint32_t slot);
  uint64_t other_milli(VcId vc) const { return other_[vc.v]; }
  uint64_t eval_milli(VcId vc) const { return eval_[vc.v]; }
  uint64_t other_cap_milli(VcId vc) const { return other_cap_[vc.v]; }
  bool reserve_full(VcId vc) const { return eval_[vc.v] >= reserve_[vc.v]; }

 private:
  struct Charged {
    uint16_t vc = 0;
    bool eval = false;
    uint64_t milli = 0;
  };
  std::vector<uint64_t> other_, eval_, other_cap_, reserve_;  // per VC, milli-GPUs
  std::vector<Charged> charged_;                               // per slot
  EvalReservation r_;
};

// The placer every placement goes through when a reservation is active: the ledger's check,
// then the policy's own placer.
class ReservingPlacer final : public PlacePlugin {
 public:
  ReservingPlacer(std::unique_ptr<PlacePlugin> inner, const ReservationLedger* ledger)
      : inner_(std::move(inner)), ledger_(ledger) {}
  std::string_view name() const override { return inner_->name(); }
  PluginStatus Place(const SchedJob& j, const ClusterState& state, const NodeMask* blocked, Allocation* out) override;
  // The scheduler's queue walk sets this while evaluation jobs pass a blocked head.
  void set_lane_only(bool on) { lane_only_ = on; }
  const PlacePlugin& inner() const { return *inner_; }  // the policy's placer

 private:
  std::unique_ptr<PlacePlugin> inner_;
  const ReservationLedger* ledger_;
  bool lane_only_ = false;
};

}  // namespace orrery
