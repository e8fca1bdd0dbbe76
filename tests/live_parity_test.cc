// Parity of the two drivers: for every policy live mode accepts, the same sequence of
// events fed to the simulator (Simulate) and to the daemon over the fake Slurm gives the
// same decisions: every job starts at the same second, ends at the same second and is
// preempted as often. The fake Slurm is set to the simulator's timing (a released job
// whose nodes are free starts at once; a preempted job resumes from its checkpoint with the
// policy's restart overhead), the daemon cycles every second, and both see the same
// cluster (live::ClusterFromSinfo of the fake's nodes) and the same jobs (time limits as
// walltimes, no duration hints: both drivers then hold the same beliefs).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>
#include <unistd.h>

#include "live/daemon.h"
#include "live/fake_slurm.h"
#include "live/journal.h"
#include "live/live_policy.h"
#include "live/slurm_cluster.h"
#include "sched/plugins/policies.h"
#include "sim/simulator.h"

namespace orrery {
namespace {

struct Spec {
  Time arrival;
  uint32_t gpus;  // 16 = two nodes of 8
  Duration duration;
  Duration limit;
};

// 40 jobs over ~5 minutes on 2 × 8 GPUs: a queue builds up, the shapes mix (1..16 GPUs).
std::vector<Spec> Workload() {
  std::mt19937_64 rng(11);
  const uint32_t shapes[] = {1, 2, 4, 8, 8, 16};
  std::vector<Spec> out;
  Time t = 1;
  for (int i = 0; i < 40; ++i) {
    t += static_cast<Time>(rng() % 9);
    const Duration d = 5 + static_cast<Duration>(rng() % 70);
    out.push_back(Spec{t, shapes[rng() % 6], d, d + static_cast<Duration>(rng() % 60)});
  }
  return out;
}

struct Outcomes {
  std::vector<Time> start, end;
  std::vector<uint32_t> preemptions;
};

Duration (*OverheadOf(const std::string& policy))(uint32_t) {
  auto p = MakePolicy(policy, 1, nullptr);
  return p.ok() && p->preempt_overhead ? p->preempt_overhead : &PreemptionOverhead;
}

Outcomes Live(const std::string& policy, const std::vector<Spec>& specs, Cluster* cluster_out) {
  SimClock clock(0);
  live::FakeSlurm slurm(&clock);
  slurm.AddNode("node1", 8, "gpu");
  slurm.AddNode("node2", 8, "gpu");
  slurm.set_start_at_release(true);
  Duration (*overhead)(uint32_t) = OverheadOf(policy);
  slurm.set_checkpointing([overhead](uint32_t gpus) { return overhead(gpus); });
  auto nodes = slurm.Nodes({"gpu"});
  std::vector<const live::SlurmNode*> model;
  for (const auto& n : *nodes) model.push_back(&n);
  *cluster_out = live::ClusterFromSinfo({"gpu"}, std::move(model)).cluster;

  const std::string path = (std::filesystem::temp_directory_path() /
                            ("orrery_parity_" + std::to_string(getpid()) + ".db")).string();
  for (const char* suf : {"", "-wal", "-shm"}) std::filesystem::remove(path + suf);
  auto journal = live::Journal::Open(path, false);
  EXPECT_TRUE(journal.ok());
  live::DaemonOptions opts;
  opts.partitions = {"gpu"};
  opts.policy = policy;
  live::Daemon daemon(&slurm, journal->get(), &clock, opts);
  EXPECT_TRUE(daemon.Recover().ok());
  std::vector<uint32_t> ids;
  size_t next = 0;
  for (Time t = 0; t < 20000 && (next < specs.size() || slurm.num_done() < specs.size()); ++t) {
    clock.Set(t);
    slurm.Advance();
    for (; next < specs.size() && specs[next].arrival == t; ++next) {
      live::SubmitSpec s;
      s.partition = "gpu";
      s.nodes = specs[next].gpus > 8 ? 2 : 1;
      s.gpus_per_node = specs[next].gpus / s.nodes;
      s.sleep_s = specs[next].duration;
      s.time_limit_s = specs[next].limit;
      ids.push_back(*slurm.Submit(s));
    }
    auto st = daemon.Cycle();
    EXPECT_TRUE(st.ok()) << st.error().message;
  }
  EXPECT_EQ(daemon.illegal_moves(), 0u) << policy << ": a job state change outside the tables of job_state.h";
  Outcomes r;
  auto all = (*journal)->All();
  EXPECT_TRUE(all.ok());
  std::map<uint32_t, Time> first_start;
  std::map<uint32_t, uint32_t> requeues;
  for (const auto& d : *all) {
    if (d.kind == live::DecisionKind::kStart && d.gen == 0) first_start[d.job] = d.time;
    if (d.kind == live::DecisionKind::kRequeue) ++requeues[d.job];
  }
  for (uint32_t id : ids) {
    r.start.push_back(first_start.count(id) ? first_start[id] : kNoTime);
    r.end.push_back(slurm.job(id).end);
    r.preemptions.push_back(requeues[id]);
  }
  for (const char* suf : {"", "-wal", "-shm"}) std::filesystem::remove(path + suf);
  return r;
}

Outcomes Simulated(const std::string& policy, const std::vector<Spec>& specs, const Cluster& cluster) {
  Trace trace;
  for (size_t i = 0; i < specs.size(); ++i) {
    Job j;
    j.id = JobId(static_cast<uint32_t>(i));
    j.submit = specs[i].arrival;
    j.duration = specs[i].duration;
    j.walltime = specs[i].limit;
    j.gpus = specs[i].gpus;
    j.nodes = specs[i].gpus > 8 ? 2 : 0;  // as the daemon sees a Slurm job (-N 2), else the placer decides
    trace.jobs.push_back(j);
  }
  SimConfig sc;
  sc.policy = policy;
  sc.sample_interval = 0;
  auto sim = Simulate(trace, cluster, sc);
  EXPECT_TRUE(sim.ok()) << sim.error().message;
  Outcomes r;
  for (const JobOutcome& o : sim->outcomes) {
    r.start.push_back(o.start);
    r.end.push_back(o.end);
    r.preemptions.push_back(o.preemptions);
  }
  return r;
}

// Every policy of the registry in its default form, plus the live-mode variants of those
// live refuses by default (an estimator that is not an oracle, Lucid without its profiler)
// and a Tiresias that preempts within this short workload.
// `fifo:backfill=easy` (EASY backfill without an estimator) reserves by the true remaining work
// in the simulator (BelievedDuration's fallback), so it is an oracle policy and refused live;
// `easy` (estimator walltime) is the same backfill with one belief in both drivers.
const char* const kCandidates[] = {
    "fifo", "fifo:backfill=easy", "sjf", "srtf", "qssf", "qssf:estimator=walltime", "easy",
    "tiresias", "tiresias:thresholds=200/800,protect=0", "tiresias:preset=lucid", "lucid", "lucid:profiler=false",
    "slurm",
};

TEST(LiveSimParity, EveryLivePolicyDecidesAsTheSimulator) {
  for (const std::string& name : PolicyNames())
    EXPECT_NE(std::find(std::begin(kCandidates), std::end(kCandidates), name), std::end(kCandidates))
        << "registered policy '" << name << "' is missing from the parity candidates";
  const std::vector<Spec> specs = Workload();
  size_t compared = 0, refused = 0;
  for (const char* policy : kCandidates) {
    if (Status s = live::CheckLivePolicy(policy, 1); !s.ok()) {
      ++refused;
      EXPECT_FALSE(s.error().message.empty());
      std::printf("[ parity ] %-40s refused live: %s\n", policy, s.error().message.c_str());
      continue;
    }
    Cluster cluster;
    const Outcomes live = Live(policy, specs, &cluster);
    const Outcomes sim = Simulated(policy, specs, cluster);
    ASSERT_EQ(live.start.size(), specs.size()) << policy;
    ASSERT_EQ(sim.start.size(), specs.size()) << policy;
    size_t same = 0, preempted = 0;
    for (size_t i = 0; i < specs.size(); ++i) {
      EXPECT_EQ(live.start[i], sim.start[i]) << policy << " job " << i;
      EXPECT_EQ(live.end[i], sim.end[i]) << policy << " job " << i;
      EXPECT_EQ(live.preemptions[i], sim.preemptions[i]) << policy << " job " << i;
      same += live.start[i] == sim.start[i] && live.end[i] == sim.end[i] && live.preemptions[i] == sim.preemptions[i];
      preempted += sim.preemptions[i];
    }
    std::printf("[ parity ] %-40s %zu/%zu jobs identical (start, end, preemptions); %zu preemptions\n", policy, same,
                specs.size(), preempted);
    ++compared;
  }
  EXPECT_EQ(compared, 6u);  // fifo, qssf:estimator=walltime, easy, tiresias x2, tiresias:preset=lucid
  EXPECT_EQ(refused, 7u);   // fifo:backfill=easy, sjf, srtf, qssf (noisy-oracle estimator), lucid x2 (GPU sharing),
                            // slurm (the site's own Slurm decides live)
}

}  // namespace
}  // namespace orrery
