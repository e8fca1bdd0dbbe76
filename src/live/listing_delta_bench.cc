// What ExecSlurmClient does with one `sinfo -N` listing of N nodes (after the process ran):
// SinfoFull parses every row (what a full listing costs, and what every cycle cost before
// NodeChanges); SinfoDelta compares the listing with the previous one (ListingDelta) and
// parses only the C rows that changed (C = 0: a byte-identical listing). Successive listings
// alternate between two texts that differ in C rows; preparing the text is not timed.
//   build/orrery_live_bench --benchmark_filter=Sinfo
#include <benchmark/benchmark.h>

#include <string>

#include "live/listing_delta.h"
#include "live/slurm_client.h"

namespace orrery::live {
namespace {

std::string SinfoText(int64_t nodes, int64_t changed, bool variant) {
  const std::string sep(1, kFieldSep);
  std::string s;
  for (int64_t i = 0; i < nodes; ++i) {
    // Every (nodes / changed)-th row is "mixed" in the variant, "idle" otherwise.
    const bool flip = variant && changed > 0 && i % (nodes / changed) == 0;
    s += "gpu-node" + std::to_string(100000 + i) + sep + "gpu" + sep + (flip ? "mixed" : "idle") + sep +
         "gpu:h200:8(S:0-1)\n";
  }
  return s;
}

void BM_SinfoFull(benchmark::State& state) {
  const std::string text = SinfoText(state.range(0), 0, false);
  for (auto _ : state) {
    auto nodes = ParseSinfo(text);
    benchmark::DoNotOptimize(nodes);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(text.size()));
}

// Successive listings alternate between the two texts (copying one is not timed); `delta`
// keys rows by their first `key_fields` fields, `parse` parses one changed row. With
// sweep_of > 0 each listing also answers the next slice of the rolling resync (the daemon's
// default: 300 slices).
template <class Parse>
void RunDelta(benchmark::State& state, const std::string (&texts)[2], size_t key_fields, uint32_t sweep_of, Parse parse) {
  ListingDelta delta(kFieldSep, key_fields, key_fields == 1 ? &SqueueKeySlice : &SinfoKeySlice);
  delta.Next(texts[0]);
  int64_t i = 1, rows = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::string text = texts[i % 2];
    const Sweep sweep{sweep_of > 0 ? static_cast<uint32_t>(i % sweep_of) : 0, sweep_of};
    ++i;
    state.ResumeTiming();
    auto diff = delta.Next(std::move(text), sweep);
    for (const ListingDelta::Line& row : diff.changed) {
      auto parsed = parse(row.text, row.lineno);
      benchmark::DoNotOptimize(parsed);
      ++rows;
    }
  }
  state.counters["rows_parsed_per_listing"] = static_cast<double>(rows) / static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(texts[0].size()));
}

void BM_SinfoDelta(benchmark::State& state) {
  const int64_t nodes = state.range(0), changed = state.range(1);
  const std::string texts[2] = {SinfoText(nodes, changed, false), SinfoText(nodes, changed, true)};
  RunDelta(state, texts, 2, static_cast<uint32_t>(state.range(2)),
           [](std::string_view row, size_t lineno) { return ParseSinfoLine(row, lineno); });
}

// The same for `squeue` rows of P pending jobs (key: the job id), C of them changed (held ->
// released, as a start decision changes them).
//   build/orrery_live_bench --benchmark_filter=Squeue
std::string SqueueText(int64_t jobs, int64_t changed, bool variant) {
  const std::string sep(1, kFieldSep);
  std::string s;
  for (int64_t i = 0; i < jobs; ++i) {
    const bool flip = variant && changed > 0 && i % (jobs / changed) == 0;
    s += std::to_string(1000000 + i) + sep + "PENDING" + sep + "gpu" + sep + "alice" + sep + "1" + sep + "gres:gpu:8" +
         sep + "1-00:00:00" + sep + "2026-12-01T10:00:00" + sep + "N/A" + sep + "N/A" + sep +
         (flip ? "None" : "JobHeldAdmin") + sep + "" + sep + "train-llama" + sep + "orrery:duration=3600\n";
  }
  return s;
}

void BM_SqueueFull(benchmark::State& state) {
  const std::string text = SqueueText(state.range(0), 0, false);
  for (auto _ : state) {
    auto jobs = ParseSqueue(text);
    benchmark::DoNotOptimize(jobs);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(text.size()));
}

void BM_SqueueDelta(benchmark::State& state) {
  const int64_t jobs = state.range(0), changed = state.range(1);
  const std::string texts[2] = {SqueueText(jobs, changed, false), SqueueText(jobs, changed, true)};
  RunDelta(state, texts, 1, static_cast<uint32_t>(state.range(2)),
           [](std::string_view row, size_t lineno) { return ParseSqueueLine(row, lineno); });
}

BENCHMARK(BM_SqueueFull)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMicrosecond);
// Args: rows, rows changed, sweep slices (0: no sweep).
BENCHMARK(BM_SqueueDelta)->Args({100'000, 0, 0})->Args({100'000, 100, 0})->Args({100'000, 1'000, 0})
    ->Args({100'000, 0, 300})->Args({100'000, 100, 300})->Args({100'000, 100, 30})->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_SinfoFull)->Arg(1'000)->Arg(10'000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SinfoDelta)->Args({1'000, 0, 0})->Args({1'000, 10, 0})->Args({10'000, 0, 0})->Args({10'000, 10, 0})
    ->Args({10'000, 100, 0})->Args({10'000, 10, 300})->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace orrery::live
