// Plan search time on Sailor's largest heterogeneous case: GPT-Neo-2.7 on 128 A100-40 + 384
// V100-16 (Sailor: 17.4 s), and its smaller ones (32+96: 1.6 s, 80+240: 7.67 s).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>

#include "plan/search.h"

namespace orrery::plan {
namespace {

void BM_SailorSearch(benchmark::State& state) {
  const std::string dir = std::string(ORRERY_SHARED_DIR) + "/sailor-profiles";
  if (!std::filesystem::exists(dir)) {
    state.SkipWithError("no ../shared/sailor-profiles");
    return;
  }
  SailorModel m = *LoadSailorModel(dir, "GPT-Neo-2.7");
  SailorGpu a = *LoadSailorGpu(dir, "GPT-Neo-2.7", "A100-40"), v = *LoadSailorGpu(dir, "GPT-Neo-2.7", "V100-16");
  SearchRequest r;
  r.model = &m;
  r.global_batch = m.global_batch;
  r.pool = {{&a, static_cast<int>(state.range(0)), ""}, {&v, static_cast<int>(state.range(1)), ""}};
  int64_t evaluated = 0;
  for (auto _ : state) {
    Result<SearchResult> res = SearchPlans(r);
    evaluated = res.ok() ? res->evaluated : 0;
    benchmark::DoNotOptimize(evaluated);
  }
  state.counters["plans"] = static_cast<double>(evaluated);
}
BENCHMARK(BM_SailorSearch)->Args({32, 96})->Args({80, 240})->Args({128, 384})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace orrery::plan

#include "plan/estimate.h"
#include "plan/registry.h"

namespace orrery::plan {
namespace {

// One op-level step estimate (what a planner-aware progress model would call per allocation).
void BM_EstimateStep(benchmark::State& state) {
  ProfilePaths paths{std::string(ORRERY_SHARED_DIR) + "/../wt-none", ORRERY_SHARED_DIR};
  Result<GpuProfile> gpu = ResolveGpu("H200-shared", paths);
  if (!gpu.ok()) {
    state.SkipWithError("no ../shared/gpu-h200/micro");
    return;
  }
  Workload w{*ParseModelSpec("6.7B"), 4096, 1};
  ParallelPlan p = *ParseStrategy("dp=8,tp=2,pp=4,zero=1,micro=16", 64);
  for (auto _ : state) {
    Result<StepEstimate> e = EstimateStep(w, p, *gpu, 8);
    benchmark::DoNotOptimize(e.ok() ? e->time.step_s : 0.0);
  }
}
BENCHMARK(BM_EstimateStep)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace orrery::plan
