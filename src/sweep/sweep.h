// Policy studies as grids (`orrery sweep`, docs/design/sweep.md): a spec (docs/formats/sweep.md)
// names a workload and lists of policies, seeds, clusters and workload options; their cartesian
// product is the grid of cells. Each cell is one `orrery simulate` run (src/run) whose outputs
// go to DIR/cells/<id>/; a cell whose summary.json is complete is never rerun. `Collect` merges
// the cells into one table: per group (everything but the seed) each metric's mean across
// seeds and the half-width of its 95 % Student-t confidence interval.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "workload/spec.h"

namespace orrery::sweep {

// The workload every cell replays: a trace file, or a generated preset.
struct SweepWorkload {
  std::string trace;   // path (resolved against the spec's folder); empty = generated
  std::string preset;  // generate.preset
  uint64_t jobs = 0;   // generate.jobs (0 = the preset's)
  double days = 0;     // generate.days (0 = the preset's)
};

struct SweepSpec {
  SweepWorkload workload;
  std::vector<std::string> policies;
  std::vector<uint64_t> seeds;
  std::vector<std::string> clusters;  // "" = the default cluster (as `orrery simulate` without --cluster)
  std::vector<double> loads;          // options.load ({0} = the preset's rate); generated workloads only
  std::vector<std::string> placers;   // options.placer ({"consolidate"})
  // The generator's other knobs as grid axes, in kWorkloadAxes order, only those the spec
  // lists: (key, values as canonical text), e.g. ("arrivals", {"open-loop", "closed-loop"}).
  std::vector<std::pair<std::string, std::vector<std::string>>> workload_axes;
  uint32_t retries = 2;               // further attempts of a failed cell in one invocation
};

// The [options] keys that vary the generated workload beyond `load`, as `orrery simulate
// --generate` takes them: jobs, days, arrivals, batches, long_runs, long_run_sizes.
extern const std::vector<std::string> kWorkloadAxes;
// Sets one workload axis's value (canonical text) on a preset; the error names the value.
Status ApplyWorkloadAxis(const std::string& key, const std::string& value, workload::WorkloadSpec* gen);

// One point of the grid.
struct Cell {
  std::string policy, cluster, placer;
  uint64_t seed = 1;
  double load = 0;
  // The workload axes' values of this cell, (key, value) in kWorkloadAxes order; "" when none.
  std::vector<std::pair<std::string, std::string>> workload;
  std::string workload_text;  // "key=value key=value" of `workload` (the table's column)
  std::string key;  // canonical text of the parameters (the id is derived from it)
  std::string id;   // "<readable slug>-<16 hex digits of FNV-1a 64 of key>"; also the folder name
  std::string group;  // key without the seed: the cells collect averages over
};

// Reads a spec; errors are located (file:line:col) and unknown keys list the known ones.
Result<SweepSpec> ParseSweepSpec(const std::string& text, const std::string& file);
Result<SweepSpec> LoadSweepSpec(const std::string& path);

// The grid in a fixed order: clusters, then loads, the workload axes (kWorkloadAxes order),
// placers, policies, seeds (seed fastest).
std::vector<Cell> ExpandGrid(const SweepSpec& spec);

// What a cell's run hands back: summary.json's content (its "run" object holds the
// metrics), or the error.
using CellRunner = std::function<Result<nlohmann::ordered_json>(const SweepSpec&, const Cell&)>;

// The real runner: the cell's workload and cluster, then SimulateChecked and the summary as
// `orrery simulate` writes it for that policy.
Result<nlohmann::ordered_json> SimulateCell(const SweepSpec& spec, const Cell& cell);

// Who runs a cell: DIR/cells/<id>/claim holds the owner's name while it runs ("slurm:<job>_<task>"
// in an array task, else LocalOwner()); another run of the cell finds it and leaves the cell
// alone while `alive(holder)` says the holder still runs, and takes it over once it does not
// (a task killed mid-run leaves its claim behind). No `alive`: every holder counts as alive.
struct CellClaim {
  std::string owner;
  std::function<bool(const std::string& holder)> alive;
};
// "pid:<host>:<pid>" of this process.
std::string LocalOwner();
// A "pid:<host>:<pid>" holder of this host is alive while that process exists; any other
// holder (another host, a Slurm task) cannot be checked here and counts as alive.
bool LocalOwnerAlive(const std::string& owner);
// Takes the claim of the cell in `cell_dir`: "" when taken (also when `claim.owner` held it
// already, or the holder is no longer alive), else the live holder. Under flock on
// cell_dir/claim.lock; the claim file is written atomically.
Result<std::string> ClaimCell(const std::string& cell_dir, const CellClaim& claim);
// Removes the claim if `claim.owner` holds it.
void ReleaseCell(const std::string& cell_dir, const CellClaim& claim);

// `sweep --slurm`'s decision for one cell, from its outputs and the sweep's own tasks in the
// queue: complete cells are never submitted, cells with a pending or running task are not
// submitted again, every other cell (never run, failed, killed, cancelled) is.
enum class QueueState : uint8_t { kAbsent, kPending, kRunning };
enum class CellAction : uint8_t { kComplete, kQueued, kSubmit };
CellAction PlanCell(bool complete, QueueState queued);

struct CellOutcome {
  std::string id;
  // kBusy: another live run holds the cell's claim (`holder`); nothing was run.
  enum class State : uint8_t { kSkipped, kRan, kFailed, kBusy } state = State::kSkipped;
  uint32_t attempts = 0;  // runs in this invocation
  std::string error;      // the last attempt's, when failed
  std::string holder;     // the claim's live holder, when busy
};

struct SweepReport {
  std::vector<CellOutcome> cells;  // grid order, one per cell
  size_t skipped = 0, ran = 0, failed = 0, busy = 0;
};

// Runs every cell without complete outputs under `dir` on `workers` threads (0 = every
// available core), each failed one up to 1 + spec.retries times; writes
// DIR/cells/<id>/summary.json (atomically) and DIR/grid.json. Errors only when the folder
// cannot be written; failed cells are in the report.
Result<SweepReport> RunSweep(const SweepSpec& spec, const std::string& dir, unsigned workers,
                             const CellRunner& runner);
// The same under `claim` (default: LocalOwner(), LocalOwnerAlive).
Result<SweepReport> RunSweep(const SweepSpec& spec, const std::string& dir, unsigned workers,
                             const CellRunner& runner, const CellClaim& claim);

// One cell: skipped when complete, busy when a live run holds its claim, else claimed and run
// up to 1 + spec.retries times (summary.json written atomically, error.txt on failure), the
// claim released after. What RunSweep does per cell, and `sweep run-cell` per Slurm array task.
CellOutcome RunCell(const SweepSpec& spec, const std::string& dir, const Cell& cell, const CellRunner& runner,
                    const CellClaim& claim);

// DIR/sweep.json: the spec as read (paths resolved), for `sweep run-cell`; and back.
Status WriteSpecJson(const SweepSpec& spec, const std::string& dir);
Result<SweepSpec> LoadSpecJson(const std::string& dir);
// DIR/grid.json: the cells in grid order, each `complete` as given.
Status WriteGridJson(const SweepSpec& spec, const std::string& dir, const std::vector<Cell>& cells,
                     const std::vector<bool>& complete);

// A cell's outputs are complete: DIR/cells/<id>/summary.json parses and names the cell's key.
bool CellComplete(const std::string& dir, const Cell& cell);

// Mean and 95 % confidence half-width of `values` (n >= 2; half-width 0 for n = 1):
// mean = Σx / n, s = sqrt(Σ(x − mean)² / (n − 1)), half = t(0.975, n − 1) · s / sqrt(n).
struct MeanCi {
  double mean = 0, half = 0;
  size_t n = 0;
};
MeanCi MeanWithCi(const std::vector<double>& values);
// The 0.975 quantile of Student's t with `df` degrees of freedom (df >= 1).
double TQuantile975(size_t df);

// The CSV table of DIR's completed cells (grid.json order), one row per group.
Result<std::string> CollectTable(const std::string& dir);
// The same groups as an HTML report (analysis/report_html.h) in `report_dir`: one chart per
// metric (bars of the means, rules spanning the 95 % intervals) and the table.
Status WriteCollectReport(const std::string& dir, const std::string& report_dir);

}  // namespace orrery::sweep
