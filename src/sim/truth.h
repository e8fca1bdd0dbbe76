// The simulator's truth about each active job (sched/framework/api/oracle.h): its true
// remaining work and when it really ends, kept current by the scheduler's lifecycle
// callbacks. Restart physics live here, nowhere else:
//   * trace jobs (one generic phase, checkpointed when preempted): a preemption loses no
//     work and charges the policy's restart overhead (PolicyParts::preempt_overhead);
//   * jobs with a WorkSpec (model/work.h): periodic checkpoints cost their `cost` while
//     running; a preemption without on_preempt, a failure or a lost node loses the steps
//     since the last durable checkpoint, and the next attempt first pays `restore`.
// Times are in seconds of running alone at the requested shape (a ProgressModel scales
// them by the job's speed).
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "model/work.h"
#include "sched/framework/api/oracle.h"

namespace orrery {

// Seconds of running (step time plus periodic checkpoint costs) to take `w` from step
// `from` to step `to` (0 ≤ from ≤ to ≤ total).
Duration SecondsBetween(const WorkSpec& w, int64_t from, int64_t to);
// Steps reached and the last durable checkpoint (a boundary whose cost was fully paid)
// after running `secs` seconds from step `from` (itself durable).
struct StepsReached {
  int64_t done = 0;
  int64_t durable = 0;
};
StepsReached StepsAfter(const WorkSpec& w, int64_t from, Duration secs);

class SimTruth final : public TruthModel {
 public:
  // overhead: restart cost charged per preemption of a trace job.
  // work: per trace job index, its WorkSpec (empty = every job is a trace job).
  SimTruth(Duration (*overhead)(uint32_t gpus), const std::vector<WorkSpec>* work)
      : overhead_(overhead), work_(work), has_work_(work && !work->empty()) {}

  // Pending: seconds of running it needs from its next start (restore included). Running:
  // as at the start of the current attempt.
  Duration Remaining(uint32_t slot) const override { return at(slot).remaining; }
  Time TrueEnd(uint32_t slot) const override { return at(slot).started + WallRemaining(slot); }
  // Wall seconds the current attempt still needs at its speed: ceil(remaining / speed).
  Duration WallRemaining(uint32_t slot) const { return ToWall(at(slot).remaining, at(slot).speed); }
  // The progress model's speed for the attempt that starts now (1 = as requested; trace
  // jobs and jobs of models without a shape-aware ProgressModel always run at 1).
  void SetSpeed(uint32_t slot, double speed) { at(slot).speed = speed; }
  // The running attempt made its last progress at `now` and stops at `until` (a fault noticed
  // and diagnosed later, its GPUs held meanwhile): its average speed over the run becomes
  // speed x (now - started) / (until - started), so that its work at `until` is its work at `now`.
  void FreezeProgress(uint32_t slot, Time now, Time until) {
    Entry& e = at(slot);
    if (until > e.started && now >= e.started)
      e.speed *= static_cast<double>(now - e.started) / static_cast<double>(until - e.started);
  }
  Duration RestartCost(uint32_t slot) const override { return at(slot).restart_cost; }
  std::unique_ptr<TruthModel> Clone() const override { return std::make_unique<SimTruth>(*this); }

  void Submitted(uint32_t slot, const Job& job, Time now) override;
  void Started(uint32_t slot, Time now) override { at(slot).started = now; }
  void Stopped(uint32_t slot, Time now, EndCause cause) override;

  // Attempts: steps the job had reached when it last stopped (before any loss) and the steps
  // covered by its last durable checkpoint then (cumulative over attempts).
  int64_t steps_done(uint32_t slot) const { return at(slot).reached; }
  int64_t steps_durable(uint32_t slot) const { return at(slot).durable; }

 private:
  struct Entry {
    Duration remaining = 0;
    Time started = kNoTime;
    Duration restart_cost = 0;  // charged at the last stop
    Duration restart_left = 0;  // of `remaining`: restart cost still to run before steps
    int64_t done = 0, durable = 0, total = 0;  // done: where the next attempt starts from
    int64_t reached = 0;                       // steps reached at the last stop
    const WorkSpec* work = nullptr;  // null: a trace job (1 step per second)
    uint32_t gpus = 0;
    double speed = 1.0;  // of the current attempt: seconds of work per wall second
  };
  static Duration ToWall(Duration work, double speed) {
    return speed == 1.0 ? work : static_cast<Duration>(std::ceil(static_cast<double>(work) / speed - 1e-9));
  }
  Entry& at(uint32_t slot) { return jobs_[slot]; }
  const Entry& at(uint32_t slot) const { return jobs_[slot]; }
  void StopTrace(Entry& e, Duration ran, EndCause cause);
  void StopWork(Entry& e, Duration ran, EndCause cause);

  Duration (*overhead_)(uint32_t gpus);
  const std::vector<WorkSpec>* work_;
  bool has_work_;
  std::vector<Entry> jobs_;
};

}  // namespace orrery
