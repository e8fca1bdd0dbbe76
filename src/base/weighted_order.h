// An ordered set of keys, each with a non-negative weight, that answers the greedy walks of
// the schedulers' decisions ("keep each job in order while its demand fits what is left")
// in time proportional to the blocks passed instead of the entries: a sorted sequence cut
// into blocks of kBlock / 2 to 2 × kBlock entries (underfull blocks are joined), each block
// with its total and a cache of its prefix sums that the walks extend on demand. Insert,
// Erase and SetWeight cost O(log n + kBlock); skipping a run of entries whose weights fit a
// budget, or summing the weights after a key, costs O(n / kBlock + kBlock). Cursors are
// invalidated by every change. The const walks write the cache: one order must not be read
// from two threads at once.
//
// Keys are unique under Less (an insert of an equal key is a contract violation). The block
// searches read a contiguous copy of each block's last key (lasts_), not the blocks' own
// entries, which cost a cache miss per probe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace orrery {

template <class K, class Less = std::less<K>>
class WeightedOrder {
 public:
  struct Entry {
    K key;
    int64_t weight;
  };
  // A position: block index and index inside the block; at_end when block == blocks.
  struct Cursor {
    size_t block = 0, pos = 0;
  };

  // Block size: blocks hold kBlock / 2 to 2 × kBlock entries (a lone block: 1 to 2 × kBlock).
  static constexpr size_t kBlock = 32;

  size_t size() const { return size_; }
  size_t block_count() const { return blocks_.size(); }
  bool empty() const { return size_ == 0; }
  int64_t total() const { return total_; }
  // The largest key (the set must not be empty).
  const K& last() const { return lasts_.back(); }

  void Insert(const K& key, int64_t weight) {
    if (blocks_.empty()) {
      blocks_.emplace_back();
      lasts_.push_back(key);
    }
    const size_t b = BlockFor(key);
    Block& blk = blocks_[b];
    const size_t p = LowerIn(blk, key);
    blk.entries.insert(blk.entries.begin() + static_cast<ptrdiff_t>(p), Entry{key, weight});
    blk.prefix.push_back(0);
    blk.Changed(p, weight);
    lasts_[b] = blk.entries.back().key;
    ++size_;
    total_ += weight;
    if (blk.entries.size() > 2 * kBlock) Split(b);
  }

  // Removes `key`; false if absent.
  bool Erase(const K& key) {
    const Cursor c = Find(key);
    if (c.block == blocks_.size()) return false;
    Block& blk = blocks_[c.block];
    total_ -= blk.entries[c.pos].weight;
    blk.Changed(c.pos, -blk.entries[c.pos].weight);
    blk.entries.erase(blk.entries.begin() + static_cast<ptrdiff_t>(c.pos));
    blk.prefix.pop_back();
    if (!blk.entries.empty()) lasts_[c.block] = blk.entries.back().key;
    --size_;
    if (blk.entries.size() < kBlock / 2) Merge(c.block);
    return true;
  }

  // Changes the weight of `key`; false if absent.
  bool SetWeight(const K& key, int64_t weight) {
    const Cursor c = Find(key);
    if (c.block == blocks_.size()) return false;
    Block& blk = blocks_[c.block];
    total_ += weight - blk.entries[c.pos].weight;
    blk.Changed(c.pos, weight - blk.entries[c.pos].weight);
    blk.entries[c.pos].weight = weight;
    return true;
  }

  // --- cursors
  Cursor begin() const { return Cursor{0, 0}; }
  bool at_end(const Cursor& c) const { return c.block == blocks_.size(); }
  const Entry& at(const Cursor& c) const { return blocks_[c.block].entries[c.pos]; }
  void Next(Cursor* c) const {
    if (++c->pos == blocks_[c->block].entries.size()) *c = Cursor{c->block + 1, 0};
  }
  // The first entry whose key is greater than `key`.
  Cursor UpperBound(const K& key) const {
    size_t b = FirstBlockEndingAfter(key);
    if (b == blocks_.size()) return Cursor{b, 0};
    const auto& e = blocks_[b].entries;
    const size_t p = static_cast<size_t>(
        std::upper_bound(e.begin(), e.end(), key, [&](const K& k, const Entry& x) { return less_(k, x.key); }) - e.begin());
    return Cursor{b, p};
  }
  // Σ weight from `c` to the end.
  int64_t SumFrom(const Cursor& c) const {
    if (at_end(c)) return 0;
    const Block& blk = blocks_[c.block];
    int64_t s = blk.sum - blk.Prefix(c.pos);
    for (size_t b = c.block + 1; b < blocks_.size(); ++b) s += blocks_[b].sum;
    return s;
  }
  // Σ weight of the entries whose key is greater than `key`.
  int64_t SumAfter(const K& key) const { return SumFrom(UpperBound(key)); }

  // Moves *c past every entry whose key is not greater than `key`; returns their Σ weight.
  // (AdvanceWhile without a budget: no search of the prefix sums for where a budget ends.)
  int64_t AdvanceNotAfter(Cursor* c, const K& key) const {
    int64_t passed = 0;
    while (!at_end(*c)) {
      const Block& blk = blocks_[c->block];
      const int64_t from = blk.Prefix(c->pos);
      if (!less_(key, blk.entries.back().key)) {  // the whole rest of the block
        passed += blk.sum - from;
        *c = Cursor{c->block + 1, 0};
        continue;
      }
      // The block's last key is greater than `key`: the cursor stops inside it.
      const auto first = blk.entries.begin() + static_cast<ptrdiff_t>(c->pos);
      c->pos = static_cast<size_t>(
          std::partition_point(first, blk.entries.end(), [&](const Entry& e) { return !less_(key, e.key); }) -
          blk.entries.begin());
      passed += blk.Prefix(c->pos) - from;
      break;
    }
    return passed;
  }

  // Moves *c over the longest run of entries from *c whose keys are less than `*bound`
  // (nullptr: no bound) and whose Σ weight is at most `budget`; returns that Σ. The walk
  // "keep each entry whose weight fits what is left" keeps exactly these entries first.
  int64_t SkipFitting(Cursor* c, const K* bound, int64_t budget) const {
    if (!bound) return AdvanceWhile(c, [](const K&) { return true; }, budget);
    return AdvanceWhile(c, [&](const K& k) { return less_(k, *bound); }, budget);
  }

 private:
  struct Block {
    std::vector<Entry> entries;
    int64_t sum = 0;  // Σ weight of entries
    // A cache of the prefix sums, extended on demand by the walks (a change costs no
    // recomputation): prefix[i] = Σ weight of entries[0, i) for i ≤ valid.
    mutable std::vector<int64_t> prefix = {0};
    mutable size_t valid = 0;

    // Entry `at` was inserted, erased or re-weighted, changing the sum by `delta`.
    void Changed(size_t at, int64_t delta) {
      sum += delta;
      valid = std::min(valid, at);
    }
    // prefix[i], computing the stale part up to i first.
    int64_t Prefix(size_t i) const {
      for (; valid < i; ++valid) prefix[valid + 1] = prefix[valid] + entries[valid].weight;
      return prefix[i];
    }
  };

  // Advances over entries while in_range(key) holds and the Σ weight passed stays ≤ budget.
  // in_range must hold for a prefix of the order (true, then false from some key on).
  template <class InRange>
  int64_t AdvanceWhile(Cursor* c, InRange&& in_range, int64_t budget) const {
    int64_t passed = 0;
    while (!at_end(*c)) {
      const Block& blk = blocks_[c->block];
      const int64_t rest = blk.sum - blk.Prefix(c->pos);
      if (in_range(blk.entries.back().key) && rest <= budget - passed) {  // the whole rest of the block
        passed += rest;
        *c = Cursor{c->block + 1, 0};
        continue;
      }
      // Inside this block: the first entry out of range, then the budget's limit before it.
      const auto first = blk.entries.begin() + static_cast<ptrdiff_t>(c->pos);
      const size_t out = static_cast<size_t>(
          std::partition_point(first, blk.entries.end(), [&](const Entry& e) { return in_range(e.key); }) -
          blk.entries.begin());
      const int64_t base = blk.Prefix(c->pos), left = budget - passed;
      blk.Prefix(out);
      const size_t fit = static_cast<size_t>(
          std::upper_bound(blk.prefix.begin() + static_cast<ptrdiff_t>(c->pos) + 1,
                           blk.prefix.begin() + static_cast<ptrdiff_t>(out) + 1, left,
                           [&](int64_t l, int64_t p) { return l < p - base; }) -
          blk.prefix.begin()) - 1;
      passed += blk.prefix[fit] - blk.prefix[c->pos];
      c->pos = fit;
      if (c->pos == blk.entries.size()) *c = Cursor{c->block + 1, 0};
      break;
    }
    return passed;
  }

  // The first block whose last key is greater than `key` (blocks_.size() if none).
  size_t FirstBlockEndingAfter(const K& key) const {
    return static_cast<size_t>(
        std::partition_point(lasts_.begin(), lasts_.end(), [&](const K& last) { return !less_(key, last); }) - lasts_.begin());
  }
  // The block an insert of `key` goes to: the first whose last key is not less than it, else
  // the last (a lone block just created holds no entry: its lasts_ is the key itself).
  size_t BlockFor(const K& key) const {
    return std::min(FirstBlockNotBefore(key), blocks_.size() - 1);
  }
  // The first block whose last key is not less than `key` (blocks_.size() if none).
  size_t FirstBlockNotBefore(const K& key) const {
    return static_cast<size_t>(
        std::partition_point(lasts_.begin(), lasts_.end(), [&](const K& last) { return less_(last, key); }) - lasts_.begin());
  }
  size_t LowerIn(const Block& blk, const K& key) const {
    return static_cast<size_t>(
        std::lower_bound(blk.entries.begin(), blk.entries.end(), key,
                         [&](const Entry& x, const K& k) { return less_(x.key, k); }) -
        blk.entries.begin());
  }
  Cursor Find(const K& key) const {
    const size_t b = FirstBlockNotBefore(key);
    if (b == blocks_.size()) return Cursor{b, 0};
    const size_t p = LowerIn(blocks_[b], key);
    const auto& e = blocks_[b].entries;
    if (p == e.size() || less_(key, e[p].key)) return Cursor{blocks_.size(), 0};
    return Cursor{b, p};
  }
  // Joins block b, fallen below kBlock / 2 entries, with a neighbour (split again if that
  // makes it too large), so every block of a multi-block order holds at least kBlock / 2
  // entries: the walks pass at most 2n / kBlock + 1 blocks however the order was built.
  // A lone block may hold any number of entries (none: removed).
  void Merge(size_t b) {
    if (blocks_.size() == 1) {
      if (blocks_[0].entries.empty()) {
        blocks_.clear();
        lasts_.clear();
      }
      return;
    }
    const size_t left = b > 0 ? b - 1 : 0;  // join blocks left and left + 1
    Block& l = blocks_[left];
    const Block& r = blocks_[left + 1];
    l.entries.insert(l.entries.end(), r.entries.begin(), r.entries.end());
    l.prefix.resize(l.entries.size() + 1);
    l.sum += r.sum;
    lasts_[left] = l.entries.back().key;
    blocks_.erase(blocks_.begin() + static_cast<ptrdiff_t>(left) + 1);
    lasts_.erase(lasts_.begin() + static_cast<ptrdiff_t>(left) + 1);
    if (l.entries.size() > 2 * kBlock) Split(left);
  }
  void Split(size_t b) {
    Block right;
    Block& left = blocks_[b];
    right.entries.assign(left.entries.begin() + static_cast<ptrdiff_t>(kBlock), left.entries.end());
    left.entries.resize(kBlock);
    left.prefix.resize(kBlock + 1);
    left.valid = std::min(left.valid, kBlock);
    right.prefix.assign(right.entries.size() + 1, 0);
    for (const Entry& e : right.entries) right.sum += e.weight;
    left.sum -= right.sum;
    lasts_[b] = left.entries.back().key;
    lasts_.insert(lasts_.begin() + static_cast<ptrdiff_t>(b) + 1, right.entries.back().key);
    blocks_.insert(blocks_.begin() + static_cast<ptrdiff_t>(b) + 1, std::move(right));
  }

  std::vector<Block> blocks_;
  std::vector<K> lasts_;  // lasts_[b]: the last key of blocks_[b] (the block searches read only this)
  size_t size_ = 0;
  int64_t total_ = 0;
  [[no_unique_address]] Less less_;
};

}  // namespace orrery
