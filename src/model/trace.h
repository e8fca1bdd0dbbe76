// A workload: jobs plus the string tables their ids point into. Produced by
// trace importers and the workload generator; consumed by the simulator, the
// analyzers and the live driver's replay.
#pragma once

#include <string>
#include <vector>

#include "base/string_pool.h"
#include "model/job.h"
#include "model/work.h"

namespace orrery {

// A job's Slurm accounting where the trace records it (sacct's Account and QOS, --nice): what
// the slurm policy charges it to. Known at submission.
struct JobAccount {
  std::string account;  // empty = not recorded (the user's default account)
  std::string qos;      // empty = not recorded (the association's default QOS)
  int32_t nice = 0;     // subtracted from its priority
  bool empty() const { return account.empty() && qos.empty() && nice == 0; }
  bool operator==(const JobAccount&) const = default;
};

struct Trace {
  std::vector<Job> jobs;   // jobs[i].id == JobId(i); sorted by (submit, id) after Finalize
  StringPool users;        // UserId -> name
  StringPool vcs;          // VcId -> name
  StringPool names;        // NameId -> job name
  StringPool gpu_types;    // GpuTypeId -> GPU model (bit index in Job::gpu_types)
  std::vector<std::string> source_ids;  // optional: the source's own job id per job ("" if none)
  int64_t epoch_unix = 0;  // absolute time (UTC seconds) of submit == 0; 0 if unknown
  bool epoch_known = false;
  std::string origin;      // importer / generator that produced it, e.g. "philly"
  // Optional: per job, its phases (model/work.h). Empty (or an empty WorkSpec) = a trace job,
  // one generic phase of `duration` steps at 1 step/s.
  std::vector<WorkSpec> work;
  // Optional: per job, the jobs it waits for (Slurm's afterok): it is submitted when the last
  // of them finished, and rejected when one of them cannot finish. Each entry is a job index
  // smaller than the job's own (no cycles). Empty (or all entries empty) = no dependencies.
  std::vector<std::vector<uint32_t>> after;
  // Optional: per job, its account, QOS and nice value (canonical format v2). Empty = none
  // recorded; a shorter vector leaves the jobs after it unrecorded.
  std::vector<JobAccount> accounting;
  bool has_accounting() const {
    for (const JobAccount& a : accounting)
      if (!a.empty()) return true;
    return false;
  }
  const JobAccount& account_of(size_t job) const {
    static const JobAccount kNone;
    return job < accounting.size() ? accounting[job] : kNone;
  }
};

}  // namespace orrery
