// The live opt-in to shaping (flex_shape.h): the #ORRERY line's parser (exact messages), and
// the daemon on FakeSlurm: an opted-in job is given the planner's shape (Reshape, then the
// release), a job without the line keeps its request, and a crash between the two steps
// neither loses the shape nor sends anything twice.
#include "live/flex_shape.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "live/crashing_slurm_testing.h"
#include "live/daemon.h"
#include "live/fake_slurm.h"
#include "live/journal.h"
#include "live/journal_testing.h"
#include "sched/plugins/planner_shape.h"

namespace orrery::live {
namespace {

// ------------------------------------------------------------------ the line

// 24 layers × 2048 hidden (GPT-1.3B's shape), 512 sequences of 2048 tokens per step: 1M tokens,
// compute-bound enough that a second node nearly halves the step (see GoodputGrowsItToTwoNodes).
constexpr const char* kLine =
    "#ORRERY shape=flex gpus=8-16 model=gpt:layers=24,hidden=2048,heads=16,vocab=50257 seq=2048 global_batch=512";

Result<std::optional<FlexSpec>> Parse(const std::string& script) { return ParseFlexLine(script, "job.sh"); }

TEST(FlexLine, ReadsBoundsAndModel) {
  auto r = Parse("#!/bin/bash\n#SBATCH -N 1 --gres=gpu:8\n" + std::string(kLine) + "\nsrun torchrun train.py\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->has_value());
  const FlexSpec& f = **r;
  EXPECT_EQ(f.min_gpus, 8u);
  EXPECT_EQ(f.max_gpus, 16u);
  EXPECT_EQ(f.model, (TrainModel{24, 2048, 16, 50257, 2048, 512}));
  // Leading blanks, a preset, the default sequence length, one count.
  auto p = Parse("  #ORRERY   global_batch=64 model=350M gpus=4 shape=flex\r\n");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ((*p)->min_gpus, 4u);
  EXPECT_EQ((*p)->max_gpus, 4u);
  EXPECT_EQ((*p)->model.seq, 2048);
  EXPECT_EQ((*p)->model.layers, 24);  // 350M: 24 × 1024
  // No line, or only a look-alike: not opted in.
  EXPECT_FALSE(Parse("#!/bin/bash\n#SBATCH --gres=gpu:8\n# ORRERY shape=flex\n#ORRERYX a=b\n")->has_value());
  EXPECT_FALSE(Parse("")->has_value());
}

TEST(FlexLine, ErrorsAreLocated) {
  struct Case {
    std::string script, message;
  };
  const std::vector<Case> cases = {
      {"#!/bin/bash\n#ORRERY shape=flex gpus=6-16 model=350M global_batch=8\n",
       "job.sh:2:20: key 'gpus': expected MIN-MAX, powers of two from 1 to 4096 with MIN <= MAX (e.g. 8-16), got \"6-16\""},
      {"#ORRERY shape=flex gpus=16-8 model=350M global_batch=8\n",
       "job.sh:1:20: key 'gpus': expected MIN-MAX, powers of two from 1 to 4096 with MIN <= MAX (e.g. 8-16), got \"16-8\""},
      {"#ORRERY shape=elastic gpus=8 model=350M global_batch=8\n",
       "job.sh:1:9: key 'shape': expected flex (the only shape a script can declare), got \"elastic\""},
      {"#ORRERY shape=flex gpus=8 model=350M global_batch=8 nodes=2\n",
       "job.sh:1:53: key 'nodes': expected one of shape, gpus, model, seq, global_batch, got \"nodes\""},
      {"#ORRERY shape=flex gpus=8 model=350M\n",
       "job.sh:1:1: #ORRERY line: key 'global_batch' is missing (expected shape=flex gpus=MIN-MAX model=... "
       "global_batch=B [seq=S])"},
      {"#ORRERY shape=flex gpus=8 gpus=16 model=350M global_batch=8\n",
       "job.sh:1:27: key 'gpus': expected each key once, got \"16\""},
      {"#ORRERY shape=flex gpus=8 model=350M global_batch=0\n",
       "job.sh:1:38: key 'global_batch': expected sequences per optimizer step, 1 to 16777216, got \"0\""},
      {"#ORRERY shape=flex flex\n", "job.sh:1:20: expected key=value, got \"flex\""},
      {"#ORRERY shape=flex gpus=8 model=350M global_batch=8\n#SBATCH -N1\n #ORRERY shape=flex\n",
       "job.sh:3:2: a second #ORRERY line (the first is line 1)"},
  };
  for (const Case& c : cases) {
    auto r = Parse(c.script);
    ASSERT_FALSE(r.ok()) << c.script;
    EXPECT_EQ(r.error().message, c.message);
  }
  auto model = Parse("#ORRERY shape=flex gpus=8 model=gpt:layers=24 global_batch=8\n");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().message.rfind("job.sh:1:27: key 'model': expected gpt:layers=L,hidden=H,heads=A,vocab=V or "
                                        "a preset name (",
                                        0),
            0u)
      << model.error().message;
}

// ------------------------------------------------------------------ the daemon

std::string TempPath(const std::string& name) { return FreshJournalPath("orrery_flex_test", name); }

// Every mutating call, in order ("reshape 3 node1:8,node2:8", "start 3 node1,node2 now=0").
class RecordingSlurm final : public SlurmClient {
 public:
  explicit RecordingSlurm(SlurmClient* inner) : inner_(inner) {}
  std::vector<std::string> calls;
  Result<JobListing> ListJobs(const std::vector<std::string>& p, uint64_t c, Sweep w) override {
    return inner_->Jobs(p, c, w);
  }
  Result<std::vector<SlurmNode>> Nodes(const std::vector<std::string>& p) override { return inner_->Nodes(p); }
  Status Hold(uint32_t j) override { return Log("hold " + std::to_string(j), inner_->Hold(j)); }
  Status StartOn(uint32_t j, const std::vector<NodeShare>& n, bool r) override {
    std::string names;
    for (const NodeShare& s : n) names += (names.empty() ? "" : ",") + s.node;
    return Log("start " + std::to_string(j) + " " + names + " now=" + (r ? "1" : "0"), inner_->StartOn(j, n, r));
  }
  Status Reshape(uint32_t j, const std::vector<NodeShare>& n) override {
    std::string shares;
    for (const NodeShare& s : n) shares += (shares.empty() ? "" : ",") + s.node + ":" + std::to_string(s.gpus);
    return Log("reshape " + std::to_string(j) + " " + shares, inner_->Reshape(j, n));
  }
  Status RequeueHold(uint32_t j) override { return Log("requeuehold " + std::to_string(j), inner_->RequeueHold(j)); }
  Status SetPriority(uint32_t j, uint32_t p) override { return inner_->SetPriority(j, p); }
  Status PowerDown(const std::string& n) override { return inner_->PowerDown(n); }
  Status PowerUp(const std::string& n) override { return inner_->PowerUp(n); }
  Result<uint32_t> Submit(const SubmitSpec& s) override { return inner_->Submit(s); }
  Status Cancel(uint32_t j) override { return inner_->Cancel(j); }
  Result<JobFiles> Files(uint32_t j) override { return inner_->Files(j); }
  Result<std::string> BatchScript(uint32_t j) override { return inner_->BatchScript(j); }
  Status Drain(const std::string& n, const std::string& r) override { return inner_->Drain(n, r); }
  Status Undrain(const std::string& n) override { return inner_->Undrain(n); }
  Status RestartHeld(uint32_t j) override { return inner_->RestartHeld(j); }

 private:
  Status Log(std::string what, Status s) {
    calls.push_back(std::move(what) + (s.ok() ? "" : " (failed)"));
    return s;
  }
  SlurmClient* inner_;
};

// Two nodes × 8 H200 GPUs under fifo:shape=goodput; jobs ask one node × `gpus`.
struct ShapeRig {
  SimClock clock{1000};
  FakeSlurm fake{&clock};
  std::string path = TempPath("shape.db");
  DaemonOptions opts;

  ShapeRig() {
    fake.AddNode("node1", 8, "gpu");
    fake.AddNode("node2", 8, "gpu");
    opts.partitions = {"gpu"};
    opts.policy = "fifo:shape=goodput";
    opts.gpu_type = "H200";
  }
  uint32_t Submit(uint32_t gpus, Duration d, const std::string& script) {
    SubmitSpec s;
    s.partition = "gpu";
    s.gpus_per_node = gpus;
    s.sleep_s = d;
    s.duration_hint = d;
    const uint32_t id = *fake.Submit(s);
    fake.SetJobFiles(id, JobFiles{}, script);
    return id;
  }
  // Cycles of one second with `slurm` until `done` or `n` cycles; false when a cycle failed.
  bool Run(SlurmClient* slurm, int n, const std::function<bool()>& done = [] { return false; }) {
    auto journal = Journal::Open(path, false);
    if (!journal.ok()) return false;
    Daemon d(slurm, journal->get(), &clock, opts);
    if (!d.Recover().ok()) return false;
    for (int i = 0; i < n && !done(); ++i) {
      clock.Set(clock.Now() + 1);
      fake.Advance();
      if (!d.Cycle().ok()) return false;
    }
    return true;
  }
};

const std::string kFlexScript = "#!/bin/bash\n#SBATCH -N 1 --gres=gpu:8\n" + std::string(kLine) + "\nsrun train\n";

TEST(FlexDaemon, GoodputGrowsTheOptedInJobToTwoNodesAndLeavesTheOtherAsked) {
  // The planner's premise (sched/plugins/planner_shape.h): the model's best step on 16 GPUs
  // over 2 nodes is ≥ 1.6 × faster than on 8 GPUs of one node, so the rule doubles it.
  {
    Cluster cl;
    cl.gpu_types.Intern("H200");
    auto cost = PlannerCostFor(cl);
    ASSERT_TRUE(cost.ok()) << cost.error().message;
    const TrainModel m{24, 2048, 16, 50257, 2048, 512};
    auto one = (*cost)->Best(m, {TypedGroup{GpuTypeId(0), 8, 1, LinkClass::kIntraRack}});
    auto two = (*cost)->Best(m, {TypedGroup{GpuTypeId(0), 16, 2, LinkClass::kIntraRack}});
    ASSERT_TRUE(one.ok() && two.ok());
    EXPECT_GE(one->seconds / two->seconds, 1.6) << one->seconds << " s vs " << two->seconds << " s";
    std::printf("[ flex ] step on 1 x 8 H200: %.3f s, on 2 x 8: %.3f s (x%.2f)\n", one->seconds, two->seconds,
                one->seconds / two->seconds);
  }
  ShapeRig r;
  RecordingSlurm slurm(&r.fake);
  const uint32_t flex = r.Submit(8, 20, kFlexScript);
  const uint32_t fixed = r.Submit(4, 5, "#!/bin/bash\n#SBATCH --gres=gpu:4\n# " + std::string(kLine).substr(1) + "\n");
  ASSERT_TRUE(r.Run(&slurm, 40, [&] { return r.fake.num_done() == 2; }));
  ASSERT_EQ(r.fake.num_done(), 2u);
  // The opted-in job asked one node × 8: it ran on both nodes × 8 (fifo: first), reshaped
  // before its release; the other job (its line commented out) ran as it asked, afterwards.
  EXPECT_EQ(r.fake.job(flex).num_nodes, 2u);
  EXPECT_EQ(r.fake.job(flex).gpus_per_node, 8u);
  EXPECT_EQ(r.fake.job(flex).nodes, (std::vector<std::string>{"node1", "node2"}));
  EXPECT_EQ(r.fake.counters(flex).reshapes, 1u);
  EXPECT_EQ(r.fake.job(fixed).num_nodes, 1u);
  EXPECT_EQ(r.fake.job(fixed).gpus_per_node, 4u);
  EXPECT_EQ(r.fake.counters(fixed).reshapes, 0u);
  const std::string f = std::to_string(flex), x = std::to_string(fixed);
  EXPECT_EQ(slurm.calls, (std::vector<std::string>{"reshape " + f + " node1:8,node2:8", "start " + f + " node1,node2 now=0",
                                                   "start " + x + " node1 now=0"}));
}

TEST(FlexDaemon, ABadLineLeavesTheJobAtItsRequest) {
  ShapeRig r;
  const uint32_t id = r.Submit(8, 3, "#!/bin/bash\n#ORRERY shape=flex gpus=8-12 model=350M global_batch=64\n");
  ASSERT_TRUE(r.Run(&r.fake, 10, [&] { return r.fake.num_done() == 1; }));
  EXPECT_EQ(r.fake.job(id).num_nodes, 1u);
  EXPECT_EQ(r.fake.counters(id).reshapes, 0u);
  EXPECT_EQ(r.fake.counters(id).completions, 1u);
}

// kill -9 between the update and the release: the job is held with the new request and its
// start decision is planned; after the restart the release follows once and nothing is
// sent twice. `lose`: the crash hits before the update reached Slurm (it is sent after the
// restart, from the journaled decision's nodes).
void CrashBetweenUpdateAndRelease(bool lose) {
  ShapeRig r;
  const uint32_t flex = r.Submit(8, 5, kFlexScript);
  {
    CrashingSlurm crashing(&r.fake);
    crashing.budget = 0;  // the first mutating call (the reshape) crosses it
    crashing.lose_crossing_call = lose;
    RecordingSlurm slurm(&crashing);
    ASSERT_FALSE(r.Run(&slurm, 3));  // the cycle that decides fails with the crash
    EXPECT_EQ(slurm.calls, (std::vector<std::string>{"reshape " + std::to_string(flex) + " node1:8,node2:8 (failed)"}));
  }
  EXPECT_TRUE(r.fake.job(flex).held);
  EXPECT_EQ(r.fake.counters(flex).reshapes, lose ? 0u : 1u);
  {
    auto journal = Journal::Open(r.path, false);
    ASSERT_TRUE(journal.ok());
    auto d = (*journal)->Get("start/" + std::to_string(flex) + "/0");
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(d->state, DecisionState::kPlanned);
    ASSERT_EQ(d->nodes.size(), 2u);
  }
  RecordingSlurm slurm(&r.fake);
  ASSERT_TRUE(r.Run(&slurm, 20, [&] { return r.fake.num_done() == 1; }));
  ASSERT_EQ(r.fake.num_done(), 1u);
  const std::string f = std::to_string(flex);
  std::vector<std::string> want = {"start " + f + " node1,node2 now=0"};
  if (lose) want.insert(want.begin(), "reshape " + f + " node1:8,node2:8");
  EXPECT_EQ(slurm.calls, want);
  EXPECT_EQ(r.fake.counters(flex).reshapes, 1u);
  EXPECT_EQ(r.fake.counters(flex).releases, 1u);
  EXPECT_EQ(r.fake.counters(flex).starts, 1u);
  EXPECT_EQ(r.fake.job(flex).nodes, (std::vector<std::string>{"node1", "node2"}));
  auto journal = Journal::Open(r.path, false);
  auto d = (*journal)->Get("start/" + f + "/0");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->state, DecisionState::kApplied);
}

TEST(FlexDaemon, CrashAfterTheUpdateBeforeTheReleaseReleasesOnce) { CrashBetweenUpdateAndRelease(false); }
TEST(FlexDaemon, CrashBeforeTheUpdateReachedSlurmUpdatesThenReleases) { CrashBetweenUpdateAndRelease(true); }

}  // namespace
}  // namespace orrery::live
