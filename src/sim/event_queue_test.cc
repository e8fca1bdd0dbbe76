#include "sim/event_queue.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "base/rng.h"
#include "sim/sim_queue.h"

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

// The queue beside an ordered set of (time, rank, push number), the reference: pushes go to
// both; each pop must give the set's first element, and Top must name it first.
struct Mirrored {
  EventQueue<uint32_t> q;
  std::set<std::tuple<Time, uint8_t, uint32_t>> ref;
  uint32_t pushed = 0;
  Time now = 0;  // the last pop's time: no push goes before it

  void Push(Time t, uint8_t rank) {
    q.Push(t, rank, pushed);
    ref.insert({t, rank, pushed++});
  }
  ::testing::AssertionResult PopMatches() {
    const auto [t, rank, id] = *ref.begin();
    ref.erase(ref.begin());
    if (q.Top().payload != id) return ::testing::AssertionFailure() << "Top gave " << q.Top().payload << ", want " << id;
    const auto e = q.Pop();
    if (e.t != t || EventQueue<uint32_t>::RankOf(e) != rank || e.payload != id || q.size() != ref.size())
      return ::testing::AssertionFailure() << "popped (" << e.t << ", " << int{EventQueue<uint32_t>::RankOf(e)} << ", "
                                           << e.payload << "), want (" << t << ", " << int{rank} << ", " << id << ")";
    now = e.t;
    return ::testing::AssertionSuccess();
  }
};

// 200,000 random pushes and pops (many equal times and ranks) against the ordered set.
TEST(EventQueueTest, RandomOperationsPopLikeAnOrderedSet) {
  Mirrored m;
  Rng rng(3, "event-queue-test");
  for (int step = 0; step < 200000; ++step) {
    if (m.ref.empty() || rng.Below(100) < 55) {
      m.Push(m.now + static_cast<Time>(rng.Below(50)), static_cast<uint8_t>(rng.Below(4)));
    } else {
      ASSERT_TRUE(m.PopMatches()) << "step " << step;
    }
  }
  EXPECT_EQ(m.q.size(), m.ref.size());
}

// RemoveIf between pops (every third push number removed, at 50 points of a random run)
// leaves the others popping exactly as the ordered set of what is left.
TEST(EventQueueTest, RemoveIfKeepsThePopOrderOfTheRest) {
  Mirrored m;
  Rng rng(5, "event-queue-remove-test");
  for (int step = 0; step < 100000; ++step) {
    if (step % 2000 == 1999) {
      m.q.RemoveIf([](const EventQueue<uint32_t>::Event& e) { return e.payload % 3 == 0; });
      std::erase_if(m.ref, [](const auto& r) { return std::get<2>(r) % 3 == 0; });
      ASSERT_EQ(m.q.size(), m.ref.size());
    } else if (m.ref.empty() || rng.Below(100) < 55) {
      m.Push(m.now + static_cast<Time>(rng.Below(50)), static_cast<uint8_t>(rng.Below(4)));
    } else {
      ASSERT_TRUE(m.PopMatches()) << "step " << step;
    }
  }
}

// Times spread over the whole range (negative, seconds, days, 2^32 and 2^52 gaps), so events
// start in high buckets and move down through many: against the ordered set.
TEST(EventQueueTest, WideTimeSpreadsPopLikeAnOrderedSet) {
  Mirrored m;
  m.now = -(Time{1} << 40);
  Rng rng(7, "event-queue-wide-test");
  const Time spans[] = {1, 60, 86400, Time{1} << 32, Time{1} << 52};
  for (int step = 0; step < 100000; ++step) {
    if (m.ref.empty() || rng.Below(100) < 52) {
      const Time span = spans[rng.Below(5)];
      m.Push(m.now + static_cast<Time>(rng.Below(static_cast<uint64_t>(span))), static_cast<uint8_t>(rng.Below(3)));
    } else {
      ASSERT_TRUE(m.PopMatches()) << "step " << step;
    }
  }
  EXPECT_EQ(m.q.size(), m.ref.size());
}

// Simulated time never goes back: a push before the last pop's time is a bug of the caller.
TEST(EventQueueDeathTest, PushBeforeTheLastPopAborts) {
  EventQueue<int> q;
  q.Push(100, 0, 1);
  q.Push(200, 0, 2);
  EXPECT_EQ(q.Pop().payload, 1);
  q.Push(100, 0, 3);  // at the last pop's time: allowed, and next
  EXPECT_EQ(q.Top().payload, 3);
  EXPECT_DEATH(q.Push(99, 0, 4), "invariant violated: Key\\(t\\) >= last_");
}

// Hand example of SimQueue's void completions: slots 1 and 2 are preempted (generation 1
// → 2) before the sweep; their completions at 30 and 10 become bare instants, which pop at
// their times before the heap's events of the same time, and a timer of the same time after.
TEST(SimQueueTest, SweptVoidCompletionsPopAsInstantsAtTheirTimes) {
  SimQueue q;
  q.PushJob(10, EventKind::kCompletion, 0, 1);  // live
  q.PushJob(30, EventKind::kCompletion, 1, 1);  // void
  q.PushJob(10, EventKind::kCompletion, 2, 1);  // void
  q.PushJob(20, EventKind::kFailure, 2, 1);     // void too, but only completions are swept
  q.SetTimer(EventKind::kArrival, 30);
  const uint32_t gen[] = {1, 2, 2};
  q.SweepVoid([&](uint32_t slot, uint32_t g) { return gen[slot] != g; });
  // (t, kind, slot): 10 instant, 10 slot 0, 20 failure of slot 2, 30 instant, 30 arrival.
  const std::tuple<Time, EventKind, uint32_t> want[] = {
      {10, EventKind::kCompletion, SimQueue::kVoidSlot}, {10, EventKind::kCompletion, 0}, {20, EventKind::kFailure, 2},
      {30, EventKind::kCompletion, SimQueue::kVoidSlot}, {30, EventKind::kArrival, 0}};
  for (const auto& [t, kind, slot] : want) {
    ASSERT_FALSE(q.empty());
    const SimEvent e = q.Top();
    EXPECT_EQ(e.t, t);
    EXPECT_EQ(e.kind, kind);
    if (kind != EventKind::kArrival) {
      EXPECT_EQ(e.slot, slot);
    }
    q.Drop(e);
  }
  EXPECT_TRUE(q.empty());
}

}  // namespace
}  // namespace orrery
