// Energy saving: the Power extension point.
//
// Every control period the driver hands a PowerPlugin a snapshot of the cluster's power
// states and load and gets back plain decisions, {PowerUp(node), PowerDown(node)}. The
// simulator applies them (a powered-down node leaves placement at once; a powered-up node
// boots for the wake-up latency, then joins placement); the live daemon applies the same
// decisions through Slurm's power-saving interface
// (`scontrol update NodeName=... State=POWER_DOWN` / `POWER_UP`).
//
// Rules every driver enforces, whatever a plugin returns: a node with any allocated work is
// never powered down (such a decision is dropped and counted), PowerUp of a node that is on
// or booting and PowerDown of a node that is off are no-ops.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "base/ids.h"
#include "base/time.h"
#include "sched/framework/api/plugin.h"

namespace orrery {

enum class PowerState : uint8_t { kOn = 0, kOff, kBooting };

struct NodePowerView {
  PowerState state = PowerState::kOn;
  bool busy = false;  // holds at least one running job (any GPU share, CPU-only jobs included)
  Time idle_since = 0;  // when it last became idle (or powered on); meaningful when !busy
};

// What a PowerPlugin sees each control period. Per-VC vectors are indexed by the cluster's
// VC id; `nodes` by node id.
struct PowerSnapshot {
  Time now = 0;
  const Cluster* cluster = nullptr;
  std::vector<NodePowerView> nodes;
  // Peak number of busy nodes of each VC since the previous snapshot (the Helios series is
  // resampled with max over the 10-minute bin), and the count now.
  std::vector<uint32_t> used_peak, used_now;
  // Wake-ups the driver issued since the previous snapshot because pending jobs found no
  // powered node (the Helios controller's "Lack" signal), and jobs pending now, per VC.
  std::vector<uint32_t> demand_wakes, pending;
};

struct PowerDecision {
  enum Kind : uint8_t { kPowerUp, kPowerDown };
  Kind kind;
  NodeId node;
};

// Accumulated forecast error (node counts per VC and bin), filled in by forecasting plugins.
struct ForecastError {
  std::string forecaster;   // forecaster name
  uint64_t trainings = 0;   // model (re)trainings
  uint64_t n = 0;           // (VC, bin, horizon) pairs scored
  double abs_sum = 0;       // Σ |pred − actual|
  double sq_sum = 0;        // Σ (pred − actual)²
  double smape_sum = 0;     // Σ 2|p − y| / (|p| + |y|) (0 when both are 0)
  uint64_t n_ape = 0;       // pairs with actual > 0
  double ape_sum = 0;       // Σ |p − y| / y over those
  double mae() const { return n ? abs_sum / static_cast<double>(n) : 0; }
  double rmse() const { return n ? std::sqrt(sq_sum / static_cast<double>(n)) : 0; }
  double smape_pct() const { return n ? 100.0 * smape_sum / static_cast<double>(n) : 0; }
  double mape_pct() const { return n_ape ? 100.0 * ape_sum / static_cast<double>(n_ape) : 0; }
};

// One VC's power and load at a cycle, as the wake-up rule reads it.
struct VcPowerLoad {
  uint64_t pending_jobs = 0;         // jobs waiting in the VC
  uint64_t off = 0, booting = 0;     // nodes powered down / booting
  uint64_t idle_on = 0;              // powered nodes running nothing
  uint64_t gpus_per_node = 1;        // the VC's GPUs per node (≥ 1)
  uint64_t free_gpus = 0;            // free GPUs on powered nodes (ClusterState::vc_free_gpus)
  uint64_t pending_small_milli = 0;  // milli-GPUs of pending jobs smaller than a node
  uint64_t pending_big_nodes = 0;    // whole nodes needed by pending jobs of a node or more
};

// The one wake-up rule for pending jobs (simulator and daemon): how many powered-down
// nodes of the VC to power up now -- enough for the VC's pending work beyond what its idle
// powered and booting nodes (and, for small jobs, the free GPUs of partly used nodes) hold;
// at least one when jobs wait and no capacity is on its way; none when nothing waits or
// nothing is off. (Drivers wake at most that many of the nodes they can wake.)
uint64_t DemandWakeups(const VcPowerLoad& v);

class PowerPlugin : public virtual Plugin {
 public:
  // Seconds between two Decide calls (the driver calls at multiples of it from the run's
  // first bin boundary).
  virtual Duration period() const = 0;
  // Appends decisions for this period. Must not depend on anything but its inputs (no clock).
  virtual void Decide(const PowerSnapshot& s, std::vector<PowerDecision>* out) = 0;
  // Forecast error so far (n == 0 when the plugin does not forecast).
  virtual ForecastError forecast_error() const { return {}; }
};

}  // namespace orrery
