// An insert-only map from 64-bit keys to 32-bit values (typically indices into a dense array
// of per-key state), by open addressing with linear probing from a multiplicative hash.
//
// Shaped for speed: a lookup reads one 16-byte entry (one cache line) where
// std::unordered_map reads a bucket, the node before and the node itself, each a likely
// cache miss once the table outgrows the cache, and divides by the bucket count per node.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace orrery {

class FlatIndex {
 public:
  // The value stored for `key` and false; if there is none, stores `value` and returns it and
  // true.
  std::pair<uint32_t, bool> Emplace(uint64_t key, uint32_t value) {
    if (2 * (size_ + 1) > table_.size()) Grow();
    size_t i = Home(key);
    for (; table_[i].used; i = (i + 1) & mask_)
      if (table_[i].key == key) return {table_[i].value, false};
    table_[i] = {key, value, true};
    ++size_;
    return {value, true};
  }
  size_t size() const { return size_; }

 private:
  struct Entry {
    uint64_t key = 0;
    uint32_t value = 0;
    bool used = false;
  };
  size_t Home(uint64_t key) const { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ULL) >> shift_); }
  void Grow() {
    std::vector<Entry> old = std::move(table_);
    table_.assign(old.empty() ? 64 : 2 * old.size(), Entry{});
    mask_ = table_.size() - 1;
    shift_ = 64 - std::countr_zero(table_.size());
    for (const Entry& e : old) {
      if (!e.used) continue;
      size_t i = Home(e.key);
      while (table_[i].used) i = (i + 1) & mask_;
      table_[i] = e;
    }
  }

  std::vector<Entry> table_;  // power-of-two size, at most half full
  size_t mask_ = 0;
  int shift_ = 63;
  size_t size_ = 0;
};

}  // namespace orrery
