#include <gtest/gtest.h>

#include "eval/executor.h"
#include "eval/strategy.h"

namespace orrery::eval {
namespace {

// A workload built by hand: 1 s per example, so examples = inference seconds.
struct WorkloadBuilder {
  Workload w;
  WorkloadBuilder() {
    w.model.label = "1B";
    w.model.params = 1e9;  // checkpoint 2e9 bytes
    w.gpu.name = "test";
    w.startup_s = 10;
    w.metric_job_startup_s = 3;
  }
  WorkloadBuilder& Add(std::string name, uint64_t infer_s, double metric_s) {
    DatasetWork d;
    d.name = std::move(name);
    d.examples = infer_s;
    d.infer_s_per_example = 1;
    d.metric_s = metric_s;
    w.datasets.push_back(d);
    return *this;
  }
};

ClusterSpec Cluster(uint32_t nodes, uint32_t gpus, double storage, double node_link, double cache) {
  ClusterSpec c;
  c.nodes = nodes;
  c.gpus_per_node = gpus;
  c.cpu_slots = 1;
  c.storage_bytes_per_s = storage;
  c.node_storage_bytes_per_s = node_link;
  c.cache_bytes_per_s = cache;
  return c;
}

TEST(ExecutorTest, CoupledSharesTheNodeLinkAndHoldsTheGpuForTheMetric) {
  const Workload w = WorkloadBuilder().Add("A", 100, 5).Add("B", 50, 0).Add("C", 20, 10).w;
  auto plan = BuildPlan(*MakeCoupled(), "coupled", w, Cluster(1, 2, 10e9, 2e9, 1e9));
  ASSERT_TRUE(plan.ok());
  auto s = Execute(w, *plan, Cluster(1, 2, 10e9, 2e9, 1e9));
  ASSERT_TRUE(s.ok()) << s.error().message;
  // t=0 A (gpu0), B (gpu1) start; startup to 10; both load 2e9 B over the node's 2e9 B/s
  // link (1e9 each) -> 12; B infers to 62 (metric 0), C starts at 62: startup 72, load alone
  // 73, infer 93, metric 103. A infers to 112, metric to 117.
  EXPECT_DOUBLE_EQ(s->gpu_jobs[0].end, 117);
  EXPECT_DOUBLE_EQ(s->gpu_jobs[1].end, 62);
  EXPECT_EQ(s->gpu_jobs[2].slot, 1u);
  EXPECT_DOUBLE_EQ(s->gpu_jobs[2].start, 62);
  EXPECT_DOUBLE_EQ(s->gpu_jobs[2].phases[1].end, 73);
  EXPECT_DOUBLE_EQ(s->gpu_jobs[2].end, 103);
  EXPECT_DOUBLE_EQ(s->makespan_s, 117);
  // GPU time 117 + 62 + 41 = 220 s, of which 170 inferring, 50 idle (A 17, B 12, C 21).
  EXPECT_NEAR(s->gpu_hours * 3600, 220, 1e-6);
  EXPECT_NEAR(s->gpu_idle_hours * 3600, 50, 1e-6);
  EXPECT_EQ(s->max_concurrent_reads, 2u);
  EXPECT_DOUBLE_EQ(s->storage_bytes, 6e9);
}

TEST(ExecutorTest, NodeCacheJobsWaitForThePreloadAndMetricsQueueOnCpuSlots) {
  WorkloadBuilder b;
  b.w.startup_s = 1;
  const Workload w = b.Add("A", 100, 5).Add("B", 50, 0).w;
  Plan p;
  p.strategy = "hand";
  p.load = LoadSource::kNodeCache;
  p.metric = MetricPlacement::kCpuJob;
  p.gpu_jobs = {GpuJob{{Slice{0, 0, 100}}}, GpuJob{{Slice{1, 0, 50}}}};
  AddMetricJobs(w, &p);
  const ClusterSpec c = Cluster(2, 1, 2e9, 2e9, 4e9);
  auto s = Execute(w, p, c);
  ASSERT_TRUE(s.ok()) << s.error().message;
  // Preloads: 2 nodes share 2e9 B/s -> 1e9 each -> 2 s. Jobs start at 0 on node0 and node1,
  // startup to 1, wait for the cache to 2 (1 s), read 2e9 B at 4e9 B/s -> 2.5; A infers to
  // 102.5, B to 52.5. One CPU slot: B's metric 52.5-55.5 (3 + 0), A's 102.5-110.5 (3 + 5).
  ASSERT_EQ(s->preloads.size(), 2u);
  EXPECT_DOUBLE_EQ(s->preloads[0].end, 2);
  EXPECT_EQ(s->gpu_jobs[1].node, 1u);
  EXPECT_DOUBLE_EQ(s->gpu_jobs[0].phases[1].wait_s, 1);
  EXPECT_DOUBLE_EQ(s->gpu_jobs[0].end, 102.5);
  EXPECT_DOUBLE_EQ(s->metric_jobs[1].start, 52.5);
  EXPECT_DOUBLE_EQ(s->metric_jobs[1].end, 55.5);
  EXPECT_DOUBLE_EQ(s->metric_jobs[0].end, 110.5);
  EXPECT_DOUBLE_EQ(s->makespan_s, 110.5);
  EXPECT_NEAR(s->gpu_cache_wait_hours * 3600, 2, 1e-9);
  EXPECT_DOUBLE_EQ(s->storage_bytes, 4e9);  // the preloads only
}

TEST(ExecutorTest, StagedMetricsWaitForTheWholeInferenceStage) {
  const Workload w = WorkloadBuilder().Add("A", 100, 0).Add("B", 10, 0).w;
  Plan p;
  p.strategy = "hand";
  p.metric = MetricPlacement::kCpuJob;
  p.release = MetricRelease::kAllInferenceDone;
  p.gpu_jobs = {GpuJob{{Slice{0, 0, 100}}}, GpuJob{{Slice{1, 0, 10}}}};
  AddMetricJobs(w, &p);
  ClusterSpec c = Cluster(1, 2, 10e9, 2e9, 1e9);
  c.cpu_slots = 2;
  auto s = Execute(w, p, c);
  ASSERT_TRUE(s.ok());
  // Both load at 1e9 B/s (10-12); A ends at 112, B at 22; both metric jobs released at 112.
  EXPECT_DOUBLE_EQ(s->metric_jobs[1].release, 112);
  EXPECT_DOUBLE_EQ(s->metric_jobs[1].end, 115);
  EXPECT_DOUBLE_EQ(s->makespan_s, 115);
}

TEST(ExecutorTest, AggregateStorageLimitsNodesThatReadTogether) {
  const Workload w = WorkloadBuilder().Add("A", 10, 0).Add("B", 10, 0).w;
  // 2 nodes x 1 GPU, aggregate 2e9 B/s: each node gets 1e9 -> loads take 2 s (10-12).
  auto plan = BuildPlan(*MakeCoupled(), "coupled", w, Cluster(2, 1, 2e9, 2e9, 1e9));
  ASSERT_TRUE(plan.ok());
  auto s = Execute(w, *plan, Cluster(2, 1, 2e9, 2e9, 1e9));
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(s->gpu_jobs[0].phases[1].end, 12);
  EXPECT_DOUBLE_EQ(s->gpu_jobs[1].phases[1].end, 12);
  EXPECT_DOUBLE_EQ(s->makespan_s, 22);
}

TEST(ExecutorTest, SameInputsGiveTheSameSchedule) {
  const Workload w = WorkloadBuilder().Add("A", 100, 5).Add("B", 50, 0).Add("C", 20, 10).Add("D", 7, 1).w;
  const ClusterSpec c = Cluster(2, 2, 3e9, 2e9, 5e9);
  auto s = MakeStrategy("acme");
  ASSERT_TRUE(s.ok());
  auto p = BuildPlan(**s, "acme", w, c);
  ASSERT_TRUE(p.ok());
  auto a = Execute(w, *p, c), b = Execute(w, *p, c);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->makespan_s, b->makespan_s);
  for (size_t i = 0; i < a->gpu_jobs.size(); ++i) EXPECT_EQ(a->gpu_jobs[i].end, b->gpu_jobs[i].end);
}

TEST(ExecutorTest, RejectsClustersThatCannotRunATrial) {
  Workload w = WorkloadBuilder().Add("A", 10, 0).w;
  w.gpus_per_trial = 4;
  Plan p;
  p.gpu_jobs = {GpuJob{{Slice{0, 0, 10}}}};
  auto s = Execute(w, p, Cluster(1, 2, 1e9, 1e9, 1e9));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "a trial needs 4 GPUs, a node has 2");
  ClusterSpec zero = Cluster(0, 2, 1e9, 1e9, 1e9);
  EXPECT_FALSE(Execute(w, p, zero).ok());
}

}  // namespace
}  // namespace orrery::eval
