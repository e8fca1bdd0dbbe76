// End-to-end tests of the `orrery` binary: the README main job, determinism of the
// written outputs, bad input (exit status 2, file:line:col message, nothing written).
#include <gtest/gtest.h>

#include "cli_testing.h"
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;

using Out = orrery::cli_testing::CmdOut;

Out RunCmd(const std::string& args) { return orrery::cli_testing::RunOrrery(args); }

using orrery::cli_testing::Slurp;

fs::path TempDir(const std::string& tag) { return orrery::cli_testing::FreshTempDir("cli_" + tag); }

TEST(CliTest, DefaultScenarioRunsAndPrintsTheTable) {
  Out o = RunCmd("simulate --no-output");
  ASSERT_EQ(o.status, 0) << o.text;
  for (const char* want : {"helios-venus", "avg JCT", "avg queueing delay", "fifo", "sjf", "srtf", "qssf", "easy",
                           "GPU utilization"})
    EXPECT_NE(o.text.find(want), std::string::npos) << "missing '" << want << "' in\n" << o.text;
}

TEST(CliTest, SameInputsAndSeedGiveByteIdenticalOutputs) {
  fs::path a = TempDir("a"), b = TempDir("b");
  const std::string args = " --generate helios-venus --days 5 --seed 7 --policy fifo,srtf,easy -q --out-dir ";
  ASSERT_EQ(RunCmd("simulate" + args + a.string()).status, 0);
  ASSERT_EQ(RunCmd("simulate" + args + b.string()).status, 0);
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(a)) {
    if (!e.is_regular_file()) continue;
    fs::path rel = fs::relative(e.path(), a);
    EXPECT_EQ(Slurp(e.path()), Slurp(b / rel)) << rel;
    ++files;
  }
  EXPECT_EQ(files, 10);  // summary.json + 3 × (jobs.csv, attempts.csv, timeseries.csv)
  // A different seed gives a different workload.
  fs::path c = TempDir("c");
  ASSERT_EQ(RunCmd("simulate --generate helios-venus --days 5 --seed 8 --policy fifo -q --out-dir " + c.string()).status, 0);
  EXPECT_NE(Slurp(a / "fifo" / "jobs.csv"), Slurp(c / "fifo" / "jobs.csv"));
  fs::remove_all(a);
  fs::remove_all(b);
  fs::remove_all(c);
}

TEST(CliTest, PoliciesOnSeveralThreadsWriteTheSameBytesAsOneThread) {
  // Five runs (one spec twice: folders fifo and fifo-2) on 1 and on 3 threads: every file
  // and the printed table are identical.
  fs::path a = TempDir("seq"), b = TempDir("par");
  const std::string args = " --generate helios-venus --days 5 --seed 3 --policy fifo,srtf,easy,sjf,fifo -q --out-dir ";
  Out seq = RunCmd("simulate --threads 1" + args + a.string());
  Out par = RunCmd("simulate --threads 3" + args + b.string());
  ASSERT_EQ(seq.status, 0) << seq.text;
  ASSERT_EQ(par.status, 0) << par.text;
  EXPECT_EQ(seq.text, par.text);
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(a)) {
    if (!e.is_regular_file()) continue;
    fs::path rel = fs::relative(e.path(), a);
    EXPECT_EQ(Slurp(e.path()), Slurp(b / rel)) << rel;
    ++files;
  }
  EXPECT_EQ(files, 16);  // summary.json + 5 × (jobs.csv, attempts.csv, timeseries.csv)
  EXPECT_TRUE(fs::exists(b / "fifo-2" / "jobs.csv"));
  fs::remove_all(a);
  fs::remove_all(b);
}

TEST(CliTest, BadTraceFailsWithLocationAndWritesNothing) {
  fs::path d = TempDir("bad");
  std::ofstream(d / "bad.csv") << "timestamp,duration,num_gpus,gpu_time,cluster\n"
                                  "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n"
                                  "2017-10-09 07:02:55,abc,1,66.0,11cb48\n";
  Out o = RunCmd("simulate " + (d / "bad.csv").string() + " --format philly --out-dir " + (d / "out").string());
  EXPECT_EQ(o.status, 2) << o.text;
  EXPECT_NE(o.text.find("bad.csv:3:"), std::string::npos) << o.text;
  EXPECT_NE(o.text.find("duration"), std::string::npos) << o.text;
  EXPECT_FALSE(fs::exists(d / "out" / "summary.json"));
  // import: same error, no output file, exit 2.
  Out i = RunCmd("import --from philly " + (d / "bad.csv").string() + " --out " + (d / "x.csv").string());
  EXPECT_EQ(i.status, 2) << i.text;
  EXPECT_FALSE(fs::exists(d / "x.csv"));
  fs::remove_all(d);
}

// --signals advisor,tracker: same seed, same bytes; the advisor becomes each estimate-reading
// policy's estimator; summary.json says which signals ran; bad lists and conflicts exit 2.
TEST(CliTest, SignalsRunDeterministicallyAndAreValidatedSlow) {
  fs::path a = TempDir("sa"), b = TempDir("sb");
  const std::string args = " --generate helios-venus --days 1 --seed 3 --policy easy,srtf,tiresias --signals advisor,tracker -q --out-dir ";
  Out oa = RunCmd("simulate" + args + a.string());
  ASSERT_EQ(oa.status, 0) << oa.text;
  ASSERT_EQ(RunCmd("simulate" + args + b.string()).status, 0);
  for (const char* dir : {"easy_estimator_semantic", "srtf_estimator_semantic", "tiresias"}) {
    ASSERT_TRUE(fs::exists(a / dir / "jobs.csv")) << dir << "\n" << oa.text;
    EXPECT_EQ(Slurp(a / dir / "jobs.csv"), Slurp(b / dir / "jobs.csv")) << dir;
  }
  EXPECT_NE(Slurp(a / "summary.json").find("\"signals\": {\n    \"advisor\": true,\n    \"tracker\": true\n  }"),
            std::string::npos);
  EXPECT_NE(oa.text.find("tiresias: reads no duration estimate"), std::string::npos) << oa.text;
  EXPECT_EQ(RunCmd("simulate --signals advisor,psychic --no-output").status, 2);
  EXPECT_EQ(RunCmd("simulate --policy qssf:estimator=oracle --signals advisor --no-output").status, 2);
  EXPECT_EQ(RunCmd("simulate --tracker-options interval=60 --no-output").status, 2);
  EXPECT_EQ(RunCmd("simulate --signals tracker --tracker-options interval=0 --no-output").status, 2);
  fs::remove_all(a);
  fs::remove_all(b);
}

// --renege: withdrawn jobs are counted in summary.json and written with their wait in jobs.csv;
// Helios-compatible mode has no reneging and says so.
TEST(CliTest, RenegeWithdrawsPendingCancelledJobs) {
  fs::path d = TempDir("renege");
  Out o = RunCmd("simulate --generate helios-venus --days 7 --policy fifo --renege -q --out-dir " + d.string());
  ASSERT_EQ(o.status, 0) << o.text;
  const std::string summary = Slurp(d / "summary.json");
  EXPECT_NE(summary.find("\"withdrawn\": "), std::string::npos) << summary.substr(0, 600);
  const std::string jobs = Slurp(d / "fifo" / "jobs.csv");
  EXPECT_NE(jobs.find(",withdrawn"), std::string::npos);
  // Without --renege nothing is withdrawn.
  ASSERT_EQ(RunCmd("simulate --generate helios-venus --days 7 --policy fifo -q --out-dir " + d.string()).status, 0);
  EXPECT_EQ(Slurp(d / "summary.json").find("withdrawn"), std::string::npos);
  Out bad = RunCmd("simulate --renege --helios-compat --no-output");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.text.find("--renege cannot be combined with --helios-compat"), std::string::npos) << bad.text;
  fs::remove_all(d);
}

TEST(CliTest, BadFlagsAndPoliciesAreRejected) {
  EXPECT_EQ(RunCmd("simulate --policy nosuch --no-output").status, 2);
  EXPECT_EQ(RunCmd("simulate --policy easy:bf_max_job_test=0 --no-output").status, 2);
  EXPECT_EQ(RunCmd("simulate --policy fifo:colour=red --no-output").status, 2);
  EXPECT_EQ(RunCmd("simulate --placer nosuch --no-output").status, 2);
  EXPECT_EQ(RunCmd("simulate --cluster /nonexistent.toml --no-output").status, 2);
  EXPECT_EQ(RunCmd("simulate --no-such-flag").status, 2);
}

TEST(CliTest, ImportRoundTripThroughTheCanonicalFormat) {
  const std::string philly = std::string(ORRERY_SHARED_DIR) +
                             "/traces/philly-pollux/philly.part-A.submit-before-2017-11-01.csv";
  if (!fs::exists(philly)) GTEST_SKIP() << "../shared traces absent: " << philly;
  fs::path d = TempDir("rt");
  ASSERT_EQ(RunCmd("import --from philly " + philly + " --out " + (d / "a.csv").string()).status, 0);
  ASSERT_EQ(RunCmd("import --from canonical " + (d / "a.csv").string() + " --out " + (d / "b.csv").string()).status, 0);
  EXPECT_EQ(Slurp(d / "a.csv"), Slurp(d / "b.csv"));
  // And it simulates on the shipped Philly config: the 8 jobs of VC 23dbec are rejected.
  Out o = RunCmd("simulate " + (d / "a.csv").string() + " --cluster " + std::string(ORRERY_SOURCE_DIR) +
                 "/configs/philly.toml --policy fifo --out-dir " + (d / "out").string());
  ASSERT_EQ(o.status, 0) << o.text;
  EXPECT_NE(o.text.find("52841"), std::string::npos) << o.text;
  EXPECT_NE(o.text.find("8/0"), std::string::npos) << o.text;
  fs::remove_all(d);
}

// `orrery replay`: bad input and an unreachable Slurm stop it before anything is
// submitted, with exit status 2 and a message that says what is wrong.
TEST(CliTest, ReplayRefusesBadTraceAndUnreachableSlurm) {
  fs::path d = TempDir("replay");
  const std::string fixture = ORRERY_SOURCE_DIR "/tests/fixtures/trace/replay_philly.csv";
  Out bad = RunCmd("replay --slurm " + (d / "nosuch.csv").string() + " --speedup 10 --partition gpu --out " +
                   (d / "out").string());
  EXPECT_EQ(bad.status, 2) << bad.text;
  EXPECT_NE(bad.text.find("nosuch.csv"), std::string::npos) << bad.text;
  EXPECT_EQ(RunCmd("replay --slurm " + fixture + " --speedup 0 --partition gpu").status, 2);
  EXPECT_EQ(RunCmd("replay --slurm " + fixture + " --partition gpu").status, 2);  // --speedup is required
  // Slurm tools missing: refused at once.
  Out tools = RunCmd("replay --slurm " + fixture + " --speedup 10 --partition gpu --bin-dir " + (d / "nobin").string() +
                     " --out " + (d / "out").string());
  EXPECT_EQ(tools.status, 2) << tools.text;
  EXPECT_NE(tools.text.find("cannot reach Slurm"), std::string::npos) << tools.text;
  // A controller nobody listens on (port 9 on localhost): squeue/sinfo fail or time out.
  std::ofstream(d / "slurm.conf") << "ClusterName=nowhere\nSlurmctldHost=localhost\nSlurmctldPort=9\n"
                                     "AuthType=auth/none\nNodeName=n1 CPUs=1\nPartitionName=gpu Nodes=n1\n";
  Out down = RunCmd("replay --slurm " + fixture + " --speedup 10 --partition gpu --timeout-ms 1500 --slurm-conf " +
                    (d / "slurm.conf").string() + " --out " + (d / "out").string());
  EXPECT_EQ(down.status, 2) << down.text;
  EXPECT_NE(down.text.find("cannot reach Slurm"), std::string::npos) << down.text;
  EXPECT_FALSE(fs::exists(d / "out" / "summary.json"));
  fs::remove_all(d);
}

}  // namespace

// attempts.csv golden (docs/formats/attempts.md), same trace and policy as the explain test
// below: J0 runs 0..25 (25 steps; checkpointed when preempted, so 25 durable), J1 25..45,
// J0 again 45..160 (75 steps left + Tiresias' 40-s restart overhead = 115 s). Rows in end order.
TEST(CliTest, AttemptsCsvGolden) {
  const std::string fx = std::string(ORRERY_SOURCE_DIR) + "/tests/fixtures/explain/";
  fs::path d = TempDir("attempts");
  Out o = RunCmd("simulate " + fx + "tiny.csv --cluster " + fx + "one-node.toml --policy tiresias:thresholds=100 -q --out-dir " +
                 (d / "out").string());
  ASSERT_EQ(o.status, 0) << o.text;
  EXPECT_EQ(Slurp(d / "out" / "tiresias_thresholds_100" / "attempts.csv"),
            "job_id,source_id,attempt,start,end,run,gpus,nodes,steps_done,steps_durable,cause,failure,restartable\n"
            "0,long,0,0,25,25,4,a-0,25,25,preempted,,\n"
            "1,short,0,25,45,20,4,a-0,20,20,finished,,\n"
            "0,long,1,45,160,115,4,a-0,100,100,finished,,\n");
  fs::remove_all(d);
}

// `orrery explain` on a hand-built trace (tests/fixtures/explain): J0 (4 GPUs, 100 s) at 0,
// J1 (4 GPUs, 20 s) at 10 on one 4-GPU node. Under tiresias:thresholds=100 (worked out in
// src/sim/tiresias_test.cc) J0 is demoted at 25, preempted with a 40 s overhead, restarts at
// 45 and ends at 160; under FIFO J1 waits for J0 (start 100).
TEST(CliTest, ExplainTiresiasDecisionsAndJson) {
  const std::string fx = std::string(ORRERY_SOURCE_DIR) + "/tests/fixtures/explain/";
  const std::string base = "explain " + fx + "tiny.csv ";
  const std::string cl = " --cluster " + fx + "one-node.toml";
  Out t = RunCmd(base + "0" + cl + " --policy tiresias:thresholds=100");
  ASSERT_EQ(t.status, 0) << t.text;
  for (const char* want : {"job 0 (long)", "queue Q0 of 2", "t=25", "demoted to Q1 at attained service 100",
                           "preempted by Tiresias", "overhead_s=40", "remaining_s=115", "t=45",
                           "outcome: started 0, ended 160, queue delay 20 s, JCT 160 s, 1 preemption(s)"})
    EXPECT_NE(t.text.find(want), std::string::npos) << "missing '" << want << "' in\n" << t.text;
  // The waiting job says why it waits (Tiresias' blocking reason) and, by source id, is found.
  Out w = RunCmd(base + "short --source-id" + cl + " --policy tiresias:thresholds=100");
  ASSERT_EQ(w.status, 0) << w.text;
  EXPECT_NE(w.text.find("higher-priority Tiresias jobs hold the VC's GPUs [tiresias]"), std::string::npos) << w.text;
  EXPECT_NE(w.text.find("started 25, ended 45"), std::string::npos) << w.text;
  // Its predicted start at arrival (t=10) is a dry run of Tiresias: J0 is demoted at 25 and
  // preempted for it, so 25 (a list schedule of believed ends said J0's end, 100).
  EXPECT_NE(w.text.find("t=10         scheduler  predicted start 25 (a dry run of the policy"), std::string::npos) << w.text;
  // JSON: FIFO blocks J1 behind J0 for lack of free GPUs.
  Out j = RunCmd(base + "1" + cl + " --policy fifo --json");
  ASSERT_EQ(j.status, 0) << j.text;
  for (const char* want : {"\"job_id\": 1", "\"start\": 100", "\"queue_delay\": 90", "\"kind\": \"pending\"",
                           "not enough free GPUs in the VC [consolidate]", "\"kind\": \"finished\"",
                           "\"kind\": \"predicted\"", "\"predicted_start\": 100"})
    EXPECT_NE(j.text.find(want), std::string::npos) << "missing '" << want << "' in\n" << j.text;
  // An estimator's explanation (untrained GA2M: the fallback) is part of the story.
  Out g = RunCmd(base + "1" + cl + " --policy qssf:estimator=ga2m");
  ASSERT_EQ(g.status, 0) << g.text;
  EXPECT_NE(g.text.find("estimated duration 3600 s by ga2m"), std::string::npos) << g.text;
  EXPECT_NE(g.text.find("no model trained yet"), std::string::npos) << g.text;
  // Bad job ids fail with exit status 2.
  Out bad = RunCmd(base + "7" + cl);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.text.find("expected a job index in [0, 2)"), std::string::npos) << bad.text;
  EXPECT_EQ(RunCmd(base + "nosuch --source-id" + cl).status, 2);
}

// An SWF log without --cluster runs on the machine its header describes (one pool of
// MaxNodes nodes x MaxProcs/MaxNodes processors, processors as GPUs) and says so.
// tiny.swf: 4 nodes x 4 processors; job 3 (16 processors, arrives at 20) waits for jobs
// 1 (4, ends 100) and 2 (8, ends 60) under FIFO: start 100, queue 80 s.
TEST(CliTest, SwfWithoutClusterRunsOnItsHeaderMachine) {
  const std::string swf = std::string(ORRERY_SOURCE_DIR) + "/tests/fixtures/swf/tiny.swf";
  fs::path d = TempDir("swf");
  Out o = RunCmd("simulate " + swf + " --policy fifo --out-dir " + d.string());
  ASSERT_EQ(o.status, 0) << o.text;
  EXPECT_NE(o.text.find("cluster inferred from the SWF header (MaxProcs 16, MaxNodes 4): one pool of 4 nodes"),
            std::string::npos) << o.text;
  EXPECT_NE(o.text.find("4 jobs on cluster 'swf-header' (4 nodes, 16 GPUs, 1 VCs)"), std::string::npos) << o.text;
  std::string jobs = Slurp(d / "fifo" / "jobs.csv");
  EXPECT_NE(jobs.find("\n2,3,default,16,1000,20,100,130,80,"), std::string::npos) << jobs;
  // --cluster auto is the same inference.
  EXPECT_EQ(RunCmd("simulate " + swf + " --cluster auto --policy fifo --no-output").status, 0);
  // No MaxProcs: nothing to infer from, exit 2 with a hint.
  Out n = RunCmd("simulate " + std::string(ORRERY_SOURCE_DIR) + "/tests/fixtures/swf/no-maxprocs.swf --no-output");
  EXPECT_EQ(n.status, 2) << n.text;
  EXPECT_NE(n.text.find("no MaxProcs"), std::string::npos) << n.text;
  EXPECT_NE(n.text.find("--cluster"), std::string::npos) << n.text;
  fs::remove_all(d);
}

// A run in which no job can run stops with the reasons and a hint (exit 2), writing nothing:
// the SWF log's CPU jobs on the GPU cluster of Venus.
TEST(CliTest, RunInWhichNoJobCanRunFails) {
  const std::string swf = std::string(ORRERY_SOURCE_DIR) + "/tests/fixtures/swf/tiny.swf";
  fs::path d = TempDir("nojob");
  Out o = RunCmd("simulate " + swf + " --cluster " + std::string(ORRERY_SOURCE_DIR) +
                 "/configs/helios-venus.toml --out-dir " + d.string());
  EXPECT_EQ(o.status, 2) << o.text;
  EXPECT_NE(o.text.find("no job of the 4 can run on cluster 'helios-venus' (CPU-only job (use --cpu-jobs to simulate): 4)"),
            std::string::npos)
      << o.text;
  EXPECT_NE(o.text.find("Hint:"), std::string::npos) << o.text;
  EXPECT_FALSE(fs::exists(d / "summary.json"));
  // A trace format that does not describe its cluster: --cluster auto is refused.
  Out a = RunCmd("simulate " + std::string(ORRERY_SOURCE_DIR) + "/tests/fixtures/trace/replay_philly.csv --cluster auto");
  EXPECT_EQ(a.status, 2) << a.text;
  EXPECT_NE(a.text.find("does not describe its cluster"), std::string::npos) << a.text;
  fs::remove_all(d);
}

// A generated preset runs on its own cluster (Saturn: one pool of 2,080 GPUs), not on Venus.
TEST(CliTest, GeneratedPresetRunsOnItsOwnCluster) {
  Out o = RunCmd("simulate --generate helios-saturn --days 1 --policy fifo --no-output");
  ASSERT_EQ(o.status, 0) << o.text;
  EXPECT_NE(o.text.find("on cluster 'generated:helios-saturn' (260 nodes, 2080 GPUs, 1 VCs)"), std::string::npos)
      << o.text;
  EXPECT_NE(o.text.find("not run (rejected/skipped)        0/0"), std::string::npos) << o.text;
}

TEST(CliTest, DiagnoseJsonKeysExitCodesAndRuleErrors) {
  fs::path d = TempDir("diagnose");
  std::ofstream(d / "oom.log") << "step 10\n[rank3]: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB\n";
  std::ofstream(d / "empty.log");
  Out j = RunCmd("diagnose --json " + (d / "oom.log").string());
  ASSERT_EQ(j.status, 0) << j.text;
  EXPECT_EQ(j.text,
            "{\"category\":\"framework\",\"subtype\":\"cuda_oom\",\"retry\":false,\"suspect_node\":\"\",\"evidence\":[\"[rank3]: "
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB\"]}\n");
  // Standard input, and an empty log: diagnosed as unknown, exit status 1.
  EXPECT_EQ(RunCmd("diagnose - < " + (d / "oom.log").string()).status, 0);
  Out e = RunCmd("diagnose --json " + (d / "empty.log").string());
  EXPECT_EQ(e.status, 1);
  EXPECT_NE(e.text.find("\"category\":\"unknown\""), std::string::npos) << e.text;
  // A bad rule file: located message, exit status 2.
  std::ofstream(d / "bad.toml") << "[[rule]]\nname = \"x\"\ncategory = \"hardware\"\n";
  Out b = RunCmd("diagnose --rules " + (d / "bad.toml").string() + " " + (d / "oom.log").string());
  EXPECT_EQ(b.status, 2);
  EXPECT_NE(b.text.find((d / "bad.toml").string() + ":3:12: rule 'x' key 'category': expected one of infrastructure"),
            std::string::npos)
      << b.text;
  EXPECT_EQ(RunCmd("diagnose " + (d / "missing.log").string()).status, 2);
}

TEST(CliTest, ProgressJsonKeys) {
  fs::path d = TempDir("progress");
  std::ofstream(d / "train.log") << "iter 10: loss 2.5000, time 500.00ms\niter 11: loss 2.4000, time 500.00ms\n";
  Out j = RunCmd("progress --json " + (d / "train.log").string());
  ASSERT_EQ(j.status, 0) << j.text;
  EXPECT_EQ(j.text,
            "{\"framework\":\"nanogpt\",\"step\":11,\"total_steps\":null,\"epoch\":null,\"loss\":2.4,\"seconds_per_step\":0.5,"
            "\"eta_s\":null,\"reader\":\"rule:nanogpt\"}\n");
  std::ofstream(d / "none.log") << "hello\n";
  EXPECT_EQ(RunCmd("progress " + (d / "none.log").string()).status, 1);
}

TEST(CliTest, EvaluateScoresOnlyTheNamedRecords) {
  fs::path d = TempDir("evaluate-ids");
  // Two progress records: A is read right (step 11, loss 2.4, 0.5 s/step), B's labels are
  // wrong on purpose (step 99). --ids A scores A alone; --except-ids A scores B alone.
  std::ofstream(d / "p.jsonl")
      << R"({"id": "A", "text": "iter 11: loss 2.4000, time 500.00ms\n", "framework": "nanogpt", "step": 11, "total_steps": "", "epoch": "", "loss": 2.4, "seconds_per_step": 0.5})"
      << "\n"
      << R"({"id": "B", "text": "iter 11: loss 2.4000, time 500.00ms\n", "framework": "nanogpt", "step": 99, "total_steps": "", "epoch": "", "loss": 2.4, "seconds_per_step": 0.5})"
      << "\n";
  Out a = RunCmd("progress evaluate " + (d / "p.jsonl").string() + " --ids A");
  ASSERT_EQ(a.status, 0) << a.text;
  EXPECT_NE(a.text.find("step              100.0 % (1/1)"), std::string::npos) << a.text;
  Out b = RunCmd("progress evaluate " + (d / "p.jsonl").string() + " --except-ids A");
  ASSERT_EQ(b.status, 0) << b.text;
  EXPECT_NE(b.text.find("step                0.0 % (0/1)"), std::string::npos) << b.text;
  EXPECT_NE(b.text.find("miss B step: want 99, got 11"), std::string::npos) << b.text;
  // Diagnosis: a CUDA OOM labelled right (X) and a bare wrapper labelled script (Y), which
  // the rules answer `unknown`: withheld, not confidently wrong.
  std::ofstream(d / "f.jsonl")
      << R"({"id": "X", "text": "torch.OutOfMemoryError: CUDA out of memory.\n", "category": "framework", "subtype": "cuda_oom", "retry": "no", "suspect_node": ""})"
      << "\n"
      << R"({"id": "Y", "text": "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n", "category": "script", "subtype": "user_code_exception", "retry": "no", "suspect_node": ""})"
      << "\n";
  Out x = RunCmd("diagnose evaluate " + (d / "f.jsonl").string() + " --ids X,Y");
  ASSERT_EQ(x.status, 0) << x.text;
  EXPECT_NE(x.text.find("category accuracy   50.0 % (1/2)"), std::string::npos) << x.text;
  EXPECT_NE(x.text.find("category withheld  1 (unknown), confidently wrong 0"), std::string::npos) << x.text;
}

namespace {

// A DeepSpeed config with a number beyond a double's range once aborted `orrery inspect`
// (nlohmann's out_of_range escaped: exit 134). It is a located warning and, nothing else
// being read, exit 2. `{"train_batch_size": ` is 21 bytes: the number is at column 22.
TEST(CliTest, InspectNumberBeyondADoubleIsALocatedErrorNotAnAbort) {
  fs::path d = TempDir("inspect_overflow");
  const std::string ds = (d / "ds_config.json").string();
  std::ofstream(ds) << "{\"train_batch_size\": 10e11190}\n";
  Out o = RunCmd("inspect " + ds);
  EXPECT_EQ(o.status, 2) << o.text;
  EXPECT_NE(o.text.find("warning: " + ds +
                        ":1:22: expected a number within a double's range (magnitude below 1.8e308), got \"10e11190\""),
            std::string::npos)
      << o.text;
  Out j = RunCmd("inspect --json " + ds);
  EXPECT_EQ(j.status, 2) << j.text;
}

}  // namespace
