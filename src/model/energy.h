// Energy accounting of one run with energy saving (docs/energy.md): node power states,
// energy, wake-up delays and forecast error. Plain data, filled in by a driver.
#pragma once

#include <cstdint>
#include <string>

namespace orrery {

struct EnergyStats {
  std::string spec;                 // the PowerPlugin spec, e.g. "ces:buffer=1"
  int64_t wake_latency = 0;         // s
  double resume_failure = 0;        // probability per boot
  double seconds = 0;               // accounted span (first event .. last event)
  uint64_t nodes = 0;
  // Node-seconds by state; powered = on + booting.
  double node_s_on = 0, node_s_booting = 0, node_s_off = 0;
  double node_s_used = 0;           // ∫ nodes holding work dt
  double gpu_s_busy = 0;            // ∫ allocated GPUs dt
  double gpu_s_powered = 0;         // ∫ GPUs of powered nodes dt
  uint64_t total_gpus = 0;
  // Energy (J). baseline = the same work with every node on all the time.
  bool power_known = false;         // every node has a power model (else energy fields are 0)
  double energy_j = 0, baseline_energy_j = 0;
  // Power-state changes.
  uint64_t power_ups = 0, power_downs = 0;     // applied decisions (controller and demand wake-ups)
  uint64_t demand_wakes = 0;                   // power-ups issued for pending jobs
  uint64_t failed_resumes = 0;
  uint64_t refused_downs = 0;                  // power-down decisions for busy nodes (dropped)
  uint32_t min_powered = 0, max_powered = 0;   // powered nodes (on + booting) over the run
  // Jobs that started on a node that was off or booting after they were submitted, and the
  // time they waited while that node was unavailable (an upper bound of the delay it caused).
  uint64_t jobs_started = 0, jobs_delayed = 0;
  double delay_sum_s = 0, delay_max_s = 0;
  // Forecast error (node counts per VC and 10-minute bin, horizons 1..future).
  std::string forecaster;
  uint64_t forecast_n = 0;
  double forecast_mae = 0, forecast_rmse = 0, forecast_mape_pct = 0, forecast_smape_pct = 0;
  uint64_t forecaster_trainings = 0;

  double node_hours_off() const { return node_s_off / 3600.0; }
  double energy_kwh() const { return energy_j / 3.6e6; }
  double baseline_kwh() const { return baseline_energy_j / 3.6e6; }
  double saved_kwh() const { return (baseline_energy_j - energy_j) / 3.6e6; }
  double saved_share() const { return baseline_energy_j > 0 ? 1 - energy_j / baseline_energy_j : 0; }
  double node_s_total() const { return node_s_on + node_s_booting + node_s_off; }
  // Node utilisation (Helios CES): busy nodes / powered nodes, vs busy nodes / all nodes.
  double node_util_powered() const {
    double p = node_s_on + node_s_booting;
    return p > 0 ? node_s_used / p : 0;
  }
  double node_util_all() const { return node_s_total() > 0 ? node_s_used / node_s_total() : 0; }
  double gpu_util_powered() const { return gpu_s_powered > 0 ? gpu_s_busy / gpu_s_powered : 0; }
  double gpu_util_all() const {
    return total_gpus && seconds > 0 ? gpu_s_busy / (static_cast<double>(total_gpus) * seconds) : 0;
  }
  double delayed_share() const { return jobs_started ? static_cast<double>(jobs_delayed) / jobs_started : 0; }
};

}  // namespace orrery
