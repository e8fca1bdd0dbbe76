// Semantic signals in the live daemon (docs/design/live-signals.md):
//  * advisor: at a job's first sight its batch script (`scontrol write batch_script`) is
//    read once and kept as the job's launch file; the policy's `semantic` estimator reads it
//    (LaunchFile) when the job enters the queue, so its estimate is the advisor's;
//  * tracker: while a job runs, its StdOut (path from `scontrol show job`) is tailed with
//    bounded I/O (LogTail: only new bytes, at most max_bytes_per_job per read and
//    max_bytes_per_cycle over all jobs, the newest lines of a backlog) into a per-attempt
//    logs::ProgressTracker; each new step becomes a report for the core (ReportReading:
//    steps, then the ETA as the believed duration);
//  * LLM fallback (advisor with [llm]): a script the readers cannot read well
//    (semantic::NeedsLlm) is completed from the answer cache at once, else asked in the
//    background (llm::AsyncAsker: at most llm_questions_per_cycle new questions per cycle,
//    never waited for); an answer that arrives later completes the job's schema and the
//    daemon re-estimates the job while it is still pending (AdvisorStep).
// The daemon's SignalsLoop (signals_loop.h) owns one LiveSignals and calls it under the
// daemon's lock; nothing here touches the scheduler.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/time.h"
#include "live/journal.h"
#include "live/log_tail.h"
#include "live/slurm_client.h"
#include "llm/async.h"
#include "logs/llm.h"
#include "logs/progress.h"
#include "sched/framework/internal/signal_report.h"
#include "semantic/inspect.h"
#include "semantic/llm_schema.h"

namespace orrery::live {

// The serve config's [signals] table (docs/formats/serve-config.md).
struct SignalsOptions {
  bool advisor = false;                      // read batch scripts for estimator=semantic
  bool tracker = false;                      // tail running jobs' StdOut
  Duration read_interval_s = 5;              // a running job's log is read at most this often (0 = every cycle)
  size_t max_bytes_per_job = 64 * 1024;      // per read of one log: its newest bytes
  size_t max_bytes_per_cycle = 4 << 20;      // all logs of one cycle; jobs not reached go first next cycle
  uint32_t lookups_per_cycle = 32;           // `scontrol show job` calls per cycle for StdOut paths
  Duration lookup_retry_s = 30;              // after a failed lookup or read
  std::optional<llm::LlmConfig> llm;         // [llm]: asked once per unknown line format and unread config
  uint32_t llm_questions_per_cycle = 2;      // advisor: configs sent to the LLM per cycle (in the background)
  bool any() const { return advisor || tracker; }
};

// A running job's progress as the API shows it.
struct ProgressView {
  std::string log;  // its StdOut
  logs::Framework framework = logs::Framework::kUnknown;
  int64_t step = -1, total = -1;
  std::optional<double> loss, seconds_per_step;
  std::optional<double> eta_s;    // remaining seconds as of read_at
  Time read_at = kNoTime;         // when the reading was made (the log read that changed it)
  Time progress_at = kNoTime;     // when the step last changed (the hang watchdog's clock)
  bool stalled = false;           // no new step for the tracker's hang_factor × usual interval
  // Remaining seconds at `now` (the ETA counted down since the reading), nullopt when none.
  std::optional<double> remaining_s(Time now) const {
    if (!eta_s || read_at == kNoTime) return std::nullopt;
    return std::max(0.0, *eta_s - static_cast<double>(now - read_at));
  }
  // step / total in [0, 1], or -1 when the total is unknown.
  double fraction() const { return total > 0 && step >= 0 ? std::min(1.0, static_cast<double>(step) / static_cast<double>(total)) : -1; }
};

class LiveSignals {
 public:
  LiveSignals(SignalsOptions options, SlurmClient* slurm);
  ~LiveSignals();

  const SignalsOptions& options() const { return o_; }

  // --- advisor
  // Reads the job's batch script (once per job; a failed read is counted, not retried).
  void ReadLaunchFile(uint32_t job);
  std::optional<semantic::InputFile> LaunchFile(uint32_t job) const;
  // The job's launch schema (the readers', completed by the LLM when its answer is in), or
  // nullopt when it has no script.
  std::optional<semantic::LaunchSchema> LaunchSchemaOf(uint32_t job) const;
  // Once per cycle: applies the LLM answers that arrived (the jobs whose schema they changed
  // go to `improved`) and sends up to llm_questions_per_cycle new questions. Never waits.
  void AdvisorStep(std::vector<uint32_t>* improved);

  // --- tracker
  struct RunningJob {
    uint32_t job = 0;
    uint32_t gen = 0;   // the daemon's generation: a new one is a new attempt (new log reading)
    uint32_t slot = 0;
  };
  struct Report {
    uint32_t job = 0, slot = 0;
    SignalReading reading;
    Time at = kNoTime;  // when its step was reached
  };
  // Reads the logs of `running` that are due (bounded I/O, round robin across cycles) and
  // appends a report for each job whose step changed (and one for each job restored from the
  // journal, first). `changed` receives the journal rows to write.
  void Poll(std::vector<RunningJob> running, Time now, std::vector<Report>* out, std::vector<JournalProgress>* changed);
  // The last reading journaled before a restart: shown, and reported to the core at the
  // job's first Poll; its time is kept while the log shows the same step.
  void Restore(const JournalProgress& p);
  // Jobs with any state here (to forget those that left).
  std::vector<uint32_t> Known() const;
  void Forget(uint32_t job);
  const ProgressView* View(uint32_t job) const;
  // The job's latest input problem, located ("job-12.sbatch:3:18: expected a number ...",
  // "llm answer:1:9: ...", a log that could not be read), "" when none: hostile or broken
  // scripts, answers and logs are reported on their job and never stop the cycle.
  std::string InputError(uint32_t job) const;

  struct Stats {
    uint64_t scripts_read = 0, script_errors = 0;
    uint64_t lookups = 0, lookup_errors = 0;
    uint64_t bytes_read = 0, bytes_skipped = 0, lines = 0;
    uint64_t truncations = 0, rotations = 0, read_errors = 0;
    uint64_t reports = 0, capped_cycles = 0;
    uint64_t llm_calls = 0;
    // advisor's LLM fallback: questions sent, answers merged or rejected, no answer, cache hits
    uint64_t llm_config_questions = 0, llm_config_merged = 0, llm_config_rejected = 0, llm_config_failed = 0,
             llm_config_cached = 0;
  };
  const Stats& stats() const { return st_; }
  // The last error (a failed lookup or read), "" when none.
  const std::string& last_error() const { return last_error_; }

 private:
  struct JobState;
  JobState& StateOf(uint32_t job);
  void NewAttempt(JobState& s, uint32_t gen);
  bool KnowsLog(uint32_t job, JobState& s, Time now, uint32_t* lookups);
  size_t ReadLog(JobState& s, Time now, size_t budget);
  void Reading(uint32_t job, uint32_t slot, JobState& s, Time now, std::vector<Report>* out,
               std::vector<JournalProgress>* changed);

  void CountOutcome(semantic::LlmOutcome o);
  void ApplyAnswer(const llm::AsyncAsker::Answer& a, std::vector<uint32_t>* improved);
  void SendQuestions();

  SignalsOptions o_;
  SlurmClient* slurm_;
  std::unique_ptr<llm::HttpChatClient> llm_client_;
  std::unique_ptr<llm::LlmCache> llm_cache_;  // one per process, shared by the tracker and the advisor
  std::unique_ptr<logs::LlmFormatOracle> oracle_;
  std::unique_ptr<semantic::LlmSchemaFiller> filler_;  // advisor + [llm]
  std::unique_ptr<llm::AsyncAsker> asker_;
  std::deque<uint32_t> llm_wanted_;  // jobs whose script waits to be asked about, in arrival order
  std::map<uint32_t, std::unique_ptr<JobState>> jobs_;
  uint32_t rr_after_ = 0;  // round robin: the next cycle starts after this job id
  Stats st_;
  std::string last_error_;
};

}  // namespace orrery::live
