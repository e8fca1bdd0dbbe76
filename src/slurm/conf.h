// slurm.conf as a site writes it, read for simulation: the priority, scheduler, preemption,
// node and partition settings that Slurm's decisions depend on (docs/formats/slurm-conf.md).
// Syntax as slurmctld reads it: `Key=Value` pairs separated by blanks, keys in any case, `#`
// comments (`\#` is a literal '#'), a trailing `\` continues a line, values in double quotes
// may hold blanks, `NodeName=...` and `PartitionName=...` lines carry their own attributes and
// `NodeName=DEFAULT` / `PartitionName=DEFAULT` set the defaults of the lines after them.
// A key Orrery does not model is one warning (once per key); a value or setting whose
// semantics Orrery cannot reproduce is an error at its file:line:col.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "slurm/values.h"

namespace orrery::slurm {

enum class PriorityType : uint8_t { kBasic, kMultifactor };
enum class SchedulerType : uint8_t { kBackfill, kBuiltin };
enum class PreemptType : uint8_t { kNone, kPartitionPrio, kQos };
enum class PreemptMode : uint8_t { kOff, kCancel, kRequeue, kSuspend };

std::string_view Name(PreemptMode m);
// "REQUEUE", "cancel", ...; GANG and WITHIN are refused (not modelled). The error says what
// was expected.
Result<PreemptMode> ParsePreemptMode(std::string_view s);

struct PriorityConf {
  PriorityType type = PriorityType::kBasic;
  // PriorityWeight*: each factor's weight (0 = the factor does not count).
  uint32_t weight_age = 0, weight_fairshare = 0, weight_job_size = 0, weight_partition = 0, weight_qos = 0;
  std::map<std::string, double> weight_tres;  // PriorityWeightTRES, lower-case names ("cpu", "gres/gpu")
  int64_t decay_half_life_s = 7 * 86400;      // PriorityDecayHalfLife; 0 = usage never decays
  int64_t calc_period_s = 5 * 60;             // PriorityCalcPeriod
  int64_t max_age_s = 7 * 86400;              // PriorityMaxAge
  bool favor_small = false;                   // PriorityFavorSmall
  bool accrue_always = false;                 // PriorityFlags=ACCRUE_ALWAYS
};

// SchedulerParameters: the options of the main and the backfill scheduler that Orrery models.
struct SchedulerParams {
  int64_t sched_interval_s = 60;      // the main scheduler's period
  int64_t default_queue_depth = 100;  // jobs the event-triggered main pass looks at
  int64_t bf_interval_s = 30;
  int64_t bf_window_s = 1440 * 60;    // bf_window is written in minutes
  int64_t bf_resolution_s = 60;
  int64_t bf_max_job_test = 500;
  int64_t bf_max_job_user = 0;        // 0 = no per-user bound
  bool bf_continue = false;
  int64_t batch_sched_delay_s = 3;
};

struct NodeDef {
  std::string name;
  uint32_t cpus = 1;
  int64_t real_memory_mib = 1;
  uint32_t gpus = 0;       // Gres=gpu:N (or gpu:TYPE:N), summed over its entries
  std::string gpu_type;    // the TYPE of Gres=gpu:TYPE:N, empty when untyped
  uint32_t weight = 1;     // lower weights are allocated first
  uint64_t line = 0;       // where it was defined
};

struct PartitionDef {
  std::string name;
  std::vector<uint32_t> nodes;  // indices into SlurmConf::nodes
  uint32_t priority_tier = 1;
  uint32_t priority_job_factor = 1;
  int64_t max_time_s = kUnlimited;
  std::optional<PreemptMode> preempt_mode;  // unset: the cluster's PreemptMode
  bool is_default = false;
  uint64_t line = 0;
};

struct SlurmConf {
  PriorityConf priority;
  SchedulerType scheduler = SchedulerType::kBackfill;
  SchedulerParams sched;
  PreemptType preempt_type = PreemptType::kNone;
  PreemptMode preempt_mode = PreemptMode::kOff;
  int64_t preempt_exempt_s = 0;  // PreemptExemptTime: a job runs this long before it may be preempted
  std::vector<NodeDef> nodes;
  std::vector<PartitionDef> partitions;
  // The partition of a job that names none: the one with Default=YES, else the first.
  uint32_t default_partition = 0;
  // The line that last set each top-level key (lower case), for errors of its users.
  std::map<std::string, uint64_t> key_lines;
  // "file:line:col: key 'SlurmctldHost' is not modelled; ignored", once per key.
  std::vector<std::string> warnings;
};

// At most this many nodes (node ranges are expanded): ten times the largest Slurm clusters
// in service, small enough that a hostile range of a few hundred bytes stays cheap.
inline constexpr size_t kMaxNodes = 100'000;
// At most this many (partition, node) memberships in all: a partition line of a few bytes
// (`Nodes=ALL`) names every node, so a few thousand of them would otherwise ask for gigabytes.
inline constexpr size_t kMaxPartitionMemberships = 10'000'000;

// The bounds a read enforces (beyond them the file is a located error, not truncated).
// Callers that know smaller ones pass them (the fuzz target bounds its clusters as the
// daemon's are, so that its inputs exercise the grammar rather than the allocator).
struct SlurmConfBounds {
  size_t max_nodes = kMaxNodes;
  size_t max_memberships = kMaxPartitionMemberships;
};

Result<SlurmConf> ParseSlurmConf(std::string_view text, std::string_view file, SlurmConfBounds bounds = {});
Result<SlurmConf> ReadSlurmConf(const std::string& path);

}  // namespace orrery::slurm
