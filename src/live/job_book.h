// The live job records and the one place their states change. The JobBook owns every job the
// daemon manages (LiveJob) and the scheduler slot -> job map; a job's state changes only
// through Move (a Reading of the reconciler's table, or a Step of the daemon's own; both
// tables in job_state.h) and Enter (a new record's first state). LiveJob's state has no public
// setter, so the compiler refuses any other write. A change the tables lack is a defect: it is
// counted (illegal_moves, orrery_illegal_moves_total), journaled as an error event, and made as
// asked, since the caller's other fields already assume it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/time.h"
#include "live/event_log.h"
#include "live/flex_shape.h"
#include "live/job_state.h"
#include "live/journal.h"
#include "live/recovery.h"
#include "live/slurm_client.h"
#include "model/job.h"

namespace orrery::live {

inline constexpr uint32_t kNoSlot = UINT32_MAX;

// One managed job: what Slurm listed, what the daemon decided, and what it believes.
struct LiveJob {
  uint32_t id = 0;
  Job job;  // the scheduler's record; Job::duration stays -1 (unknown): the live driver knows no true durations
  uint32_t slot = kNoSlot;
  uint32_t gen = 0;
  std::vector<NodeShare> nodes;
  Time started = kNoTime;
  Duration hint = -1;  // the duration its comment declares, or -1
  // Beliefs, never written into Job::duration: what the daemon believes it will run when the
  // policy has no estimate (the hint, else its time limit, else the config's default).
  Duration declared = -1;
  std::string reason;
  std::string partition;
  bool held = false;
  std::string heartbeat;     // restart contract: orrery:heartbeat=PATH ("" none)
  Duration hang_after = -1;  // orrery:hang=SECONDS, -1 = the config's
  FailureRecord failure;     // the last failure handled (job == 0: none)
  FailureKind fail_kind = FailureKind::kUnknown;  // its diagnosed kind, for the core's Fail at the requeue
  std::optional<FlexSpec> flex;  // its batch script's #ORRERY shape line (flex_shape.h), read when the policy shapes
  uint32_t listed_nodes = 1, listed_gpus_per_node = 0;  // its request as Slurm last listed it
  // Preempted by the policy (its requeuehold applied) and Slurm lists it COMPLETING until
  // the requeue completes (Seen::kStopping); its next start waits for that.
  bool stopping = false;

  JobState state() const { return state_; }
  bool entered() const { return entered_; }  // Enter gave it its first state

 private:
  friend class JobBook;
  JobState state_ = JobState::kUnheld;
  bool entered_ = false;
};

// What the latest listing showed of a job, and the row of the reconciler's table it selects
// (JobBook::Read). Moved only from the state it was read in.
struct Reading {
  JobState from;
  Seen seen;
  bool decision_open;
  Transition tr;
};

class JobBook {
 public:
  using Records = std::unordered_map<uint32_t, std::unique_ptr<LiveJob>>;

  explicit JobBook(EventLog* events) : events_(events) {}

  // --- records
  LiveJob* Find(uint32_t id);
  const LiveJob* Find(uint32_t id) const;
  bool Has(uint32_t id) const { return jobs_.count(id) > 0; }
  LiveJob& Add(std::unique_ptr<LiveJob> lj);  // replaces a record of the same id
  void Erase(uint32_t id);
  size_t size() const { return jobs_.size(); }
  Records::iterator begin() { return jobs_.begin(); }
  Records::iterator end() { return jobs_.end(); }
  Records::const_iterator begin() const { return jobs_.begin(); }
  Records::const_iterator end() const { return jobs_.end(); }
  std::vector<uint32_t> SortedIds() const;

  // --- scheduler slots (a new scheduler starts with none)
  void Bind(LiveJob& lj, uint32_t slot);
  uint32_t JobAt(uint32_t slot) const { return slot < slot_job_.size() ? slot_job_[slot] : 0; }
  void ClearSlots() { slot_job_.clear(); }

  // --- states
  // The table's row for what Slurm shows (Next), read from the job's current state.
  static Reading Read(const LiveJob& lj, Seen seen, bool decision_open);
  void Move(LiveJob& lj, const Reading& r, Time now);  // to r.tr.next; a stale reading is a defect
  void Move(LiveJob& lj, Step step, Time now);         // After(); a step the table lacks is a defect
  void Enter(LiveJob& lj, JobState first, Time now);   // a new record's first state; twice is a defect
  uint64_t illegal_moves() const { return illegal_moves_; }

 private:
  void Illegal(Time now, const std::string& what);
  EventLog* events_;
  Records jobs_;
  std::vector<uint32_t> slot_job_;  // slot -> job id
  uint64_t illegal_moves_ = 0;
};

}  // namespace orrery::live
