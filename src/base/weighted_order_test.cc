#include "base/weighted_order.h"

#include <gtest/gtest.h>

#include <iterator>
#include <map>
#include <vector>

#include "base/rng.h"

namespace orrery {
namespace {

using Order = WeightedOrder<int>;

// The brute-force reference: the same entries in a std::map, walked one by one.
struct Reference {
  std::map<int, int64_t> m;
  // Entries of keys > k.
  int64_t SumAfter(int k) const {
    int64_t s = 0;
    for (auto it = m.upper_bound(k); it != m.end(); ++it) s += it->second;
    return s;
  }
  // Keys kept by "keep each entry in order while its weight fits what is left, stop at the
  // first that does not" from key `from` (inclusive), below `bound` (or all).
  std::vector<int> Fitting(int from, const int* bound, int64_t budget) const {
    std::vector<int> kept;
    for (auto it = m.lower_bound(from); it != m.end() && (!bound || it->first < *bound); ++it) {
      if (it->second > budget) break;
      budget -= it->second;
      kept.push_back(it->first);
    }
    return kept;
  }
};

// Keys visited from `c` to the end.
std::vector<int> KeysFrom(const Order& o, Order::Cursor c) {
  std::vector<int> keys;
  for (; !o.at_end(c); o.Next(&c)) keys.push_back(o.at(c).key);
  return keys;
}

TEST(WeightedOrderTest, HandExample) {
  Order o;
  for (int k : {50, 10, 30, 20, 40}) o.Insert(k, k / 10);  // weights 1..5 by key order
  EXPECT_EQ(o.size(), 5u);
  EXPECT_EQ(o.total(), 15);
  EXPECT_EQ(o.last(), 50);
  EXPECT_EQ(KeysFrom(o, o.begin()), (std::vector<int>{10, 20, 30, 40, 50}));
  EXPECT_EQ(o.SumAfter(25), 3 + 4 + 5);
  EXPECT_EQ(o.SumAfter(50), 0);
  EXPECT_EQ(o.SumAfter(0), 15);
  // Budget 6 from the start: 1 + 2 + 3 = 6 fits, 4 does not.
  Order::Cursor c = o.begin();
  EXPECT_EQ(o.SkipFitting(&c, nullptr, 6), 6);
  EXPECT_EQ(o.at(c).key, 40);
  // A bound stops before key 40 whatever the budget: nothing left below it here.
  const int bound = 40;
  EXPECT_EQ(o.SkipFitting(&c, &bound, 100), 0);
  EXPECT_EQ(o.at(c).key, 40);
  EXPECT_EQ(o.AdvanceNotAfter(&c, 45), 4);
  EXPECT_EQ(o.at(c).key, 50);
  EXPECT_TRUE(o.SetWeight(50, 9));
  EXPECT_EQ(o.total(), 19);
  EXPECT_FALSE(o.SetWeight(55, 1));
  EXPECT_TRUE(o.Erase(30));
  EXPECT_FALSE(o.Erase(30));
  EXPECT_EQ(o.SumAfter(25), 4 + 9);
}

// Random inserts, erases and weight changes (enough entries for many blocks and splits),
// every 20th followed by random queries compared with the brute-force walk.
TEST(WeightedOrderTest, MatchesBruteForceWalk) {
  Rng rng(7, "weighted-order-test");
  Order o;
  Reference ref;
  for (int step = 0; step < 20000; ++step) {
    const int key = static_cast<int>(rng.Below(3000));
    const int64_t w = static_cast<int64_t>(rng.Below(4) == 0 ? 0 : rng.Below(9));
    const uint64_t op = rng.Below(10);
    if (op < 5 && !ref.m.count(key)) {
      o.Insert(key, w);
      ref.m[key] = w;
    } else if (op < 8) {
      EXPECT_EQ(o.Erase(key), ref.m.erase(key) == 1);
    } else {
      EXPECT_EQ(o.SetWeight(key, w), ref.m.count(key) == 1);
      if (ref.m.count(key)) ref.m[key] = w;
    }
    ASSERT_EQ(o.size(), ref.m.size());
    if (step % 20 != 0) continue;
    int64_t total = 0;
    for (const auto& [k, v] : ref.m) total += v;
    ASSERT_EQ(o.total(), total);
    const int probe = static_cast<int>(rng.Below(3100)) - 50;
    ASSERT_EQ(o.SumAfter(probe), ref.SumAfter(probe)) << "probe " << probe;
    // SkipFitting from the first key after `probe`, with and without a bound.
    const int64_t budget = static_cast<int64_t>(rng.Below(400));
    const int bound = probe + static_cast<int>(rng.Below(600));
    for (const int* b : {static_cast<const int*>(nullptr), &bound}) {
      Order::Cursor c = o.UpperBound(probe);
      const std::vector<int> want = ref.Fitting(probe + 1, b, budget);
      int64_t want_sum = 0;
      for (int k : want) want_sum += ref.m[k];
      ASSERT_EQ(o.SkipFitting(&c, b, budget), want_sum);
      auto next = ref.m.upper_bound(want.empty() ? probe : want.back());
      if (next == ref.m.end()) {
        ASSERT_TRUE(o.at_end(c));
      } else {
        ASSERT_FALSE(o.at_end(c));
        ASSERT_EQ(o.at(c).key, next->first);
      }
    }
    // AdvanceNotAfter from the start: Σ of keys ≤ probe, cursor on the first key > probe.
    Order::Cursor c = o.begin();
    ASSERT_EQ(o.AdvanceNotAfter(&c, probe), total - ref.SumAfter(probe));
    ASSERT_EQ(KeysFrom(o, c).size(), static_cast<size_t>(std::distance(ref.m.upper_bound(probe), ref.m.end())));
    // ... then on from there (mid-block, as Tiresias' phase 1 advances): Σ of keys in (probe, later].
    const int later = probe + static_cast<int>(rng.Below(300));
    ASSERT_EQ(o.AdvanceNotAfter(&c, later), ref.SumAfter(probe) - ref.SumAfter(later)) << "later " << later;
    ASSERT_EQ(KeysFrom(o, c).size(), static_cast<size_t>(std::distance(ref.m.upper_bound(later), ref.m.end())));
  }
}

// The walk Tiresias' decisions make (TiresiasResched::ConsumeRunning): up to a bound, keep
// each entry whose weight fits the budget left, else "preempt" it and go on. SkipFitting plus
// one step per preempted entry must preempt exactly the entries the one-by-one walk does.
TEST(WeightedOrderTest, GreedyWalkPreemptsWhatTheLinearWalkDoes) {
  Rng rng(11, "weighted-order-greedy");
  for (int round = 0; round < 300; ++round) {
    Order o;
    std::map<int, int64_t> m;
    const int n = static_cast<int>(rng.Below(600));
    for (int i = 0; i < n; ++i) {
      const int key = static_cast<int>(rng.Below(5000));
      const int64_t w = rng.Below(5) == 0 ? 0 : static_cast<int64_t>(1000 * (1 + rng.Below(8)));
      if (m.emplace(key, w).second) o.Insert(key, w);
    }
    int64_t total = 0;
    for (const auto& [k, w] : m) total += w;
    const int64_t budget0 = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(total) + 2));
    const int bound = static_cast<int>(rng.Below(5200));
    for (const int* b : {static_cast<const int*>(nullptr), &bound}) {
      std::vector<int> want;
      int64_t left = budget0;
      for (const auto& [k, w] : m) {
        if (b && !(k < *b)) break;
        if (w <= left) left -= w;
        else want.push_back(k);
      }
      std::vector<int> got;
      int64_t budget = budget0;
      Order::Cursor c = o.begin();
      auto before_bound = [&] { return !o.at_end(c) && (!b || o.at(c).key < *b); };
      while (before_bound()) {
        budget -= o.SkipFitting(&c, b, budget);
        if (!before_bound()) break;
        got.push_back(o.at(c).key);
        o.Next(&c);
      }
      ASSERT_EQ(got, want) << "round " << round;
      ASSERT_EQ(budget, left) << "round " << round;
    }
  }
}

// Erasing most entries in random order keeps every block at least half full (blocks are
// joined), so the walks pass at most 2n / kBlock + 1 blocks; the order, its sums and the walk
// stay those of the brute-force reference throughout.
TEST(WeightedOrderTest, ErasesJoinBlocks) {
  Rng rng(5, "weighted-order-erase");
  Order o;
  Reference ref;
  std::vector<int> keys;
  for (int k = 0; k < 6000; ++k) {
    const int64_t w = static_cast<int64_t>(rng.Below(9));
    o.Insert(k, w);
    ref.m[k] = w;
    keys.push_back(k);
  }
  // 6,000 increasing inserts split at 2 × 64 + 1 entries into blocks of 64: about 93 blocks.
  EXPECT_GE(o.block_count(), 6000 / (Order::kBlock + 1));
  for (size_t i = keys.size(); i > 1; --i) std::swap(keys[i - 1], keys[rng.Below(i)]);
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_TRUE(o.Erase(keys[i]));
    ref.m.erase(keys[i]);
    ASSERT_LE(o.block_count(), 2 * o.size() / Order::kBlock + 1) << "after " << i + 1 << " erases";
    if (i % 97 != 0) continue;
    const int probe = static_cast<int>(rng.Below(6000));
    ASSERT_EQ(o.SumAfter(probe), ref.SumAfter(probe));
    const std::vector<int> want = ref.Fitting(0, nullptr, 40);
    int64_t want_sum = 0;
    for (int k : want) want_sum += ref.m[k];
    Order::Cursor c = o.begin();
    ASSERT_EQ(o.SkipFitting(&c, nullptr, 40), want_sum);
    ASSERT_EQ(KeysFrom(o, o.begin()).size(), ref.m.size());
  }
  EXPECT_TRUE(o.empty());
  EXPECT_EQ(o.block_count(), 0u);
  EXPECT_TRUE(o.at_end(o.begin()));
}

}  // namespace
}  // namespace orrery
