// Semantic signals in the daemon on FakeSlurm and temporary log files: the advisor's estimate
// from a batch script, the tracker's readings into the core, the API and metrics, the byte
// budget, the journal across a restart, and SRTF on belief choosing its victim by the ETA.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "live/daemon.h"
#include "live/fake_slurm.h"
#include "live/journal.h"
#include "live/serve_config.h"
#include "llm/fake_endpoint_testing.h"
#include "semantic/semantic_estimator.h"

namespace orrery::live {
namespace {

namespace fs = std::filesystem;

// A 1.31 B-parameter GPT (12·24·2048² + 50257·2048 = 1,310,885,888 parameters), 100 steps of
// 64 × 2048 tokens on 8 GPUs.
constexpr const char* kScript =
    "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gres=gpu:8\n"
    "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 24 --hidden-size 2048 --num-attention-heads 16 \\\n"
    "  --seq-length 2048 --micro-batch-size 4 --global-batch-size 64 --train-iters 100\n";

// Megatron-LM's training_log line.
std::string Iteration(int64_t step, int64_t total, double ms) {
  char b[300];
  std::snprintf(b, sizeof b,
                " iteration %8lld/%8lld | consumed samples: %12lld | elapsed time per iteration (ms): %.1f | "
                "learning rate: 3.000E-04 | global batch size:    64 | lm loss: %.6E | loss scale: 1.0 |\n",
                static_cast<long long>(step), static_cast<long long>(total), static_cast<long long>(step * 64), ms,
                2.0 + 8.0 / static_cast<double>(step));
  return b;
}

struct SignalsRig {
  SimClock clock{1000};
  FakeSlurm slurm{&clock};
  std::unique_ptr<Journal> journal;
  std::unique_ptr<Daemon> daemon;
  DaemonOptions opts;
  fs::path dir;

  SignalsRig(const std::string& policy, bool advisor, int nodes = 1) {
    semantic::RegisterSemanticEstimator();
    dir = fs::temp_directory_path() / ("orrery_live_signals_" + std::to_string(getpid()) + "_" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
    for (int i = 1; i <= nodes; ++i) slurm.AddNode("node" + std::to_string(i), 8, "gpu");
    opts.partitions = {"gpu"};
    opts.policy = policy;
    opts.signals.advisor = advisor;
    opts.signals.tracker = true;
    opts.signals.read_interval_s = 0;
    Start();
  }
  ~SignalsRig() {
    daemon.reset();
    journal.reset();
    fs::remove_all(dir);
  }
  void Start() {
    daemon.reset();
    journal.reset();
    auto opened = Journal::Open((dir / "journal.db").string(), false);
    ASSERT_TRUE(opened.ok());
    journal = std::move(*opened);
    daemon = std::make_unique<Daemon>(&slurm, journal.get(), &clock, opts);
    ASSERT_TRUE(daemon->Recover().ok());
  }
  std::string Log(uint32_t job) const { return (dir / ("slurm-" + std::to_string(job) + ".out")).string(); }
  uint32_t Submit(Duration hint = -1, const std::string& script = kScript) {
    SubmitSpec s;
    s.partition = "gpu";
    s.gpus_per_node = 8;
    s.sleep_s = 100000;
    s.duration_hint = hint;
    uint32_t id = *slurm.Submit(s);
    slurm.SetJobFiles(id, JobFiles{Log(id), Log(id), dir.string()}, script);
    return id;
  }
  void Print(uint32_t job, int64_t from, int64_t to, int64_t total, double ms) {
    std::ofstream out(Log(job), std::ios::app);
    for (int64_t s = from; s <= to; ++s) out << Iteration(s, total, ms);
  }
  void Tick(Duration dt = 1) {
    clock.Set(clock.Now() + dt);
    slurm.Advance();
    auto st = daemon->Cycle();
    ASSERT_TRUE(st.ok()) << st.error().message;
  }
  std::optional<QueueEntry> Entry(uint32_t job) const {
    for (const QueueEntry& e : daemon->Queue(100))
      if (e.job == job) return e;
    return std::nullopt;
  }
};

TEST(LiveSignals, AdvisorEstimateComesFromTheBatchScriptReadOnce) {
  SignalsRig r("srtf:estimator=semantic", /*advisor=*/true);
  uint32_t a = r.Submit();
  r.Tick();
  // Step time 6 · 1,310,885,888 · 64 · 2048 / (8 GPUs · 125e12 · 0.35) = 2.9455 s; 100 steps
  // + 60 s overhead = 354.55 s; no history: expectation over an early end with chance 1/2,
  // 0.75 · 354.55 = 265.9 -> 266 s.
  auto v = r.daemon->JobView(a);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->estimate, 266);
  EXPECT_EQ(v->est_source, EstimateSource::kEstimator);
  for (int i = 0; i < 3; ++i) r.Tick();
  EXPECT_EQ(r.slurm.file_calls(), 2u);  // the script once, the StdOut path once (when it ran)
  auto e = r.Entry(a);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->estimate, 266);
}

// A script the readers cannot read well: nodes and GPUs only, the model is in a config file
// the daemon does not open (no framework recognised).
std::string MysteryScript(int n) {
  return "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gres=gpu:8\nsrun python train.py --cfg exp/mystery" +
         std::to_string(n) + ".yaml\n";
}
// The model of kScript: the same estimate once merged (266 s, AdvisorEstimateComesFromTheBatchScriptReadOnce).
constexpr const char* kMysteryAnswer =
    R"({"framework": "Megatron-LM", "num_layers": 24, "hidden_size": 2048, "num_heads": 16, "seq_len": 2048,
        "global_batch": 64, "micro_batch": 4, "train_steps": 100})";

uint64_t Counter(const std::string& metrics, const std::string& name) {
  size_t at = metrics.find("\n" + name + " ");
  return at == std::string::npos ? UINT64_MAX : std::stoull(metrics.substr(at + name.size() + 2));
}

// The LLM fallback in the cycle: the question goes out in the background (the cycle does not
// wait: a slow endpoint leaves the job's estimate as it was), the answer completes the
// pending job's schema in a later cycle and the job is estimated again; at most
// llm_questions_per_cycle questions start per cycle.
TEST(LiveSignals, LlmCompletesAnUnreadScriptInTheBackgroundBoundedPerCycle) {
  llm::testing::FakeEndpoint ep;
  ep.content = kMysteryAnswer;
  ep.delay_ms = 300;
  SignalsRig r("srtf:estimator=semantic", /*advisor=*/true);
  r.opts.signals.llm = ep.Config();
  r.opts.signals.llm_questions_per_cycle = 1;
  r.Start();
  const uint32_t running = r.Submit();  // occupies the one node: the others stay pending
  const uint32_t b = r.Submit(-1, MysteryScript(1)), c = r.Submit(-1, MysteryScript(2)), d = r.Submit(-1, MysteryScript(3));
  r.Tick();
  const Duration before = r.daemon->JobView(b)->estimate;
  EXPECT_NE(before, 266);  // no steps or model: retrieval or the fallback
  EXPECT_EQ(Counter(r.daemon->MetricsText(), "orrery_signals_llm_config_questions_total"), 1u);
  r.Tick();  // the first answer is 300 ms away: this cycle did not wait for it
  EXPECT_EQ(r.daemon->JobView(b)->estimate, before);
  EXPECT_EQ(Counter(r.daemon->MetricsText(), "orrery_signals_llm_config_questions_total"), 2u);
  for (int i = 0; i < 400 && r.daemon->JobView(d)->estimate != 266; ++i) {  // at most ~4 s
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    r.Tick(0);
  }
  for (uint32_t j : {b, c, d}) {
    EXPECT_EQ(r.daemon->JobView(j)->estimate, 266) << j;
    EXPECT_EQ(r.daemon->JobView(j)->est_source, EstimateSource::kEstimator);
  }
  EXPECT_EQ(ep.requests.load(), 3);
  const std::string m = r.daemon->MetricsText();
  EXPECT_EQ(Counter(m, "orrery_signals_llm_config_questions_total"), 3u);
  EXPECT_EQ(Counter(m, "orrery_signals_llm_config_merged_total"), 3u);
  EXPECT_EQ(Counter(m, "orrery_signals_llm_config_failed_total"), 0u);
  // A fourth job with b's script: answered from the cache at first sight, no question.
  const uint32_t e = r.Submit(-1, MysteryScript(1));
  r.Tick(0);
  EXPECT_EQ(r.daemon->JobView(e)->estimate, 266);
  EXPECT_EQ(ep.requests.load(), 3);
  EXPECT_EQ(Counter(r.daemon->MetricsText(), "orrery_signals_llm_config_cached_total"), 1u);
  EXPECT_EQ(r.daemon->JobView(running)->estimate, 266);  // read by the readers: never asked about
}

TEST(LiveSignals, TrackerReadingsReachTheCoreTheApiAndMetrics) {
  SignalsRig r("fifo", /*advisor=*/false);
  uint32_t a = r.Submit();
  r.Tick();  // 1001: started by the policy (the core's start), released in Slurm
  r.Tick();  // 1002: Slurm runs it
  ASSERT_EQ(r.slurm.job(a).state, SlurmJobState::kRunning);
  EXPECT_FALSE(r.Entry(a)->progress.has_value());  // no log yet: not an error
  r.Print(a, 1, 20, 100, 500.0);
  r.Tick();  // 1003
  auto v = r.daemon->JobView(a);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->progress.steps_done, 20);
  EXPECT_EQ(v->progress.steps_total, 100);
  EXPECT_EQ(v->progress.at, 1003);
  // ETA (100 - 20) · 0.5 s = 40 s; believed duration = ran (1003 - 1001) + 40.
  EXPECT_EQ(v->estimate, 42);
  EXPECT_EQ(v->est_source, EstimateSource::kReported);
  EXPECT_EQ(v->est_end, 1003 + 40);
  auto e = r.Entry(a);
  ASSERT_TRUE(e->progress.has_value());
  EXPECT_EQ(e->progress->step, 20);
  EXPECT_EQ(e->progress->total, 100);
  EXPECT_DOUBLE_EQ(e->progress->fraction(), 0.2);
  EXPECT_DOUBLE_EQ(*e->progress->remaining_s(e->as_of), 40.0);
  EXPECT_EQ(e->progress->framework, logs::Framework::kMegatron);
  const std::string m = r.daemon->MetricsText();
  EXPECT_NE(m.find("orrery_job_progress_step{job=\"" + std::to_string(a) + "\"} 20\n"), std::string::npos) << m;
  EXPECT_NE(m.find("orrery_job_progress_ratio{job=\"" + std::to_string(a) + "\"} 0.2\n"), std::string::npos);
  EXPECT_NE(m.find("orrery_job_eta_seconds{job=\"" + std::to_string(a) + "\"} 40\n"), std::string::npos);
  // Nothing new for 4 s: the reading stays, its ETA counts down in the API.
  for (int i = 0; i < 4; ++i) r.Tick();
  e = r.Entry(a);
  EXPECT_EQ(e->as_of, 1007);
  EXPECT_DOUBLE_EQ(*e->progress->remaining_s(e->as_of), 36.0);
  EXPECT_EQ(r.daemon->JobView(a)->progress.at, 1003);
  // Twenty more steps at 1 s each: EMA 0.3 of the printed times moves toward 1 s.
  r.Print(a, 21, 40, 100, 1000.0);
  r.Tick();  // 1008
  e = r.Entry(a);
  EXPECT_EQ(e->progress->step, 40);
  EXPECT_EQ(e->progress->progress_at, 1008);
  EXPECT_GT(*e->progress->eta_s, 60 * 0.9);  // smoothed step time near 1 s: ETA near 60 s
  EXPECT_LE(*e->progress->eta_s, 60.0);
  EXPECT_EQ(r.daemon->JobView(a)->est_end, 1008 + static_cast<Time>(std::ceil(*e->progress->eta_s)));
}

// A job without a heartbeat file is watched for hangs once the tracker reports its progress
// (FindHangs looks only at watched jobs): no new step for hang_after seconds is a hang.
TEST(LiveSignals, TrackerProgressWatchesAJobForHangs) {
  SignalsRig r("fifo", /*advisor=*/false);
  r.opts.recovery.hang_after = 30;
  r.Start();
  uint32_t a = r.Submit();
  r.Tick();  // 1001: started by the policy
  r.Tick();  // 1002: Slurm runs it
  ASSERT_EQ(r.slurm.job(a).state, SlurmJobState::kRunning);
  r.Print(a, 1, 20, 100, 500.0);
  r.Tick();  // 1003: step 20 reached
  ASSERT_EQ(r.daemon->JobView(a)->progress.at, 1003);
  Time detected = kNoTime;
  for (int i = 0; i < 40 && detected == kNoTime; ++i) {
    r.Tick();
    if (r.slurm.counters(a).requeues > 0) detected = r.clock.Now();
  }
  EXPECT_EQ(detected, 1003 + 30);  // the first cycle with now - last step >= 30 s
  auto failures = r.daemon->Failures(1);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].trigger, Trigger::kHang);
}

TEST(LiveSignals, ByteBudgetPerCycleIsSharedRoundRobin) {
  SignalsRig r("fifo", false, /*nodes=*/2);
  r.opts.signals.max_bytes_per_job = 4096;
  r.opts.signals.max_bytes_per_cycle = 4096;
  r.Start();
  uint32_t a = r.Submit(), b = r.Submit();
  r.Tick();
  r.Tick();
  r.Print(a, 1, 200, 1000, 500.0);  // ~200 B per line: ~40 KB each
  r.Print(b, 1, 200, 1000, 500.0);
  r.Tick();  // the budget covers one job: a (the lower id) first
  auto metrics = [&] { return r.daemon->MetricsText(); };
  EXPECT_NE(metrics().find("orrery_signals_log_bytes_read_total 4096\n"), std::string::npos) << metrics();
  EXPECT_NE(metrics().find("orrery_signals_capped_cycles_total 1\n"), std::string::npos);
  EXPECT_EQ(r.daemon->JobView(a)->progress.steps_done, 200);  // the newest lines: the last step
  EXPECT_EQ(r.daemon->JobView(b)->progress.steps_done, -1);
  r.Tick();  // b's turn
  EXPECT_EQ(r.daemon->JobView(b)->progress.steps_done, 200);
  EXPECT_NE(metrics().find("orrery_signals_log_bytes_read_total 8192\n"), std::string::npos);
}

TEST(LiveSignals, RestartKeepsTheReadingAndWhenItsStepWasReached) {
  SignalsRig r("fifo", false);
  uint32_t a = r.Submit();
  r.Tick();
  r.Tick();
  r.Print(a, 1, 20, 100, 500.0);
  r.Tick();  // 1003: step 20
  for (int i = 0; i < 5; ++i) r.Tick();  // 1008, no new step
  r.Start();  // a new process on the same journal
  r.Tick();  // 1009: the journaled reading, then the log's newest lines (still step 20)
  auto v = r.daemon->JobView(a);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->progress.steps_done, 20);
  EXPECT_EQ(v->progress.at, 1003);  // not the restart: a hang watchdog sees 6 s without progress
  auto e = r.Entry(a);
  ASSERT_TRUE(e->progress.has_value());
  EXPECT_EQ(e->progress->progress_at, 1003);
  // The job ends: its row leaves the journal.
  ASSERT_TRUE(r.slurm.Cancel(a).ok());
  r.Tick();
  r.Tick();
  EXPECT_TRUE(r.journal->AllProgress()->empty());
}

TEST(LiveSignals, SrtfOnBeliefPreemptsByTheTrackersEtaAndOrdersTheRequeuedJob) {
  // Two running jobs whose scripts give the advisor no step count (fallback estimate 3600 s
  // each); their logs say A has 30 steps left (15 s) and B 3990 (1995 s).
  const std::string plain = "#!/bin/bash\n#SBATCH --gres=gpu:8\npython train.py\n";
  SignalsRig r("srtf:estimator=semantic", /*advisor=*/true, /*nodes=*/2);
  uint32_t a = r.Submit(-1, plain), b = r.Submit(-1, plain);
  r.Tick();
  r.Tick();
  ASSERT_EQ(r.slurm.job(a).state, SlurmJobState::kRunning);
  ASSERT_EQ(r.slurm.job(b).state, SlurmJobState::kRunning);
  EXPECT_EQ(r.daemon->JobView(a)->estimate, 3600);
  r.Print(a, 1, 10, 40, 500.0);
  r.Print(b, 1, 10, 4000, 500.0);
  r.Tick();  // 1003; both started (in the core) at 1001
  EXPECT_EQ(r.daemon->JobView(a)->estimate, 2 + 15);
  EXPECT_EQ(r.daemon->JobView(b)->estimate, 2 + 1995);
  // C believed 60 s: SRTF preempts the running job believed to need longer, B (1995 > 60),
  // never A (15 < 60).
  uint32_t c = r.Submit(60, plain);
  for (int i = 0; i < 3; ++i) r.Tick();
  EXPECT_EQ(r.slurm.counters(b).requeues, 1u);
  EXPECT_EQ(r.slurm.counters(a).requeues, 0u);
  EXPECT_EQ(r.slurm.job(c).state, SlurmJobState::kRunning);
  // D believed 2500 s waits behind B, whose believed remaining work is its ETA (1995 s);
  // without the tracker B would be believed to need 3600 - 4 s, after D.
  uint32_t d = r.Submit(2500, plain);
  r.Tick();
  auto eb = r.Entry(b), ed = r.Entry(d);
  ASSERT_TRUE(eb && ed);
  EXPECT_EQ(eb->state, JobState::kQueued);
  EXPECT_EQ(eb->position, 0);
  EXPECT_EQ(ed->position, 1);
  // Believed end 1001 + 1997 = 2998; preempted at 1004: 1994 s left, plus the policy's restart
  // overhead a preempted job pays again (PolicyParts::restart_overhead(): 30 s for 8 GPUs): 2024.
  EXPECT_EQ(eb->estimate, 1994 + 30);
}

// Found by the real-Slurm signals test: after `scontrol requeuehold` (a preemption) squeue
// shows PENDING with reason "job requeued in held state" (Slurm 22.05), a held job.
TEST(SlurmParse, RequeuedInHeldStateIsHeld) {
  auto r = ParseSqueue("7\x1fPENDING\x1fgpu\x1froot\x1f" "1\x1fgres:gpu:8\x1fUNLIMITED\x1f" "2026-11-30T17:21:26\x1fN/A\x1fN/A\x1f"
                       "job requeued in held state\x1f\x1f" "b\x1f(null)\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 1u);
  EXPECT_TRUE((*r)[0].held);
}

TEST(SlurmParse, JobFilesFromScontrolShowJob) {
  // The end of a real `scontrol show job -o` line (Slurm 22.05, the test harness).
  auto f = ParseJobFiles("JobId=1 JobName=myjob Command=/tmp/d/job.sh WorkDir=/tmp/d StdErr=/tmp/d/out-1-myjob.log "
                         "StdIn=/dev/null StdOut=/tmp/d/out-1-myjob.log Power= TresPerNode=gres:gpu:8\n");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->stdout_path, "/tmp/d/out-1-myjob.log");
  EXPECT_EQ(f->stderr_path, "/tmp/d/out-1-myjob.log");
  EXPECT_EQ(f->workdir, "/tmp/d");
  // A path with a space ends only at the next Key=; a relative one is taken from WorkDir.
  f = ParseJobFiles("WorkDir=/home/a b StdOut=logs/run 1.out Power=");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->stdout_path, "/home/a b/logs/run 1.out");
  EXPECT_EQ(f->stderr_path, "");
  EXPECT_EQ(ParseJobFiles("JobId=3 XStdOut=/x").error().message,
            "scontrol show job: expected a StdOut= field, got \"JobId=3 XStdOut=/x\"");
}

TEST(LiveSignals, ServeConfigSignalsTableIsStrict) {
  semantic::RegisterSemanticEstimator();
  const std::string head = "[slurm]\npartitions = [\"gpu\"]\n";
  auto ok = ParseServeConfig(head + "[policy]\nspec = \"srtf:estimator=semantic\"\n[signals]\nadvisor = true\ntracker = true\n"
                                    "read_interval_s = 2\nmax_bytes_per_job = 1024\nmax_bytes_per_cycle = 4096\nllm_questions_per_cycle = 3\n",
                             "s.toml");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_TRUE(ok->daemon.signals.advisor);
  EXPECT_EQ(ok->daemon.signals.read_interval_s, 2);
  EXPECT_EQ(ok->daemon.signals.max_bytes_per_cycle, 4096u);
  EXPECT_EQ(ok->daemon.signals.llm_questions_per_cycle, 3u);
  auto err = [&](const std::string& body) {
    auto c = ParseServeConfig(head + body, "s.toml");
    return c.ok() ? std::string("(ok)") : c.error().message;
  };
  EXPECT_EQ(err("[signals]\nadvisor = true\n"),
            "s.toml:4:11: 'advisor' in [signals]: the default policy 'fifo' reads no duration estimate; set [policy] spec "
            "with estimator=semantic (e.g. srtf:estimator=semantic)");
  EXPECT_EQ(err("[policy]\nspec = \"srtf:estimator=semantic\"\n"),
            "s.toml:4:8: 'spec' in [policy]: policy 'srtf:estimator=semantic': estimator 'semantic' reads each job's "
            "batch script: set [signals] advisor = true");
  EXPECT_EQ(err("[policy]\nspec = \"qssf:estimator=walltime\"\n[signals]\nadvisor = true\n"),
            "s.toml:4:8: 'spec' in [policy]: [signals] advisor = true: the advisor's estimate reaches the policy as its "
            "estimator; use a policy that reads one with estimator=semantic (e.g. srtf:estimator=semantic, "
            "qssf:estimator=semantic, easy:estimator=semantic), got 'qssf:estimator=walltime'");
  EXPECT_EQ(err("[signals]\nmax_bytes_per_job = 8192\nmax_bytes_per_cycle = 4096\n"),
            "s.toml:5:23: 'max_bytes_per_cycle' in [signals]: expected at least max_bytes_per_job (8192), got 4096");
  EXPECT_EQ(err("[signals]\ntail = true\n").substr(0, 39), "s.toml:4:8: unknown key 'tail' in [sign");
  EXPECT_EQ(err("[signals]\nllm_questions_per_cycle = 5000\n"),
            "s.toml:4:27: 'llm_questions_per_cycle' in [signals]: expected 0..1000, got 5000");
}

}  // namespace
}  // namespace orrery::live
