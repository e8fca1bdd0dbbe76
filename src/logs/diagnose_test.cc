#include "logs/diagnose.h"

#include <gtest/gtest.h>

#include <random>

namespace orrery::logs {
namespace {

std::string Join(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) s += l + "\n";
  return s;
}

Diagnosis DiagnoseLines(const std::vector<std::string>& lines) { return Diagnoser().Diagnose(Join(lines)); }

const char* kTimeout =
    "[rank0]:[E ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=80, "
    "OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600123 milliseconds before timing out.";

TEST(DiagnoseTest, OomOnOneRankBeatsTheTimeoutsItCaused) {
  // Rank 3 runs out of GPU memory; the other ranks wait in the all-reduce until the watchdog
  // fires. The timeouts come last, but the OOM is the cause (cuda_oom 80 > nccl_timeout 40).
  Diagnosis d = DiagnoseLines({"[rank3]: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", kTimeout, kTimeout});
  EXPECT_EQ(d.category, Category::kFramework);
  EXPECT_EQ(d.subtype, "cuda_oom");
  EXPECT_FALSE(d.retry);
  EXPECT_EQ(d.rule, "cuda_oom");
}

TEST(DiagnoseTest, XidNamesTheGpuBehindATimeout) {
  Diagnosis d = DiagnoseLines({kTimeout, "[Sun Feb 23 16:24:24 2025] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."});
  EXPECT_EQ(d.category, Category::kInfrastructure);
  EXPECT_EQ(d.subtype, "gpu_xid");
  EXPECT_TRUE(d.retry);
  EXPECT_EQ(d.suspect_node, "PCI:0000:3b:00");
}

TEST(DiagnoseTest, PlainTimeoutIsRetriedWithoutSuspect) {
  Diagnosis d = DiagnoseLines({"step 100 loss 2.0", kTimeout});
  EXPECT_EQ(d.subtype, "nccl_timeout");
  EXPECT_TRUE(d.retry);
  EXPECT_EQ(d.suspect_node, "");
  ASSERT_EQ(d.evidence.size(), 1u);
  EXPECT_EQ(d.evidence[0], kTimeout);
}

TEST(DiagnoseTest, ChainedExceptionsFollowedBackToTheRoot) {
  const std::vector<std::string> log = {
      "Traceback (most recent call last):",
      "  File \"train.py\", line 3, in <module>",
      "KeyError: 'labels'",
      "",
      "During handling of the above exception, another exception occurred:",
      "",
      "Traceback (most recent call last):",
      "  File \"train.py\", line 5, in <module>",
      "ValueError: could not build batch",
  };
  Diagnosis root = DiagnoseLines(log);
  EXPECT_EQ(root.subtype, "user_code_exception");
  ASSERT_FALSE(root.evidence.empty());
  EXPECT_EQ(root.evidence[0], "KeyError: 'labels'");
  // Without the chain marker the two exceptions are unrelated and the last one ended the job.
  std::vector<std::string> unchained = log;
  unchained[4] = "retrying";
  Diagnosis last = DiagnoseLines(unchained);
  ASSERT_FALSE(last.evidence.empty());
  EXPECT_EQ(last.evidence[0], "ValueError: could not build batch");
}

// Causes above their symptoms, one row per case (the default rules' priorities in comments).
TEST(DiagnoseTest, CausesAboveTheirSymptoms) {
  const struct {
    std::vector<std::string> lines;
    const char* rule;
    bool retry;
  } cases[] = {
      // A short checkpoint write (storage_short_write 82) after Lustre evicted the client
      // (storage_transient 83): transient, retried.
      {{"RuntimeError: [enforce fail at inline_container.cc:603] . unexpected pos 2415919488 vs 2415919376",
        "LustreError: 167-0: scratch-OST002a-osc: This client was evicted by scratch-OST002a; in progress operations "
        "using this service will fail."},
       "storage_transient", true},
      // The same short write alone reads as a full file system: not retried.
      {{"RuntimeError: [enforce fail at inline_container.cc:603] . unexpected pos 2415919488 vs 2415919376"},
       "storage_short_write", false},
      // Ray's list of possible causes names the OOM killer; the worker's own segfault is the cause.
      {{"(RayTrainWorker pid=5) Fatal Python error: Segmentation fault",
        "Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits. There are some potential root "
        "causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage."},
       "segfault", false},
      // The container never started (container_start 86 > storage_full 84): another node passes.
      {{"slurmstepd: error: pyxis:     Write failed because No space left on device",
        "slurmstepd: error: pyxis: couldn't start container"},
       "container_start", true},
      // vLLM found no GPU memory left for the KV cache: a memory budget, as a CUDA OOM.
      {{"ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing "
        "the engine."},
       "cuda_oom", false},
      // A cuDNN older than the one JAX was built against leaves one CPU device: the mesh error after it is a symptom.
      {{"CUDA backend failed to initialize: Found cuDNN version 8904, but JAX was built against version 9100, which is newer.",
        "ValueError: Number of devices 1 must equal the product of mesh_shape (4, 8)"},
       "version_mismatch", false},
  };
  for (const auto& c : cases) {
    Diagnosis d = DiagnoseLines(c.lines);
    EXPECT_EQ(d.rule, c.rule) << c.lines.front();
    EXPECT_EQ(d.retry, c.retry) << c.lines.front();
  }
}

TEST(DiagnoseTest, TieBreakFirstAndLast) {
  RuleSet rs = DefaultRules();
  rs.tie_break = TieBreak::kLast;
  std::string log = Join({"KeyError: 'a'", "During handling of the above exception, another exception occurred:", "IndexError: b"});
  EXPECT_EQ(Diagnoser(rs).Diagnose(log).evidence[0], "IndexError: b");
  rs.tie_break = TieBreak::kFirst;
  EXPECT_EQ(Diagnoser(rs).Diagnose(log).evidence[0], "KeyError: 'a'");
}

TEST(DiagnoseTest, SlurmNodeFailureNamesTheNode) {
  Diagnosis d = DiagnoseLines({"srun: error: Node failure on gpu-node-17",
                     "slurmstepd: error: *** JOB 77 ON gpu-node-17 CANCELLED AT 2024-05-01T10:00:00 DUE TO NODE FAILURE ***"});
  EXPECT_EQ(d.subtype, "node_failure");
  EXPECT_EQ(d.category, Category::kInfrastructure);
  EXPECT_EQ(d.suspect_node, "gpu-node-17");
}

TEST(DiagnoseTest, HostOomKillBeatsTheSignal) {
  Diagnosis d = DiagnoseLines({"failed (exitcode: -9) local_rank: 0 (pid: 12) of binary: python",
                     "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=77.0. Some of your processes may have been killed"});
  EXPECT_EQ(d.subtype, "host_oom_kill");
  EXPECT_FALSE(d.retry);
}

TEST(DiagnoseTest, OverflowRunNeedsFourLines) {
  std::vector<std::string> log;
  for (int i = 0; i < 3; ++i)
    log.push_back("[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: " + std::to_string(64 >> i) + ", reducing to " +
                  std::to_string(32 >> i));
  EXPECT_EQ(DiagnoseLines(log).category, Category::kUnknown);  // three overflows happen in healthy fp16 runs
  log.push_back("[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 8, reducing to 4");
  EXPECT_EQ(DiagnoseLines(log).subtype, "loss_scale_underflow");
}

TEST(CompressTest, RoutineLinesCollapseErrorContextStays) {
  std::vector<std::string> log;
  for (int i = 1; i <= 5000; ++i)
    log.push_back(" iteration " + std::to_string(i) + "/ 10000 | elapsed time per iteration (ms): 512.3 | lm loss: 2.5E+00 |");
  for (int r = 0; r < 64; ++r)
    log.push_back("[rank" + std::to_string(r) + "]: RuntimeError: CUDA error: an illegal memory access was encountered");
  CompressedLog c = Compress(Join(log), CompressOptions{2, 0});
  EXPECT_EQ(c.total_lines, 5064u);
  // Two templates (progress, the per-rank error), each: the first two and the last line.
  EXPECT_EQ(c.lines.size(), 6u);
  // With a verbatim tail of 10 lines (errors of ranks 54-63): progress first two and last (3),
  // errors of ranks 0 and 1 (2), the tail (10, rank 63 among them): 15.
  EXPECT_EQ(Compress(Join(log), CompressOptions{2, 10}).lines.size(), 15u);
  EXPECT_EQ(c.lines.back().text, "[rank63]: RuntimeError: CUDA error: an illegal memory access was encountered");
  EXPECT_EQ(c.lines.back().repeats, 64u);
  EXPECT_EQ(Diagnoser().Classify(c).subtype, "illegal_memory_access");
}

TEST(DiagnoseTest, BadInputNeverCrashes) {
  EXPECT_EQ(Diagnoser().Diagnose("").category, Category::kUnknown);
  EXPECT_EQ(Diagnoser().Diagnose("").note, "empty log");
  std::mt19937 rng(7);
  std::string junk(1 << 20, '\0');
  for (char& c : junk) c = static_cast<char>(rng());
  (void)Diagnoser().Diagnose(junk);
  std::string one_line(8 << 20, 'a');
  one_line += " CUDA out of memory";  // beyond the line cap: cut, so not seen
  EXPECT_EQ(Diagnoser().Diagnose(one_line).category, Category::kUnknown);
  EXPECT_EQ(Diagnoser().Diagnose("\xff\xfe CUDA out of memory \xc3\x28").subtype, "cuda_oom");
}

}  // namespace
}  // namespace orrery::logs

namespace orrery::logs {
namespace {

// Messages as today's PyTorch, NCCL, CUDA, Slurm and the kernel print them (written for this
// test from the libraries' message formats, not copied from the corpus).
struct Case {
  const char* log;
  Category category;
  const char* subtype;
  bool retry;
  const char* suspect;
};

TEST(DiagnoseTest, MessageCatalogue) {
  const Case cases[] = {
      {"RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219, unhandled cuda error, NCCL version 2.14.3\n"
       "ncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\nCuda failure 'out of memory'",
       Category::kFramework, "cuda_oom", false, ""},
      {"slurmstepd: error: *** JOB 4242 ON a100-07 CANCELLED AT 2024-03-01T12:00:00 DUE TO TIME LIMIT ***",
       Category::kInfrastructure, "time_limit", false, ""},
      {"ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory", Category::kFramework,
       "version_mismatch", false, ""},
      {"RuntimeError: The size of tensor a (4096) must match the size of tensor b (2048) at non-singleton dimension 1",
       Category::kScript, "shape_mismatch", false, ""},
      {"OSError: [Errno 28] No space left on device: '/ckpt/step_1000'", Category::kInfrastructure, "storage_io", false, ""},
      {"train.py: error: unrecognized arguments: --lr_sheduler cosine", Category::kScript, "bad_arguments", false, ""},
      {"RuntimeError: No CUDA GPUs are available", Category::kInfrastructure, "gpu_unavailable", true, ""},
      {"[  123.456] Out of memory: Killed process 9876 (python) total-vm:123456kB", Category::kInfrastructure, "host_oom_kill",
       false, ""},
      {"Fatal Python error: Segmentation fault\n\nThread 0x00007f (most recent call first):", Category::kFramework, "segfault",
       false, ""},
      {"WARNING: Loss is NaN at step 1200, stopping", Category::kFramework, "loss_nan", false, ""},
      {"ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
       Category::kInfrastructure, "shared_memory", false, ""},
      {"node12:1:2 [3] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.12<0>\n"
       "IndexError: index 5 is out of bounds for dimension 0 with size 5",
       Category::kScript, "user_code_exception", false, ""},
      {"  File \"/usr/lib/python3/site-packages/torch/distributed/fsdp/_runtime_utils.py\", line 9, in _pre_forward\n"
       "    assert handle._training_state == HandleTrainingState.IDLE\nAssertionError",
       Category::kFramework, "fsdp_assertion", false, ""},
      {"[Mon Jan  1 00:00:00 2024] NVRM: Xid (PCI:0000:4e:00): 48, pid=77, DBE (double bit error) ECC error",
       Category::kInfrastructure, "gpu_ecc", true, "PCI:0000:4e:00"},
  };
  for (const Case& c : cases) {
    Diagnosis d = Diagnoser().Diagnose(c.log);
    EXPECT_EQ(d.category, c.category) << c.log;
    EXPECT_EQ(d.subtype, c.subtype) << c.log;
    EXPECT_EQ(d.retry, c.retry) << c.log;
    EXPECT_EQ(d.suspect_node, c.suspect) << c.log;
  }
}

}  // namespace
}  // namespace orrery::logs

namespace orrery::logs {
namespace {

TEST(DiagnoseTest, AssertionNearADeepSpeedFrame) {
  // The DeepSpeed frame is the fourth of six; `near` looks 15 kept lines back from the
  // AssertionError and finds it (deepspeed_assertion 70 > user_code_exception 50).
  std::string log = "Traceback (most recent call last):\n";
  for (const char* f : {"/w/train.py", "/w/model.py", "/w/trainer.py", "/env/deepspeed/runtime/engine.py", "/w/utils.py",
                        "/w/more.py"})
    log += std::string("  File \"") + f + "\", line 10, in step\n    x = y\n";
  log += "AssertionError: bad partition\n";
  EXPECT_EQ(Diagnoser().Diagnose(log).subtype, "deepspeed_assertion");
  // Twenty frames later the DeepSpeed one is out of the window: a plain assertion.
  std::string far = log.substr(0, log.rfind("AssertionError"));
  for (int i = 0; i < 20; ++i) far += "  File \"/w/f" + std::to_string(i) + ".py\", line 1, in g\n";
  far += "AssertionError: bad partition\n";
  EXPECT_EQ(Diagnoser().Diagnose(far).subtype, "user_code_exception");
}

}  // namespace
}  // namespace orrery::logs

namespace orrery::logs {
namespace {

// A rule below [diagnose] unknown_below withholds the category; one at or above it decides.
TEST(DiagnoseTest, WeakEvidenceWithholdsTheCategory) {
  auto rs = ParseRules(R"([diagnose]
unknown_below = 0.4

[[rule]]
name = "weak"
category = "script"
subtype = "user_code_exception"
retry = false
confidence = 0.3
any = ["ChildFailedError"]

[[rule]]
name = "strong"
category = "framework"
subtype = "cuda_oom"
retry = false
priority = 10
confidence = 0.4
any = ["CUDA out of memory"]
)",
                       "r.toml");
  ASSERT_TRUE(rs.ok()) << rs.error().message;
  EXPECT_DOUBLE_EQ(rs->unknown_below, 0.4);
  Diagnoser d(*rs);
  Diagnosis weak = d.Diagnose("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n");
  EXPECT_EQ(weak.category, Category::kUnknown);  // 0.3 < 0.4
  EXPECT_EQ(weak.subtype, "unknown");
  EXPECT_EQ(weak.rule, "weak");  // the rule and its evidence stay
  ASSERT_EQ(weak.evidence.size(), 1u);
  Diagnosis strong = d.Diagnose("RuntimeError: CUDA out of memory.\nChildFailedError:\n");
  EXPECT_EQ(strong.category, Category::kFramework);  // 0.4 is not below 0.4
  EXPECT_EQ(strong.subtype, "cuda_oom");
}

// The embedded rules: a bare torchrun wrapper is weak evidence; a KeyError under it is not.
TEST(DiagnoseTest, DefaultRulesWithholdOnABareWrapper) {
  Diagnosis bare = DiagnoseLines({"torch.distributed.elastic.multiprocessing.errors.ChildFailedError:", "train.py FAILED"});
  EXPECT_EQ(bare.category, Category::kUnknown);
  Diagnosis keyed = DiagnoseLines({"KeyError: 'label'", "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:"});
  EXPECT_EQ(keyed.category, Category::kScript);
  EXPECT_EQ(keyed.subtype, "user_code_exception");
}

}  // namespace
}  // namespace orrery::logs

namespace orrery::logs {
namespace {

// Startup lines that name a transport or an allocator are not failures: the user's error decides.
TEST(DiagnoseTest, BenignTransportLinesDoNotOutrankTheError) {
  Diagnosis d = DiagnoseLines({"ip-10-0-3-17:4411:4411 [0] NCCL INFO NET/OFI Using aws-ofi-nccl 1.7.4",
                               "ip-10-0-3-17:4411:4411 [0] NCCL WARN NET/OFI Only EFA provider is supported",
                               "KeyError: 'labels'"});
  EXPECT_EQ(d.category, Category::kScript);
  EXPECT_EQ(d.subtype, "user_code_exception");
  // NCCL retrying a connection at startup is a warning; the KeyError decides.
  d = DiagnoseLines({"node3:5521:5602 [1] NCCL WARN Call to connect returned Connection refused, retrying", "KeyError: 'labels'"});
  EXPECT_EQ(d.subtype, "user_code_exception");
}

}  // namespace
}  // namespace orrery::logs
