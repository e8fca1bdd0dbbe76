// Placement over large VCs: one Place() call against a cluster whose nodes are
// partly busy, for each placer and job size (docs/benchmarks.md, "Simulation").
#include <benchmark/benchmark.h>

#include "base/rng.h"
#include "sched/framework/test_util.h"
#include "sched/plugins/placers.h"

namespace orrery {
namespace {

void BM_Place(benchmark::State& state, const char* placer) {
  const int nodes = static_cast<int>(state.range(0));
  const uint32_t gpus = static_cast<uint32_t>(state.range(1));
  Cluster c;
  testing::AddVc(&c, "a", nodes, 8);
  ClusterState st(c, false, false);
  Rng rng(1, "bench");
  // ~70 % busy, fragmented: each node gets 0..8 busy GPUs.
  for (int n = 0; n < nodes; ++n) {
    uint16_t busy = static_cast<uint16_t>(rng.Below(9) * 7 / 8 + (rng.Uniform() < 0.3 ? 1 : 0));
    if (busy > 8) busy = 8;
    if (busy) st.Apply({Slot{NodeId(static_cast<uint32_t>(n)), busy}});
  }
  Job job;
  job.gpus = gpus;
  SchedJob sj;
  sj.job = &job;
  sj.vc = VcId(0);
  auto p = MakePlacer(placer, 1);
  Allocation a;
  for (auto _ : state) {
    benchmark::DoNotOptimize((*p)->Place(sj, st, nullptr, &a).ok());
  }
  state.SetItemsProcessed(state.iterations());
}

#define PLACE_BENCH(name)                                                                    \
  BENCHMARK_CAPTURE(BM_Place, name, #name)->ArgsProduct({{1024, 10000}, {1, 4, 8, 32}})
PLACE_BENCH(consolidate);
BENCHMARK_CAPTURE(BM_Place, first_fit, "first-fit")->ArgsProduct({{1024, 10000}, {1, 4, 8, 32}});
PLACE_BENCH(spread);

}  // namespace
}  // namespace orrery
