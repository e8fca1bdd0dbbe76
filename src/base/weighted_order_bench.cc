// WeightedOrder (base/weighted_order.h) against the linear walk over a std::set it replaces in
// Tiresias' decisions: n running jobs of 1..8 GPUs (milli), the greedy "keep while it fits"
// walk over all of them with a budget of all but 8 GPUs of their demand (a few jobs preempted,
// as in Tiresias' decisions), and the churn of one erase + insert
// (docs/benchmarks.md, "Micro-benchmarks").
#include <benchmark/benchmark.h>

#include <set>
#include <utility>
#include <vector>

#include "base/rng.h"
#include "base/weighted_order.h"

namespace orrery {
namespace {

std::vector<std::pair<int64_t, int64_t>> Jobs(size_t n) {
  Rng rng(3, "weighted-order-bench");
  std::vector<std::pair<int64_t, int64_t>> jobs;
  for (size_t i = 0; i < n; ++i)
    jobs.push_back({static_cast<int64_t>(rng.Below(1u << 30)), 1000 * static_cast<int64_t>(1 + rng.Below(8))});
  return jobs;
}

// The greedy walk: each entry kept while it fits, else counted as preempted.
void BM_GreedyWalkSet(benchmark::State& state) {
  std::set<std::pair<int64_t, int64_t>> s;
  int64_t total = 0;
  for (const auto& j : Jobs(static_cast<size_t>(state.range(0)))) {
    s.insert(j);
    total += j.second;
  }
  for (auto _ : state) {
    int64_t budget = total - 8000, preempted = 0;
    for (const auto& [key, w] : s) {
      if (w <= budget) budget -= w;
      else ++preempted;
    }
    benchmark::DoNotOptimize(preempted);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_GreedyWalkWeightedOrder(benchmark::State& state) {
  WeightedOrder<int64_t> o;
  for (const auto& [key, w] : Jobs(static_cast<size_t>(state.range(0)))) o.Insert(key, w);
  for (auto _ : state) {
    int64_t budget = o.total() - 8000, preempted = 0;
    WeightedOrder<int64_t>::Cursor c = o.begin();
    while (!o.at_end(c)) {
      budget -= o.SkipFitting(&c, nullptr, budget);
      if (o.at_end(c)) break;
      ++preempted;
      o.Next(&c);
    }
    benchmark::DoNotOptimize(preempted);
  }
  state.SetItemsProcessed(state.iterations());
}

// One job leaves and another arrives (a start and a stop of the simulator).
void BM_ChurnSet(benchmark::State& state) {
  const auto jobs = Jobs(static_cast<size_t>(state.range(0)) + 1);
  std::set<std::pair<int64_t, int64_t>> s(jobs.begin(), jobs.end() - 1);
  std::pair<int64_t, int64_t> out = jobs.back();
  size_t i = 0;
  for (auto _ : state) {
    s.insert(out);
    out = jobs[i];
    s.erase(out);
    i = (i + 1) % (jobs.size() - 1);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_ChurnWeightedOrder(benchmark::State& state) {
  const auto jobs = Jobs(static_cast<size_t>(state.range(0)) + 1);
  WeightedOrder<int64_t> o;
  for (size_t k = 0; k + 1 < jobs.size(); ++k) o.Insert(jobs[k].first, jobs[k].second);
  std::pair<int64_t, int64_t> out = jobs.back();
  size_t i = 0;
  for (auto _ : state) {
    o.Insert(out.first, out.second);
    out = jobs[i];
    o.Erase(out.first);
    i = (i + 1) % (jobs.size() - 1);
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_GreedyWalkSet)->Arg(1000)->Arg(4000)->Arg(16000);
BENCHMARK(BM_GreedyWalkWeightedOrder)->Arg(1000)->Arg(4000)->Arg(16000);
BENCHMARK(BM_ChurnSet)->Arg(1000)->Arg(4000)->Arg(16000);
BENCHMARK(BM_ChurnWeightedOrder)->Arg(1000)->Arg(4000)->Arg(16000);

}  // namespace
}  // namespace orrery
