// Batch scripts with the sbatch options evaluation jobs need (orrery eval submit): job
// arrays, afterok dependencies, a pinned node, exported variables. SubmitSpec (slurm_client.h)
// stays the daemon's sleep-job submission; this is the general form.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "live/slurm_client.h"

namespace orrery::live {

struct BatchSpec {
  std::string name = "orrery";
  std::string partition;
  std::string script;                  // path of the batch script
  std::string workdir = "/tmp";
  std::string output = "/dev/null";    // stdout/stderr file (sbatch -o; %A/%a patterns allowed)
  uint32_t array_size = 0;             // > 0: --array=0-(array_size-1)
  std::vector<uint32_t> array_tasks;   // non-empty: --array=i,j,... instead (those task indexes only)
  uint32_t array_throttle = 0;         // > 0: at most this many tasks of the array at once (--array=...%N)
  std::vector<std::string> after_ok;   // job ids ("123", "123_4"): --dependency=afterok:a:b
  std::string nodelist;                // --nodelist (empty: any node)
  uint32_t gpus_per_node = 0;          // --gres=gpu:N
  uint32_t cpus = 1;                   // --cpus-per-task
  std::vector<std::string> env;        // "KEY=VALUE" (no commas), exported to the job (--export=ALL,...)
  std::string comment;
};

// Bounds SubmitBatch checks before anything runs: Slurm's MaxArraySize is at most 4000001
// (tasks 0..4000000), and the arguments (a dependency list names one job per entry) stay
// well below the kernel's argument limit.
inline constexpr uint32_t kMaxArrayTasks = 4'000'001;
inline constexpr size_t kMaxSbatchArgBytes = 1u << 20;

// The sbatch arguments of a spec (without the tool name); public for tests (tests/eval_cli_test.cc).
std::vector<std::string> SbatchArgs(const BatchSpec& s);
// Submits; returns the job id (of the array, for array jobs).
Result<uint32_t> SubmitBatch(ExecSlurmClient& slurm, const BatchSpec& s);

// One task of a job array as `squeue -r` lists it ("123_4").
struct ArrayTask {
  uint32_t job = 0;   // the array's job id
  uint32_t task = 0;  // the task index
  SlurmJobState state = SlurmJobState::kPending;
  std::string state_raw;  // e.g. "PENDING", "RUNNING", "CANCELLED"
  std::string comment;    // the array's --comment
};
// squeue -h -r -o with kArrayTaskFormat: job id, state, comment.
extern const char* const kArrayTaskFormat;
// One task per line ("123_4<sep>RUNNING<sep>comment"); a line that is not an array task
// ("123", "123_[4-6]") is an error naming the line.
Result<std::vector<ArrayTask>> ParseArrayTasks(std::string_view text);
// The array tasks Slurm lists under job name `name` (squeue -h -r -n NAME), or of the one
// job `job` ("123_4") when `name` is empty: every state squeue shows (pending, running, and
// finished ones for MinJobAge).
Result<std::vector<ArrayTask>> ListArrayTasks(ExecSlurmClient& slurm, const std::string& name, const std::string& job = "");

}  // namespace orrery::live
