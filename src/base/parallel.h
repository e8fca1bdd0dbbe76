// Independent tasks on a few threads, results consumed in task order.
//
// RunOrdered(n, threads, run, consume) calls run(i) for i in [0, n) on up to `threads`
// worker threads and consume(i, result) on the calling thread, strictly in index order,
// as soon as result i is ready. Everything a consumer does (writing files, printing,
// appending to a table) therefore happens in the same order as a sequential loop, so
// outputs are byte-identical whatever the thread count. consume returning false stops the
// run: tasks not yet started are skipped, running ones finish, and RunOrdered returns
// false. At most `window` results (running or waiting to be consumed) exist at once, which
// bounds memory when results are large (default: twice the thread count).
// threads <= 1 runs everything on the calling thread (no thread is created).
#pragma once

#include <sched.h>

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace orrery {

// CPUs this process may run on (its affinity mask), at least 1.
inline unsigned AvailableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

template <class R>
bool RunOrdered(size_t n, unsigned threads, const std::function<R(size_t)>& run,
                const std::function<bool(size_t, R&)>& consume, size_t window = 0) {
  if (threads <= 1 || n <= 1) {
    for (size_t i = 0; i < n; ++i) {
      R r = run(i);
      if (!consume(i, r)) return false;
    }
    return true;
  }
  threads = static_cast<unsigned>(std::min<size_t>(threads, n));
  if (window == 0) window = 2 * static_cast<size_t>(threads);
  window = std::max<size_t>(window, threads);
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::optional<R>> done(n);
  size_t next = 0, consumed = 0;
  bool stop = false;
  auto worker = [&] {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      cv.wait(lock, [&] { return stop || next >= n || next < consumed + window; });
      if (stop || next >= n) return;
      const size_t i = next++;
      lock.unlock();
      R r = run(i);
      lock.lock();
      done[i].emplace(std::move(r));
      cv.notify_all();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
  bool ok = true;
  for (size_t i = 0; i < n && ok; ++i) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return done[i].has_value(); });
    lock.unlock();
    ok = consume(i, *done[i]);  // only this thread touches done[i] from here on
    lock.lock();
    done[i].reset();
    ++consumed;
    if (!ok) stop = true;
    cv.notify_all();
  }
  for (std::thread& t : pool) t.join();
  return ok;
}

}  // namespace orrery
