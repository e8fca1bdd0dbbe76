// The simulator's one event queue, in (time, rank, seq) order: at one instant events of a
// lower rank come first, each rank in push order. Job events (many pending at once:
// completions, failures, progress reports) live in a radix heap (event_queue.h: no push goes
// back in time); singleton timers (at most one pending each: the next arrival, the energy
// step, the decision cadence, the samples) live in fixed slots that the simulator sets and
// clears -- the same order, without a heap push and pop per arrival and per sample (1M-job
// runs: ~2M heap operations fewer).
//
// Void completions (the completion events of attempts since preempted or re-timed) still
// make an instant when they come due -- the outputs depend on those instants (time series,
// the busy-GPU integral, the cycle a preemption's MarkDirty defers to) -- but do nothing else.
// A preemptive run's heap is mostly such events (Tiresias, 1M jobs: ~9,000 queued, ~750
// live), and every pop paid for them (sifted past them, now spread with them). SweepVoid
// moves them out of the heap into `instants_`, bare times in descending order (the next at
// the back: an O(1) pop). An instant pops before every heap event of its time: among the
// events of one instant only the order of the live ones is observable (a void completion
// only counts down completions_queued, which nothing reads within an instant).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "base/time.h"
#include "sim/event_queue.h"

namespace orrery {

// Event kinds in their order within an instant (the value is the rank).
enum class EventKind : uint8_t {
  kCompletion = 0,  // job: a running attempt's work ends (or the profiler's time limit)
  kFailure,         // job: an injected failure of a running attempt (SimConfig::failures)
  kRepair,          // node (slot = node id): a cordoned node's repair ends (sim/cordon.h)
  kPower,           // timer: a boot ends or the energy control step is due (PowerSim::NextEvent)
  kStorage,         // timer: a checkpoint read begins or ends (StorageSim::NextEvent)
  kArrival,         // timer: the next trace job is submitted
  kProgressReport,  // job: a running job with phases reports its steps (SimConfig::progress_report)
  kWithdraw,        // job: its user cancels it if it is still pending (SimConfig::renege)
  kHarvest,         // job: an RL job lends idle rollout GPUs or takes them back (SimConfig::harvest)
  kDecision,        // timer: a decision tick or the policy's wake-up (Scheduler::NextDecisionTime)
  kSample,          // timer: the time series (SimConfig::sample_interval); an observation
  kFragSample,      // timer: the fragmentation measure (SimConfig::frag_interval); an observation
};
inline constexpr int kNumEventKinds = static_cast<int>(EventKind::kFragSample) + 1;  // the last kind

struct SimEvent {
  Time t = kNoTime;
  EventKind kind = EventKind::kCompletion;
  uint32_t slot = 0;  // job events: the job's slot
  uint32_t gen = 0;   // job events: lazy cancellation (stale once the slot's generation moved on)
};

class SimQueue {
 public:
  // Job events: kCompletion, kFailure, kProgressReport, kWithdraw, kHarvest (and kRepair, keyed by node).
  void PushJob(Time t, EventKind k, uint32_t slot, uint32_t gen) {
    heap_.Push(t, static_cast<uint8_t>(k), JobRef{slot, gen});
  }
  // Timers: the pending time of kind k (kNoTime: none).
  void SetTimer(EventKind k, Time t) {
    Time& slot = timers_[static_cast<size_t>(k)];
    if (slot == t) return;
    slot = t;
    best_dirty_ = true;
  }
  Time timer(EventKind k) const { return timers_[static_cast<size_t>(k)]; }

  // The slot of a void completion popped from `instants_` (no job's slot).
  static constexpr uint32_t kVoidSlot = UINT32_MAX;
  // Whether the heap has grown enough since the last sweep to sweep it again (amortized
  // O(1) per push: a sweep costs O(heap + instants) and runs when the heap has doubled).
  bool WantsSweep() const { return heap_.size() >= sweep_at_; }
  // Moves the completions for which void_completion(slot, gen) is true to `instants_`.
  template <class IsVoid>
  void SweepVoid(IsVoid&& void_completion) {
    swept_.clear();
    heap_.RemoveIf([&](const EventQueue<JobRef>::Event& e) {
      if (EventQueue<JobRef>::RankOf(e) != static_cast<uint8_t>(EventKind::kCompletion) ||
          !void_completion(e.payload.slot, e.payload.gen))
        return false;
      swept_.push_back(e.t);
      return true;
    });
    std::sort(swept_.begin(), swept_.end(), std::greater<>());
    merged_.resize(instants_.size() + swept_.size());
    std::merge(instants_.begin(), instants_.end(), swept_.begin(), swept_.end(), merged_.begin(), std::greater<>());
    instants_.swap(merged_);
    sweep_at_ = std::max(kMinSweep, 2 * heap_.size());
  }

  bool empty() const { return heap_.empty() && instants_.empty() && BestTimer() < 0; }
  // The next event (precondition: !empty()).
  SimEvent Top() const {
    const SimEvent job = TopJob();
    const int k = BestTimer();
    if (k < 0 || (job.t != kNoTime && (job.t < timers_[k] || (job.t == timers_[k] && static_cast<int>(job.kind) < k))))
      return job;
    return SimEvent{timers_[k], static_cast<EventKind>(k)};
  }
  // Removes `top`, the event Top() just returned.
  void Drop(const SimEvent& top) {
    if (IsTimer(top.kind))
      SetTimer(top.kind, kNoTime);
    else if (top.slot == kVoidSlot && top.kind == EventKind::kCompletion)
      instants_.pop_back();
    else
      heap_.Pop();
  }
  static bool IsTimer(EventKind k) {
    return k == EventKind::kPower || k == EventKind::kStorage || k == EventKind::kArrival || k == EventKind::kDecision ||
           k == EventKind::kSample || k == EventKind::kFragSample;
  }

 private:
  struct JobRef {
    uint32_t slot, gen;
  };
  // The next job event: a void completion's instant first, then the heap's top (t: kNoTime if none).
  SimEvent TopJob() const {
    if (!instants_.empty() && (heap_.empty() || instants_.back() <= heap_.Top().t))
      return SimEvent{instants_.back(), EventKind::kCompletion, kVoidSlot, 0};
    if (heap_.empty()) return SimEvent{};
    const auto& e = heap_.Top();
    return SimEvent{e.t, static_cast<EventKind>(EventQueue<JobRef>::RankOf(e)), e.payload.slot, e.payload.gen};
  }
  // The earliest set timer (lowest rank on ties), -1 if none; cached until a timer changes.
  int BestTimer() const {
    if (!best_dirty_) return best_;
    best_ = -1;
    for (int k : kTimerKinds)
      if (timers_[k] != kNoTime && (best_ < 0 || timers_[k] < timers_[best_])) best_ = k;
    best_dirty_ = false;
    return best_;
  }
  static constexpr int kTimerKinds[] = {
      static_cast<int>(EventKind::kPower),    static_cast<int>(EventKind::kStorage),
      static_cast<int>(EventKind::kArrival),  static_cast<int>(EventKind::kDecision),
      static_cast<int>(EventKind::kSample),   static_cast<int>(EventKind::kFragSample)};
  mutable int best_ = -1;
  mutable bool best_dirty_ = false;
  static constexpr size_t kMinSweep = 1024;
  EventQueue<JobRef> heap_;
  std::vector<Time> instants_, swept_, merged_;  // void completions' times, descending; sweep scratch
  size_t sweep_at_ = kMinSweep;
  std::array<Time, kNumEventKinds> timers_ = [] {
    std::array<Time, kNumEventKinds> a;
    a.fill(kNoTime);
    return a;
  }();
};

}  // namespace orrery
