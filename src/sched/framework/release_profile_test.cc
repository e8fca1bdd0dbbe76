#include "sched/framework/release_profile.h"

#include <algorithm>
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "sched/framework/test_util.h"

namespace orrery {
namespace {

using testing::AddVc;

// A VC of `nodes` × `gpus`, its ClusterState, and a profile kept in step with it: Run/End
// apply and release a job's slots and tell the profile, as the Scheduler does.
struct ProfileRig {
  Cluster cluster;
  std::unique_ptr<ClusterState> st;
  ReleaseProfile prof;
  struct Running {
    Allocation alloc;
    Time end;
  };
  std::map<uint32_t, Running> running;  // by slot

  ProfileRig(int nodes, uint16_t gpus) {
    AddVc(&cluster, "a", nodes, gpus);
    st = std::make_unique<ClusterState>(cluster, false, false);
    prof.Reset(static_cast<size_t>(nodes), gpus);
  }
  // Job `slot` runs on (node, GPUs) pairs until `end`.
  void Run(uint32_t slot, std::vector<std::pair<uint32_t, uint16_t>> on, Time end) {
    Allocation a;
    for (auto [n, g] : on) a.push_back(Slot{NodeId(n), g});
    st->Apply(a);
    for (const Slot& sl : a) prof.Add(st->local_index(sl.node), end, slot, sl.gpus, true);
    running[slot] = Running{a, end};
  }
  void End(uint32_t slot) {
    const Running& r = running.at(slot);
    st->Release(r.alloc);
    for (const Slot& sl : r.alloc) prof.Remove(st->local_index(sl.node), slot, sl.gpus, true);
    running.erase(slot);
  }
  ReleaseProfile::Fit Earliest(uint16_t per, uint32_t count, std::vector<uint32_t>* nodes) {
    return prof.Earliest(*st, VcId(0), per, count, nodes);
  }
};

// Three nodes × 4 GPUs:
//   node 0: job 0 (2 GPUs, ends 100), job 1 (2 GPUs, ends 300)   free 0
//   node 1: job 2 (4 GPUs, ends 200)                              free 0
//   node 2: job 3 (3 GPUs, ends 50)                               free 1
// Earliest end by which a node has k free GPUs (k = 1, 2, 3, 4):
//   node 0: 100 100 300 300;  node 1: 200 200 200 200;  node 2: now 50 50 50.
TEST(ReleaseProfile, EarliestFitByHand) {
  ProfileRig r(3, 4);
  r.Run(0, {{0, 2}}, 100);
  r.Run(1, {{0, 2}}, 300);
  r.Run(2, {{1, 4}}, 200);
  r.Run(3, {{2, 3}}, 50);
  std::vector<uint32_t> nodes;
  using K = ReleaseProfile::FitKind;
  struct Case {
    uint16_t per;
    uint32_t count;
    K kind;
    Time at;
    std::vector<uint32_t> nodes;
  } cases[] = {
      {2, 1, K::kAt, 50, {2}},          // node 2: 1 free + job 3's 3 at 50
      {4, 1, K::kAt, 50, {2}},          // the same release gives node 2 all 4
      {4, 2, K::kAt, 200, {1, 2}},      // k = 4 ends sorted: 50, 200, 300 → the 2nd is 200
      {3, 3, K::kAt, 300, {0, 1, 2}},   // node 0 reaches 3 only when job 1 ends
      {1, 1, K::kNow, 0, {}},           // node 2 has a free GPU now
      {1, 2, K::kAt, 100, {0, 2}},      // k = 1: now (node 2), 100 (node 0), 200 (node 1)
      {1, 4, K::kNever, 0, {}},         // only three nodes
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "per " << c.per << " count " << c.count);
    const ReleaseProfile::Fit f = r.Earliest(c.per, c.count, &nodes);
    EXPECT_EQ(f.kind, c.kind);
    if (c.kind == K::kAt) {
      EXPECT_EQ(f.at, c.at);
      EXPECT_EQ(nodes, c.nodes);
    }
  }
  // Job 3 ends (early): node 2 is wholly free now; job 2's end moves to 400 (a new belief).
  r.End(3);
  r.End(2);
  r.Run(2, {{1, 4}}, 400);
  EXPECT_EQ(r.Earliest(4, 1, &nodes).kind, K::kNow);
  const ReleaseProfile::Fit f = r.Earliest(4, 2, &nodes);  // k = 4: now, 300, 400
  EXPECT_EQ(f.kind, K::kAt);
  EXPECT_EQ(f.at, 300);
  EXPECT_EQ(nodes, (std::vector<uint32_t>{0, 2}));
}

// The definition, by brute force: release the running jobs in end order, one end at a
// time, until `count` nodes have `per` free GPUs.
ReleaseProfile::Fit BruteForce(const ProfileRig& r, uint16_t per, uint32_t count, std::vector<uint32_t>* nodes) {
  const size_t n = r.cluster.nodes.size();
  std::vector<uint32_t> free(n);
  for (size_t i = 0; i < n; ++i) free[i] = r.st->free_gpus(NodeId(static_cast<uint32_t>(i)));
  auto fits = [&] {
    nodes->clear();
    for (uint32_t i = 0; i < n; ++i)
      if (free[i] >= per) nodes->push_back(i);
    return nodes->size() >= count;
  };
  if (fits()) return {ReleaseProfile::FitKind::kNow, 0};
  std::multimap<Time, const Allocation*> by_end;
  for (const auto& [slot, run] : r.running) by_end.emplace(run.end, &run.alloc);
  for (auto it = by_end.begin(); it != by_end.end();) {
    const Time t = it->first;
    for (; it != by_end.end() && it->first == t; ++it)
      for (const Slot& sl : *it->second) free[sl.node.v] += sl.gpus;
    if (fits()) return {ReleaseProfile::FitKind::kAt, t};
  }
  nodes->clear();
  return {ReleaseProfile::FitKind::kNever, 0};
}

// 3,000 random starts and ends (1–8 GPUs on one node, or whole nodes of several; ends often
// tied) on 37 nodes × 8 GPUs, with a query of random demand after each change, against the
// brute force: kind, time and nodes.
TEST(ReleaseProfile, MatchesReleasingJobsInEndOrder) {
  ProfileRig r(37, 8);
  std::mt19937_64 rng(7);
  auto uni = [&](uint64_t lo, uint64_t hi) { return std::uniform_int_distribution<uint64_t>(lo, hi)(rng); };
  uint32_t next_slot = 0;
  std::vector<uint32_t> got, want;
  int at_kinds = 0;
  for (int step = 0; step < 3000; ++step) {
    if (!r.running.empty() && uni(0, 2) == 0) {
      auto it = r.running.begin();
      std::advance(it, static_cast<long>(uni(0, r.running.size() - 1)));
      r.End(it->first);
    } else {
      const uint16_t g = static_cast<uint16_t>(uni(1, 8));
      std::vector<std::pair<uint32_t, uint16_t>> on;
      if (uni(0, 5) == 0) {  // two whole nodes
        for (uint32_t i = 0; i < 37 && on.size() < 2; ++i)
          if (r.st->free_gpus(NodeId(i)) == 8) on.push_back({i, 8});
        if (on.size() < 2) on.clear();
      } else {
        for (uint32_t i = static_cast<uint32_t>(uni(0, 36)), tries = 0; tries < 37; ++tries, i = (i + 1) % 37)
          if (r.st->free_gpus(NodeId(i)) >= g) {
            on.push_back({i, g});
            break;
          }
      }
      if (!on.empty()) r.Run(next_slot++, on, static_cast<Time>(uni(1, 60)) * 10);
    }
    const uint16_t per = static_cast<uint16_t>(uni(1, 8));
    const uint32_t count = static_cast<uint32_t>(uni(1, 4));
    SCOPED_TRACE(::testing::Message() << "step " << step << " per " << per << " count " << count);
    const ReleaseProfile::Fit f = r.Earliest(per, count, &got);
    const ReleaseProfile::Fit b = BruteForce(r, per, count, &want);
    ASSERT_EQ(f.kind, b.kind);
    if (b.kind != ReleaseProfile::FitKind::kAt) continue;
    ++at_kinds;
    ASSERT_EQ(f.at, b.at);
    ASSERT_EQ(got, want);
  }
  EXPECT_GT(at_kinds, 1000);  // the interesting answer is the common one
}

}  // namespace
}  // namespace orrery
