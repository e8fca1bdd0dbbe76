// Which semantic signals a simulation feeds to its policies (`orrery simulate --signals
// advisor,tracker`, docs/design/signals.md):
//   advisor  the duration estimate at submit comes from the scheduling advisor: the policy's
//            estimator becomes `semantic` (policies that read an estimate: qssf, easy, srtf);
//   tracker  running jobs' logs are read by the metric tracker; its step/total and ETA go to
//            the policy through ReportProgress/UpdateEstimate (LogSignals).
#pragma once

#include <string>

#include "base/result.h"

namespace orrery::signals {

struct SignalSet {
  bool advisor = false;
  bool tracker = false;
  bool any() const { return advisor || tracker; }
};

// "advisor", "tracker", "advisor,tracker", "none" or "" (nothing).
Result<SignalSet> ParseSignalSet(const std::string& list);

// Whether policy `spec` (name[:params]) reads a duration estimate, i.e. whether the advisor
// has anything to feed it.
bool ReadsEstimate(const std::string& spec);

// `spec` with the advisor as its estimator: ",estimator=semantic" added to a policy that reads
// an estimate; unchanged for others (fifo, sjf, tiresias, lucid); an error when `spec` already
// names another estimator.
Result<std::string> WithAdvisor(const std::string& spec);

}  // namespace orrery::signals
