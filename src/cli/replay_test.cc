#include "cli/replay.h"

#include <gtest/gtest.h>

#include "config/cluster_config.h"
#include "sim/simulator.h"

namespace orrery::cli::replay {
namespace {

Job MakeJob(uint32_t id, Time submit, Duration d, uint32_t gpus, uint16_t milli = 1000) {
  Job j;
  j.id = JobId(id);
  j.submit = submit;
  j.duration = d;
  j.gpus = gpus;
  j.gpu_milli = milli;
  return j;
}

// Trace (submit s, duration s, GPUs), speedup 10, 2 nodes × 8 GPUs:
//   0: (1000,  95,  1)  -> arrival 0,  duration 10 (9.5 rounds up)  1 × 1
//   1: (1004,  4,   4)  -> arrival 0 (0.4), duration 1 (0.4 -> at least 1 s)  1 × 4
//   2: (1020,  600, 0)  -> CPU-only: skipped
//   3: (1030,  -1,  2)  -> no duration: skipped
//   4: (1100,  300, 12) -> arrival 10, duration 30, 2 nodes × 6
//   5: (1200,  310, 9)  -> arrival 20, duration 31, 2 × 5 = 10 GPUs (reshaped)
//   6: (1300,  50,  17) -> larger than 16 GPUs: skipped (clamped to 2 × 8 with clamp)
//   7: (1400,  2000, 1, 500 milli) -> arrival 40, duration 200 -> capped at 120; 1 whole GPU
//   8: (1500,  10,  8)  -> arrival 50, duration 1
Trace Fixture() {
  Trace t;
  t.jobs = {MakeJob(0, 1000, 95, 1),   MakeJob(1, 1004, 4, 4),   MakeJob(2, 1020, 600, 0),
            MakeJob(3, 1030, -1, 2),   MakeJob(4, 1100, 300, 12), MakeJob(5, 1200, 310, 9),
            MakeJob(6, 1300, 50, 17),  MakeJob(7, 1400, 2000, 1, 500), MakeJob(8, 1500, 10, 8)};
  t.source_ids = {"a", "b", "c", "d", "e", "f", "g", "h", "i"};
  return t;
}

SegmentOptions Opts() {
  SegmentOptions o;
  o.speedup = 10;
  o.node_gpus = 8;
  o.cluster_nodes = 2;
  o.max_duration = 120;
  return o;
}

TEST(ReplaySegment, ScalesArrivalsAndDurationsAndMapsGpusOntoNodes) {
  auto s = SelectSegment(Fixture(), Opts());
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s->jobs.size(), 6u);
  struct Want {
    uint32_t index;
    Time arrival;
    Duration duration;
    uint32_t nodes, gpn;
  };
  const Want want[] = {{0, 0, 10, 1, 1}, {1, 0, 1, 1, 4}, {4, 10, 30, 2, 6},
                       {5, 20, 31, 2, 5}, {7, 40, 120, 1, 1}, {8, 50, 1, 1, 8}};
  for (size_t i = 0; i < 6; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(s->jobs[i].index, want[i].index);
    EXPECT_EQ(s->jobs[i].arrival, want[i].arrival);
    EXPECT_EQ(s->jobs[i].duration, want[i].duration);
    EXPECT_EQ(s->jobs[i].nodes, want[i].nodes);
    EXPECT_EQ(s->jobs[i].gpus_per_node, want[i].gpn);
  }
  EXPECT_EQ(s->jobs[2].source_id, "e");
  EXPECT_EQ(s->jobs[3].trace_gpus, 9u);
  EXPECT_EQ(s->first_submit, 1000);
  EXPECT_EQ(s->considered, 9u);
  EXPECT_EQ(s->skipped_cpu, 1u);
  EXPECT_EQ(s->skipped_no_duration, 1u);
  EXPECT_EQ(s->skipped_oversize, 1u);
  EXPECT_EQ(s->clamped_oversize, 0u);
  EXPECT_EQ(s->reshaped, 1u);
  EXPECT_EQ(s->fractional, 1u);
  EXPECT_EQ(s->duration_capped, 1u);
}

TEST(ReplaySegment, ClampOversizeGivesTheWholeCluster) {
  SegmentOptions o = Opts();
  o.clamp_oversize = true;
  auto s = SelectSegment(Fixture(), o);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->jobs.size(), 7u);
  EXPECT_EQ(s->jobs[4].index, 6u);
  EXPECT_EQ(s->jobs[4].nodes, 2u);
  EXPECT_EQ(s->jobs[4].gpus_per_node, 8u);
  EXPECT_EQ(s->jobs[4].arrival, 30);
  EXPECT_EQ(s->jobs[4].duration, 5);
  EXPECT_EQ(s->clamped_oversize, 1u);
  EXPECT_EQ(s->skipped_oversize, 0u);
}

TEST(ReplaySegment, SkipJobsAndWindowSelectTheSegment) {
  SegmentOptions o = Opts();
  o.skip = 4;  // starts at job 4 (submit 1100): arrivals relative to it
  o.jobs = 2;
  auto s = SelectSegment(Fixture(), o);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->jobs.size(), 2u);
  EXPECT_EQ(s->first_submit, 1100);
  EXPECT_EQ(s->jobs[0].index, 4u);
  EXPECT_EQ(s->jobs[0].arrival, 0);
  EXPECT_EQ(s->jobs[1].index, 5u);
  EXPECT_EQ(s->jobs[1].arrival, 10);
  // --jobs counts replayed jobs: job 6 (oversize) is considered but does not count.
  o.jobs = 3;
  s = SelectSegment(Fixture(), o);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->jobs.size(), 3u);
  EXPECT_EQ(s->jobs[2].index, 7u);
  EXPECT_EQ(s->considered, 4u);
  // A window of 300 trace seconds after 1100 keeps submits <= 1400.
  o.jobs = 0;
  o.window = 300;
  s = SelectSegment(Fixture(), o);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->jobs.size(), 3u);
  EXPECT_EQ(s->jobs.back().index, 7u);
}

TEST(ReplaySegment, BadOptionsAreErrors) {
  SegmentOptions o = Opts();
  o.speedup = 0;
  EXPECT_FALSE(SelectSegment(Fixture(), o).ok());
  o = Opts();
  o.skip = 9;
  auto s = SelectSegment(Fixture(), o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("leaves no job"), std::string::npos);
  o = Opts();
  o.skip = 2;
  o.jobs = 0;
  o.window = 15;  // only the CPU job and the job without duration
  s = SelectSegment(Fixture(), o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("no replayable job"), std::string::npos);
}

TEST(ReplaySegment, SegmentTraceIsWhatTheDaemonSees) {
  auto s = SelectSegment(Fixture(), Opts());
  ASSERT_TRUE(s.ok());
  Trace t = SegmentTrace(*s);
  ASSERT_EQ(t.jobs.size(), 6u);
  EXPECT_EQ(t.jobs[2].id, JobId(2));
  EXPECT_EQ(t.jobs[2].submit, 10);
  EXPECT_EQ(t.jobs[2].duration, 30);
  EXPECT_EQ(t.jobs[2].gpus, 12u);
  EXPECT_EQ(t.jobs[2].nodes, 2);  // multi-node: pinned node count
  EXPECT_EQ(t.jobs[3].gpus, 10u);
  EXPECT_EQ(t.jobs[0].nodes, 0);  // one node: the placer decides, as FillJob does
  EXPECT_EQ(t.jobs[4].gpu_milli, 1000);
  EXPECT_EQ(t.jobs[4].walltime, -1);
  EXPECT_FALSE(t.jobs[4].user.valid());
  EXPECT_EQ(t.source_ids[4], "h");
}

// The wave latency, on one node of 8 GPUs under FIFO: A (0 s, 10 s, 8 GPUs), then B (1 s, 5 s,
// 8 GPUs) waits for A. Plain: A 0..10, B 10..15. With 1 s: A holds its GPUs to 11 (its own end
// stays 10, run 10), B starts at 11 and ends at 16 (run 5, wait 10, JCT 15).
TEST(ReplayWaveLatency, AStartThatWaitsForACompletionComesLater) {
  Trace t;
  t.jobs = {MakeJob(0, 0, 10, 8), MakeJob(1, 1, 5, 8)};
  t.jobs[1].walltime = 60;
  const Trace held = HoldLonger(t, 1);
  EXPECT_EQ(held.jobs[0].duration, 11);
  EXPECT_EQ(held.jobs[0].walltime, -1);  // no limit stays none
  EXPECT_EQ(held.jobs[1].walltime, 61);
  auto cluster = ParseClusterConfigString("name = \"one\"\n[defaults]\ngpus_per_node = 8\n[[vc]]\nname = \"p\"\nnodes = 1\n", "one.toml");
  ASSERT_TRUE(cluster.ok()) << cluster.error().message;
  SimConfig cfg;
  auto r = Simulate(held, *cluster, cfg);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ReleaseEarlier(r->outcomes, 1);
  EXPECT_EQ(r->outcomes[0].start, 0);
  EXPECT_EQ(r->outcomes[0].end, 10);
  EXPECT_EQ(r->outcomes[0].run, 10);
  EXPECT_EQ(r->outcomes[1].start, 11);
  EXPECT_EQ(r->outcomes[1].end, 16);
  EXPECT_EQ(r->outcomes[1].jct(), 15);
  // 0: nothing changes.
  EXPECT_EQ(HoldLonger(t, 0).jobs[0].duration, 10);
}

TEST(ReplayCompare, HandComputedFigures) {
  // measured (wait, jct, end) vs predicted (wait, jct, end):
  //   A: (0, 10, 10)  vs (0, 10, 10)   |err| 0  rel 0
  //   B: (2, 22, 24)  vs (0, 20, 22)   |err| 2  rel 0.1
  //   C: (4, 34, 40)  vs (5, 35, 41)   |err| 1  rel 1/35
  //   D: (6, 20, 30)  vs (1, 15, 25)   |err| 5  rel 1/3
  //   E: not measured (left out)
  // avg JCT m = 86/4 = 21.5, p = 80/4 = 20 -> +7.5 %; avg wait m 3, p 1.5 -> +1.5 s.
  // |err| sorted 0 1 2 5: p50 = 2nd = 1, p95 = 4th = 5. rel sorted 0, 0.0286, 0.1, 0.333.
  // Ends m: A10 B24 C40 D30; p: A10 B22 C41 D25: the 6 pairs are untied and all
  // concordant (C before D? m 40 > 30 and p 41 > 25: same order), so tau = 1.
  std::vector<JobTimes> v(5);
  auto set = [&](size_t i, double mw, double mj, double me, double pw, double pj, double pe) {
    v[i] = JobTimes{true, mw, mj, me, pw, pj, pe};
  };
  set(0, 0, 10, 10, 0, 10, 10);
  set(1, 2, 22, 24, 0, 20, 22);
  set(2, 4, 34, 40, 5, 35, 41);
  set(3, 6, 20, 30, 1, 15, 25);
  v[4].measured = false;
  v[4].p_jct = 1000;
  Comparison c = Compare(v);
  EXPECT_EQ(c.jobs, 5u);
  EXPECT_EQ(c.measured, 4u);
  EXPECT_DOUBLE_EQ(c.avg_jct_measured, 21.5);
  EXPECT_DOUBLE_EQ(c.avg_jct_predicted, 20);
  EXPECT_DOUBLE_EQ(c.jct_rel_error, 0.075);
  EXPECT_DOUBLE_EQ(c.avg_wait_measured, 3);
  EXPECT_DOUBLE_EQ(c.avg_wait_predicted, 1.5);
  EXPECT_DOUBLE_EQ(c.wait_error_s, 1.5);
  EXPECT_DOUBLE_EQ(c.p50_abs_jct_error_s, 1);
  EXPECT_DOUBLE_EQ(c.p95_abs_jct_error_s, 5);
  EXPECT_DOUBLE_EQ(c.p50_rel_jct_error, 1.0 / 35);
  EXPECT_DOUBLE_EQ(c.p95_rel_jct_error, 1.0 / 3);
  EXPECT_EQ(c.pairs, 6u);
  EXPECT_EQ(c.concordant, 6u);
  EXPECT_DOUBLE_EQ(c.kendall_tau, 1);
}

TEST(ReplayCompare, OrderDisagreementAndTies) {
  // Ends m: 10, 20, 30, 30; p: 10, 30, 20, 40.
  // Pairs: (0,1) c, (0,2) c, (0,3) c, (1,2) m 20<30 p 30>20 d, (1,3) c, (2,3) m tie: excluded.
  // C = 4, D = 1: agreement 0.8, tau 0.6.
  std::vector<JobTimes> v(4);
  const double me[] = {10, 20, 30, 30}, pe[] = {10, 30, 20, 40};
  for (size_t i = 0; i < 4; ++i) v[i] = JobTimes{true, 0, me[i], me[i], 0, pe[i], pe[i]};
  Comparison c = Compare(v);
  EXPECT_EQ(c.pairs, 5u);
  EXPECT_EQ(c.concordant, 4u);
  EXPECT_EQ(c.discordant, 1u);
  EXPECT_DOUBLE_EQ(c.order_agreement, 0.8);
  EXPECT_DOUBLE_EQ(c.kendall_tau, 0.6);
}

TEST(ReplayCompare, NearestRank) {
  EXPECT_EQ(NearestRank({}, 0.5), 0);
  EXPECT_EQ(NearestRank({7}, 0.95), 7);
  // 20 values 1..20: p50 = 10th = 10, p95 = 19th = 19.
  std::vector<double> v;
  for (int i = 20; i >= 1; --i) v.push_back(i);
  EXPECT_EQ(NearestRank(v, 0.5), 10);
  EXPECT_EQ(NearestRank(v, 0.95), 19);
  EXPECT_EQ(NearestRank(v, 0), 1);
}

// --native: the users of a listing, each once with its first (default) account; root only
// when no other user is listed.
TEST(NativeReplay, UsersOfAListingFirstAssociationRootLeftOut) {
  slurm::Accounts a;
  auto assoc = [](std::string acct, std::string user) {
    slurm::Assoc x;
    x.account = std::move(acct);
    x.user = std::move(user);
    return x;
  };
  a.assocs = {assoc("root", ""), assoc("root", "root"), assoc("llm", ""), assoc("llm", "ana"),
              assoc("vision", "ana"), assoc("vision", "chen")};
  auto u = NativeUsers(a);
  ASSERT_EQ(u.size(), 2u);
  EXPECT_EQ(u[0].user, "ana");
  EXPECT_EQ(u[0].account, "llm");
  EXPECT_EQ(u[1].user, "chen");
  EXPECT_EQ(u[1].account, "vision");
  slurm::Accounts only_root;
  only_root.assocs = {assoc("root", ""), assoc("root", "root")};
  u = NativeUsers(only_root);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].user, "root");
  EXPECT_TRUE(NativeUsers(slurm::Accounts{}).empty());
}

// Trace users in order of their first job, dealt round robin: with 2 Slurm users, x -> 0,
// y -> 1, "" (no user) -> 0, z -> 1; x's later jobs stay on 0.
TEST(NativeReplay, AssignUsersRoundRobinByFirstJob) {
  Segment s;
  for (const char* u : {"x", "y", "x", "", "z", "y", "x"}) {
    ReplayJob r;
    r.user = u;
    s.jobs.push_back(r);
  }
  EXPECT_EQ(AssignUsers(s, 2), (std::vector<uint32_t>{0, 1, 0, 0, 1, 1, 0}));
  EXPECT_EQ(AssignUsers(s, 1), (std::vector<uint32_t>(7, 0)));
}

// Whole minutes at least d + 5 s: 1 -> 60, 55 -> 60, 56 -> 120, 115 -> 120, 116 -> 180.
TEST(NativeReplay, TimeLimitWholeMinutesAboveTheSleep) {
  EXPECT_EQ(NativeTimeLimit(1), 60);
  EXPECT_EQ(NativeTimeLimit(55), 60);
  EXPECT_EQ(NativeTimeLimit(56), 120);
  EXPECT_EQ(NativeTimeLimit(115), 120);
  EXPECT_EQ(NativeTimeLimit(116), 180);
}

// NativeTrace: SegmentTrace plus the assigned user and the time limit as walltime.
TEST(NativeReplay, TraceCarriesUsersAndTimeLimits) {
  Segment s;
  for (Duration d : {10, 70}) {
    ReplayJob r;
    r.duration = d;
    r.gpus_per_node = 2;
    s.jobs.push_back(r);
  }
  const std::vector<NativeUser> users = {{"ana", "llm"}, {"chen", "vision"}};
  Trace t = NativeTrace(s, users, {1, 0});
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.users.Get(t.jobs[0].user.value()), "chen");
  EXPECT_EQ(t.users.Get(t.jobs[1].user.value()), "ana");
  EXPECT_EQ(t.jobs[0].walltime, 60);
  EXPECT_EQ(t.jobs[1].walltime, 120);
  EXPECT_EQ(t.jobs[1].gpus, 2u);
  Trace no_users = NativeTrace(s, {}, {});
  EXPECT_FALSE(no_users.jobs[0].user.valid());
  EXPECT_EQ(no_users.jobs[0].walltime, 60);
}

// Start order: measured starts 0, 5, 5, 9; predicted 0, 4, 6, 8. Pairs untied in both:
// (0,1) C, (0,2) C, (0,3) C, (1,3) C, (2,3) C; (1,2) tied in the measurement: left out.
// tau = 5/5 = 1; mean |start error| = (0 + 1 + 1 + 1) / 4 = 0.75 s. Swapping the prediction
// of jobs 0 and 3 (8, 4, 6, 0) makes (0,1), (0,2), (0,3), (1,3), (2,3) discordant: tau -1.
TEST(NativeReplay, StartOrderKendallTauAndMeanStartError) {
  auto times = [](std::vector<double> m, std::vector<double> p) {
    std::vector<JobTimes> v;
    for (size_t i = 0; i < m.size(); ++i) {
      JobTimes t;
      t.measured = true;
      t.m_start = m[i];
      t.p_start = p[i];
      t.m_end = t.p_end = static_cast<double>(i);
      v.push_back(t);
    }
    return v;
  };
  Comparison c = Compare(times({0, 5, 5, 9}, {0, 4, 6, 8}));
  EXPECT_EQ(c.start_pairs, 5u);
  EXPECT_EQ(c.start_concordant, 5u);
  EXPECT_DOUBLE_EQ(c.start_kendall_tau, 1.0);
  EXPECT_DOUBLE_EQ(c.mean_abs_start_error_s, 0.75);
  c = Compare(times({0, 5, 5, 9}, {8, 4, 6, 0}));
  EXPECT_EQ(c.start_pairs, 5u);
  EXPECT_EQ(c.start_discordant, 5u);
  EXPECT_DOUBLE_EQ(c.start_kendall_tau, -1.0);
}

}  // namespace
}  // namespace orrery::cli::replay
