// The signals loop (docs/design/live-signals.md): the advisor's launch files for the policy's
// `semantic` estimator, and the tracker's readings of running jobs' logs into the core
// (ReportReading: steps, then the ETA as the believed duration), journaled so that a restarted
// daemon keeps each job's last reading and when its step was reached.
//
// It owns the semantic signals (LiveSignals, null when [signals] is off), the cycle's reports
// and journal rows, and the last signals error noted. The scheduler (the jobs it runs, their
// estimates, the readings it hears) and the recoverer's watch list go through the SignalsHost
// the daemon implements.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/time.h"
#include "live/event_log.h"
#include "live/job_book.h"
#include "live/journal.h"
#include "live/live_signals.h"
#include "live/slurm_client.h"
#include "semantic/semantic_estimator.h"

namespace orrery::live {

class SignalsHost {
 public:
  virtual ~SignalsHost() = default;
  // --- the scheduler port
  virtual bool RunsInSnapshot(const LiveJob& lj) const = 0;  // running in the policy's snapshot
  virtual bool EstimatedByEstimator(const LiveJob& lj) const = 0;  // its estimate is still the estimator's
  virtual void UpdateEstimate(const LiveJob& lj, Duration estimate, Time now) = 0;  // the estimator's new one
  virtual void Report(const LiveSignals::Report& r, Time now) = 0;  // a reading, into the core
  // --- the other owners
  virtual void Watch(uint32_t job) = 0;  // a job with progress can hang (the recoverer's)
};

class SignalsLoop {
 public:
  SignalsLoop(JobBook* book, SlurmClient* slurm, Journal* journal, EventLog* events, SignalsHost* host,
              SignalsOptions opts)
      : book_(book), slurm_(slurm), journal_(journal), events_(events), host_(host), opts_(std::move(opts)) {}

  // The signals when [signals] is on, with each job's last reading from the journal. Call once.
  Status Load();
  bool on() const { return signals_ != nullptr; }
  // The advisor's answers that arrived, then the tracker's readings of running jobs; jobs that
  // left are forgotten. Only when on.
  void Step(Time now);
  // The policy's launch schemas (empty unless the advisor is on), and its estimator when it is
  // the advisor's (owned by the scheduler; null otherwise).
  semantic::SchemaSource LaunchSchemas();
  void SetAdvisor(semantic::SemanticEstimator* advisor) { advisor_ = advisor; }
  // A job the daemon meets for the first time: its launch file for the advisor.
  void Introduce(uint32_t job);
  const LiveSignals* live() const { return signals_.get(); }  // the views (null when off)

 private:
  void Reestimate(const std::vector<uint32_t>& jobs, Time now);
  void ForgetLeftJobs(std::vector<uint32_t>* dropped);
  void JournalProgressRows(const std::vector<uint32_t>& dropped, Time now);
  void Note(Time now, const std::string& kind, const std::string& detail) { events_->Note(now, kind, detail); }

  JobBook* book_;
  SlurmClient* slurm_;
  Journal* journal_;
  EventLog* events_;
  SignalsHost* host_;
  SignalsOptions opts_;
  std::unique_ptr<LiveSignals> signals_;
  semantic::SemanticEstimator* advisor_ = nullptr;  // the policy's estimator when it is the advisor's
  std::vector<LiveSignals::Report> reports_;
  std::vector<JournalProgress> progress_rows_;
  std::string error_;  // the last one noted as an event
};

}  // namespace orrery::live
