// Generator throughput: jobs/s for the `scale` preset (1,024 nodes x 8 GPUs, ~0.9 load).
//   ninja -C build-gen orrery_workload_bench && build-gen/orrery_workload_bench
// 10M: `orrery generate --preset scale --jobs 10000000` (see docs/benchmarks.md).
#include <benchmark/benchmark.h>

#include "workload/generator.h"
#include "workload/spec.h"

namespace orrery::workload {
namespace {

void BM_GenerateScale(benchmark::State& state) {
  WorkloadSpec s = GetPreset("scale").value();
  s.jobs = static_cast<uint64_t>(state.range(0));
  for (auto _ : state) {
    Trace t = GenerateWorkload(s, 1);
    benchmark::DoNotOptimize(t.jobs.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_GenerateScale)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond);

// Streaming: no job vector at all (O(1) memory).
void BM_StreamScale(benchmark::State& state) {
  WorkloadSpec s = GetPreset("scale").value();
  s.jobs = static_cast<uint64_t>(state.range(0));
  for (auto _ : state) {
    WorkloadGenerator g(s, 1);
    Job j;
    uint64_t sum = 0;
    while (g.Next(&j)) sum += j.gpus;
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_StreamScale)->Arg(1000000)->Unit(benchmark::kMillisecond);

// Open loop with weekly long runs (the preset's defaults before the closed loop per node).
void BM_GenerateVenus(benchmark::State& state) {
  WorkloadSpec s = GetPreset("helios-venus").value();
  s.arrivals = ArrivalModel::kOpenLoop;
  s.long_runs = LongRunArrivals::kWeekly;
  for (auto _ : state) {
    Trace t = GenerateWorkload(s, 1);
    benchmark::DoNotOptimize(t.jobs.data());
    state.SetItemsProcessed(state.items_processed() + t.jobs.size());
  }
}
BENCHMARK(BM_GenerateVenus)->Unit(benchmark::kMillisecond);

// Closed-loop arrivals: each GPU job is checked against its VC's bookings for its duration.
void BM_GenerateVenusClosedLoop(benchmark::State& state) {
  WorkloadSpec s = GetPreset("helios-venus").value();
  s.arrivals = ArrivalModel::kClosedLoop;
  s.long_runs = LongRunArrivals::kWeekly;
  for (auto _ : state) {
    Trace t = GenerateWorkload(s, 1);
    benchmark::DoNotOptimize(t.jobs.data());
    state.SetItemsProcessed(state.items_processed() + t.jobs.size());
  }
}
BENCHMARK(BM_GenerateVenusClosedLoop)->Unit(benchmark::kMillisecond);

// The preset's defaults: closed loop per node (each GPU job checked against every node of its
// VC for its duration) and flat long runs.
void BM_GenerateVenusClosedLoopNodes(benchmark::State& state) {
  WorkloadSpec s = GetPreset("helios-venus").value();
  for (auto _ : state) {
    Trace t = GenerateWorkload(s, 1);
    benchmark::DoNotOptimize(t.jobs.data());
    state.SetItemsProcessed(state.items_processed() + t.jobs.size());
  }
}
BENCHMARK(BM_GenerateVenusClosedLoopNodes)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace orrery::workload
