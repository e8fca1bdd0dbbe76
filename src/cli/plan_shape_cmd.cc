// `orrery plan shape-study`: fixed shapes vs the planner's goodput shapes on a generated LLM
// workload (cli/shape_study.h; docs/validation/planner.md, "Planner-aware shapes").
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/shape_study.h"
#include "config/cluster_config.h"

namespace orrery::cli {
namespace {

struct ShapeArgs {
  std::string cluster = "configs/h200-16x8.toml";
  LlmWorkloadSpec spec;
  GoodputShapeOptions shape;
};

int RunShape(const ShapeArgs& a) {
  if (a.spec.jobs == 0) return Fail("plan shape-study", MakeError("--jobs: expected at least 1 job, got 0: nothing would run"));
  if (!(a.spec.mean_interarrival_s > 0))
    return Fail("plan shape-study", MakeError("--interarrival: expected seconds > 0, got " + std::to_string(a.spec.mean_interarrival_s)));
  if (a.shape.shrink == 0 || a.shape.grow == 0 || !(a.shape.min_gain >= 1))
    return Fail("plan shape-study", MakeError("--shrink and --grow: expected ≥ 1; --min-gain: expected ≥ 1"));
  Result<Cluster> cluster = LoadClusterConfig(a.cluster);
  if (!cluster.ok()) return Fail("plan shape-study", cluster.error());
  if (cluster->gpu_types.size() == 0 || cluster->vcs.size() != 1)
    return Fail("plan shape-study", MakeError("the shape study needs a cluster of one VC with named GPU types"));
  auto cost = PlannerCostFor(*cluster);
  if (!cost.ok()) return Fail("plan shape-study", cost.error());
  // Requests are timed on the first node's GPU type (the generator's seconds_per_step).
  const int per_node = cluster->nodes.empty() ? 8 : cluster->nodes.front().gpus;
  const GpuTypeId type = cluster->nodes.empty() ? GpuTypeId(0) : cluster->nodes.front().gpu_type;
  auto trace = GenerateLlmWorkload(a.spec, **cost, type, per_node);
  if (!trace.ok()) return Fail("plan shape-study", trace.error());
  auto rows = RunShapeStudy(*trace, *cluster, *cost, a.shape);
  if (!rows.ok()) return Fail("plan shape-study", rows.error());
  std::printf("%-8s %8s %12s %12s %9s %9s %8s\n", "shape", "finished", "avg_jct_h", "makespan_h", "avg_gpus", "reshaped",
              "resized");
  for (const ShapeStudyRow& r : *rows)
    std::printf("%-8s %8llu %12.3f %12.3f %9.1f %9llu %8llu\n", r.shape.c_str(),
                static_cast<unsigned long long>(r.finished), r.avg_jct_h, r.makespan_h, r.avg_gpus,
                static_cast<unsigned long long>(r.reshaped), static_cast<unsigned long long>(r.resized));
  return kExitOk;
}

}  // namespace

void RegisterPlanShapeStudy(CLI::App& plan, int* exit_code) {
  auto a = std::make_shared<ShapeArgs>();
  CLI::App* c = plan.add_subcommand("shape-study", "avg JCT and makespan: fixed shapes vs the planner's goodput shapes");
  SetExamples(c, {"./build/orrery plan shape-study --cluster configs/h200-16x8.toml --jobs 16 --seed 1"});
  c->add_option("--cluster", a->cluster, "cluster config of one GPU type with a planner profile (default configs/h200-16x8.toml)");
  c->add_option("--jobs", a->spec.jobs, "generated LLM training jobs (default 64)");
  c->add_option("--interarrival", a->spec.mean_interarrival_s, "mean seconds between submissions (default 900)");
  c->add_option("--seed", a->spec.seed, "workload seed (default 1)");
  c->add_option("--shrink", a->shape.shrink, "goodput: smallest GPU count tried = request / N (default 4; 1 = never shrink)");
  c->add_option("--grow", a->shape.grow, "goodput: largest GPU count tried = request × N (default 2; 1 = never grow)");
  c->add_option("--min-gain", a->shape.min_gain, "goodput: a doubling must speed the step up this much (default 1.6)");
  c->callback([a, exit_code] { *exit_code = RunShape(*a); });
}

}  // namespace orrery::cli
