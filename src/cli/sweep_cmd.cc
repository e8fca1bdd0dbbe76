// `orrery sweep`: policy studies as grids (docs/design/sweep.md). `orrery sweep SPEC --out DIR`
// runs every cell of the spec's grid that has no complete outputs yet; `orrery sweep collect
// DIR` merges the cells into one CSV table (means across seeds with 95 % confidence intervals).
#include <cstdio>
#include <memory>

#include "base/io.h"
#include "cli/commands.h"
#include "cli/flag_rules.h"
#include "sweep/sweep.h"

namespace orrery::cli {

namespace {

struct SweepOptions {
  std::string spec, out;
  unsigned workers = 0;
  std::string collect_dir, collect_out;
};

int RunSweepCommand(const SweepOptions& o) {
  if (o.spec.empty() || o.out.empty())
    return Fail("sweep", MakeError("expected a spec file and --out-dir DIR (or: orrery sweep collect DIR)"));
  Result<sweep::SweepSpec> spec = sweep::LoadSweepSpec(o.spec);
  if (!spec) return Fail("sweep", spec.error());
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
  cmd->callback([o, exit_code, cmd, collect] {
    if (cmd->got_subcommand(collect)) return;
    *exit_code = RunSweepCommand(*o);
  });
}

}  // namespace orrery::cli
