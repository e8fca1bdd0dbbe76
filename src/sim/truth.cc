#include "sim/truth.h"

#include <algorithm>
#include <cmath>

namespace orrery {

namespace {

// Steps between two periodic checkpoints of phase p (0 = none).
int64_t CheckpointEvery(const Phase& p) {
  int64_t n = p.checkpoint.every_steps;
  if (p.checkpoint.every_seconds > 0) {
    const int64_t by_time = std::max<int64_t>(
        1, static_cast<int64_t>(std::floor(static_cast<double>(p.checkpoint.every_seconds) / p.seconds_per_step)));
    n = n > 0 ? std::min(n, by_time) : by_time;
  }
  return n;
}

Duration StepSeconds(const Phase& p, int64_t steps) {
  return static_cast<Duration>(std::ceil(static_cast<double>(steps) * p.seconds_per_step - 1e-9));
}

}  // namespace

// Checkpoints are taken after every N-th step of a phase, except at the phase's end.
Duration SecondsBetween(const WorkSpec& w, int64_t from, int64_t to) {
  Duration secs = 0;
  int64_t base = 0;
  for (const Phase& p : w.phases) {
    const int64_t lo = std::max(from, base) - base, hi = std::min(to, base + p.steps) - base;
    if (hi > lo) {
      secs += StepSeconds(p, hi - lo);
      if (const int64_t n = CheckpointEvery(p); n > 0) {
        const int64_t last = (p.steps - 1) / n;  // boundaries n, 2n, ... strictly inside the phase
        const int64_t crossed = std::min(hi / n, last) - std::min(lo / n, last);
        secs += crossed * p.checkpoint.cost;
      }
    }
    base += p.steps;
  }
  return secs;
}

StepsReached StepsAfter(const WorkSpec& w, int64_t from, Duration secs) {
  StepsReached r{from, from};
  int64_t base = 0;
  for (const Phase& p : w.phases) {
    if (base + p.steps <= r.done) {
      base += p.steps;
      continue;
    }
    const int64_t n = CheckpointEvery(p);
    while (r.done < base + p.steps && secs > 0) {
      const int64_t local = r.done - base;
      const int64_t next_ckpt = n > 0 && (local / n + 1) * n < p.steps ? (local / n + 1) * n : p.steps;
      const int64_t want = next_ckpt - local;
      const Duration need = StepSeconds(p, want);
      if (secs < need) {  // part of the stretch
        r.done += static_cast<int64_t>(std::floor(static_cast<double>(secs) / p.seconds_per_step));
        return r;
      }
      secs -= need;
      r.done += want;
      if (next_ckpt == p.steps) {  // phase end: its work is complete (durable unless the phase says not)
        if (p.checkpoint.durable_at_end) r.durable = r.done;
        break;
      }
      if (secs < p.checkpoint.cost) return r;  // checkpoint being written: not durable yet
      secs -= p.checkpoint.cost;
      r.durable = r.done;
    }
    base += p.steps;
    if (secs <= 0) break;
  }
  return r;
}

void SimTruth::Submitted(uint32_t slot, const Job& job, Time) {
  if (jobs_.size() <= slot) [[unlikely]]
    jobs_.resize(std::max<size_t>(slot + 1, 2 * jobs_.size()));
  Entry& e = jobs_[slot];
  e = Entry{};
  e.gpus = job.gpus;
  e.total = e.remaining = job.duration;
  if (has_work_ && job.id.v < work_->size() && !(*work_)[job.id.v].phases.empty()) {
    e.work = &(*work_)[job.id.v];
    e.total = e.work->total_steps();
    e.remaining = SecondsBetween(*e.work, 0, e.total);
  }
}

// Work done (seconds at the requested shape) in `wall` seconds of an attempt at `speed`.
static Duration WorkDone(Duration wall, double speed) {
  return speed == 1.0 ? wall : static_cast<Duration>(std::floor(static_cast<double>(wall) * speed + 1e-9));
}

void SimTruth::Stopped(uint32_t slot, Time now, EndCause cause) {
  Entry& e = at(slot);
  const double speed = e.speed;  // the attempt's speed (planner progress model), 1 otherwise
  e.speed = 1.0;
  e.restart_cost = 0;
  switch (cause) {
    case EndCause::kFinished:
      e.done = e.durable = e.reached = e.total;
      e.remaining = 0;
      return;
    case EndCause::kWithdrawn:
    case EndCause::kUnfinished:
      e.remaining = 0;
      return;
    case EndCause::kPreempted:
    case EndCause::kRequeued:
    case EndCause::kFailed:
    case EndCause::kNodeLost:
      if (e.started == kNoTime) return;  // never ran
      if (e.work)
        StopWork(e, WorkDone(now - e.started, speed), cause);
      else
        StopTrace(e, WorkDone(now - e.started, speed), cause);
      return;
  }
}

// A trace job: one step per second, the restart cost runs first in an attempt.
void SimTruth::StopTrace(Entry& e, Duration ran, EndCause cause) {
  const Duration consumed = std::min(ran, e.restart_left);
  e.restart_left -= consumed;
  const int64_t steps = std::min<int64_t>(e.total - e.done, ran - consumed);
  switch (cause) {
    case EndCause::kPreempted:  // checkpointed on preemption: no work lost, restart charged
      e.done += steps;
      e.reached = e.done;
      e.durable = e.done;
      e.restart_cost = overhead_(e.gpus);
      e.remaining = (e.remaining - ran) + e.restart_cost;
      e.restart_left += e.restart_cost;
      return;
    case EndCause::kRequeued:  // handed over with its work (e.g. from Lucid's profiler)
      e.done += steps;
      e.reached = e.done;
      e.durable = e.done;
      e.remaining = std::max<Duration>(0, e.remaining - ran);
      return;
    case EndCause::kFailed:
    case EndCause::kNodeLost:  // not announced: the attempt's work is lost
      e.reached = e.done + steps;
      e.remaining = e.restart_left + (e.total - e.durable);
      e.done = e.durable;
      return;
    case EndCause::kFinished:
    case EndCause::kWithdrawn:
    case EndCause::kUnfinished:
      return;  // handled by Stopped
  }
}

// A job with a WorkSpec: restore first, then steps with periodic checkpoints.
void SimTruth::StopWork(Entry& e, Duration ran, EndCause cause) {
  const Duration consumed = std::min(ran, e.restart_left);
  const StepsReached r = StepsAfter(*e.work, e.durable, ran - consumed);
  const Phase* phase = &e.work->phases.back();
  for (int64_t base = 0; const Phase& p : e.work->phases) {
    if (r.done < base + p.steps) {
      phase = &p;
      break;
    }
    base += p.steps;
  }
  const bool keeps_all = cause == EndCause::kRequeued || (cause == EndCause::kPreempted && phase->checkpoint.on_preempt);
  e.reached = r.done;
  e.done = r.done;
  e.durable = keeps_all ? r.done : r.durable;
  e.restart_cost = phase->checkpoint.restore;
  e.restart_left = e.restart_cost;
  e.remaining = e.restart_cost + SecondsBetween(*e.work, e.durable, e.total);
  if (!keeps_all) e.done = e.durable;
}

}  // namespace orrery
