// The failure model (rates and sources in docs/design/failures.md): per-node
// hardware hazards, per-job framework errors, hangs and loss spikes, script errors early in a
// run; and the attribution of a trace's recorded failures to a category (competing risks).
// Draws come from named RNG streams (base/rng.h): same seed, same faults.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "base/result.h"
#include "base/rng.h"
#include "base/time.h"
#include "model/fault.h"
#include "model/job.h"

namespace orrery {

struct FailureModel {
  std::string name;
  // Hazard per node-hour of each node cause (FaultCause kGpu..kHost).
  std::array<double, kNumNodeCauses> node_per_hour{};
  // Framework errors and hangs per node-hour of a running job (they grow with the gang: more
  // ranks, more communicators); loss spikes per job-hour of training, whatever its size.
  double framework_per_node_hour = 0, hang_per_node_hour = 0, loss_spike_per_hour = 0;
  // Script errors: hazard k/s·(t/s)^(k-1) per job-hour at t hours into a run (Weibull, shape
  // k < 1: most come early), times `script_weight`.
  double script_weight = 0, script_shape = 0.5, script_scale_h = 1.0;
  // A node fault whose root cause survives the reboot (probability), after which that node
  // faults at `recur_factor` times its rate until it is repaired (cordoned, `repair` s).
  double persist_probability = 0, recur_factor = 1;
  Duration repair = 3 * 86400;
  // A node cordoned after a fault (recovery `acme`, trace runs) needs a hardware repair of
  // `repair` s with probability `repair_share`; otherwise a reset, reboot and health check of
  // `reboot` s clears it (sources in docs/design/failures.md, "Repair or reboot").
  double repair_share = 0.54;
  Duration reboot = 3600;
  Duration rollback = 0;  // loss spike: s of training rolled back before the spike (skipped batches)

  double NodePerHour() const;  // sum over the node causes
  // Hazard per hour of the causes that name no node, for a job of `nodes` nodes.
  double JobPerHour(double nodes) const {
    return (framework_per_node_hour + hang_per_node_hour) * nodes + loss_spike_per_hour;
  }
};

// Llama 3 405B (arXiv 2407.21783): 419 unexpected interruptions in 54 days on 2,048 nodes x 8
// H100, 78 % hardware (GPU 30.1 %, HBM3 17.2 %, network 8.4 %); per-node rates = share x 419 /
// (2,048 x 54 x 24 node-hours). Loss spikes and persistent faults as documented assumptions.
FailureModel Llama3Model();
// Acme (NSDI'24) attribution model for LLM-development traces (acme-seren / acme-kalos):
// infrastructure hazard per node-hour, framework per job-hour, early script errors.
FailureModel AcmeModel();

// "llama3", "acme", optionally with overrides "llama3:scale=2,loss_spikes_per_day=1,persist=0.3,
// recur=20,repair=3d,repair_share=0.5,reboot=1h,rollback=30m" (scale multiplies every rate).
Result<FailureModel> MakeFailureModel(const std::string& spec);

// How long a cordoned node stays out: `repair` with probability `repair_share` (one uniform
// draw from `rng`, stream "failures/repair"), else `reboot`.
Duration CordonDuration(const FailureModel& m, Rng& rng);

// The hazard (per hour) of each cause for a job of `nodes` nodes at `hours` into its run.
std::array<double, kNumFaultCauses> CauseHazards(const FailureModel& m, double nodes, double hours);

// A recorded failure's category (a trace's FAILED / NODE_FAIL job): NODE_FAIL is
// infrastructure; FAILED is drawn from the competing hazards at the time it failed (its
// duration), with its node count ceil(gpus / gpus_per_node). `rng`: stream "failures/attribution".
FailureCategory AttributeFailure(const FailureModel& m, const Job& job, uint32_t gpus_per_node, Rng& rng);
// The probabilities behind it (sum 1).
std::array<double, kNumFailureCategories> CategoryPosterior(const FailureModel& m, const Job& job, uint32_t gpus_per_node);

// A trace's failed jobs (FAILED, NODE_FAIL) by category: counts and GPU-seconds (gpus x
// duration), each job attributed once in trace order from stream "failures/attribution".
struct FailureBreakdown {
  uint64_t jobs = 0, failed = 0;
  double gpu_seconds = 0, failed_gpu_seconds = 0;
  std::array<uint64_t, kNumFailureCategories> by_category{};
  std::array<double, kNumFailureCategories> gpu_seconds_by_category{};
  // Expected values (posterior probabilities summed instead of drawn: no sampling noise).
  std::array<double, kNumFailureCategories> expected_jobs{}, expected_gpu_seconds{};
};
struct Trace;
FailureBreakdown AttributeTrace(const Trace& trace, const FailureModel& m, uint32_t gpus_per_node, uint64_t seed);

}  // namespace orrery
