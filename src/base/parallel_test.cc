#include "base/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace orrery {
namespace {

using RunFn = std::function<std::string(size_t)>;
using ConsumeFn = std::function<bool(size_t, std::string&)>;

TEST(RunOrderedTest, ConsumesInIndexOrderWhenTheFirstTaskFinishesLast) {
  // Task 0 waits until tasks 1 and 2 have finished, so with 3 threads the results arrive
  // in the order 1, 2, 0 (or 2, 1, 0); the consumer must still see 0, 1, 2, 3, 4.
  std::mutex mu;
  std::condition_variable cv;
  int finished_others = 0;
  RunFn run = [&](size_t i) {
    if (i == 0) {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return finished_others >= 2; });
    } else if (i <= 2) {
      std::lock_guard<std::mutex> lock(mu);
      ++finished_others;
      cv.notify_all();
    }
    return std::to_string(100 + i);
  };
  std::vector<std::string> seen;
  const std::thread::id caller = std::this_thread::get_id();
  bool on_caller = true;
  ConsumeFn consume = [&](size_t i, std::string& r) {
    on_caller = on_caller && std::this_thread::get_id() == caller;
    seen.push_back(std::to_string(i) + "=" + r);
    return true;
  };
  EXPECT_TRUE(RunOrdered<std::string>(5, 3, run, consume));
  EXPECT_EQ(seen, (std::vector<std::string>{"0=100", "1=101", "2=102", "3=103", "4=104"}));
  EXPECT_TRUE(on_caller);
}

TEST(RunOrderedTest, OneThreadRunsEverythingOnTheCaller) {
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<size_t> order;  // run and consume interleave: r0 c0 r1 c1
  RunFn run = [&](size_t i) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    order.push_back(10 + i);
    return std::string();
  };
  ConsumeFn consume = [&](size_t i, std::string&) {
    order.push_back(20 + i);
    return true;
  };
  EXPECT_TRUE(RunOrdered<std::string>(2, 1, run, consume));
  EXPECT_EQ(order, (std::vector<size_t>{10, 20, 11, 21}));
}

TEST(RunOrderedTest, AFailedConsumerStopsTasksNotYetStarted) {
  // window 2 with 2 threads: when result 1 is refused, at most tasks 0..2 can have started
  // (task 2 may start once result 0 is consumed); 3..9 never run.
  std::atomic<int> runs{0};
  RunFn run = [&](size_t) {
    ++runs;
    return std::string();
  };
  std::vector<size_t> consumed;
  ConsumeFn consume = [&](size_t i, std::string&) {
    consumed.push_back(i);
    return i != 1;
  };
  EXPECT_FALSE(RunOrdered<std::string>(10, 2, run, consume, 2));
  EXPECT_EQ(consumed, (std::vector<size_t>{0, 1}));
  EXPECT_LE(runs.load(), 3);
  EXPECT_GE(runs.load(), 2);
}

TEST(RunOrderedTest, NoMoreThanWindowResultsExistAtOnce) {
  std::atomic<int> live{0}, peak{0};
  RunFn run = [&](size_t) {
    const int now = ++live;
    int p = peak.load();
    while (now > p && !peak.compare_exchange_weak(p, now)) {
    }
    std::this_thread::yield();
    return std::string();
  };
  ConsumeFn consume = [&](size_t, std::string&) {
    --live;
    return true;
  };
  EXPECT_TRUE(RunOrdered<std::string>(50, 3, run, consume, 3));
  EXPECT_LE(peak.load(), 3);
  EXPECT_EQ(live.load(), 0);
}

TEST(RunOrderedTest, AvailableCpusIsPositive) { EXPECT_GE(AvailableCpus(), 1u); }

}  // namespace
}  // namespace orrery
