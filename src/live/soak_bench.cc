// Soak: the daemon over the in-memory FakeSlurm for N cycles (1 s each) with job churn, and
// its resident memory (from /proc/self/statm) after warm-up and at the end. 32 nodes of 8
// GPUs; each cycle tops the live jobs (submitted, not yet ended) up to 300 with jobs of 1, 2,
// 4 or 8 GPUs sleeping 30..600 s; the fake forgets a job 300 s after it ends (Slurm's
// MinJobAge), so that memory measures the daemon. Every 10,000 cycles the resident size is
// sampled; the counters are the warm-up size (after 10,000 cycles), the size half-way, the
// end size, the largest sample, and the growth from warm-up to the end (docs/benchmarks.md
// states the bound).
//   build/orrery_live_bench --benchmark_filter=Soak
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>

#include "live/daemon.h"
#include "live/fake_slurm.h"
#include "live/journal.h"

namespace orrery::live {
namespace {

// Resident set size in bytes (statm's second field is in pages).
double ResidentBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long size = 0, resident = 0;
  const int n = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  return n == 2 ? static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) : 0;
}

constexpr int64_t kWarmupCycles = 10'000;
constexpr int64_t kSampleEvery = 10'000;
constexpr uint64_t kLiveJobs = 300;

void BM_Soak(benchmark::State& state) {
  const int64_t cycles = state.range(0);
  const std::string path =
      (std::filesystem::temp_directory_path() / ("orrery_soak_bench_" + std::to_string(getpid()) + ".db")).string();
  for (auto _ : state) {
    SimClock clock(1'000'000);
    FakeSlurm slurm(&clock);
    slurm.set_min_job_age(300);
    for (int i = 0; i < 32; ++i) slurm.AddNode("n" + std::to_string(i), 8, "gpu");
    std::filesystem::remove(path);
    auto journal = Journal::Open(path, /*synchronous_full=*/false);
    if (!journal.ok()) {
      state.SkipWithError(journal.error().message.c_str());
      return;
    }
    DaemonOptions opts;
    opts.partitions = {"gpu"};
    opts.policy = "easy";
    Daemon daemon(&slurm, journal->get(), &clock, opts);
    if (Status rec = daemon.Recover(); !rec.ok()) {
      state.SkipWithError(rec.error().message.c_str());
      return;
    }
    std::mt19937_64 rng(7);
    const uint32_t gpus[] = {1, 2, 4, 8};
    uint64_t submitted = 0;
    double warm = 0, mid = 0, peak = 0;
    for (int64_t c = 1; c <= cycles; ++c) {
      while (submitted - slurm.num_done() < kLiveJobs) {
        SubmitSpec s;
        s.partition = "gpu";
        s.gpus_per_node = gpus[rng() % 4];
        s.sleep_s = 30 + static_cast<Duration>(rng() % 571);
        s.duration_hint = s.sleep_s;
        if (auto id = slurm.Submit(s); !id.ok()) {
          state.SkipWithError(id.error().message.c_str());
          return;
        }
        ++submitted;
      }
      clock.Set(clock.Now() + 1);
      slurm.Advance();
      if (auto st = daemon.Cycle(); !st.ok()) {
        state.SkipWithError(st.error().message.c_str());
        return;
      }
      if (c % kSampleEvery == 0) {
        const double rss = ResidentBytes();
        if (c == kWarmupCycles) warm = rss;
        if (c == cycles / 2) mid = rss;
        if (c >= kWarmupCycles) peak = std::max(peak, rss);
      }
    }
    const double end = ResidentBytes();
    state.counters["cycles"] = static_cast<double>(cycles);
    state.counters["jobs_submitted"] = static_cast<double>(submitted);
    state.counters["jobs_done"] = static_cast<double>(slurm.num_done());
    state.counters["rss_warm_mib"] = warm / (1 << 20);
    state.counters["rss_end_mib"] = end / (1 << 20);
    state.counters["rss_mid_mib"] = mid / (1 << 20);
    state.counters["rss_peak_mib"] = peak / (1 << 20);
    state.counters["rss_growth_kib"] = (end - warm) / 1024;
  }
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
}

BENCHMARK(BM_Soak)->Arg(100'000)->Arg(300'000)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

}  // namespace
}  // namespace orrery::live
