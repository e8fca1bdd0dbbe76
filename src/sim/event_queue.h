// The simulator's future-event list: a binary min-heap ordered by (time, sequence), so
// events at the same instant pop in the order they were pushed (deterministic). A push may
// carry a rank (0..255): the sequence's top byte, so at one instant events of a lower rank
// pop first, each rank in push order (the simulator's fixed order within an instant). Events
// are never removed from the middle: cancellation is lazy (the payload carries a
// generation number the driver checks when the event pops), as in ns-3.
// Micro-benchmark: event_queue_bench.cc (push/pop throughput at 10k–1M pending events).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "base/time.h"

namespace orrery {

template <class Payload>
class EventQueue {
 public:
  struct Event {
    Time t;
    uint64_t seq;
    Payload payload;
  };

  void Push(Time t, const Payload& p) { Push(t, 0, p); }
  void Push(Time t, uint8_t rank, const Payload& p) {
    heap_.push_back(Event{t, (static_cast<uint64_t>(rank) << 56) | next_seq_++, p});
    std::push_heap(heap_.begin(), heap_.end(), Later);
  }
  static uint8_t RankOf(const Event& e) { return static_cast<uint8_t>(e.seq >> 56); }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  const Event& Top() const { return heap_.front(); }
  Event Pop() {
    std::pop_heap(heap_.begin(), heap_.end(), Later);
    Event e = heap_.back();
    heap_.pop_back();
    return e;
  }

 private:
  static bool Later(const Event& a, const Event& b) { return a.t != b.t ? a.t > b.t : a.seq > b.seq; }
  std::vector<Event> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace orrery
