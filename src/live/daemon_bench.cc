// Decision-cycle latency of the live daemon against the in-memory FakeSlurm (no exec, no
// Slurm): observe (delta job and node listings) -> reconcile -> policy cycle -> journal -> apply.
// Per benchmark: P pending jobs × N nodes of 8 GPUs; the cluster starts full of running
// jobs, each cycle advances time by 1 s (FakeSlurm completes jobs, the daemon starts
// others). Reports p50/p99 cycle latency and decisions per second of cycle time.
//   build/orrery_live_bench --benchmark_filter=Cycle
#include <benchmark/benchmark.h>

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <random>

#include "live/daemon.h"
#include "live/fake_slurm.h"
#include "live/journal.h"

namespace orrery::live {
namespace {

// full_jobs: FakeSlurm lists every job every cycle, as ExecSlurmClient did before it compared
// squeue rows (CycleFullJobs: the daemon then reconciles every job each cycle). resync: the
// daemon's [daemon] full_resync_cycles; the Cycle rows use 0 (deltas only), the
// CycleDefaultResync rows the default (DaemonOptions), so their p99 is over every cycle,
// resyncs included.
constexpr int kNoResync = 0;
constexpr int kDefaultResync = -1;
void BM_Cycle(benchmark::State& state, const char* policy, bool full_jobs = false, int resync = kNoResync) {
  const int64_t pending = state.range(0), nodes = state.range(1);
  SimClock clock(1'000'000);
  FakeSlurm slurm(&clock);
  slurm.set_full_job_listings(full_jobs);
  for (int64_t i = 0; i < nodes; ++i) slurm.AddNode("n" + std::to_string(i), 8, "gpu");
  std::mt19937_64 rng(1);
  const uint32_t gpus[] = {1, 1, 2, 4, 8};
  // Enough jobs to fill the cluster, then `pending` more.
  int64_t total = pending + nodes * 3;
  for (int64_t i = 0; i < total; ++i) {
    SubmitSpec s;
    s.partition = "gpu";
    s.gpus_per_node = gpus[rng() % 5];
    s.sleep_s = 60 + static_cast<Duration>(rng() % 3600);
    s.duration_hint = s.sleep_s;
    if (auto id = slurm.Submit(s); !id.ok()) {
      state.SkipWithError(id.error().message.c_str());
      return;
    }
  }
  std::string path = (std::filesystem::temp_directory_path() / ("orrery_cycle_bench_" + std::to_string(getpid()) + ".db")).string();
  std::filesystem::remove(path);
  auto journal = Journal::Open(path, /*synchronous_full=*/false);
  if (!journal.ok()) {
    state.SkipWithError(journal.error().message.c_str());
    return;
  }
  DaemonOptions opts;
  opts.partitions = {"gpu"};
  opts.policy = policy;
  if (resync != kDefaultResync) opts.full_resync_cycles = resync;
  Daemon daemon(&slurm, journal->get(), &clock, opts);
  if (Status rec = daemon.Recover(); !rec.ok()) {
    state.SkipWithError(rec.error().message.c_str());
    return;
  }
  // Warm-up: the first cycle lists everything and builds the snapshot; a few more fill the cluster.
  for (int i = 0; i < 3; ++i) {
    clock.Set(clock.Now() + 1);
    slurm.Advance();
    auto st = daemon.Cycle();
    if (!st.ok()) {
      state.SkipWithError(st.error().message.c_str());
      return;
    }
  }
  // Thread CPU time per cycle beside the wall times: on a loaded machine the wall-time p99 is
  // mostly the process waiting for a core, the CPU time is the cycle's own work.
  auto cpu_ms = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
  };
  std::vector<double> ms, cpu, obs, dec, app, hk;
  size_t decisions = 0, node_rows = 0, job_rows = 0, relisted = 0;
  for (auto _ : state) {
    state.PauseTiming();
    clock.Set(clock.Now() + 1);
    slurm.Advance();
    state.ResumeTiming();
    const double c0 = cpu_ms();
    auto st = daemon.Cycle();
    cpu.push_back(cpu_ms() - c0);
    if (!st.ok()) {
      state.SkipWithError(st.error().message.c_str());
      return;
    }
    ms.push_back(st->total_ms);
    obs.push_back(st->observe_ms);
    dec.push_back(st->decide_ms);
    app.push_back(st->apply_ms);
    hk.push_back(st->housekeeping_ms);
    decisions += st->starts + st->requeues;
    node_rows += st->node_rows;
    job_rows += st->job_rows;
    relisted += st->relisted;
  }
  // Nearest-rank percentile q (0..100) of one phase's 200 readings.
  auto pct = [](std::vector<double> v, size_t q) {
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, v.size() * q / 100)];
  };
  state.counters["observe_p50_ms"] = pct(obs, 50);
  state.counters["observe_p99_ms"] = pct(obs, 99);
  state.counters["decide_p50_ms"] = pct(dec, 50);
  state.counters["decide_p99_ms"] = pct(dec, 99);
  state.counters["apply_p50_ms"] = pct(app, 50);
  state.counters["apply_p99_ms"] = pct(app, 99);
  state.counters["housekeeping_max_ms"] = *std::max_element(hk.begin(), hk.end());
  state.counters["p50_ms"] = pct(ms, 50);
  state.counters["p99_ms"] = pct(ms, 99);
  state.counters["max_ms"] = *std::max_element(ms.begin(), ms.end());
  state.counters["cpu_p50_ms"] = pct(cpu, 50);
  state.counters["cpu_p99_ms"] = pct(cpu, 99);
  double sum = 0;
  for (double x : ms) sum += x;
  state.counters["decisions_per_cycle"] = static_cast<double>(decisions) / static_cast<double>(ms.size());
  state.counters["node_rows_per_cycle"] = static_cast<double>(node_rows) / static_cast<double>(ms.size());
  state.counters["job_rows_per_cycle"] = static_cast<double>(job_rows) / static_cast<double>(ms.size());
  state.counters["relisted_per_cycle"] = static_cast<double>(relisted) / static_cast<double>(ms.size());
  state.counters["decisions_per_s"] = sum > 0 ? static_cast<double>(decisions) / (sum / 1000.0) : 0;
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
}

void Args(benchmark::internal::Benchmark* b) {
  for (int64_t p : {10'000, 100'000})
    for (int64_t n : {1'000, 10'000}) b->Args({p, n});
  b->Iterations(200)->Unit(benchmark::kMillisecond)->UseRealTime();
}

// Live mode refuses oracle policies (sjf): qssf with the walltime estimator orders by the
// jobs' declared durations (their hints, reported as estimates) × GPUs instead.
BENCHMARK_CAPTURE(BM_Cycle, qssf, "qssf:estimator=walltime")->Apply(Args);
BENCHMARK_CAPTURE(BM_Cycle, easy, "easy")->Apply(Args);
BENCHMARK_CAPTURE(BM_Cycle, tiresias, "tiresias")->Apply(Args);
void BM_CycleFullJobs(benchmark::State& state, const char* policy) { BM_Cycle(state, policy, true); }
BENCHMARK_CAPTURE(BM_CycleFullJobs, easy, "easy")->Apply(Args);
//   build/orrery_live_bench --benchmark_filter='CycleDefaultResync/.*/100000/10000/'
void BM_CycleDefaultResync(benchmark::State& state, const char* policy) {
  BM_Cycle(state, policy, false, kDefaultResync);
}
BENCHMARK_CAPTURE(BM_CycleDefaultResync, qssf, "qssf:estimator=walltime")->Apply(Args);
BENCHMARK_CAPTURE(BM_CycleDefaultResync, easy, "easy")->Apply(Args);
BENCHMARK_CAPTURE(BM_CycleDefaultResync, tiresias, "tiresias")->Apply(Args);
// The cost of the resync period: every row re-read within N cycles (1/N of them each cycle).
//   build/orrery_live_bench --benchmark_filter='CycleResync/.*/100000/10000/'
void BM_CycleResync(benchmark::State& state, const char* policy, int cycles) { BM_Cycle(state, policy, false, cycles); }
BENCHMARK_CAPTURE(BM_CycleResync, easy_30, "easy", 30)->Apply(Args);
BENCHMARK_CAPTURE(BM_CycleResync, easy_100, "easy", 100)->Apply(Args);
BENCHMARK_CAPTURE(BM_CycleResync, easy_300, "easy", 300)->Apply(Args);

}  // namespace
}  // namespace orrery::live
