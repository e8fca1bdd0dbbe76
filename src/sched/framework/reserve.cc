#include "sched/framework/api/reserve.h"

#include <cmath>

namespace orrery {

namespace {
constexpr const char* kReserved = "the other jobs' share of the VC's GPUs is in use (eval_share reserves the rest)";
constexpr const char* kLaneFull = "the GPUs reserved for evaluation are in use (the head of the queue waits)";
}  // namespace

ReservationLedger::ReservationLedger(const Cluster& cluster, EvalReservation r) : r_(r) {
  other_.assign(cluster.vcs.size(), 0);
  eval_.assign(cluster.vcs.size(), 0);
  SetCaps(cluster);
}

void ReservationLedger::SetCaps(const Cluster& cluster) {
  const size_t n = cluster.vcs.size();
  other_.resize(n, 0);
  eval_.resize(n, 0);
  other_cap_.assign(n, 0);
  reserve_.assign(n, 0);
  for (size_t v = 0; v < n; ++v) {
    const double g = static_cast<double>(cluster.vcs[v].gpus);
    other_cap_[v] = static_cast<uint64_t>(std::floor((1 - r_.share) * g + 1e-9)) * 1000;
    reserve_[v] = static_cast<uint64_t>(std::ceil(r_.share * g - 1e-9)) * 1000;
  }
}

uint64_t AllocatedMilli(const Allocation& a) {
  uint64_t m = 0;
  for (const Slot& s : a) m += static_cast<uint64_t>(s.gpus) * s.milli;
  return m;
}

PluginStatus ReservationLedger::Check(const JobRequest& j, VcId vc, uint64_t milli, bool lane_only) const {
  if (j.gpus == 0) return PluginStatus::Ok();  // CPU jobs: the reserve is GPUs
  if (!IsEvaluation(j)) return other_[vc.v] + milli <= other_cap_[vc.v] ? PluginStatus::Ok() : PluginStatus::Unschedulable(kReserved);
  if (lane_only && eval_[vc.v] + milli > reserve_[vc.v]) return PluginStatus::Unschedulable(kLaneFull);
  return PluginStatus::Ok();
}

void ReservationLedger::Charge(uint32_t slot, const JobRequest& j, VcId vc, uint64_t milli) {
  if (charged_.size() <= slot) charged_.resize(slot + 1);
  const bool eval = IsEvaluation(j);
  charged_[slot] = Charged{vc.v, eval, milli};
  (eval ? eval_ : other_)[vc.v] += milli;
}

void ReservationLedger::Refund(uint32_t slot) {
  Charged& c = charged_[slot];
  (c.eval ? eval_ : other_)[c.vc] -= c.milli;
  c.milli = 0;
}

PluginStatus ReservingPlacer::Place(const SchedJob& j, const ClusterState& state, const NodeMask* blocked,
                                    Allocation* out) {
  PluginStatus st = ledger_->Check(*j.job, j.vc, j.job->gpu_milli_total(), lane_only_);
  if (!st.ok()) return st;
  return inner_->Place(j, state, blocked, out);
}

}  // namespace orrery
