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

namespace orrery::logs {
namespace {

// The wordings of more schedulers, orchestrators, clouds, accelerator runtimes, collective
// libraries, frameworks, storage services and environments (the rules of the section "more
// schedulers, runtimes and libraries" and the words added to the older rules), and lines that
// must not decide (a warning, a launcher's function name, a list of possible causes). Excerpts
// written for this test in the style each program prints; one row per wording, by category
// and subtype.
struct WordingCase {
  std::vector<std::string> lines;
  Category category;
  const char* subtype;
  bool retry;
};

const WordingCase kMoreSoftwareWordings[] = {
  // infrastructure / accelerator_fault
  {{"jax.errors.JaxRuntimeError: DATA_LOSS: Core halted unexpectedly: INTERNAL: Accelerator device halted prematurely"},
   Category::kInfrastructure, "accelerator_fault", true},
  {{"google.api_core.exceptions.FailedPrecondition: 400 The TPU node is being repaired"},
   Category::kInfrastructure, "accelerator_fault", true},
  // infrastructure / container_runtime
  {{"  Warning  Failed     40s   kubelet  Failed to pull image \"nvcr.io/nvidia/pytorch:24.05-py3\": rpc error: code = Unknown desc = failed to pull and unpack image: received unexpected HTTP status: 503 Service Unavailable",
    "  Normal   BackOff    3s    kubelet  Back-off pulling image \"nvcr.io/nvidia/pytorch:24.05-py3\""},
   Category::kInfrastructure, "container_runtime", true},
  {{"ERROR: could not load image nvcr.io/nvidia/nemo:24.07: registry unreachable (dial tcp: i/o timeout)"},
   Category::kInfrastructure, "container_runtime", true},
  // infrastructure / gpu_ecc
  {{"RuntimeError: CUDA error: uncorrectable ECC error encountered"},
   Category::kInfrastructure, "gpu_ecc", true},
  {{"Error: DCGM_FR_VOLATILE_DBE_DETECTED: Detected 2 volatile double-bit ECC error(s) in GPU 3."},
   Category::kInfrastructure, "gpu_ecc", true},
  {{"ERROR: GPU health check failed on host a100-22: GPU 3 reports pending retired pages"},
   Category::kInfrastructure, "gpu_ecc", true},
  // infrastructure / gpu_unavailable
  {{"RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable"},
   Category::kInfrastructure, "gpu_unavailable", true},
  {{"RuntimeError: CUDA error: MPS client failed to connect to the MPS control daemon or the MPS server"},
   Category::kInfrastructure, "gpu_unavailable", true},
  {{"RuntimeError: CUDA error: system not yet initialized",
    "nv-fabricmanager.service: Failed with result 'exit-code'."},
   Category::kInfrastructure, "gpu_unavailable", true},
  {{"No devices were found"},
   Category::kInfrastructure, "gpu_unavailable", true},
  {{"RuntimeError: synStatus=26 [Device not found] Device acquire failed."},
   Category::kInfrastructure, "gpu_unavailable", true},
  {{"RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!"},
   Category::kInfrastructure, "gpu_unavailable", true},
  {{"unsloth: NotImplementedError: Unsloth: No NVIDIA GPU found? Unsloth currently only supports GPUs!"},
   Category::kInfrastructure, "gpu_unavailable", true},
  {{"NVIDIA GPU Operator: driver daemonset not ready on node gpu-pool-3: nvidia-driver-daemonset CrashLoopBackOff"},
   Category::kInfrastructure, "gpu_unavailable", true},
  {{"hipErrorNoDevice: no ROCm-capable device is detected"},
   Category::kInfrastructure, "gpu_unavailable", true},
  {{"RuntimeError: Failed to initialize torch_xla: TPU not found"},
   Category::kInfrastructure, "gpu_unavailable", true},
  {{"jax._src.xla_bridge: RuntimeError: Unable to initialize backend 'cuda': FAILED_PRECONDITION: No visible GPU devices."},
   Category::kInfrastructure, "gpu_unavailable", true},
  // infrastructure / gpu_xid
  {{"[ERROR] DCGM_FR_THERMAL_VIOLATIONS: There were thermal violations totaling 14.2 seconds for GPU 2"},
   Category::kInfrastructure, "gpu_xid", true},
  {{"HW Exception by GPU node-2 (Agent handle: 0x5581a7e0) reason :GPU Hang"},
   Category::kInfrastructure, "gpu_xid", true},
  {{"WARNING: infoROM is corrupted at gpu 0000:3B:00.0"},
   Category::kInfrastructure, "gpu_xid", true},
  {{"RuntimeError: GPU is in an unrecoverable state, please reset the device"},
   Category::kInfrastructure, "gpu_xid", true},
  {{"RuntimeError: cuda runtime error (999) : unknown error at /pytorch/aten/src/THC/THCGeneral.cpp:47"},
   Category::kInfrastructure, "gpu_xid", true},
  {{"Job aborted: the GPU driver crashed (nvidia kernel module reported a fatal error)"},
   Category::kInfrastructure, "gpu_xid", true},
  {{"The GPU on this node (GPU-6f1e) was marked as failed by the device plugin; the pod was restarted on another node"},
   Category::kInfrastructure, "gpu_xid", true},
  {{"[WARN] Thermal: GPU 3 reached 95C, hardware slowdown engaged",
    "[ERROR] GPU 3: power brake asserted, kernel execution halted",
    "RuntimeError: CUDA error: unspecified launch failure"},
   Category::kInfrastructure, "gpu_xid", true},
  // infrastructure / hang
  {{"[HOROVOD] One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds."},
   Category::kInfrastructure, "hang", true},
  {{"kernel: INFO: task python:8812 blocked for more than 120 seconds."},
   Category::kInfrastructure, "hang", true},
  {{"[watchdog] training stalled: no step completed in 1800 s, killing job"},
   Category::kInfrastructure, "hang", true},
  {{"pytorch_lightning.utilities.exceptions.DeadlockDetectedException: DeadLock detected from rank: 3"},
   Category::kInfrastructure, "hang", true},
  // infrastructure / host_oom_kill
  {{"       JobID    JobName      State ExitCode",
    "------------ ---------- ---------- --------",
    "      551201   pretrain OUT_OF_ME+    0:125"},
   Category::kInfrastructure, "host_oom_kill", false},
  {{"slurmstepd: error: Step 4411.0 exceeded virtual memory limit (81234560 > 67108864), being killed"},
   Category::kInfrastructure, "host_oom_kill", false},
  {{"TERM_SWAP: job killed after reaching LSF swap usage limit.",
    "Exited with signal termination: Killed."},
   Category::kInfrastructure, "host_oom_kill", false},
  {{"    Last State:     Terminated",
    "      Reason:       OOMKilled",
    "      Exit Code:    137"},
   Category::kInfrastructure, "host_oom_kill", false},
  {{"ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.",
    "Memory on the node (IP: 10.2.3.4, ID: 7f1c) where the task (actor ID: 2c9a, name=RolloutWorker.__init__, pid=4411) was running was 58.91GB / 61.98GB (0.950428), which exceeds the memory usage threshold of 0.95. Ray killed this worker (ID: 9ab1) because it was the most recently scheduled task"},
   Category::kInfrastructure, "host_oom_kill", false},
  {{"Container killed by YARN for exceeding memory limits. 34.1 GB of 34 GB physical memory used. Consider boosting spark.yarn.executor.memoryOverhead."},
   Category::kInfrastructure, "host_oom_kill", false},
  {{"Exception: Out of memory: The CPU RAM used by the process exceeded the limit of 512 GiB"},
   Category::kInfrastructure, "host_oom_kill", false},
  {{"Hold reason: Error from slot1_3@gpu-12.cluster: Job has gone over cgroup memory limit of 16384 megabytes. Last measured usage: 16402 megabytes."},
   Category::kInfrastructure, "host_oom_kill", false},
  {{"Process 4411 was killed by the kernel: out of memory (RSS 250 GiB)"},
   Category::kInfrastructure, "host_oom_kill", false},
  {{"AWS Batch: Essential container in task exited - OutOfMemoryError: Container killed due to memory usage"},
   Category::kInfrastructure, "host_oom_kill", false},
  {{"Your job was terminated because it used 130 GB of memory, more than the 128 GB requested"},
   Category::kInfrastructure, "host_oom_kill", false},
  {{"memory.max reached for cgroup /slurm/uid_1000/job_55; process python (pid 4411) killed"},
   Category::kInfrastructure, "host_oom_kill", false},
  // infrastructure / nccl_system_error
  {{"torch.distributed.DistBackendError: [3] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer"},
   Category::kInfrastructure, "nccl_system_error", true},
  {{"RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by remote peer [10.1.0.7]:41233"},
   Category::kInfrastructure, "nccl_system_error", true},
  {{"[E ProcessGroupGloo.cpp:138] Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error"},
   Category::kInfrastructure, "nccl_system_error", true},
  {{"E0601 12:00:00.000 torch/csrc/distributed/c10d/TCPStore.cpp:1001] [c10d] The TCP store's server has stopped accepting requests; all clients are disconnected."},
   Category::kInfrastructure, "nccl_system_error", true},
  {{"tensorflow.python.framework.errors_impl.UnavailableError: Socket closed",
    "Additional GRPC error information from remote target /job:worker/replica:0/task:3"},
   Category::kInfrastructure, "nccl_system_error", true},
  {{"[rank2]: torch.distributed.DistBackendError: [2] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0:1', but store->get('0:1') got error: Connection refused"},
   Category::kInfrastructure, "nccl_system_error", true},
  {{"[Errno 111] Connection refused: could not reach the parameter server at 10.0.0.9:6000"},
   Category::kInfrastructure, "nccl_system_error", true},
  {{"RuntimeError: torch.distributed: Port 29500 is already in use; set MASTER_PORT to a free port"},
   Category::kInfrastructure, "nccl_system_error", true},
  {{"RuntimeError: [c10d] TCP client failed to connect/validate to host 10.0.0.1:29500 - retries: 0 - error: Connection refused"},
   Category::kInfrastructure, "nccl_system_error", true},
  {{"torch.distributed.elastic.rendezvous.api.RendezvousClosedError"},
   Category::kInfrastructure, "nccl_system_error", true},
  {{"FATAL: Could not find a free port on the node for the rendezvous"},
   Category::kInfrastructure, "nccl_system_error", true},
  {{"deepspeed: RuntimeError: The server socket has failed to listen on any local network address."},
   Category::kInfrastructure, "nccl_system_error", true},
  // infrastructure / nccl_timeout
  {{"[W reducer.cpp:1389] Warning: find_unused_parameters=True was specified in DDP constructor, but did not find any unused parameters in the forward pass.",
    "[rank0]:[E ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600041 milliseconds before timing out."},
   Category::kInfrastructure, "nccl_timeout", true},
  {{"RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: wait timeout after 600000ms"},
   Category::kInfrastructure, "nccl_timeout", true},
  {{"tensorflow.python.framework.errors_impl.DeadlineExceededError: Collective ops is aborted by: Deadline Exceeded"},
   Category::kInfrastructure, "nccl_timeout", true},
  {{"torch.distributed.DistError: NCCL communicator aborted due to timeout on rank 3 (collective ALLGATHER, seq 991)"},
   Category::kInfrastructure, "nccl_timeout", true},
  {{"gloo: Timed out waiting 1800000ms for recv operation to complete"},
   Category::kInfrastructure, "nccl_timeout", true},
  // infrastructure / network
  {{"huggingface_hub.errors.HfHubHTTPError: 429 Client Error: Too Many Requests for url: https://huggingface.co/api/datasets/allenai/c4/paths-info/main"},
   Category::kInfrastructure, "network", true},
  {{"requests.exceptions.ConnectionError: ('Connection aborted.', RemoteDisconnected('Remote end closed connection without response'))"},
   Category::kInfrastructure, "network", true},
  {{"error: RPC failed; curl 56 GnuTLS recv error (-9): Error decoding the received TLS packet.",
    "fatal: the remote end hung up unexpectedly"},
   Category::kInfrastructure, "network", true},
  {{"Exception: The server returned a 500 error for POST https://api.wandb.ai/graphql"},
   Category::kInfrastructure, "network", true},
  {{"mlflow.exceptions.MlflowException: API request to endpoint /api/2.0/mlflow/runs/log-batch failed with error code 503 != 200"},
   Category::kInfrastructure, "network", true},
  {{"azure.core.exceptions.ServiceRequestError: <urllib3.connection.HTTPSConnection object>: Failed to establish a new connection: [Errno 110] Connection timed out"},
   Category::kInfrastructure, "network", true},
  {{"Training job failed: InternalServerError: We encountered an internal error. Please try again."},
   Category::kInfrastructure, "network", true},
  // infrastructure / network_ib
  {{"gpu-r3n2:88231:88410 [5] NCCL WARN NET/IB : ibv_reg_mr failed: Cannot allocate memory"},
   Category::kInfrastructure, "network_ib", true},
  {{"[1710334411.221] [gpu-r3n2:8823:0] ib_mlx5_log.c:177 UCX ERROR Remote access error on mlx5_2:1/IB (synd 0x13 vend 0x88 hw_synd 0/0)"},
   Category::kInfrastructure, "network_ib", true},
  {{"mlx5: gpu-b03: got completion with error:",
    "00000000 00000000 00000000 00000000",
    "WR_FLUSH_ERR"},
   Category::kInfrastructure, "network_ib", true},
  {{"[2025-02-02 11:22:33] [ERROR] ib0: transmit timeout: latency 32000 msecs"},
   Category::kInfrastructure, "network_ib", true},
  {{"RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)",
    "NCCL WARN Call to ibv_create_qp failed with error Cannot allocate memory"},
   Category::kInfrastructure, "network_ib", true},
  {{"oneCCL: ATL OFI error: fi_cq_readerr: err: Input/output error (5)"},
   Category::kInfrastructure, "network_ib", true},
  {{"ERROR: InfiniBand port mlx5_3/1 went down during the job (state: DOWN, phys: Polling)"},
   Category::kInfrastructure, "network_ib", true},
  {{"RoCE: PFC storm detected on switch leaf-12 port 33; link disabled"},
   Category::kInfrastructure, "network_ib", true},
  // infrastructure / no_capacity
  {{"  Warning  FailedScheduling  2m  default-scheduler  0/12 nodes are available: 4 Insufficient nvidia.com/gpu, 8 node(s) didn't match Pod's node affinity/selector."},
   Category::kInfrastructure, "no_capacity", true},
  {{"sky.exceptions.ResourcesUnavailableError: Failed to acquire resources in all zones in us-east-1 for {AWS(p4d.24xlarge)}.",
    "InsufficientInstanceCapacity: We currently do not have sufficient p4d.24xlarge capacity in the Availability Zone you requested"},
   Category::kInfrastructure, "no_capacity", true},
  {{"UnexpectedStatusException: Error for Training job llm-ft-2025-04-01: Failed. Reason: CapacityError: Unable to provision requested ML compute capacity. Please retry using a different ML instance type."},
   Category::kInfrastructure, "no_capacity", true},
  {{"sky.exceptions.ManagedJobReachedMaxRetriesError: Resources unavailable: failed to launch the spot cluster after 3 retries"},
   Category::kInfrastructure, "no_capacity", true},
  {{"volcano: podgroup train-pg is unschedulable: 3/4 tasks in gang unschedulable: 0/16 nodes are unavailable: 16 Insufficient nvidia.com/gpu"},
   Category::kInfrastructure, "no_capacity", true},
  {{"Insufficient nvidia.com/gpu"},
   Category::kInfrastructure, "no_capacity", true},
  // infrastructure / node_failure
  {{"srun: error: Task launch for StepId=7781.0 failed on node hgx-a12: Prolog failure",
    "srun: error: Application launch failed: Prolog failure"},
   Category::kInfrastructure, "node_failure", true},
  {{"024 (1234.000.000) 2025-03-02 11:05:59 Job reconnection failed",
    "    Job disconnected too long: JobLeaseDuration (2400 seconds) expired"},
   Category::kInfrastructure, "node_failure", true},
  {{"Warning  NodeNotReady  3m  node-controller  Node is not ready",
    "Taints: node.kubernetes.io/unreachable:NoExecute"},
   Category::kInfrastructure, "node_failure", true},
  {{"ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.",
    "\tclass_name: TrainWorker",
    "The actor died because its node has died. Node Id: 5d2c9f"},
   Category::kInfrastructure, "node_failure", true},
  {{"[2025-06-01 12:00:01] kernel: mce: [Hardware Error]: Machine check events logged",
    "[2025-06-01 12:00:01] kernel: EDAC MC0: 1 UE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0"},
   Category::kInfrastructure, "node_failure", true},
  {{"determined: trial 42 was killed: the resource pool's agent was lost"},
   Category::kInfrastructure, "node_failure", true},
  {{"[scheduler] job 8812 terminated: node gpu-114 drained by admin (reason: bad GPU)"},
   Category::kInfrastructure, "node_failure", true},
  {{"[orchestrator] worker-3 heartbeat timeout after 300s; marking worker lost and failing the job"},
   Category::kInfrastructure, "node_failure", true},
  {{"ray.exceptions.NodeDiedError: Task failed because the node it was running on is dead or unavailable."},
   Category::kInfrastructure, "node_failure", true},
  {{"AWS Batch: Host EC2 (instance i-0abc) terminated."},
   Category::kInfrastructure, "node_failure", true},
  {{"Rank 12 on host h100-077 did not respond to heartbeat for 600 s; aborting all ranks"},
   Category::kInfrastructure, "node_failure", true},
  {{"srun: error: Node gpu-44 unexpectedly rebooted",
    "slurmstepd: error: *** STEP 5.0 ON gpu-44 CANCELLED ***"},
   Category::kInfrastructure, "node_failure", true},
  {{"OCI: the bare metal host running this job experienced a hardware failure and was replaced"},
   Category::kInfrastructure, "node_failure", true},
  // infrastructure / nvlink_error
  {{"RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution"},
   Category::kInfrastructure, "nvlink_error", true},
  {{"Health check failed: DCGM_FR_NVLINK_DOWN: GPU 5's NvLink link 11 is currently down"},
   Category::kInfrastructure, "nvlink_error", true},
  // infrastructure / preempted
  {{"slurmstepd: error: *** JOB 918273 ON gpu-b07 CANCELLED AT 2025-02-11T03:12:44 DUE TO PREEMPTION ***"},
   Category::kInfrastructure, "preempted", true},
  {{"   JobId=551203 JobName=sft",
    "   JobState=PREEMPTED Reason=Preempted Dependency=(null)"},
   Category::kInfrastructure, "preempted", true},
  {{"005 (1234.000.000) 2025-03-02 11:04:59 Job was evicted.",
    "\t(0) CPU times"},
   Category::kInfrastructure, "preempted", true},
  {{"[spot-watcher] 2025-04-01T10:11:12Z instance-action: {\"action\": \"terminate\", \"time\": \"2025-04-01T10:13:12Z\"}",
    "torchrun: received SIGTERM, shutting down workers"},
   Category::kInfrastructure, "preempted", true},
  {{"I0402 09:00:01 maintenance.py:41] GCE host maintenance event scheduled for this VM: TERMINATE_ON_HOST_MAINTENANCE"},
   Category::kInfrastructure, "preempted", true},
  {{"Error: The job was terminated because the spot instance was reclaimed by Azure."},
   Category::kInfrastructure, "preempted", true},
  {{"Task was stopped by the platform: the instance is being reclaimed (spot)."},
   Category::kInfrastructure, "preempted", true},
  {{"Task failed: the allocation was revoked by the cluster manager"},
   Category::kInfrastructure, "preempted", true},
  {{"ERROR: Worker node pool was scaled down while the job was running; pods were deleted"},
   Category::kInfrastructure, "preempted", true},
  {{"Killed by signal 15 (SIGTERM) at 02:00 maintenance window"},
   Category::kInfrastructure, "preempted", true},
  {{"(autoscaler) Node ip-10-0-1-5 terminated: spot instance interrupted"},
   Category::kInfrastructure, "preempted", true},
  {{"qdel: Job has been deleted by the system administrator (node maintenance)"},
   Category::kInfrastructure, "preempted", true},
  {{"[E] Job killed due to node preemption by a higher-priority job (QOS=urgent)"},
   Category::kInfrastructure, "preempted", true},
  // infrastructure / scheduler_error
  {{"srun: error: Unable to allocate resources: Unable to contact slurm controller (connect failure)"},
   Category::kInfrastructure, "scheduler_error", true},
  // infrastructure / shared_memory
  {{"ray.exceptions.ObjectStoreFullError: Failed to put object 00ffffff in object store because it is full. Object size is 4294967296 bytes."},
   Category::kInfrastructure, "shared_memory", false},
  {{"RuntimeError: unable to write to file </torch_9981_3021_0>: No space left on device (28)"},
   Category::kInfrastructure, "shared_memory", false},
  // infrastructure / sigkill
  {{"===================================================================================",
    "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES",
    "=   RANK 3 PID 88123 RUNNING AT cn041",
    "=   KILLED BY SIGNAL: 9 (Killed)"},
   Category::kInfrastructure, "sigkill", false},
  // infrastructure / storage_io
  {{"Status:       Failed",
    "Reason:       Evicted",
    "Message:      Pod was rejected: The node had condition: [DiskPressure]."},
   Category::kInfrastructure, "storage_io", false},
  {{"OSError: [Errno 116] Stale file handle: '/mnt/nfs/ckpt/step_2000/model.pt'"},
   Category::kInfrastructure, "storage_io", true},
  {{"[Tue Mar  4 02:11:12 2025] nfs: server fs01 not responding, still trying"},
   Category::kInfrastructure, "storage_io", true},
  {{"botocore.exceptions.ClientError: An error occurred (ThrottlingException) when calling the GetObject operation (reached max retries: 4): Rate exceeded"},
   Category::kInfrastructure, "storage_io", true},
  {{"azure.core.exceptions.HttpResponseError: Operation could not be completed within the specified time. ErrorCode:OperationTimedOut"},
   Category::kInfrastructure, "storage_io", true},
  {{"OSError: [Errno 28] No space left on device"},
   Category::kInfrastructure, "storage_io", false},
  {{"ray.exceptions.OutOfDiskError: Local disk is full",
    "The object cannot be created because the local object store is full and the local disk's utilization is over capacity (95% by default)."},
   Category::kInfrastructure, "storage_io", false},
  {{"[beegfs] ERROR: Communication error: Connection timed out; server: meta01"},
   Category::kInfrastructure, "storage_io", true},
  {{"azure.storage.blob: ResourceExistsError / ServerBusy: The server is currently unable to receive requests. Please retry your request."},
   Category::kInfrastructure, "storage_io", true},
  {{"[Errno 110] Connection timed out while reading /nfs/data/shard-12.bin"},
   Category::kInfrastructure, "storage_io", true},
  {{"[E] Storage backend unavailable: weka filesystem /mnt/weka not responding"},
   Category::kInfrastructure, "storage_io", true},
  {{"ERROR: mount of /datasets failed: NFS server 10.0.0.5 unreachable"},
   Category::kInfrastructure, "storage_io", true},
  {{"ERROR: checkpoint upload to gs://ckpts failed: 503 Backend Error"},
   Category::kInfrastructure, "storage_io", true},
  {{"Job 1234 was killed: the node ran out of local scratch space (/tmp 100% full)"},
   Category::kInfrastructure, "storage_io", false},
  // infrastructure / time_limit
  {{"   JobId=551202 JobName=sft",
    "   JobState=TIMEOUT Reason=TimeLimit Dependency=(null)"},
   Category::kInfrastructure, "time_limit", false},
  {{"=>> PBS: job killed: cput 172801 exceeded limit 172800"},
   Category::kInfrastructure, "time_limit", false},
  {{"TERM_CPULIMIT: job killed after reaching LSF CPU usage limit.",
    "Exited with exit code 152."},
   Category::kInfrastructure, "time_limit", false},
  {{"  Type     Reason            Age   From            Message",
    "  Warning  DeadlineExceeded  1s    job-controller  Job was active longer than specified deadline"},
   Category::kInfrastructure, "time_limit", false},
  {{"The job was killed because it exceeded the maximum allowed runtime of 24h."},
   Category::kInfrastructure, "time_limit", false},
  {{"Your job has been cancelled because it exceeded its allotted time"},
   Category::kInfrastructure, "time_limit", false},
  {{"[modal] Function timed out after 86400 seconds"},
   Category::kInfrastructure, "time_limit", false},
  {{"flux-job: job f3Cd exception: type=timeout note=resource allocation expired"},
   Category::kInfrastructure, "time_limit", false},
  {{"ERROR: The job exceeded its maximum wall time of 48:00:00 and was terminated by the scheduler"},
   Category::kInfrastructure, "time_limit", false},
  {{"job cancelled: reached walltime"},
   Category::kInfrastructure, "time_limit", false},
  // framework / compile_error
  {{"/usr/bin/ld: cannot find -lcuda: No such file or directory",
    "collect2: error: ld returned 1 exit status",
    "torch._inductor.exc.InductorError: CalledProcessError: Command '['/usr/bin/gcc', '/tmp/x.c']' returned non-zero exit status 1."},
   Category::kFramework, "compile_error", false},
  {{"deepspeed.ops.op_builder.builder.MissingCUDAException: CUDA_HOME does not exist, unable to compile CUDA op(s)"},
   Category::kFramework, "compile_error", false},
  {{"RuntimeError: Ninja is required to load C++ extensions"},
   Category::kFramework, "compile_error", false},
  {{"[rank3]: RuntimeError: Detected that you are using FX to symbolically trace a dynamo-optimized function."},
   Category::kFramework, "compile_error", false},
  // framework / cuda_error
  {{"RuntimeError: CUDA error: operation not permitted when stream is capturing",
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect."},
   Category::kFramework, "cuda_error", false},
  {{"RuntimeError: CUDA error: too many resources requested for launch",
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."},
   Category::kFramework, "cuda_error", false},
  {{"RuntimeError: CUDA driver error: device not ready"},
   Category::kFramework, "cuda_error", false},
  {{"ERROR: torch_npu: RuntimeError: ACL stream synchronize failed, error code:507018"},
   Category::kFramework, "cuda_error", false},
  {{"[ERROR] ACL error: 507015, aclnnMatmul failed"},
   Category::kFramework, "cuda_error", false},
  // framework / cuda_oom
  {{"RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."},
   Category::kFramework, "cuda_oom", false},
  {{"tensorflow.python.framework.errors_impl.ResourceExhaustedError: {{function_node __wrapped__MatMul_device_/job:localhost/replica:0/task:0/device:GPU:0}} failed to allocate memory [Op:MatMul]"},
   Category::kFramework, "cuda_oom", false},
  {{"tensorflow.python.framework.errors_impl.InternalError: Failed copying input tensor from /job:localhost/replica:0/task:0/device:CPU:0 to /job:localhost/replica:0/task:0/device:GPU:0 in order to run _EagerConst: Dst tensor is not initialized."},
   Category::kFramework, "cuda_oom", false},
  {{"colossalai.zero.gemini: RuntimeError: Not enough space on device cuda:0 to allocate chunk"},
   Category::kFramework, "cuda_oom", false},
  {{"ValueError: Could not allocate KV cache: 0 blocks available on GPU. Reduce max_num_seqs or increase gpu_memory_utilization."},
   Category::kFramework, "cuda_oom", false},
  {{"jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to allocate 8589934592 bytes for new constant"},
   Category::kFramework, "cuda_oom", false},
  {{"xpu: RuntimeError: UR error: UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"},
   Category::kFramework, "cuda_oom", false},
  {{"ValueError: Some modules are dispatched on the CPU or the disk. Make sure you have enough GPU RAM to fit the quantized model."},
   Category::kFramework, "cuda_oom", false},
  // framework / deepspeed_assertion
  {{"AssertionError: Parameter with ds_id 1043 has status NOT_AVAILABLE, expected AVAILABLE"},
   Category::kFramework, "deepspeed_assertion", false},
  // framework / fsdp_assertion
  {{"  File \"/opt/conda/lib/python3.11/site-packages/torch/distributed/tensor/_dispatch.py\", line 455, in _try_replicate_spec_for_scalar_tensor",
    "    raise RuntimeError(",
    "RuntimeError: aten.mul.Tensor: got mixed torch.Tensor and DTensor, need to convert all torch.Tensor to DTensor before calling distributed operators!"},
   Category::kFramework, "fsdp_assertion", false},
  {{"RuntimeError: FSDP does not support ignored parameters with NO_SHARD"},
   Category::kFramework, "fsdp_assertion", false},
  {{"torch.distributed.fsdp: RuntimeError: FSDP parameters should be materialized from meta device before training, but the following were still on meta device: ['lm_head.weight']"},
   Category::kFramework, "fsdp_assertion", false},
  {{"RuntimeError: Tensors of type DTensor are not supported in this operation: aten.nonzero.default"},
   Category::kFramework, "fsdp_assertion", false},
  // framework / illegal_memory_access
  {{"RuntimeError: CUDA error: misaligned address"},
   Category::kFramework, "illegal_memory_access", false},
  {{"RuntimeError: CUDA error: an illegal instruction was encountered"},
   Category::kFramework, "illegal_memory_access", false},
  {{"Memory access fault by GPU node-4 (Agent handle: 0x55d1c2) on address 0x7f1d00000000. Reason: Page not present or supervisor privilege."},
   Category::kFramework, "illegal_memory_access", false},
  // framework / loss_nan
  {{"[step 4100] loss is inf, stopping training"},
   Category::kFramework, "loss_nan", false},
  {{"NaN encountered in loss at step 3412; aborting."},
   Category::kFramework, "loss_nan", false},
  {{"[E] loss exploded to 1.2e+09 at step 5500; stopping"},
   Category::kFramework, "loss_nan", false},
  {{"ValueError: Expected parameter loc (Tensor of shape (32, 8)) of distribution Normal(loc: torch.Size([32, 8]), scale: torch.Size([32, 8])) to satisfy the constraint Real(), but found invalid values:",
    "tensor([[nan, nan, nan]])"},
   Category::kFramework, "loss_nan", false},
  // framework / loss_scale_underflow
  {{"[fp16] overflow detected, loss scale reduced to 1.0e-04 (min)",
    "ERROR: loss scale reached its minimum, aborting"},
   Category::kFramework, "loss_scale_underflow", false},
  {{"WARNING: overflow in gradients; skipping step (scale=1.0)",
    "WARNING: overflow in gradients; skipping step (scale=0.5)",
    "WARNING: overflow in gradients; skipping step (scale=0.25)",
    "WARNING: overflow in gradients; skipping step (scale=0.125)",
    "ERROR: loss scale underflow"},
   Category::kFramework, "loss_scale_underflow", false},
  // framework / version_mismatch
  {{"Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'",
    "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update your driver to a newer version, or use an earlier cuda container: unknown"},
   Category::kFramework, "version_mismatch", false},
  {{"RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver"},
   Category::kFramework, "version_mismatch", false},
  {{"rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: Illegal seek for GPU arch : gfx1100",
    "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"},
   Category::kFramework, "version_mismatch", false},
  {{"ImportError: /lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.32' not found (required by /opt/venv/lib/python3.11/site-packages/scipy/linalg/_matfuncs_expm.cpython-311-x86_64-linux-gnu.so)"},
   Category::kFramework, "version_mismatch", false},
  {{"AttributeError: module 'numpy' has no attribute 'float'.",
    "`np.float` was a deprecated alias for the builtin `float`."},
   Category::kFramework, "version_mismatch", false},
  {{"TypeError: 'type' object is not subscriptable"},
   Category::kFramework, "version_mismatch", false},
  {{"bitsandbytes/cextension.py:34: UserWarning: The installed version of bitsandbytes was compiled without GPU support.",
    "AttributeError: 'NoneType' object has no attribute 'cadam32bit_grad_fp32'"},
   Category::kFramework, "version_mismatch", false},
  {{"RuntimeError: Expected is_sm80 || is_sm90 to be true, but got false.",
    "(Could this error message be improved? If so, please report an enhancement request to PyTorch.)"},
   Category::kFramework, "version_mismatch", false},
  {{"RuntimeError: Triton Error [CUDA]: device kernel image is invalid"},
   Category::kFramework, "version_mismatch", false},
  {{"W0312 11:00:00 xla_bridge.py:863] An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.",
    "ValueError: Number of devices 1 must be >= the product of mesh_shape (8, 1)"},
   Category::kFramework, "version_mismatch", false},
  {{"RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major versions. PyTorch has CUDA Version=11.8 and torchvision has CUDA Version=12.1."},
   Category::kFramework, "version_mismatch", false},
  {{"E  Unable to find a GPU with compute capability >= 8.0 for bf16; found 7.0"},
   Category::kFramework, "version_mismatch", false},
  {{"ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla V100-SXM2-32GB GPU has compute capability 7.0."},
   Category::kFramework, "version_mismatch", false},
  {{"RuntimeError: Distributed package doesn't have NCCL built in"},
   Category::kFramework, "version_mismatch", false},
  {{"transformer_engine.pytorch: AssertionError: FP8 execution requires compute capability 8.9 or higher"},
   Category::kFramework, "version_mismatch", false},
  {{"openrlhf: vllm: ValueError: Cannot use FlashAttention-2 backend for head size 80."},
   Category::kFramework, "version_mismatch", false},
  {{"tensorrt_llm: [TensorRT-LLM][ERROR] Assertion failed: Engine was built for SM 90 but the current device is SM 80"},
   Category::kFramework, "version_mismatch", false},
  {{"apex: RuntimeError: apex.optimizers.FusedAdam requires cuda extensions"},
   Category::kFramework, "version_mismatch", false},
  {{"RuntimeError: cutlassF: no kernel found to launch!"},
   Category::kFramework, "version_mismatch", false},
  {{"RuntimeError: FlashAttention backward for head dim > 192 requires A100/A800 or H100/H800"},
   Category::kFramework, "version_mismatch", false},
  {{"RuntimeError: Exception: DeepSpeed Op Builder: Installed CUDA version 12.4 does not match the version torch was compiled with 12.1, unable to compile cuda/cpp extensions without a matching cuda version."},
   Category::kFramework, "version_mismatch", false},
  // script / bad_arguments
  {{"srun: error: Unable to allocate resources: Invalid account or account/partition combination specified"},
   Category::kScript, "bad_arguments", false},
  {{"sbatch: error: Batch job submission failed: Requested node configuration is not available"},
   Category::kScript, "bad_arguments", false},
  {{"  Warning  Failed     12s   kubelet  Failed to pull image \"registry.local/team/trainer:v3\": rpc error: code = NotFound desc = failed to pull and unpack image: manifest unknown"},
   Category::kScript, "bad_arguments", false},
  {{"RuntimeError: CUDA error: invalid device ordinal",
    "CUDA kernel errors might be asynchronously reported at some other API call"},
   Category::kScript, "bad_arguments", false},
  {{"AssertionError: number of attention heads (40) must be divisible by tensor model parallel size (16)"},
   Category::kScript, "bad_arguments", false},
  {{"ValueError: global batch size (1000) is not divisible by micro batch size (3) times data parallel size (8)"},
   Category::kScript, "bad_arguments", false},
  {{"ValueError: The model's max seq len (65536) is larger than the maximum number of tokens that can be stored in KV cache (31000). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."},
   Category::kScript, "bad_arguments", false},
  {{"qsub: Job exceeds queue resource limits MSG=cannot satisfy queue max walltime requirement"},
   Category::kScript, "bad_arguments", false},
  {{"yaml.scanner.ScannerError: mapping values are not allowed here",
    "  in \"configs/sft.yaml\", line 12, column 14"},
   Category::kScript, "bad_arguments", false},
  {{"Job 1234 failed: requested memory (256G) exceeds the node's available memory (240G)"},
   Category::kScript, "bad_arguments", false},
  {{"Error: the job requested 16 GPUs but the partition allows at most 8"},
   Category::kScript, "bad_arguments", false},
  {{"sbatch: error: QOSMaxGRESPerUser"},
   Category::kScript, "bad_arguments", false},
  {{"jax._src.traceback_util.UnfilteredStackTrace: ValueError: One of pjit outputs with pytree key path result was given the sharding of NamedSharding(mesh=Mesh('data': 4), spec=PartitionSpec('data',)), which implies that the global size of its dimension 0 should be divisible by 4, but it is equal to 6"},
   Category::kScript, "bad_arguments", false},
  {{"lightning.fabric.utilities.exceptions.MisconfigurationException: `Trainer(strategy='fsdp')` is not compatible with an interactive environment."},
   Category::kScript, "bad_arguments", false},
  {{"megatron.core: RuntimeError: Number of layers (30) should be divisible by pipeline parallel size (4)"},
   Category::kScript, "bad_arguments", false},
  {{"ERROR: Job terminated with reason 'ResourceQuotaExceeded': exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=16, used: 48, limited: 56"},
   Category::kScript, "bad_arguments", false},
  {{"Usage: train.py [OPTIONS]",
    "Try 'train.py --help' for help.",
    "",
    "Error: No such option: --learning-rate Did you mean --learning_rate?"},
   Category::kScript, "bad_arguments", false},
  {{"FATAL Flags parsing error: Unknown command line flag 'batchsize'. Did you mean: batch_size ?",
    "Pass --helpshort or --helpfull to see help on flags."},
   Category::kScript, "bad_arguments", false},
  {{"ERROR: Could not consume arg: --epochs=3",
    "Usage: train.py <command|value>"},
   Category::kScript, "bad_arguments", false},
  {{"RuntimeError: `accelerate launch` was called with --num_processes=8 but only 4 GPUs are available"},
   Category::kScript, "bad_arguments", false},
  {{"KeyError: \"The `metric_for_best_model` training argument is set to 'eval_accuracy', which is not found in the evaluation metrics.\""},
   Category::kScript, "bad_arguments", false},
  {{"hydra.errors.InstantiationException: Error locating target 'models.MyNet', set env var HYDRA_FULL_ERROR=1 to see chained exception."},
   Category::kScript, "bad_arguments", false},
  // script / corrupt_checkpoint
  {{"RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory"},
   Category::kScript, "corrupt_checkpoint", false},
  {{"safetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge"},
   Category::kScript, "corrupt_checkpoint", false},
  {{"RuntimeError: Internal: src/sentencepiece_processor.cc(1102) [model_proto->ParseFromArray(serialized.data(), serialized.size())]"},
   Category::kScript, "corrupt_checkpoint", false},
  {{"torch.serialization: _pickle.UnpicklingError: invalid load key, 'v'."},
   Category::kScript, "corrupt_checkpoint", false},
  {{"safetensors_rust.SafetensorError: Error while deserializing header: MetadataIncompleteBuffer"},
   Category::kScript, "corrupt_checkpoint", false},
  // script / file_not_found
  {{"huggingface_hub.errors.RepositoryNotFoundError: 404 Client Error. (Request ID: Root=1-66f)",
    "Repository Not Found for url: https://huggingface.co/api/models/acme/llama-7b-sft."},
   Category::kScript, "file_not_found", false},
  {{"botocore.exceptions.ClientError: An error occurred (NoSuchKey) when calling the GetObject operation: The specified key does not exist."},
   Category::kScript, "file_not_found", false},
  {{"datasets.exceptions.DatasetNotFoundError: Dataset 'acme/private-sft' doesn't exist on the Hub or cannot be accessed."},
   Category::kScript, "file_not_found", false},
  // script / module_not_found
  {{"ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: the package flash_attn seems to be not installed. Please refer to the documentation"},
   Category::kScript, "module_not_found", false},
  {{"ImportError: Using the `Trainer` with `PyTorch` requires `accelerate>=0.26.0`: Please run `pip install transformers[torch]` or `pip install 'accelerate>=0.26.0'`"},
   Category::kScript, "module_not_found", false},
  {{"ERROR: Could not find a version that satisfies the requirement torch==2.5.1+cu124 (from versions: none)",
    "ERROR: No matching distribution found for torch==2.5.1+cu124"},
   Category::kScript, "module_not_found", false},
  {{"/var/spool/slurmd/job55/slurm_script: line 14: torchrun: command not found"},
   Category::kScript, "module_not_found", false},
  // script / nccl_invalid_usage
  {{"torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, invalid argument (run with NCCL_DEBUG=WARN for details)",
    "Last error:",
    "Invalid config blocking attribute value -2147483648"},
   Category::kScript, "nccl_invalid_usage", false},
  // script / permission_denied
  {{"botocore.exceptions.ClientError: An error occurred (ExpiredToken) when calling the PutObject operation: The provided token has expired."},
   Category::kScript, "permission_denied", false},
  {{"google.auth.exceptions.RefreshError: ('invalid_grant: Token has been expired or revoked.', {'error': 'invalid_grant'})"},
   Category::kScript, "permission_denied", false},
  // script / shape_mismatch
  {{"ValueError: Input 0 of layer \"dense_1\" is incompatible with the layer: expected axis -1 of input shape to have value 512, but received input with shape (None, 256)"},
   Category::kScript, "shape_mismatch", false},
  {{"RuntimeError: The expanded size of the tensor (512) must match the existing size (1024) at non-singleton dimension 1.  Target sizes: [8, 512].  Tensor sizes: [8, 1024]"},
   Category::kScript, "shape_mismatch", false},
  {{"flax.errors.ScopeParamShapeError: Initializer expected to generate shape (512, 1024) but got shape (512, 512) instead for parameter \"kernel\" in \"/Dense_0\"."},
   Category::kScript, "shape_mismatch", false},
  {{"torch._dynamo.exc.TorchRuntimeError: Failed running call_function <built-in function mul>(*(FakeTensor(..., size=(2, 3)), FakeTensor(..., size=(4,))), **{}):",
    "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"},
   Category::kScript, "shape_mismatch", false},
  {{"ValueError: Attention mask should be of size (1, 1, 1024, 1024), but is torch.Size([1, 1, 1024, 2048])"},
   Category::kScript, "shape_mismatch", false},
  // script / user_code_exception
  {{"RuntimeError: Found dtype Long but expected Float"},
   Category::kScript, "user_code_exception", false},
  {{"RuntimeError: result type Float can't be cast to the desired output type Long"},
   Category::kScript, "user_code_exception", false},
  {{"RuntimeError: Expected to mark a variable ready only once. This error is caused by one of the following reasons: 1) Use of a module parameter outside the `forward` function."},
   Category::kScript, "user_code_exception", false},
  {{"RuntimeError: Error(s) in loading state_dict for LlamaForCausalLM:",
    "\tMissing key(s) in state_dict: \"model.layers.0.self_attn.q_proj.weight\"."},
   Category::kScript, "user_code_exception", false},
  {{"INFO 04-02 10:11:12 scheduler.py:1560] Sequence group 77 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space.",
    "KeyError: 'prompt_token_ids'"},
   Category::kScript, "user_code_exception", false},
  {{"2025-01-01 10:00:00.123 W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: No such file or directory",
    "KeyError: 'image/encoded'"},
   Category::kScript, "user_code_exception", false},
  {{"Resource_List.walltime=24:00:00",
    "#PBS -l walltime=24:00:00,mem=64gb",
    "KeyError: 'labels'"},
   Category::kScript, "user_code_exception", false},
  {{"/etc/profile.d/lmod.sh: line 3: module: command not found",
    "KeyError: 'labels'"},
   Category::kScript, "user_code_exception", false},
  {{"INFO ContainersMonitorImpl: Memory usage of ProcessTree 4411 for container-id c_01: 2.1 GB of 4 GB physical memory used; 3.0 GB of 8.4 GB virtual memory used",
    "KeyError: 'labels'"},
   Category::kScript, "user_code_exception", false},
  {{"UserWarning: failed to compile the fused kernel, falling back to the eager implementation",
    "KeyError: 'labels'"},
   Category::kScript, "user_code_exception", false},
  {{"[health] GPUs healthy: 8, unhealthy: 0",
    "KeyError: 'labels'"},
   Category::kScript, "user_code_exception", false},
  {{"Max runtime: 2d 00:00:00    Memory limit: 64G",
    "KeyError: 'labels'"},
   Category::kScript, "user_code_exception", false},
  {{"RuntimeError: FlashAttention only support fp16 and bf16 data type"},
   Category::kScript, "user_code_exception", false},
  {{"WARNING: Could not find any nv_peer_mem or nvidia_peermem module",
    "NCCL WARN NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'",
    "ValueError: too many values to unpack (expected 2)"},
   Category::kScript, "user_code_exception", false},
  {{"RuntimeError: Attempting to deserialize object on CUDA device 3 but torch.cuda.device_count() is 1. Please use torch.load with map_location to map your storages to an existing device."},
   Category::kScript, "user_code_exception", false},
  {{"pyarrow.lib.ArrowInvalid: Parquet magic bytes not found in footer. Either the file is corrupted or this is not a parquet file."},
   Category::kScript, "user_code_exception", false},
  {{"RuntimeError: Tensor on device cuda:0 is not on the expected device meta!"},
   Category::kScript, "user_code_exception", false},
  {{"RuntimeError: Expected a 'cuda' device type for generator but found 'cpu'"},
   Category::kScript, "user_code_exception", false},
  {{"RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method"},
   Category::kScript, "user_code_exception", false},
  {{"datasets.builder.DatasetGenerationCastError: An error occurred while generating the dataset",
    "All the data files must have the same columns, but at some point there are 1 new columns ({'meta'})"},
   Category::kScript, "user_code_exception", false},
  {{"RuntimeError: Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument #0 'grad_y'"},
   Category::kScript, "user_code_exception", false},
  {{"RuntimeError: view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead."},
   Category::kScript, "user_code_exception", false},
  {{"RuntimeError: It looks like your LightningModule has parameters that were not used in producing the loss returned by training_step."},
   Category::kScript, "user_code_exception", false},
  {{"RuntimeError: Input, output and indices must be on the current device"},
   Category::kScript, "user_code_exception", false},
  {{"RuntimeError: Trying to resize storage that is not resizable"},
   Category::kScript, "user_code_exception", false},
  // unknown / unknown
  {{"(raylet) A worker died or was killed while executing a task by an unexpected system error. To troubleshoot the problem, check the logs for the dead worker.",
    "Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected errors."},
   Category::kUnknown, "unknown", false},
  {{"--------------------------------------------------------------------------",
    "MPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD",
    "with errorcode 1."},
   Category::kUnknown, "unknown", false},
  {{"deepspeed.launcher.launch: [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', 'train.py'] exits with return code = 1"},
   Category::kUnknown, "unknown", false},
  {{"[2025-06-01 10:00:00,000] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 4412 closing signal SIGTERM",
    "  exitcode  : -6 (pid: 4411)",
    "  traceback : Signal 6 (SIGABRT) received by PID 4411"},
   Category::kUnknown, "unknown", false},
};

TEST(DiagnoseTest, WordingsOfMoreSoftware) {
  for (const WordingCase& c : kMoreSoftwareWordings) {
    Diagnosis d = DiagnoseLines(c.lines);
    EXPECT_EQ(d.category, c.category) << c.lines.back();
    EXPECT_EQ(d.subtype, c.subtype) << c.lines.back();
    EXPECT_EQ(d.retry, c.retry) << c.lines.back();
  }
}

}  // namespace
}  // namespace orrery::logs
