// Cost of the tracker's per-cycle pass in the daemon (LiveSignals::Poll): J running jobs,
// each of whose StdOut (a temporary file) got L new Megatron-LM lines (~220 B each) since the
// last cycle; Poll stats and reads each log's new bytes (LogTail), feeds the tracker and
// returns the reports. Appending the lines is outside the timing.
//   build/orrery_live_bench --benchmark_filter=SignalsPoll
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "live/fake_slurm.h"
#include "live/live_signals.h"

namespace orrery::live {
namespace {

void BM_SignalsPoll(benchmark::State& state) {
  const int64_t jobs = state.range(0), lines = state.range(1);
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("orrery_signals_bench_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  SimClock clock(1000);
  FakeSlurm slurm(&clock);
  SignalsOptions o;
  o.tracker = true;
  o.read_interval_s = 0;
  o.lookups_per_cycle = static_cast<uint32_t>(jobs);
  o.max_bytes_per_cycle = 1 << 30;
  LiveSignals signals(o, &slurm);
  std::vector<LiveSignals::RunningJob> running;
  std::vector<std::string> paths;
  for (int64_t j = 1; j <= jobs; ++j) {
    paths.push_back((dir / ("job-" + std::to_string(j) + ".out")).string());
    slurm.SetJobFiles(static_cast<uint32_t>(j), JobFiles{paths.back(), paths.back(), dir.string()}, "");
    running.push_back({static_cast<uint32_t>(j), 0, static_cast<uint32_t>(j)});
  }
  std::vector<LiveSignals::Report> reports;
  std::vector<JournalProgress> rows;
  int64_t step = 0;
  uint64_t bytes = 0;
  char line[300];
  for (auto _ : state) {
    state.PauseTiming();
    for (const std::string& p : paths) {
      std::ofstream out(p, std::ios::app);
      for (int64_t i = 1; i <= lines; ++i) {
        const int n = std::snprintf(line, sizeof line,
                                    " iteration %8lld/%8d | consumed samples: %12lld | elapsed time per iteration (ms): "
                                    "%.1f | learning rate: 3.000E-04 | global batch size:    64 | lm loss: 2.500000E+00 |\n",
                                    static_cast<long long>(step + i), 100000, static_cast<long long>((step + i) * 64),
                                    500.0 + static_cast<double>(i % 7));
        out.write(line, n);
        bytes += static_cast<uint64_t>(n);
      }
    }
    step += lines;
    clock.Set(clock.Now() + 1);
    reports.clear();
    rows.clear();
    state.ResumeTiming();
    signals.Poll(running, clock.Now(), &reports, &rows);
    benchmark::DoNotOptimize(reports.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["reports_per_poll"] = static_cast<double>(reports.size());
  fs::remove_all(dir);
}
BENCHMARK(BM_SignalsPoll)->Args({100, 10})->Args({1000, 10})->Args({1000, 100})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace orrery::live
