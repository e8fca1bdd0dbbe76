// EASY's reservation by counts (EasyBackfill::ShadowByCounts: the est_end walk on per-node
// free-GPU counters, one placement at the first fitting end) decides exactly what the walk
// that releases every running job in the ClusterState decides. The full walk is what EASY
// falls back to where counts are not exact; modelling CPU and memory is one such case, and on
// nodes that declare no CPU or memory it changes nothing else. So two schedulers, one with
// CPU/memory modelled (the full walk) and one without (counts), fed the same random workload,
// must emit the same decisions on the same nodes.
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "sched/framework/internal/scheduler.h"
#include "sched/framework/test_util.h"
#include "sched/plugins/placers.h"
#include "sched/plugins/policies.h"

namespace orrery {
namespace {

struct Side {
  std::unique_ptr<Scheduler> s;
  std::vector<Decision> out;
  Side(const Cluster& c, bool walk, const std::string& policy, const std::string& placer) {
    auto parts = MakePolicy(policy, 1);
    EXPECT_TRUE(parts.ok()) << parts.error().message;
    auto p = MakePlacer(placer, 3);
    EXPECT_TRUE(p.ok());
    s = std::make_unique<Scheduler>(c, false, walk, std::move(*parts), std::move(*p));
  }
  // "slot@node,node " per start of the cycle at t.
  std::string Cycle(Time t) {
    out.clear();
    s->RunCycle(t, &out);
    std::string d;
    for (const Decision& x : out) {
      const uint32_t slot = std::get<StartDecision>(x).slot;
      d += std::to_string(slot) + "@";
      for (const Slot& sl : s->view(slot).alloc) d += std::to_string(sl.node.v) + ",";
      d += " ";
    }
    return d;
  }
};

// 400 jobs on 12 nodes × 8 GPUs: 1–8 GPUs, whole nodes (16, 24, 32 GPUs over 2–4 nodes) and
// 12 GPUs with no node count (the placer's remainder path, which counts leave to the full
// walk); walltime 100–2,000 s; true run 10–130 % of it (overruns keep running past their
// believed end); every 7th start re-estimated at its next cycle (a new believed end).
void ExpectSameDecisions(const std::string& policy, const std::string& placer) {
  SCOPED_TRACE(policy + " / " + placer);
  Cluster cluster;
  testing::AddVc(&cluster, "a", 12, 8);
  Side counts(cluster, false, policy, placer), walk(cluster, true, policy, placer);
  std::mt19937_64 rng(11);
  auto uni = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const uint32_t sizes[] = {1, 1, 2, 2, 3, 4, 4, 6, 8, 8, 12, 16, 24, 32};
  std::deque<Job> jobs;
  Time t = 0;
  for (uint32_t i = 0; i < 400; ++i) {
    Job j;
    j.id = JobId(i);
    t += uni(0, 40);
    j.submit = t;
    j.gpus = sizes[uni(0, 13)];
    j.nodes = j.gpus > 8 && j.gpus % 8 == 0 ? static_cast<uint16_t>(j.gpus / 8) : 0;
    j.walltime = uni(100, 2000);
    j.duration = std::max<Duration>(1, j.walltime * uni(10, 130) / 100);
    jobs.push_back(j);
  }
  std::multimap<Time, uint32_t> ends;  // true end → slot
  std::vector<uint32_t> reestimate;
  size_t next = 0, starts = 0;
  std::vector<Duration> duration_of;  // by slot
  std::vector<uint32_t> index_of;      // by slot: the job's submission index
  std::set<uint32_t> waiting;          // submission indices
  size_t backfilled = 0;               // starts ahead of an earlier submitted waiting job
  for (Time now = 0; next < jobs.size() || !ends.empty(); ++now) {
    bool event = false;
    for (auto it = ends.begin(); it != ends.end() && it->first == now; it = ends.erase(it)) {
      counts.s->Finish(it->second, now);
      walk.s->Finish(it->second, now);
      counts.s->Release(it->second);
      walk.s->Release(it->second);
      event = true;
    }
    for (uint32_t slot : reestimate) {  // the believed total doubles (or halves)
      if (!counts.s->view(slot).running) continue;  // ended at this instant
      const Duration e = now % 2 ? counts.s->view(slot).estimate * 2 : counts.s->view(slot).estimate / 2 + 1;
      counts.s->UpdateEstimate(slot, now, e, EstimateSource::kReported);
      walk.s->UpdateEstimate(slot, now, e, EstimateSource::kReported);
    }
    reestimate.clear();
    for (; next < jobs.size() && jobs[next].submit == now; ++next) {
      auto a = counts.s->Submit(&jobs[next], VcId(0), 0, static_cast<uint32_t>(next), now);
      auto b = walk.s->Submit(&jobs[next], VcId(0), 0, static_cast<uint32_t>(next), now);
      ASSERT_TRUE(a.ok() && b.ok());
      ASSERT_EQ(*a, *b);
      if (duration_of.size() <= *a) duration_of.resize(*a + 1), index_of.resize(*a + 1);
      duration_of[*a] = jobs[next].duration;
      index_of[*a] = static_cast<uint32_t>(next);
      waiting.insert(static_cast<uint32_t>(next));
      event = true;
    }
    if (!event) continue;
    const std::string d = counts.Cycle(now);
    ASSERT_EQ(d, walk.Cycle(now)) << "at " << now;
    for (const Decision& x : counts.out) {
      const uint32_t slot = std::get<StartDecision>(x).slot;
      ends.emplace(now + duration_of[slot], slot);
      backfilled += *waiting.begin() < index_of[slot];
      waiting.erase(index_of[slot]);
      if (++starts % 7 == 0) reestimate.push_back(slot);
    }
  }
  EXPECT_EQ(starts, jobs.size());
  EXPECT_GT(backfilled, 40u);  // the reservation decided many starts
}

TEST(EasyReservationByCounts, DecidesAsTheWalkForEveryPlacer) {
  for (const char* placer : {"consolidate", "first-fit", "spread", "random"}) ExpectSameDecisions("easy", placer);
}

TEST(EasyReservationByCounts, DecidesAsTheWalkBehindOtherOrders) {
  ExpectSameDecisions("qssf:estimator=walltime,backfill=easy", "consolidate");
  ExpectSameDecisions("easy:bf_max_job_test=3", "consolidate");
}

}  // namespace
}  // namespace orrery
