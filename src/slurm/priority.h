// Slurm's multifactor job priority (slurm.schedmd.com/priority_multifactor.html), as slurmctld
// computes it for a pending job:
//
//   priority = Σ weight × factor − (nice), truncated to an integer and kept in [1, 2^32 − 2]
//
// with the factors, each in [0, 1]:
//   age        min(now − eligible, PriorityMaxAge) / PriorityMaxAge (from submission with
//              PriorityFlags=ACCRUE_ALWAYS; 1 once any age is reached when PriorityMaxAge=0)
//   fair share the Fair Tree factor of the job's user association (fair_tree.h)
//   job size   (nodes / cluster nodes + cpus / cluster CPUs) / 2, or with PriorityFavorSmall
//              ((cluster nodes − nodes) / cluster nodes + (cluster CPUs − cpus) / cluster CPUs) / 2
//   partition  the partition's PriorityJobFactor / the largest PriorityJobFactor of any partition
//   QOS        the QOS's priority / the largest priority of any QOS
//   TRES       per weighted TRES (PriorityWeightTRES): requested / the partition's total
// and the QOS and partition order (PriorityTier) applied by the scheduler, not here.
// With PriorityType=priority/basic every job's priority is equal and jobs run in submission
// order within a partition tier.
#pragma once

#include <cstdint>
#include <vector>

#include "slurm/accounts.h"
#include "slurm/conf.h"
#include "slurm/fair_tree.h"

namespace orrery::slurm {

// What the priority plugin knows of a pending job: its request, never its run time.
struct PriorityJob {
  int64_t submit = 0;    // seconds
  int64_t eligible = 0;  // when it could first start (submission, or its dependencies met)
  uint32_t nodes = 1;
  uint32_t cpus = 1;
  uint32_t gpus = 0;
  int64_t mem_mib = 0;
  uint32_t partition = 0;  // index into SlurmConf::partitions
  int32_t qos = -1;        // index into Accounts::qos, -1 for none
  int32_t assoc = -1;      // the user association (Accounts::assocs), -1 for none (fair share 0)
  int32_t nice = 0;        // --nice: subtracted from the priority
};

struct PriorityFactors {
  double age = 0, fairshare = 0, job_size = 0, partition = 0, qos = 0;
  double tres = 0;  // already weighted: Σ PriorityWeightTRES[t] × requested_t / partition_t
};

class PriorityModel {
 public:
  // `tree` may be null when no accounts are given (fair share factor 0 for every job).
  PriorityModel(const SlurmConf& conf, const Accounts& accounts, const FairTree* tree);

  PriorityFactors Factors(const PriorityJob& job, int64_t now) const;
  // The integer priority (1 for every job under priority/basic).
  uint32_t Priority(const PriorityJob& job, int64_t now) const;
  // The weighted sum before nice and truncation.
  double Score(const PriorityFactors& f) const;
  // The integer priority of these factors and nice value (1 under priority/basic).
  uint32_t FromFactors(const PriorityFactors& f, int32_t nice) const;

 private:
  struct PartTotals {
    double nodes = 0, cpus = 0, gpus = 0, mem = 0;
  };
  const SlurmConf& conf_;
  const Accounts& accounts_;
  const FairTree* tree_;
  double cluster_nodes_ = 0, cluster_cpus_ = 0;
  double max_job_factor_ = 0, max_qos_priority_ = 0;
  std::vector<PartTotals> part_totals_;
};

}  // namespace orrery::slurm
