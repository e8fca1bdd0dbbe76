// Tracker throughput (bytes of log per second, one core), fed in 64 KiB chunks as the live
// daemon tails a file. Target: >= 100 MB/s. Recorded in docs/benchmarks.md.
#include <benchmark/benchmark.h>

#include "logs/bench_log.h"
#include "logs/progress.h"

namespace orrery::logs {
namespace {

void BM_ProgressTracker(benchmark::State& state) {
  const std::string log = SyntheticTrainingLog(static_cast<size_t>(state.range(0)) << 20, false);
  for (auto _ : state) {
    ProgressTracker t;
    std::string_view v(log);
    for (size_t off = 0; off < v.size(); off += 65536) t.Feed(v.substr(off, 65536), static_cast<Time>(off >> 16));
    t.Finish(0);
    if (!t.latest().step) state.SkipWithError("no step");
    benchmark::DoNotOptimize(t.latest());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(log.size()));
}
BENCHMARK(BM_ProgressTracker)->Arg(16)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace orrery::logs
