#include "cli/workload_flags.h"

#include <utility>

namespace orrery::cli {

void AddWorkloadModelFlags(CLI::App* cmd, WorkloadModelFlags* f) {
  cmd->add_option("--arrivals", f->arrivals,
                  "Generated arrivals: open-loop (Poisson), closed-loop (users hold a GPU job back while their VC "
                  "is full) or closed-loop-nodes (while it does not fit their VC's nodes); default: the preset's "
                  "(closed-loop-nodes for helios-venus and helios-earth, open-loop for the others; docs/workload.md)");
  cmd->add_option("--batches", f->batches,
                  "Generated batches: single (one job per arrival, every preset's default), sweeps (batches of one "
                  "user's jobs, sizes fitted on the Venus 10-minute counts) or short-sweeps (sweeps of short runs, "
                  "long runs one at a time; docs/workload.md)");
  cmd->add_option("--long-runs", f->long_runs,
                  "Generated long runs: weekly (they follow the job-count profile) or flat (a constant rate); "
                  "default: the preset's (flat for helios-venus and helios-earth; docs/workload.md)");
  cmd->add_option("--long-run-sizes", f->long_run_sizes,
                  "Generated long runs' sizes: class (the class's size mix, every preset's default) or lone (the "
                  "sizes of the Venus jobs submitted alone, refitted; helios-venus only; docs/workload.md)");
}

Status ApplyWorkloadModelFlags(const WorkloadModelFlags& f, workload::WorkloadSpec* spec) {
  if (!f.arrivals.empty()) {
    auto a = workload::ParseArrivalModel(f.arrivals);
    if (!a.ok()) return a.error();
    spec->arrivals = *a;
  }
  if (!f.batches.empty()) {
    auto b = workload::ParseBatchModel(f.batches);
    if (!b.ok()) return b.error();
    spec->batches = *b;
  }
  if (!f.long_runs.empty()) {
    auto l = workload::ParseLongRunArrivals(f.long_runs);
    if (!l.ok()) return l.error();
    spec->long_runs = *l;
  }
  if (!f.long_run_sizes.empty()) {
    auto z = workload::ParseLongRunSizes(f.long_run_sizes);
    if (!z.ok()) return z.error();
    auto w = workload::WithLongRunSizes(*spec, *z);
    if (!w.ok()) return w.error();
    *spec = *std::move(w);
  }
  return Status::Ok();
}

}  // namespace orrery::cli
