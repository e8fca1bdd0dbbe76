// A small deterministic discrete-event executor for one evaluation plan on N nodes x G GPUs:
//  * GPU jobs start in plan order (a job array): each on the lowest-index node with enough
//    free GPUs (lowest free GPU indices), strictly in order (no job overtakes an earlier one);
//  * shared storage is a fluid resource: every active read gets a max-min fair share, i.e.
//    a node gets min(node link, aggregate / nodes reading) and splits it among its readers;
//  * with LoadSource::kNodeCache one preload per node starts at t = 0 (it uses the node's
//    link, no GPU and no CPU slot); a job on that node waits for it, holding its GPUs, then
//    reads the cache at cache_bytes_per_s;
//  * CPU metric jobs wait for their GPU jobs (or the whole inference stage), then run FIFO
//    (release time, dataset index) on `cpu_slots` CPU slots.
// Times are seconds from submission (t = 0); same plan and inputs -> same schedule.
#pragma once

#include <cstdint>
#include <vector>

#include "base/result.h"
#include "eval/plan.h"

namespace orrery::eval {

struct ClusterSpec {
  uint32_t nodes = 1;
  uint32_t gpus_per_node = 8;
  uint32_t cpu_slots = 32;                   // CPU partition slots for metric jobs
  double storage_bytes_per_s = 12e9;         // aggregate shared-storage read bandwidth
  double node_storage_bytes_per_s = 3e9;     // one node's link to the shared storage
  double cache_bytes_per_s = 10e9;           // node-local memory/disk -> GPU
};
Status ValidateCluster(const ClusterSpec& c);

struct PhaseRun {
  PhaseKind kind = PhaseKind::kStartup;
  double start = 0, end = 0;
  double wait_s = 0;  // kLoad from the node cache: seconds waiting for the node's preload
};

struct JobRun {
  uint32_t node = 0;  // GPU jobs and preloads; CPU jobs: 0
  uint32_t slot = 0;  // first GPU index on the node, or the CPU slot
  double release = 0;  // when it could start (dependencies met)
  double start = 0, end = 0;
  std::vector<PhaseRun> phases;
};

struct Schedule {
  std::vector<JobRun> gpu_jobs;     // by plan index
  std::vector<JobRun> metric_jobs;  // by plan.metric_jobs index
  std::vector<JobRun> preloads;     // by node (empty unless kNodeCache)
  double makespan_s = 0;
  double inference_end_s = 0;       // last GPU job end
  double gpu_hours = 0;             // GPUs held by GPU jobs x time
  double gpu_infer_hours = 0;       // of which inferring
  double gpu_idle_hours = 0;        // of which not inferring (startup, load, cache wait, metric)
  double gpu_phase_hours[5] = {0, 0, 0, 0, 0};  // by PhaseKind, GPU jobs only
  double gpu_cache_wait_hours = 0;
  double storage_bytes = 0;         // read from shared storage
  uint32_t max_concurrent_reads = 0;
};

Result<Schedule> Execute(const Workload& w, const Plan& plan, const ClusterSpec& cluster);

}  // namespace orrery::eval
