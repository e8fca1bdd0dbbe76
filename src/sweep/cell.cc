// One cell as `orrery simulate` runs one policy with outputs on: the same workload, cluster
// choice and simulator configuration, SimulateChecked and the summary entry (src/run).
#include <filesystem>

#include "analysis/sim_output.h"
#include "config/cluster_config.h"
#include "config/infer_cluster.h"
#include "run/run.h"
#include "sweep/sweep.h"
#include "trace/import.h"
#include "workload/cluster_of.h"
#include "workload/generator.h"
#include "workload/spec.h"

namespace orrery::sweep {

namespace {

// The cell's workload and, when the cell names no cluster, the cluster `orrery simulate`
// would choose without --cluster (an SWF log's header machine, a generated preset's own,
// else the embedded default).
struct SweepCellInput {
  Trace trace;
  Cluster cluster;
};

Result<SweepCellInput> LoadSweepCellInput(const SweepSpec& spec, const Cell& cell) {
  SweepCellInput in;
  const SweepWorkload& w = spec.workload;
  std::optional<workload::WorkloadSpec> gen;
  bool swf_machine = false;  // an SWF log without a named cluster runs on its header's machine
  if (!w.trace.empty()) {
    ORR_ASSIGN_OR_RETURN(TraceFormat fmt, DetectTraceFormat(w.trace));
    swf_machine = fmt == TraceFormat::kSwf && cell.cluster.empty();
    ImportOptions io;
    io.swf_procs_as_gpus = swf_machine;
    ORR_ASSIGN_OR_RETURN(in.trace, LoadTrace(w.trace, fmt, io));
  } else {
    ORR_ASSIGN_OR_RETURN(gen, workload::GetPreset(w.preset));
    if (w.jobs) gen->jobs = w.jobs;
    if (w.days > 0) gen->days = w.days;
    if (cell.load > 0) gen->load = cell.load;
    for (const auto& [key, value] : cell.workload) ORR_RETURN_IF_ERROR(ApplyWorkloadAxis(key, value, &*gen));
    ORR_RETURN_IF_ERROR(workload::ValidateSpec(*gen));
    in.trace = workload::GenerateWorkload(*gen, cell.seed);
  }
  if (!cell.cluster.empty()) {
    ORR_ASSIGN_OR_RETURN(in.cluster, LoadClusterConfig(cell.cluster));
  } else if (swf_machine) {
    ORR_ASSIGN_OR_RETURN(SwfMachine m, ReadSwfMachine(w.trace));
    ORR_ASSIGN_OR_RETURN(in.cluster, SwfCluster(m, w.trace));
  } else if (gen && gen->name != workload::kDefaultPreset) {
    in.cluster = workload::ClusterOf(*gen);
  } else {
    ORR_ASSIGN_OR_RETURN(in.cluster, DefaultCluster());
  }
  return in;
}

}  // namespace

Result<nlohmann::ordered_json> SimulateCell(const SweepSpec& spec, const Cell& cell) {
  ORR_ASSIGN_OR_RETURN(SweepCellInput in, LoadSweepCellInput(spec, cell));
  // `orrery simulate`'s configuration of a run with outputs (MakeSimConfig in simulate_cmd.cc).
  SimConfig cfg;
  cfg.policy = cell.policy;
  cfg.placer = cell.placer;
  cfg.seed = cell.seed;
  cfg.sample_interval = 60;
  cfg.explain = true;
  cfg.record_attempts = true;
  ORR_ASSIGN_OR_RETURN(SimResult r, SimulateChecked(in.trace, in.cluster, cfg));
  nlohmann::ordered_json out;
  out["cell"] = {{"id", cell.id},         {"key", cell.key},       {"policy", cell.policy}, {"cluster", cell.cluster},
                 {"placer", cell.placer}, {"load", cell.load},     {"seed", cell.seed}};
  out["cluster"] = in.cluster.name;
  out["jobs"] = in.trace.jobs.size();
  out["run"] = SummaryToJson(SummaryOf(r, in.trace));
  return out;
}

}  // namespace orrery::sweep
