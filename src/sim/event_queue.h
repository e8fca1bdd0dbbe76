// The simulator's future-event list, ordered by (time, sequence): events at the same instant
// pop in the order they were pushed (deterministic). A push may carry a rank (0..255): the
// sequence's top byte, so at one instant events of a lower rank pop first, each rank in push
// order (the simulator's fixed order within an instant). Cancellation is lazy (the payload
// carries a generation number the driver checks when the event pops), as in ns-3; no single
// event is removed from the middle, but RemoveIf sweeps cancelled ones out in bulk.
//
// A radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990), because simulated time never goes
// back: every push is at or after the time of the last pop (checked). Bucket b >= 1 holds
// the events whose time first differs from that last time in bit b - 1, so every event of a
// lower bucket is earlier than every event of a higher one; bucket 0 holds those AT the last
// time, as a small heap by sequence. A push appends to its bucket (O(1)); a pop that finds
// bucket 0 empty takes the lowest non-empty bucket, makes its earliest time the last time
// and spreads the bucket over the buckets below (each event moves down at most 64 times in
// its life, in practice a few). The 4-ary heap it replaced cost ~290 instructions a pop on
// the 1M-job FIFO run; the order is total (sequences are unique), so the pop order is the
// same as any correct priority queue's. Micro-benchmark: event_queue_bench.cc.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <vector>

#include "base/result.h"
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
  // Precondition: t is at or after the time of the last Pop.
  void Push(Time t, uint8_t rank, const Payload& p) {
    const Event e{t, (static_cast<uint64_t>(rank) << 56) | next_seq_++, p};
    ORR_CHECK(Key(t) >= last_);
    const int b = BucketOf(t);
    ++size_;
    if (b == 0) {
      auto& z = buckets_[0];
      z.push_back(e);
      std::push_heap(z.begin(), z.end(), LaterSeq);
      return;
    }
    buckets_[b].push_back(e);
    occupied_ |= uint64_t{1} << (b - 1);
    if (min_bucket_ != kUnknown && (b < min_bucket_ || (b == min_bucket_ && Before(e, buckets_[b][min_index_])))) {
      min_bucket_ = b;
      min_index_ = buckets_[b].size() - 1;
    }
  }
  static uint8_t RankOf(const Event& e) { return static_cast<uint8_t>(e.seq >> 56); }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  // The earliest event (precondition: !empty()).
  const Event& Top() const {
    if (!buckets_[0].empty()) return buckets_[0].front();
    FindMin();
    return buckets_[min_bucket_][min_index_];
  }
  Event Pop() {
    if (buckets_[0].empty()) Spread();
    auto& z = buckets_[0];
    std::pop_heap(z.begin(), z.end(), LaterSeq);
    const Event top = z.back();
    z.pop_back();
    --size_;
    return top;
  }
  // Removes every event for which `remove(event)` is true (called once per event). The
  // order is total, so the events left pop exactly as they would have without the removal.
  template <class Remove>
  void RemoveIf(Remove&& remove) {
    for (size_t b = 0; b < buckets_.size(); ++b) {
      auto& v = buckets_[b];
      const size_t before = v.size();
      v.erase(std::remove_if(v.begin(), v.end(), remove), v.end());
      size_ -= before - v.size();
      if (b == 0)
        std::make_heap(v.begin(), v.end(), LaterSeq);
      else if (v.empty())
        occupied_ &= ~(uint64_t{1} << (b - 1));
    }
    min_bucket_ = kUnknown;
  }

 private:
  static constexpr int kUnknown = -1;
  // Times as unsigned keys in the same order (negative times too).
  static uint64_t Key(Time t) { return static_cast<uint64_t>(t) ^ (uint64_t{1} << 63); }
  int BucketOf(Time t) const { return std::bit_width(Key(t) ^ last_); }
  static bool Before(const Event& a, const Event& b) { return a.t < b.t || (a.t == b.t && a.seq < b.seq); }
  // Bucket 0's heap order: the lowest sequence on top (all its events have the same time).
  static bool LaterSeq(const Event& a, const Event& b) { return a.seq > b.seq; }

  // Caches the earliest event of the lowest non-empty bucket (bucket 0 empty, queue not).
  void FindMin() const {
    if (min_bucket_ != kUnknown) return;
    const int b = std::countr_zero(occupied_) + 1;
    const auto& v = buckets_[b];
    size_t best = 0;
    for (size_t i = 1; i < v.size(); ++i) best = Before(v[i], v[best]) ? i : best;
    min_bucket_ = b;
    min_index_ = best;
  }
  // Bucket 0 is empty: the earliest time becomes the last one and its bucket is spread below.
  void Spread() {
    FindMin();
    const int from = min_bucket_;
    last_ = Key(buckets_[from][min_index_].t);
    auto& v = buckets_[from];
    for (const Event& e : v) {  // into lower buckets only: v itself never grows here
      const int b = BucketOf(e.t);  // < from: e's time agrees with the new last time above bit from - 1
      buckets_[b].push_back(e);
      occupied_ |= (uint64_t{1} << b) >> 1;  // bit b - 1; none for bucket 0
    }
    v.clear();  // keeps its capacity
    occupied_ &= ~(uint64_t{1} << (from - 1));
    std::make_heap(buckets_[0].begin(), buckets_[0].end(), LaterSeq);
    min_bucket_ = kUnknown;
  }

  std::array<std::vector<Event>, 65> buckets_;
  uint64_t occupied_ = 0;  // bit b - 1: bucket b >= 1 is not empty
  uint64_t last_ = 0;      // the key of the last pop's time (0: before any pop, below every time)
  size_t size_ = 0;
  uint64_t next_seq_ = 0;
  mutable int min_bucket_ = kUnknown;  // FindMin's cache, kept up to date by pushes
  mutable size_t min_index_ = 0;
};

}  // namespace orrery
