// CES (cluster energy saving, Helios §2.2 in shared/specs/helios.md) as a PowerPlugin:
// every control period (10 minutes) it forecasts each VC's busy-node count and keeps
// "busy nodes + buffer" powered, with hysteresis:
//
//   warm-up (first `history` steps)   Active = Used + buffer
//   increase  if pending jobs woke nodes since the last step ("Lack"), or the spare powered
//             nodes (Active − max(Used, forecast over the next `lead` bins)) fall below
//             `min_spare`: Active = max(Used, forecast) + buffer, and no decrease for `keep`
//             steps (keep-alive window)
//   decrease  only when demand is falling: mean(Used over the last `history` bins) − Used ≥
//             his_thr and Used − mean(forecast over `future` bins) ≥ fut_thr, outside the
//             keep window, not when the forecast rises again (mean over `future` < mean over
//             2·`future`), and only by ≥ de_thr nodes: Active = min(Active, Used + buffer)
//
// Used = the VC's peak busy nodes during the last bin. VCs own their nodes, so the loop runs
// per VC with buffer_v = max(buffer, ceil(buffer_frac × nodes_v)). Power-downs take the
// highest-numbered idle powered nodes; power-ups the lowest-numbered off nodes.
//
// Spec: "ces[:key=value,...]" with keys period, history, future, his_thr, fut_thr, de_thr,
// buffer, buffer_frac, min_spare, lead, keep, forecaster (see docs/energy.md).
#pragma once

#include <memory>
#include <string>

#include "base/result.h"
#include "sched/framework/power.h"

namespace orrery {

struct CesParams {
  Duration period = 600;  // control step = forecast bin (s)
  int history = 3;        // steps in the "demand is falling" mean
  int future = 18;        // forecast steps in the decrease rule (3 h)
  double his_thr = 0;     // Helios Venus: 0.5 (decrease only while demand falls)
  double fut_thr = 0;     // Helios Venus: 1
  double de_thr = 2;      // smallest decrease worth making (nodes)
  int buffer = 1;         // spare powered nodes per VC (at least)
  double buffer_frac = 0.3;  // ... or this share of the VC's nodes, whichever is larger
  int min_spare = 6;      // raise when fewer spare powered nodes than this remain
  int lead = 6;           // forecast bins covered by the increase rule (≥ wake-up latency)
  int keep = 12;          // keep-alive: steps without decrease after an increase (2 h)
  Duration idle = 0;      // per-node keep-alive: power down only nodes idle for ≥ this (s)
  std::string forecaster = "seasonal-daily";
};

// epoch_unix: the trace's epoch, for the forecaster's calendar features.
Result<std::unique_ptr<PowerPlugin>> MakePowerPlugin(const std::string& spec, uint64_t seed, int64_t epoch_unix);
// The parsed parameters of a "ces[:...]" spec (validation and documentation).
Result<CesParams> ParseCesSpec(const std::string& spec);

}  // namespace orrery
