// What a scheduling cycle decides: a closed sum type. Every driver handles every kind
// through std::visit with an overload per alternative (no default branch), so adding a
// kind is a compile error in each driver until it is handled.
#pragma once

#include <cstdint>
#include <variant>

namespace orrery {

// Start pending job `slot` on the allocation in Scheduler::view(slot).alloc (for a packed
// start, on its partner's GPUs: view(slot).partner != kNoSlot).
struct StartDecision {
  uint32_t slot;
};
// Stop running job `slot` and requeue it (its resources are free in the scheduler's state).
// With `cancel` (SchedulerHandle::PreemptAndCancel) it is not requeued: it leaves the system.
struct PreemptDecision {
  uint32_t slot;
  bool cancel = false;
};

using Decision = std::variant<StartDecision, PreemptDecision>;

// Overload set for std::visit: std::visit(Overloaded{[](const StartDecision&) {...}, ...}, d).
template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

// The slot a decision is about (every kind names exactly one job).
inline uint32_t SlotOf(const Decision& d) {
  return std::visit(Overloaded{[](const StartDecision& s) { return s.slot; },
                               [](const PreemptDecision& p) { return p.slot; }},
                    d);
}

}  // namespace orrery
