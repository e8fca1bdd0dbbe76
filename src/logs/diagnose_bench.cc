// Diagnosis throughput (bytes of log per second, one core): compression (Drain) + rules.
// Target: >= 50 MB/s. Recorded in docs/benchmarks.md.
#include <benchmark/benchmark.h>

#include "logs/bench_log.h"
#include "logs/diagnose.h"

namespace orrery::logs {
namespace {

void BM_Diagnose(benchmark::State& state) {
  const std::string log = SyntheticTrainingLog(static_cast<size_t>(state.range(0)) << 20, true);
  Diagnoser d;
  for (auto _ : state) {
    Diagnosis r = d.Diagnose(log);
    if (r.subtype != "cuda_oom") state.SkipWithError("wrong diagnosis");
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(log.size()));
}
BENCHMARK(BM_Diagnose)->Arg(16)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace orrery::logs
