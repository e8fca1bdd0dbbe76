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
  uint32_t retries = 2;               // further attempts of a failed cell in one invocation
};

// One point of the grid.
struct Cell {
  std::string policy, cluster, placer;
  uint64_t seed = 1;
  double load = 0;
  std::string key;  // canonical text of the parameters (the id is derived from it)
  std::string id;   // "<readable slug>-<16 hex digits of FNV-1a 64 of key>"; also the folder name
  std::string group;  // key without the seed: the cells collect averages over
};

// Reads a spec; errors are located (file:line:col) and unknown keys list the known ones.
Result<SweepSpec> ParseSweepSpec(const std::string& text, const std::string& file);
Result<SweepSpec> LoadSweepSpec(const std::string& path);

// The grid in a fixed order: clusters, then loads, placers, policies, seeds (seed fastest).
std::vector<Cell> ExpandGrid(const SweepSpec& spec);

// What a cell's run hands back: summary.json's content (its "run" object holds the
// metrics), or the error.
using CellRunner = std::function<Result<nlohmann::ordered_json>(const SweepSpec&, const Cell&)>;

// The real runner: the cell's workload and cluster, then SimulateChecked and the summary as
// `orrery simulate` writes it for that policy.
Result<nlohmann::ordered_json> SimulateCell(const SweepSpec& spec, const Cell& cell);

struct CellOutcome {
  std::string id;
  enum class State : uint8_t { kSkipped, kRan, kFailed } state = State::kSkipped;
  uint32_t attempts = 0;  // runs in this invocation
  std::string error;      // the last attempt's, when failed
};

struct SweepReport {
  std::vector<CellOutcome> cells;  // grid order, one per cell
  size_t skipped = 0, ran = 0, failed = 0;
};

// Runs every cell without complete outputs under `dir` on `workers` threads (0 = every
// available core), each failed one up to 1 + spec.retries times; writes
// DIR/cells/<id>/summary.json (atomically) and DIR/grid.json. Errors only when the folder
// cannot be written; failed cells are in the report.
Result<SweepReport> RunSweep(const SweepSpec& spec, const std::string& dir, unsigned workers,
                             const CellRunner& runner);

// One cell: skipped when complete, else run up to 1 + spec.retries times (summary.json written
// atomically, error.txt on failure). What RunSweep does per cell, and `sweep run-cell` per
// Slurm array task.
CellOutcome RunCell(const SweepSpec& spec, const std::string& dir, const Cell& cell, const CellRunner& runner);

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

}  // namespace orrery::sweep
