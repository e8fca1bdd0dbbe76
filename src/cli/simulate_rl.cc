#include "cli/simulate_rl.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cli/flag_rules.h"

namespace orrery::cli {

void AddRlSimFlags(CLI::App* cmd, RlSimOptions* o) {
  cmd->add_option("--rl-jobs", o->jobs, "RL post-training jobs to add (CSV, docs/formats/rl-jobs.md)");
  cmd->add_option("--rl-share", o->share,
                  "Add generated RL jobs so that they are this share of all jobs (0 < F < 1; docs/design/rl.md)")
      ->check(InRange(0, 1, true, "share of the jobs"));
  cmd->add_option("--rl-strategy", o->strategy,
                  "Step strategy of every RL job: sync (default), tlt, tail-batch, partial, async, harvest "
                  "(idle rollout GPUs lent to queued jobs; docs/design/rl.md)");
}

namespace {

// The largest VC, where generated RL jobs go: (name, GPUs); the whole cluster when it is one pool.
std::pair<std::string, uint64_t> LargestVc(const Cluster& c) {
  if (c.single_pool || c.vcs.empty()) return {"", c.total_gpus()};
  auto it = std::max_element(c.vcs.begin(), c.vcs.end(),
                             [](const VirtualCluster& a, const VirtualCluster& b) { return a.gpus < b.gpus; });
  return {it->name, it->gpus};
}

double Round(double v, double unit) { return std::round(v / unit) * unit; }

}  // namespace

Result<rl::RlExpansion> AddRlSimJobs(const RlSimOptions& o, const CLI::App& cmd, const Cluster& cluster, uint64_t seed,
                                     Trace* trace) {
  if (!o.any()) {
    ORR_RETURN_IF_ERROR(RefuseGiven(cmd, {"--rl-strategy"}, "the workload has no RL jobs (--rl-jobs or --rl-share)"));
    return rl::RlExpansion{};
  }
  std::vector<rl::RlJobSpec> specs;
  if (!o.jobs.empty()) {
    ORR_ASSIGN_OR_RETURN(specs, rl::LoadRlJobs(o.jobs));
  }
  if (o.share > 0) {
    const auto [vc, gpus] = LargestVc(cluster);
    ORR_ASSIGN_OR_RETURN(std::vector<rl::RlJobSpec> gen,
                         rl::GenerateRlJobs(*trace, o.share, static_cast<uint32_t>(std::min<uint64_t>(gpus, 1u << 30)), vc, seed));
    specs.insert(specs.end(), gen.begin(), gen.end());
  }
  return rl::AddRlJobs(specs, o.strategy, trace);
}

nlohmann::ordered_json RlReportJson(const rl::RlReport& r) {
  nlohmann::ordered_json j;
  j["strategy"] = r.strategy;
  j["jobs"] = r.jobs;
  j["finished"] = r.finished;
  j["steps_run"] = Round(r.steps_run, 0.01);
  j["step_time_s"] = Round(r.step_time_s, 0.001);
  j["sync_step_time_s"] = Round(r.sync_step_time_s, 0.001);
  j["breakdown_s"] = {{"rollout", Round(r.rollout_s, 0.001)}, {"tail", Round(r.tail_s, 0.001)},
                      {"reward", Round(r.reward_s, 0.001)},   {"train", Round(r.train_s, 0.001)},
                      {"sync", Round(r.sync_s, 0.001)}};
  j["gpu_hours"] = Round(r.gpu_hours, 0.001);
  j["idle_gpu_hours"] = Round(r.idle_gpu_hours, 0.001);
  j["other_jobs"] = {{"finished", r.other_jobs}, {"avg_jct_s", Round(r.other_avg_jct_s, 0.01)}, {"preemptions", r.other_preemptions}};
  if (r.strategy == "harvest") {
    const HarvestStats& h = r.harvest;
    j["harvest"] = {{"lent_gpu_hours", Round(h.lent_gpu_seconds / 3600, 0.001)},
                    {"harvested_gpu_hours", Round(h.harvested_gpu_seconds / 3600, 0.001)},
                    {"lends", h.lends},
                    {"returns", h.returns},
                    {"borrower_starts", h.borrower_starts},
                    {"borrower_preemptions", h.borrower_preemptions}};
  }
  return j;
}

std::string RlNote(const std::string& policy, const rl::RlReport& r) {
  const std::string harvest =
      r.strategy != "harvest"
          ? std::string()
          : fmt::format("; lent {:.1f} GPU-hours of idle rollout GPUs, {:.1f} of them used by {} borrower starts, "
                        "{} borrowers preempted at the return",
                        r.harvest.lent_gpu_seconds / 3600, r.harvest.harvested_gpu_seconds / 3600, r.harvest.borrower_starts,
                        r.harvest.borrower_preemptions);
  return fmt::format("{}: {} RL jobs ({} finished) under {}: step {:.1f} s (sync {:.1f} s), {:.1f} GPU-hours, "
                     "{:.1f} of them idle rollout GPUs{}",
                     policy, r.jobs, r.finished, r.strategy, r.step_time_s, r.sync_step_time_s, r.gpu_hours, r.idle_gpu_hours,
                     harvest);
}

}  // namespace orrery::cli
