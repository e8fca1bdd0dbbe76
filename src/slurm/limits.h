// Association and QOS limits as slurmctld enforces them, with Slurm's own pending-reason
// names (the strings squeue shows, e.g. QOSMaxGRESPerUser, AssocGrpGRES).
//
// Which limit applies (slurm.schedmd.com/resource_limits.html): a limit set on the job's QOS
// overrides the same limit of its associations; per-job and per-user (Max*) limits come from
// the job's own association, group (Grp*) limits from every association from the job's up to
// root, each against the running jobs of its whole subtree. Counted TRES: cpu, mem (MiB), node
// and gres/gpu.
//
// Submission limits (MaxSubmit, GrpSubmit, MaxSubmitPU) refuse a job at submission; all others
// keep it pending with the reason of the first limit it would pass, checked in this order:
// the partition's MaxTime, the QOS's MaxWall and per-job TRES, the association's per-job TRES,
// group job counts, per-user / per-association job counts, group TRES, per-user TRES.
// A per-job limit never clears: such a job stays pending, as in Slurm without DenyOnLimit.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "slurm/accounts.h"
#include "slurm/conf.h"

namespace orrery::slurm {

enum class Reason : uint8_t {
  kNone,
  kPriority,   // a higher-priority job waits for the resources this one would take
  kResources,  // the resources are not free
  kPartitionTimeLimit,
  kQOSMaxWallDurationPerJobLimit,
  kQOSMaxCpuPerJobLimit, kQOSMaxMemoryPerJob, kQOSMaxNodePerJobLimit, kQOSMaxGRESPerJob,
  kAssocMaxCpuPerJobLimit, kAssocMaxMemPerJob, kAssocMaxNodePerJobLimit, kAssocMaxGRESPerJob,
  kQOSGrpJobsLimit, kAssocGrpJobsLimit,
  kQOSMaxJobsPerUserLimit, kAssocMaxJobsLimit,
  kQOSGrpCpuLimit, kQOSGrpMemLimit, kQOSGrpNodeLimit, kQOSGrpGRES,
  kAssocGrpCpuLimit, kAssocGrpMemLimit, kAssocGrpNodeLimit, kAssocGrpGRES,
  kQOSMaxCpuPerUserLimit, kQOSMaxMemoryPerUser, kQOSMaxNodePerUserLimit, kQOSMaxGRESPerUser,
  // submission refusals
  kQOSGrpSubmitJobsLimit, kAssocGrpSubmitJobsLimit, kQOSMaxSubmitJobPerUserLimit, kAssocMaxSubmitJobLimit,
  kInvalidQOS,      // the job's QOS does not exist or its association may not use it
  kInvalidAccount,  // the job's account has no association for its user
};
inline constexpr int kReasonCount = static_cast<int>(Reason::kInvalidAccount) + 1;

// Slurm's name of the reason ("QOSMaxGRESPerUser"); "None" for kNone.
std::string_view ReasonName(Reason r);

enum TresKind : uint8_t { kTresCpu, kTresMem, kTresNode, kTresGpu, kTresKinds };
using TresCounts = std::array<int64_t, kTresKinds>;

// What the limits see of a job: its request and where it is charged.
struct LimitJob {
  int32_t assoc = -1;  // its user association (Accounts::assocs), -1: no association limits
  int32_t qos = -1;    // Accounts::qos, -1: none
  uint32_t partition = 0;
  TresCounts tres{};   // cpu, mem MiB, nodes, gpus
  int64_t time_limit_s = kUnlimited;
};

class Limits {
 public:
  Limits(const SlurmConf& conf, const Accounts& accounts);

  // kNone, or why the job is refused at submission.
  Reason CheckSubmit(const LimitJob& job) const;
  // kNone, or the limit that keeps the job pending now.
  Reason CheckStart(const LimitJob& job) const;
  // kNone, or the per-job limit (partition MaxTime, QOS MaxWall, per-job TRES) that keeps the
  // job pending whatever else runs.
  Reason CheckJob(const LimitJob& job) const { return JobLimits(job); }

  // The job's life: Submit (counts toward submission limits), Start (toward running limits),
  // End (leaves; `running` says whether it had started).
  void Submit(const LimitJob& job);
  void Start(const LimitJob& job);
  void End(const LimitJob& job, bool running);

 private:
  struct Use {
    int64_t running = 0, submitted = 0;
    TresCounts tres{};
  };
  Reason JobLimits(const LimitJob& job) const;
  Reason CountLimits(const LimitJob& job) const;
  Reason TresLimits(const LimitJob& job) const;
  std::vector<size_t> Chain(const LimitJob& job) const;  // the job's association, then its parents
  const Use* UserUse(const LimitJob& job) const;
  Use& UserUseMut(const LimitJob& job);
  void Add(const LimitJob& job, int sign, bool running, bool submitted);

  const SlurmConf& conf_;
  const Accounts& accounts_;
  std::vector<int64_t> parent_;    // association -> parent account association, -1 at the top
  std::vector<uint32_t> user_id_;  // association -> dense user id
  std::vector<Use> assoc_use_;     // per association: its subtree's jobs
  std::vector<Use> qos_use_;
  std::unordered_map<uint64_t, Use> qos_user_use_;  // (qos, user)
};

}  // namespace orrery::slurm
