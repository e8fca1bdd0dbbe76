// `orrery sweep`: policy studies as grids (docs/design/sweep.md). `orrery sweep SPEC --out DIR`
// runs every cell of the spec's grid that has no complete outputs yet (with --slurm: submits them
// as one job array whose tasks run `orrery sweep run-cell DIR INDEX`); `orrery sweep collect DIR`
// merges the cells into one CSV table (means across seeds with 95 % confidence intervals).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "base/io.h"
#include "cli/commands.h"
#include "cli/flag_rules.h"
#include "live/batch_submit.h"
#include "sweep/sweep.h"

namespace orrery::cli {

namespace {

struct SweepOptions {
  std::string spec, out;
  unsigned workers = 0;
  std::string collect_dir, collect_out;
  bool slurm = false;          // submit the incomplete cells as one Slurm job array
  std::string partition, slurm_conf;
  std::string cell_dir;        // run-cell DIR INDEX
  size_t cell_index = 0;
  const CLI::App* cmd = nullptr;
};

// --slurm: DIR/sweep.json and grid.json, then one array task per incomplete cell (at most
// --jobs at once), each running `orrery sweep run-cell DIR INDEX` from the current folder.
int SubmitSweep(const SweepOptions& o, const sweep::SweepSpec& spec) {
  std::error_code ec;
  const std::string dir = std::filesystem::absolute(o.out, ec).lexically_normal().string();
  std::filesystem::create_directories(dir + "/slurm", ec);
  if (ec) return Fail("sweep", MakeError(dir + "/slurm: cannot create directory: " + ec.message(), kExitRuntime));
  const std::vector<sweep::Cell> cells = sweep::ExpandGrid(spec);
  std::vector<bool> complete;
  live::BatchSpec b;
  for (size_t i = 0; i < cells.size(); ++i) {
    complete.push_back(sweep::CellComplete(dir, cells[i]));
    if (!complete.back()) b.array_tasks.push_back(static_cast<uint32_t>(i));
  }
  Status st = sweep::WriteSpecJson(spec, dir);
  if (st.ok()) st = sweep::WriteGridJson(spec, dir, cells, complete);
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (st.ok() && ec) st = MakeError("cannot find the orrery executable: " + ec.message(), kExitRuntime);
  if (st.ok())
    st = WriteFileAtomic(dir + "/slurm/run-cell.sh", "#!/bin/sh\nexec '" + self + "' sweep run-cell '" + dir +
                                                         "' \"$SLURM_ARRAY_TASK_ID\"\n");
  if (!st.ok()) return Fail("sweep", st.error());
  std::printf("sweep: %zu cells: %zu complete before, ", cells.size(), cells.size() - b.array_tasks.size());
  if (b.array_tasks.empty()) {
    std::printf("nothing to submit\n");
    return kExitOk;
  }
  b.name = "orrery-sweep";
  b.partition = o.partition;
  b.script = dir + "/slurm/run-cell.sh";
  b.workdir = std::filesystem::current_path(ec).string();
  b.output = dir + "/slurm/%A_%a.out";
  b.array_throttle = o.workers;
  live::ExecSlurmClient slurm(live::ExecSlurmOptions{"", o.slurm_conf, 10000});
  Result<uint32_t> id = live::SubmitBatch(slurm, b);
  if (!id) return Fail("sweep", id.error().With("--slurm"));
  std::printf("%zu submitted as Slurm job array %u\n", b.array_tasks.size(), *id);
  return kExitOk;
}

int RunSweepCell(const SweepOptions& o) {
  Result<sweep::SweepSpec> spec = sweep::LoadSpecJson(o.cell_dir);
  if (!spec) return Fail("sweep run-cell", spec.error());
  const std::vector<sweep::Cell> cells = sweep::ExpandGrid(*spec);
  if (o.cell_index >= cells.size())
    return Fail("sweep run-cell", MakeError("INDEX: expected a cell index below " + std::to_string(cells.size()) +
                                             ", got " + std::to_string(o.cell_index)));
  const sweep::CellOutcome c = sweep::RunCell(*spec, o.cell_dir, cells[o.cell_index], sweep::SimulateCell);
  const char* what = c.state == sweep::CellOutcome::State::kSkipped ? "complete before"
                     : c.state == sweep::CellOutcome::State::kRan   ? "ran"
                                                                    : "failed";
  std::printf("cell %zu %s: %s after %u attempts%s%s\n", o.cell_index, c.id.c_str(), what, c.attempts,
              c.error.empty() ? "" : ": ", c.error.c_str());
  return c.state == sweep::CellOutcome::State::kFailed ? kExitRuntime : kExitOk;
}

int RunSweepCommand(const SweepOptions& o) {
  if (o.spec.empty() || o.out.empty())
    return Fail("sweep", MakeError("expected a spec file and --out-dir DIR (or: orrery sweep collect DIR)"));
  if (!o.slurm)
    if (Status st = RefuseGiven(*o.cmd, {"--partition", "--slurm-conf"}, "it applies to --slurm only"); !st.ok())
      return Fail("sweep", st.error());
  Result<sweep::SweepSpec> spec = sweep::LoadSweepSpec(o.spec);
  if (!spec) return Fail("sweep", spec.error());
  if (o.slurm) return SubmitSweep(o, *spec);
  Result<sweep::SweepReport> rep = sweep::RunSweep(*spec, o.out, o.workers, sweep::SimulateCell);
  if (!rep) return Fail("sweep", rep.error());
  std::printf("sweep: %zu cells: %zu complete before, %zu ran, %zu failed\n", rep->cells.size(), rep->skipped, rep->ran,
              rep->failed);
  for (const sweep::CellOutcome& c : rep->cells)
    if (c.state == sweep::CellOutcome::State::kFailed)
      std::printf("failed: %s after %u attempts: %s\n", c.id.c_str(), c.attempts, c.error.c_str());
  std::printf("outputs: %s/grid.json and %s/cells/<id>/summary.json\n", o.out.c_str(), o.out.c_str());
  return rep->failed ? kExitRuntime : kExitOk;
}

int RunSweepCollect(const SweepOptions& o) {
  Result<std::string> table = sweep::CollectTable(o.collect_dir);
  if (!table) return Fail("sweep collect", table.error());
  if (o.collect_out.empty()) {
    std::fputs(table->c_str(), stdout);
    return kExitOk;
  }
  if (Status st = WriteFileAtomic(o.collect_out, *table); !st.ok()) return Fail("sweep collect", st.error());
  return kExitOk;
}

}  // namespace

void RegisterSweep(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<SweepOptions>();
  auto* cmd = app.add_subcommand("sweep", "Run a grid of simulations (policies x seeds x clusters x options), resumably");
  cmd->require_subcommand(0, 1);
  SetExamples(cmd, {"./build/orrery sweep tests/fixtures/sweep/tiny.toml --out-dir /tmp/orrery-example-sweep --jobs 2"});
  cmd->add_option("spec", o->spec, "Sweep spec (TOML, docs/formats/sweep.md)");
  cmd->add_option("--out-dir,--out", o->out, "Output folder: grid.json and cells/<id>/summary.json (kept between runs: "
                  "complete cells are not run again)");
  cmd->add_option("--jobs,--threads", o->workers,
                  "Cells simulated at once (default 0 = one per available core); outputs are identical for every value")
      ->check(CountInRange(0, 4096, "cells at once"));
  auto* collect = cmd->add_subcommand("collect", "Merge a sweep's cells into one CSV table (mean and 95 % CI per metric)");
  SetExamples(collect, {"./build/orrery sweep collect tests/fixtures/sweep/done"});
  collect->add_option("dir", o->collect_dir, "The sweep's output folder")->required();
  collect->add_option("--out", o->collect_out, "CSV file to write (default: standard output)");
  collect->callback([o, exit_code] { *exit_code = RunSweepCollect(*o); });
  cmd->add_flag("--slurm", o->slurm,
                "Submit the cells without complete outputs as one Slurm job array (--jobs: tasks at once) and "
                "return; run again to submit what is still incomplete");
  cmd->add_option("--partition", o->partition, "With --slurm: the partition (default: Slurm's)");
  cmd->add_option("--slurm-conf", o->slurm_conf, "With --slurm: slurm.conf to use (exported as SLURM_CONF)");
  o->cmd = cmd;
  auto* cell = cmd->add_subcommand("run-cell", "Run one cell of a sweep folder (a Slurm array task of --slurm)");
  SetExamples(cell, {"./build/orrery sweep run-cell tests/fixtures/sweep/done 0"});
  cell->add_option("dir", o->cell_dir, "The sweep's folder (its sweep.json)")->required();
  cell->add_option("index", o->cell_index, "The cell's index in grid.json")->required();
  cell->callback([o, exit_code] { *exit_code = RunSweepCell(*o); });
  cmd->callback([o, exit_code, cmd, collect, cell] {
    if (cmd->got_subcommand(collect) || cmd->got_subcommand(cell)) return;
    *exit_code = RunSweepCommand(*o);
  });
}

}  // namespace orrery::cli
