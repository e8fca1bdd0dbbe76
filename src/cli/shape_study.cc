#include "cli/shape_study.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/rng.h"
#include "sched/plugins/policies.h"
#include "sim/simulator.h"

namespace orrery::cli {
namespace {

struct LlmSize {
  const char* name;
  TrainModel model;
  uint32_t weight;
  uint32_t gpus_small, gpus_large;  // requested GPUs: one of the two, equally likely
};

LlmSize Sizes(int i, int32_t seq, int32_t batch) {
  // GPT-3 table shapes (Brown et al. 2020), vocabulary 32000.
  switch (i) {
    case 0: return {"1.3B", {24, 2048, 16, 32000, seq, batch}, 4, 8, 8};
    case 1: return {"2.7B", {32, 2560, 32, 32000, seq, batch}, 3, 8, 16};
    case 2: return {"6.7B", {32, 4096, 32, 32000, seq, batch}, 2, 16, 32};
    default: return {"13B", {40, 5120, 40, 32000, seq, batch}, 1, 32, 64};
  }
}

int PickSize(Rng& rng) {
  const uint64_t u = rng.Below(10);  // weights 4:3:2:1
  return u < 4 ? 0 : u < 7 ? 1 : u < 9 ? 2 : 3;
}

}  // namespace

Duration RestartCost(const TrainModel& m) {
  const double params = 12.0 * m.layers * double(m.hidden) * m.hidden + 2.0 * m.vocab * double(m.hidden);
  return 60 + static_cast<Duration>(std::ceil(2 * 14 * params / 5e9));
}

std::string ShapePolicySpec(const std::string& shape, const GoodputShapeOptions& o) {
  if (shape == "fixed") return "fifo";
  std::string spec = fmt::format("fifo:shape=goodput,shape_shrink={},shape_grow={},shape_gain={}", o.shrink, o.grow,
                                 o.min_gain);
  return shape == "elastic" ? spec + ",elastic=true" : spec;
}

namespace {

ShapeStudyRow Summarize(const char* shape, const Trace& trace, const SimResult& r) {
  ShapeStudyRow row;
  row.shape = shape;
  double jct = 0;
  for (const JobOutcome& o : r.outcomes) {
    if (o.status != OutcomeStatus::kFinished) continue;
    ++row.finished;
    jct += static_cast<double>(o.end - trace.jobs[o.job.v].submit);
  }
  for (const Attempt& a : r.attempts.attempts) {
    if (a.gpus != trace.jobs[a.job.v].gpus) ++row.reshaped;
    if (a.cause == EndCause::kPreempted) ++row.resized;
  }
  row.avg_jct_h = row.finished ? jct / row.finished / 3600.0 : 0;
  row.makespan_h = static_cast<double>(r.last_end - r.first_submit) / 3600.0;
  row.avg_gpus = r.last_end > r.first_submit ? r.gpu_seconds_busy / static_cast<double>(r.last_end - r.first_submit) : 0;
  return row;
}

}  // namespace

Result<Trace> GenerateLlmWorkload(const LlmWorkloadSpec& s, const PlannerCost& cost, GpuTypeId type,
                                  int gpus_per_node) {
  Rng rng(s.seed, "llm/jobs");
  Trace t;
  t.origin = "llm-generator";
  double at = 0;
  for (uint32_t i = 0; i < s.jobs; ++i) {
    at += -std::log(1.0 - rng.Uniform()) * s.mean_interarrival_s;
    const LlmSize size = Sizes(PickSize(rng), s.seq, s.global_batch);
    const uint32_t gpus = rng.Below(2) ? size.gpus_large : size.gpus_small;
    const double tokens = 0.5e9 * std::pow(20.0, rng.Uniform());  // log-uniform [0.5, 10] B
    const int nodes = (static_cast<int>(gpus) + gpus_per_node - 1) / gpus_per_node;
    ORR_ASSIGN_OR_RETURN(PlannedStep step, cost.Best(size.model, {TypedGroup{type, static_cast<int>(gpus), nodes}}));
    Phase p;
    p.kind = PhaseKind::kTrain;
    p.steps = std::max<int64_t>(1, std::llround(tokens / (double(s.global_batch) * s.seq)));
    p.seconds_per_step = step.seconds;
    p.demand.gpus = gpus;
    p.model = size.model;
    p.checkpoint.restore = RestartCost(size.model);  // an elastic resize or a preemption
    Job j;
    j.id = JobId(i);
    j.submit = static_cast<Time>(at);
    j.gpus = gpus;
    j.duration = -1;  // unknown to the trace: the truth is the phase (its time depends on the shape)
    j.name = NameId(t.names.Intern(fmt::format("gpt-{}", size.name)));
    t.jobs.push_back(j);
    t.work.push_back(WorkSpec{{p}});
  }
  return t;
}

Result<std::vector<ShapeStudyRow>> RunShapeStudy(const Trace& trace, const Cluster& cluster,
                                                 std::shared_ptr<const PlannerCost> cost, GoodputShapeOptions options) {
  std::vector<ShapeStudyRow> rows;
  for (const char* shape : {"fixed", "goodput", "elastic"}) {
    PolicyEnv env{&trace, &cluster, cost, {}};
    const std::string spec = ShapePolicySpec(shape, options);
    ORR_ASSIGN_OR_RETURN(PolicyParts parts, MakePolicyFor(spec, 1, &env));
    SimConfig cfg;
    cfg.policy = spec;
    cfg.sample_interval = 0;
    cfg.planner = cost;
    cfg.record_attempts = true;
    ORR_ASSIGN_OR_RETURN(SimResult r, Simulate(trace, cluster, cfg, std::move(parts)));
    ORR_RETURN_IF_ERROR(CheckConservation(trace, r));
    rows.push_back(Summarize(shape, trace, r));
  }
  return rows;
}

}  // namespace orrery::cli
