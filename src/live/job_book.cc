// The one place a managed job's state changes (job_state.h): a Reading of the reconciler's
// table, a Step of the daemon's own, or a new record's first state.
#include "live/job_book.h"

#include <algorithm>

#include <fmt/format.h>

namespace orrery::live {

LiveJob* JobBook::Find(uint32_t id) {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second.get();
}

const LiveJob* JobBook::Find(uint32_t id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second.get();
}

LiveJob& JobBook::Add(std::unique_ptr<LiveJob> lj) {
  auto& slot = jobs_[lj->id];
  slot = std::move(lj);
  return *slot;
}

void JobBook::Erase(uint32_t id) { jobs_.erase(id); }

std::vector<uint32_t> JobBook::SortedIds() const {
  std::vector<uint32_t> ids;
  ids.reserve(jobs_.size());
  for (const auto& [id, lj] : jobs_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

void JobBook::Bind(LiveJob& lj, uint32_t slot) {
  lj.slot = slot;
  if (slot_job_.size() <= slot) slot_job_.resize(slot + 1, 0);
  slot_job_[slot] = lj.id;
}

Reading JobBook::Read(const LiveJob& lj, Seen seen, bool decision_open) {
  return Reading{lj.state_, seen, decision_open, Next(lj.state_, seen, decision_open)};
}

void JobBook::Move(LiveJob& lj, const Reading& r, Time now) {
  if (r.from != lj.state_ || Next(r.from, r.seen, r.decision_open) != r.tr)
    Illegal(now, fmt::format("internal: job {}: {} read as {} + {}, moved from {}", lj.id, ActionName(r.tr.action),
                             JobStateName(r.from), SeenName(r.seen), JobStateName(lj.state_)));
  lj.state_ = r.tr.next;
}

void JobBook::Move(LiveJob& lj, Step step, Time now) {
  const std::optional<JobState> next = After(lj.state_, step);
  if (next) {
    lj.state_ = *next;
    return;
  }
  Illegal(now, fmt::format("internal: job {}: step {} from state {} is not in the table", lj.id, StepName(step),
                           JobStateName(lj.state_)));
  // Made as asked: the caller's other fields (nodes, generation, decision) already assume it.
  switch (step) {
    case Step::kPlanStart: lj.state_ = JobState::kStarting; break;
    case Step::kPreempt:
    case Step::kNewGeneration:
    case Step::kRetry: lj.state_ = JobState::kQueued; break;
    case Step::kOutside: lj.state_ = JobState::kUnplaced; break;
    case Step::kRefuse: lj.state_ = JobState::kRejected; break;
    case Step::kTakePlacement: lj.state_ = JobState::kRunning; break;
    case Step::kRecoverAgain: lj.state_ = JobState::kRecovering; break;
    case Step::kGiveUp: lj.state_ = JobState::kFailed; break;
  }
}

void JobBook::Enter(LiveJob& lj, JobState first, Time now) {
  if (lj.entered_)
    Illegal(now, fmt::format("internal: job {}: entered twice (as {}, then {})", lj.id, JobStateName(lj.state_),
                             JobStateName(first)));
  lj.entered_ = true;
  lj.state_ = first;
}

void JobBook::Illegal(Time now, const std::string& what) {
  ++illegal_moves_;
  events_->Note(now, "error", what);
}

}  // namespace orrery::live
