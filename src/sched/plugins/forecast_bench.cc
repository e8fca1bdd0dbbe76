// The predicted start of every queued job (Scheduler::Forecast: one dry run of the policy)
// for a 1,000-job queue on a 1,024-node cluster of 8 GPUs, the cluster full of running jobs
// (docs/benchmarks.md, "Predicted start"). One iteration = one uncached Forecast, what the
// live queue API pays once per cycle.
#include <benchmark/benchmark.h>

#include <deque>

#include "base/rng.h"
#include "sched/framework/internal/scheduler.h"
#include "sched/framework/test_util.h"
#include "sched/plugins/placers.h"
#include "sched/plugins/policies.h"

namespace orrery {
namespace {

void BM_Forecast(benchmark::State& state, const char* policy) {
  const int nodes = 1024;
  const int queued = static_cast<int>(state.range(0));
  Cluster c;
  testing::AddVc(&c, "a", nodes, 8);
  auto parts = MakePolicy(policy, 1);
  auto placer = MakePlacer("consolidate", 1);
  Scheduler s(c, false, false, std::move(*parts), std::move(*placer));
  Rng rng(1, "bench/forecast");
  const uint32_t shapes[] = {1, 2, 4, 8, 8, 16, 32};
  std::deque<Job> jobs;
  std::vector<Decision> out;
  uint32_t seq = 0;
  auto submit = [&](Time at) {
    Job j;
    j.id = JobId(seq);
    j.submit = at;
    j.gpus = shapes[rng.Below(7)];
    j.walltime = 600 + static_cast<Duration>(rng.Below(36000));
    jobs.push_back(j);
    (void)s.Submit(&jobs.back(), VcId(0), 0, seq++, at);
  };
  // Fill the cluster (jobs start as they arrive until the first one waits), then queue more
  // behind it until `queued` wait.
  while (s.pending_total() == 0) {
    submit(0);
    s.RunCycle(0, &out);
  }
  while (s.pending_total() < static_cast<size_t>(queued)) submit(1);
  s.RunCycle(1, &out);
  Time now = 1;
  for (auto _ : state) {
    ++now;  // another `now`: the cached forecast is not reused
    benchmark::DoNotOptimize(s.Forecast(now).size());
  }
  size_t predicted = 0;
  for (const StartPrediction& p : s.Forecast(now)) predicted += p.kind == PredictionKind::kPredicted;
  state.counters["predicted"] = static_cast<double>(predicted);
  state.counters["queued"] = static_cast<double>(s.pending_total());
  state.counters["running"] = static_cast<double>(s.running_total());
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(s.pending_total()));
}

BENCHMARK_CAPTURE(BM_Forecast, fifo, "fifo")->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Forecast, easy, "easy")->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Forecast, tiresias, "tiresias")->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Forecast, lucid_preset, "tiresias:preset=lucid")->Arg(1000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace orrery
