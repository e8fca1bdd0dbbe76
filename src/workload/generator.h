// Synthetic workload generator (model: docs/workload.md).
//
// Deterministic: the output depends only on (spec, seed); every random draw comes from
// base/rng.h named streams ("workload/users", "workload/templates", "workload/arrivals",
// "workload/jobs"), so the trace is byte-identical on every platform with the same libm.
//
// Memory: users, VCs and the recurring job names are created and interned once, up
// front; generating a job allocates nothing, so GenerateWorkload needs ~sizeof(Job) per
// job (10M jobs ~ 0.8 GB) and WorkloadGenerator::Next streams in O(1) memory.
#pragma once

#include <cstdint>
#include <memory>

#include "model/trace.h"
#include "workload/spec.h"

namespace orrery::workload {

class WorkloadGenerator {
 public:
  // Precondition: ValidateSpec(spec).ok().
  WorkloadGenerator(const WorkloadSpec& spec, uint64_t seed);
  ~WorkloadGenerator();
  WorkloadGenerator(const WorkloadGenerator&) = delete;
  WorkloadGenerator& operator=(const WorkloadGenerator&) = delete;

  // The trace without jobs: string tables (users, VCs, names), epoch, origin.
  const Trace& header() const;
  // Moves the header out (call once, after the last Next()).
  Trace TakeHeader();

  // Produces the next job in submit order (ids 0, 1, 2, ...). Returns false once
  // spec.jobs jobs were produced or, when spec.jobs == 0, the next arrival falls past
  // spec.days.
  bool Next(Job* job);

  // Expected number of jobs (spec.jobs, or rate * days); for reserve().
  uint64_t ExpectedJobs() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Generates the whole trace in memory (jobs sorted by submit, ids dense).
// Precondition: ValidateSpec(spec).ok().
Trace GenerateWorkload(const WorkloadSpec& spec, uint64_t seed);

}  // namespace orrery::workload
