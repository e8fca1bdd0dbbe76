#include "sim/event_queue.h"

#include <benchmark/benchmark.h>

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

}  // namespace
}  // namespace orrery
