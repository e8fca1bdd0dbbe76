#include "sim/event_queue.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "base/rng.h"

namespace orrery {
namespace {

// Hand example: time first, then rank, then push order within a rank.
TEST(EventQueueTest, PopsByTimeThenRankThenPushOrder) {
  EventQueue<int> q;
  q.Push(20, 0, 1);
  q.Push(10, 5, 2);
  q.Push(10, 1, 3);
  q.Push(10, 5, 4);
  q.Push(5, 9, 5);
  // (5, r9) → 5; at 10: rank 1 → 3, then rank 5 in push order → 2, 4; (20, r0) → 1.
  const int want[] = {5, 3, 2, 4, 1};
  for (int w : want) {
    ASSERT_FALSE(q.empty());
    EXPECT_EQ(q.Top().payload, w);
    EXPECT_EQ(q.Pop().payload, w);
  }
  EXPECT_TRUE(q.empty());
}

// 200,000 random pushes and pops (many equal times and ranks) against an ordered set of
// (time, rank, push number): the same event pops at every step.
TEST(EventQueueTest, RandomOperationsPopLikeAnOrderedSet) {
  EventQueue<uint32_t> q;
  std::set<std::tuple<Time, uint8_t, uint32_t>> ref;
  Rng rng(3, "event-queue-test");
  uint32_t pushed = 0;
  Time now = 0;
  for (int step = 0; step < 200000; ++step) {
    if (ref.empty() || rng.Below(100) < 55) {
      const Time t = now + static_cast<Time>(rng.Below(50));
      const uint8_t rank = static_cast<uint8_t>(rng.Below(4));
      q.Push(t, rank, pushed);
      ref.insert({t, rank, pushed});
      ++pushed;
    } else {
      const auto want = *ref.begin();
      ref.erase(ref.begin());
      ASSERT_EQ(q.size(), ref.size() + 1);
      const auto e = q.Pop();
      ASSERT_EQ(e.t, std::get<0>(want));
      ASSERT_EQ(EventQueue<uint32_t>::RankOf(e), std::get<1>(want));
      ASSERT_EQ(e.payload, std::get<2>(want)) << "step " << step;
      now = e.t;
    }
  }
  EXPECT_EQ(q.size(), ref.size());
}

}  // namespace
}  // namespace orrery
