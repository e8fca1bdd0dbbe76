// Feature rows of the jobs a learning estimator has seen at submit and not yet at finish,
// keyed by job id (a trace index in the simulator, a Slurm job id in the live daemon: any
// uint32, sparse or dense).
//
// Shaped for speed, because the estimator touches every job twice (Estimate, Observe) and
// holds the whole queue: rows live in one slab of fixed-size rows whose slots are reused
// through a free list (no allocation per job), and the id index is an open-addressing table
// probed linearly (one cache line per lookup instead of a bucket and a node of
// std::unordered_map). Removal shifts the following entries of the probe run
// back, so there are no tombstones and lookups never slow down with churn.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace orrery {

template <class Extra>
class PendingRows {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  explicit PendingRows(size_t cols) : cols_(cols) {}

  // The slot of `id`, or kNone.
  uint32_t Find(uint32_t id) const {
    if (index_.empty()) return kNone;
    for (size_t i = Home(id);; i = (i + 1) & mask_) {
      const Entry& e = index_[i];
      if (e.slot == kNone) return kNone;
      if (e.id == id) return e.slot;
    }
  }
  // Adds `id`, which must be absent, and returns its slot: its row (cols values) and extra are
  // the caller's to fill. Earlier row() pointers may be invalidated.
  uint32_t Add(uint32_t id) {
    if (2 * (size_ + 1) > index_.size()) Grow();
    const uint32_t slot = TakeSlot();
    size_t i = Home(id);
    while (index_[i].slot != kNone) i = (i + 1) & mask_;
    index_[i] = {id, slot};
    ++size_;
    return slot;
  }
  // Removes `id`'s entry (if present) and frees its slot.
  void Remove(uint32_t id) {
    if (index_.empty()) return;
    size_t i = Home(id);
    while (index_[i].slot != kNone && index_[i].id != id) i = (i + 1) & mask_;
    if (index_[i].slot == kNone) return;
    free_.push_back(index_[i].slot);
    --size_;
    ShiftBack(i);
  }
  float* row(uint32_t slot) { return rows_.data() + static_cast<size_t>(slot) * cols_; }
  const float* row(uint32_t slot) const { return rows_.data() + static_cast<size_t>(slot) * cols_; }
  Extra& extra(uint32_t slot) { return extra_[slot]; }
  size_t size() const { return size_; }

 private:
  struct Entry {
    uint32_t id = 0;
    uint32_t slot = kNone;  // kNone: the index entry is empty
  };
  // The id's low bits, xor-folded with the bits above them: consecutive ids (a simulator's
  // trace order, Slurm's job numbers) land in neighbouring entries, so the lookup for the next
  // submitted job usually hits the cache line of the one before; ids a table size apart still
  // land apart.
  size_t Home(uint32_t id) const { return (id ^ (id >> bits_)) & mask_; }
  uint32_t TakeSlot() {
    if (!free_.empty()) {
      const uint32_t s = free_.back();
      free_.pop_back();
      return s;
    }
    rows_.resize(rows_.size() + cols_);
    extra_.emplace_back();
    return static_cast<uint32_t>(extra_.size() - 1);
  }
  // Entry `hole` was emptied: moves back every later entry of its probe run that may live
  // there (its home is not cyclically within (hole, i]), so that Find stops at no false gap.
  void ShiftBack(size_t hole) {
    index_[hole].slot = kNone;
    for (size_t i = (hole + 1) & mask_; index_[i].slot != kNone; i = (i + 1) & mask_) {
      const size_t home = Home(index_[i].id);
      const bool stays = hole < i ? (home > hole && home <= i) : (home > hole || home <= i);
      if (stays) continue;
      index_[hole] = index_[i];
      index_[i].slot = kNone;
      hole = i;
    }
  }
  void Grow() {
    std::vector<Entry> old = std::move(index_);
    index_.assign(old.empty() ? 64 : 2 * old.size(), Entry{});
    mask_ = index_.size() - 1;
    bits_ = std::countr_zero(index_.size());
    for (const Entry& e : old) {
      if (e.slot == kNone) continue;
      size_t i = Home(e.id);
      while (index_[i].slot != kNone) i = (i + 1) & mask_;
      index_[i] = e;
    }
  }

  size_t cols_;
  std::vector<Entry> index_;  // power-of-two size, at most half full
  size_t mask_ = 0;
  int bits_ = 0;
  size_t size_ = 0;
  std::vector<float> rows_;  // slot s: rows_[s · cols_, (s + 1) · cols_)
  std::vector<Extra> extra_;
  std::vector<uint32_t> free_;
};

}  // namespace orrery
