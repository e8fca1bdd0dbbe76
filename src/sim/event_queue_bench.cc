#include "sim/event_queue.h"

#include <benchmark/benchmark.h>

#include <cmath>

#include "base/rng.h"

namespace orrery {
namespace {

// Steady state of a simulation: `n` pending events; each iteration pops the earliest
// and pushes one later event (hold model).
void BM_EventQueueHold(benchmark::State& state) {
  const int64_t n = state.range(0);
  EventQueue<uint32_t> q;
  Rng rng(1, "bench");
  for (int64_t i = 0; i < n; ++i) q.Push(static_cast<Time>(rng.Below(1000000)), static_cast<uint32_t>(i));
  for (auto _ : state) {
    auto e = q.Pop();
    q.Push(e.t + 1 + static_cast<Time>(rng.Below(100000)), e.payload);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EventQueueHold)->Arg(10000)->Arg(100000)->Arg(1000000);

// Completions of running jobs, as the simulator sees them: `n` running; each iteration asks
// for the earliest twice (the loop's Top), pops it and starts a job at its time whose
// duration is log-uniform between 10 s and 10^6 s (jobs' durations span five decades).
void BM_EventQueueJobs(benchmark::State& state) {
  const int64_t n = state.range(0);
  EventQueue<uint32_t> q;
  Rng rng(2, "bench-jobs");
  const double lo = std::log(10.0), hi = std::log(1e6);
  auto duration = [&] { return static_cast<Time>(std::exp(lo + rng.Uniform() * (hi - lo))); };
  for (int64_t i = 0; i < n; ++i) q.Push(duration(), static_cast<uint32_t>(i));
  Time sum = 0;
  for (auto _ : state) {
    sum += q.Top().t;
    sum += q.Top().payload;
    const auto e = q.Pop();
    q.Push(e.t + duration(), e.payload);
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EventQueueJobs)->Arg(300)->Arg(3000)->Arg(30000);

}  // namespace
}  // namespace orrery
