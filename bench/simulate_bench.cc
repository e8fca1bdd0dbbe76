// End-to-end simulator benchmarks (docs/benchmarks.md, "Simulation"):
//   * generated `scale` workloads (100k / 1M / 10M jobs) on 1,024 nodes × 8 GPUs under
//     FIFO+consolidate, EASY backfill, SRTF and Tiresias (original, Lucid preset): jobs/s and
//     resident bytes per job;
//   * the Helios reference input (Philly part A, 52,841 jobs) in Helios-compatible mode
//     and with the event-driven scheduler;
//   * a 1M-job run including import of its canonical trace.
// Run: build/orrery_e2e_bench --benchmark_filter=... (10M cases are opt-in: --benchmark_filter=10M).
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "config/cluster_config.h"
#include "sim/helios_compat.h"
#include "sim/simulator.h"
#include "trace/canonical.h"
#include "trace/import.h"
#include "workload/generator.h"
#include "workload/spec.h"

namespace orrery {
namespace {

constexpr const char* kScaleCluster = R"(name = "scale-1024x8"
single_pool = true
[[node_group]]
count = 1024
gpus = 8
)";

const Cluster& ScaleCluster() {
  static Cluster* c = [] {
    auto r = ParseClusterConfigString(kScaleCluster, "scale-1024x8");
    if (!r.ok()) std::abort();
    return new Cluster(std::move(*r));
  }();
  return *c;
}

// Current resident set size in bytes (from /proc/self/statm).
long ResidentBytes() {
  std::ifstream f("/proc/self/statm");
  long pages = 0, resident = 0;
  f >> pages >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

const Trace& ScaleTrace(uint64_t jobs) {
  static std::map<uint64_t, std::unique_ptr<Trace>> cache;
  auto& t = cache[jobs];
  if (!t) {
    auto spec = workload::GetPreset("scale");
    if (!spec.ok()) std::abort();
    spec->jobs = jobs;
    t = std::make_unique<Trace>(workload::GenerateWorkload(*spec, 1));
  }
  return *t;
}

void BM_Simulate(benchmark::State& state, const char* policy, uint64_t jobs) {
  const Trace& trace = ScaleTrace(jobs);
  SimConfig cfg;
  cfg.policy = policy;
  cfg.sample_interval = 60;
  cfg.explain = false;  // per-job packing explanations are an output, not simulation work
  long before = ResidentBytes();
  long peak_delta = 0;
  for (auto _ : state) {
    auto r = Simulate(trace, ScaleCluster(), cfg);
    if (!r.ok()) {
      state.SkipWithError(r.error().message.c_str());
      return;
    }
    peak_delta = std::max(peak_delta, ResidentBytes() - before);
    benchmark::DoNotOptimize(r->outcomes.data());
  }
  state.counters["jobs_per_s"] = benchmark::Counter(static_cast<double>(jobs) * state.iterations(), benchmark::Counter::kIsRate);
  // Resident bytes per job: the trace (Job records) + what the run holds at its end.
  state.counters["trace_bytes_per_job"] = static_cast<double>(sizeof(Job));
  state.counters["run_bytes_per_job"] = static_cast<double>(peak_delta) / static_cast<double>(jobs);
}

#define SCALE_BENCH(policy, tag, n)                                                     \
  BENCHMARK_CAPTURE(BM_Simulate, policy##_##tag, #policy, n)->Unit(benchmark::kMillisecond) \
      ->Iterations(1)->UseRealTime()

SCALE_BENCH(fifo, 100k, 100000);
SCALE_BENCH(fifo, 1M, 1000000);
SCALE_BENCH(fifo, 10M, 10000000);
SCALE_BENCH(easy, 100k, 100000);
SCALE_BENCH(easy, 1M, 1000000);
SCALE_BENCH(easy, 10M, 10000000);
SCALE_BENCH(srtf, 100k, 100000);
SCALE_BENCH(srtf, 1M, 1000000);
SCALE_BENCH(srtf, 10M, 10000000);
SCALE_BENCH(tiresias, 100k, 100000);
SCALE_BENCH(tiresias, 1M, 1000000);
BENCHMARK_CAPTURE(BM_Simulate, tiresias_lucid_100k, "tiresias:preset=lucid", 100000)
    ->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();
BENCHMARK_CAPTURE(BM_Simulate, tiresias_lucid_1M, "tiresias:preset=lucid", 1000000)
    ->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();
// Lucid (packing with the interference model, PAS, profiler; user-stats priorities: the
// xgboost default retrains weekly on up to 200k rows, which would dominate). Needs the
// co-location table (shared data); skipped with an error when it is absent.
BENCHMARK_CAPTURE(BM_Simulate, lucid_100k, "lucid:estimator=user-stats", 100000)
    ->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();
BENCHMARK_CAPTURE(BM_Simulate, lucid_1M, "lucid:estimator=user-stats", 1000000)
    ->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();
BENCHMARK_CAPTURE(BM_Simulate, lucid_nopack_1M, "lucid:estimator=user-stats,pack=false", 1000000)
    ->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

// ---- the reference-runs input: Philly part A as in the Helios artifact
const std::string kShared = ORRERY_SHARED_DIR;

struct PhillyInput {
  Trace trace;
  Cluster cluster;
  bool ok = false;
};

const PhillyInput& Philly() {
  static PhillyInput* in = [] {
    auto* p = new PhillyInput();
    auto t = LoadTrace(kShared + "/traces/philly-pollux/philly.part-A.submit-before-2017-11-01.csv", TraceFormat::kPhilly);
    std::string cfg = std::string(ORRERY_SOURCE_DIR) + "/configs/philly.toml";
    auto c = LoadClusterConfig(cfg);
    if (t.ok() && c.ok()) {
      p->trace = std::move(*t);
      p->cluster = std::move(*c);
      p->ok = true;
    }
    return p;
  }();
  return *in;
}

void BM_PhillyReference(benchmark::State& state, bool compat) {
  const PhillyInput& in = Philly();
  if (!in.ok) {
    state.SkipWithError("../shared traces or configs/philly.toml not found");
    return;
  }
  SimConfig cfg;
  cfg.policy = "fifo";
  for (auto _ : state) {
    auto r = compat ? SimulateHeliosCompat(in.trace, in.cluster, cfg) : Simulate(in.trace, in.cluster, cfg);
    benchmark::DoNotOptimize(r.ok());
  }
  state.counters["jobs_per_s"] =
      benchmark::Counter(static_cast<double>(in.trace.jobs.size()) * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK_CAPTURE(BM_PhillyReference, helios_compat_fifo, true)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PhillyReference, event_driven_fifo, false)->Unit(benchmark::kMillisecond);

// ---- 1M jobs including import of the canonical trace
void BM_ImportAndSimulate1M(benchmark::State& state) {
  std::string path = std::filesystem::temp_directory_path() / ("orrery_bench_1m_" + std::to_string(getpid()) + ".csv");
  if (!WriteCanonicalTrace(ScaleTrace(1000000), path).ok()) {
    state.SkipWithError("cannot write the canonical trace");
    return;
  }
  SimConfig cfg;
  cfg.policy = "fifo";
  for (auto _ : state) {
    auto t = LoadTrace(path, TraceFormat::kCanonical);
    if (!t.ok()) {
      state.SkipWithError(t.error().message.c_str());
      break;
    }
    auto r = Simulate(*t, ScaleCluster(), cfg);
    benchmark::DoNotOptimize(r.ok());
  }
  std::filesystem::remove(path);
  state.counters["jobs_per_s"] = benchmark::Counter(1e6 * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ImportAndSimulate1M)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

}  // namespace
}  // namespace orrery
