// The simulator's future-event list: a min-heap ordered by (time, sequence), so events at
// the same instant pop in the order they were pushed (deterministic). A push may carry a rank
// (0..255): the sequence's top byte, so at one instant events of a lower rank pop first, each
// rank in push order (the simulator's fixed order within an instant). Cancellation is lazy
// (the payload carries a generation number the driver checks when the event pops), as in
// ns-3; no single event is removed from the middle, but RemoveIf sweeps cancelled ones out in
// bulk. The heap is 4-ary (half the depth of a binary one; a node's four children share a
// cache line or two), sifted with a hole instead of swaps; the
// order is total (sequences are unique), so the pop order is that of any correct heap.
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
    const Event e{t, (static_cast<uint64_t>(rank) << 56) | next_seq_++, p};
    size_t i = heap_.size();
    heap_.push_back(e);
    while (i > 0) {  // sift the hole up
      const size_t parent = (i - 1) / kArity;
      if (!Before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  static uint8_t RankOf(const Event& e) { return static_cast<uint8_t>(e.seq >> 56); }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  const Event& Top() const { return heap_.front(); }
  Event Pop() {
    const Event top = heap_.front();
    const Event last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) SiftDown(0, last);
    return top;
  }
  // Removes every event for which `remove(event)` is true (called once per event), then
  // rebuilds the heap bottom-up in O(n). The order is total, so the events left pop exactly
  // as they would have without the removal.
  template <class Remove>
  void RemoveIf(Remove&& remove) {
    heap_.erase(std::remove_if(heap_.begin(), heap_.end(), remove), heap_.end());
    if (heap_.size() < 2) return;
    for (size_t i = (heap_.size() - 2) / kArity + 1; i-- > 0;) SiftDown(i, heap_[i]);  // the parents, last first
  }

 private:
  static constexpr size_t kArity = 4;
  // (t, seq) order without a branch on the times (the children's order is unpredictable).
  static bool Before(const Event& a, const Event& b) { return (a.t < b.t) | ((a.t == b.t) & (a.seq < b.seq)); }
  // Sifts a hole at i down, then puts `e` in it (e is a copy: it may be heap_[i] itself).
  void SiftDown(size_t i, const Event e) {
    const size_t n = heap_.size();
    for (;;) {
      const size_t first = kArity * i + 1;
      if (first >= n) break;
      size_t best = first;
      const size_t end = std::min(first + kArity, n);
      for (size_t c = first + 1; c < end; ++c) best = Before(heap_[c], heap_[best]) ? c : best;
      if (!Before(heap_[best], e)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = e;
  }
  std::vector<Event> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace orrery
