// `orrery sweep`: policy studies as grids (docs/design/sweep.md). `orrery sweep SPEC --out DIR`
// runs every cell of the spec's grid that has no complete outputs yet (with --slurm: submits those
// not already pending or running as one job array whose tasks run `orrery sweep run-cell DIR
// INDEX`); `orrery sweep collect DIR` merges the cells into one CSV table (means across seeds with
// 95 % confidence intervals) and an HTML report.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>

#include "base/io.h"
#include "base/rng.h"
#include "cli/commands.h"
#include "cli/flag_rules.h"
#include "live/batch_submit.h"
#include "sweep/sweep.h"

namespace orrery::cli {

namespace {

struct SweepOptions {
  std::string spec, out;
  unsigned workers = 0;
  std::string collect_dir, collect_out, collect_report;
  bool slurm = false;          // submit the incomplete cells as one Slurm job array
  std::string partition, slurm_conf;
  std::string cell_dir;        // run-cell DIR INDEX
  size_t cell_index = 0;
  const CLI::App* cmd = nullptr;
};

std::string SweepHex(std::string_view s) {
  char hex[20];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(Fnv1a64(s)));
  return hex;
}

// The Slurm job name of a sweep folder's arrays (its tasks are found in the queue by it), and
// the comment naming the grid they were submitted for.
std::string SweepJobName(const std::string& dir) { return "orrery-sweep-" + SweepHex(dir); }
std::string SweepGridComment(const std::vector<sweep::Cell>& cells) {
  std::string ids;
  for (const sweep::Cell& c : cells) ids += c.id + "\n";
  return "orrery:sweep-grid=" + SweepHex(ids);
}

// The sweep's live tasks by cell index (running over pending); an error when a live task
// belongs to another grid of the folder (its indexes would name other cells).
Result<std::map<size_t, std::pair<sweep::QueueState, live::ArrayTask>>> SweepQueue(
    live::ExecSlurmClient& slurm, const std::string& dir, const std::vector<sweep::Cell>& cells) {
  ORR_ASSIGN_OR_RETURN(std::vector<live::ArrayTask> tasks, live::ListArrayTasks(slurm, SweepJobName(dir)));
  std::map<size_t, std::pair<sweep::QueueState, live::ArrayTask>> out;
  const std::string grid = SweepGridComment(cells);
  for (const live::ArrayTask& t : tasks) {
    const bool running = t.state == live::SlurmJobState::kRunning;
    if (!running && t.state != live::SlurmJobState::kPending) continue;  // finished: its outputs tell
    if (t.comment != grid)
      return MakeError(dir + ": expected no queued task of an earlier grid of this folder, found array " +
                           std::to_string(t.job) + " task " + std::to_string(t.task) + " " + t.state_raw + " (" +
                           t.comment + "); wait for it or scancel " + std::to_string(t.job),
                       kExitRuntime);
    if (t.task >= cells.size()) continue;
    auto& slot = out[t.task];
    if (running || slot.first != sweep::QueueState::kRunning)
      slot = {running ? sweep::QueueState::kRunning : sweep::QueueState::kPending, t};
  }
  return out;
}

// --slurm: reads the sweep's own tasks in the queue, then writes DIR/sweep.json and grid.json
// and submits one array task per cell that is neither complete nor pending or running (at
// most --jobs at once), each running `orrery sweep run-cell DIR INDEX` from the current folder.
int SubmitSweep(const SweepOptions& o, const sweep::SweepSpec& spec) {
  std::error_code ec;
  const std::string dir = std::filesystem::absolute(o.out, ec).lexically_normal().string();
  std::filesystem::create_directories(dir + "/slurm", ec);
  if (ec) return Fail("sweep", MakeError(dir + "/slurm: cannot create directory: " + ec.message(), kExitRuntime));
  const std::vector<sweep::Cell> cells = sweep::ExpandGrid(spec);
  live::ExecSlurmClient slurm(live::ExecSlurmOptions{"", o.slurm_conf, 10000});
  auto queue = SweepQueue(slurm, dir, cells);
  if (!queue) return Fail("sweep", queue.error().With("--slurm: reading the queue"));
  std::vector<bool> complete;
  std::vector<size_t> queued;
  live::BatchSpec b;
  for (size_t i = 0; i < cells.size(); ++i) {
    complete.push_back(sweep::CellComplete(dir, cells[i]));
    const auto q = queue->find(i);
    switch (sweep::PlanCell(complete.back(), q == queue->end() ? sweep::QueueState::kAbsent : q->second.first)) {
      case sweep::CellAction::kComplete: break;
      case sweep::CellAction::kQueued: queued.push_back(i); break;
      case sweep::CellAction::kSubmit: b.array_tasks.push_back(static_cast<uint32_t>(i)); break;
    }
  }
  Status st = sweep::WriteSpecJson(spec, dir);
  if (st.ok()) st = sweep::WriteGridJson(spec, dir, cells, complete);
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (st.ok() && ec) st = MakeError("cannot find the orrery executable: " + ec.message(), kExitRuntime);
  if (st.ok())
    st = WriteFileAtomic(dir + "/slurm/run-cell.sh", "#!/bin/sh\nexec '" + self + "' sweep run-cell '" + dir +
                                                         "' \"$SLURM_ARRAY_TASK_ID\"\n");
  if (!st.ok()) return Fail("sweep", st.error());
  std::printf("sweep: %zu cells: %zu complete before, %zu in the queue, ", cells.size(),
              cells.size() - b.array_tasks.size() - queued.size(), queued.size());
  if (b.array_tasks.empty()) std::printf("nothing to submit\n");
  for (size_t i : queued) {
    const live::ArrayTask& t = queue->at(i).second;
    std::printf("in the queue: cell %zu %s: array %u task %u %s\n", i, cells[i].id.c_str(), t.job, t.task,
                t.state_raw.c_str());
  }
  if (b.array_tasks.empty()) return kExitOk;
  b.name = SweepJobName(dir);
  b.comment = SweepGridComment(cells);
  b.partition = o.partition;
  b.script = dir + "/slurm/run-cell.sh";
  b.workdir = std::filesystem::current_path(ec).string();
  b.output = dir + "/slurm/%A_%a.out";
  b.array_throttle = o.workers;
  Result<uint32_t> id = live::SubmitBatch(slurm, b);
  if (!id) return Fail("sweep", id.error().With("--slurm"));
  std::printf("%zu submitted as Slurm job array %u\n", b.array_tasks.size(), *id);
  return kExitOk;
}

// Whether a cell's claim holder still runs: a Slurm task while squeue lists it pending or
// running (unknown to Slurm: gone; Slurm not answering or absent: running, so the cell is left
// for later rather than run twice); a local process while it exists.
bool SweepHolderAlive(const std::string& holder) {
  if (holder.rfind("slurm:", 0) != 0) return sweep::LocalOwnerAlive(holder);
  live::ExecSlurmClient slurm(live::ExecSlurmOptions{"", "", 10000});  // SLURM_CONF from the environment
  Result<std::vector<live::ArrayTask>> t = live::ListArrayTasks(slurm, "", holder.substr(6));
  if (!t.ok()) return live::ClassifySlurmReply(t.error().message) != ErrorCode::kNotFound;
  for (const live::ArrayTask& a : *t)
    if (!live::IsTerminal(a.state)) return true;
  return false;
}

// The claim of a run: "slurm:<job>_<task>" inside an array task, else this process.
sweep::CellClaim SweepCellClaim() {
  const char* job = std::getenv("SLURM_ARRAY_JOB_ID");
  const char* task = std::getenv("SLURM_ARRAY_TASK_ID");
  sweep::CellClaim c{sweep::LocalOwner(), SweepHolderAlive};
  if (job != nullptr && task != nullptr) c.owner = std::string("slurm:") + job + "_" + task;
  return c;
}

int RunSweepCell(const SweepOptions& o) {
  Result<sweep::SweepSpec> spec = sweep::LoadSpecJson(o.cell_dir);
  if (!spec) return Fail("sweep run-cell", spec.error());
  const std::vector<sweep::Cell> cells = sweep::ExpandGrid(*spec);
  if (o.cell_index >= cells.size())
    return Fail("sweep run-cell", MakeError("INDEX: expected a cell index below " + std::to_string(cells.size()) +
                                             ", got " + std::to_string(o.cell_index)));
  const sweep::CellOutcome c =
      sweep::RunCell(*spec, o.cell_dir, cells[o.cell_index], sweep::SimulateCell, SweepCellClaim());
  if (c.state == sweep::CellOutcome::State::kBusy) {
    std::printf("cell %zu %s: busy: claimed by %s, which still runs\n", o.cell_index, c.id.c_str(), c.holder.c_str());
    return kExitOk;
  }
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
  Result<sweep::SweepReport> rep = sweep::RunSweep(*spec, o.out, o.workers, sweep::SimulateCell, SweepCellClaim());
  if (!rep) return Fail("sweep", rep.error());
  std::printf("sweep: %zu cells: %zu complete before, %zu ran, %zu failed", rep->cells.size(), rep->skipped, rep->ran,
              rep->failed);
  if (rep->busy) std::printf(", %zu busy (claimed by a run that still runs)", rep->busy);
  std::printf("\n");
  for (const sweep::CellOutcome& c : rep->cells)
    if (c.state == sweep::CellOutcome::State::kFailed)
      std::printf("failed: %s after %u attempts: %s\n", c.id.c_str(), c.attempts, c.error.c_str());
    else if (c.state == sweep::CellOutcome::State::kBusy)
      std::printf("busy: %s claimed by %s\n", c.id.c_str(), c.holder.c_str());
  std::printf("outputs: %s/grid.json and %s/cells/<id>/summary.json\n", o.out.c_str(), o.out.c_str());
  return rep->failed || rep->busy ? kExitRuntime : kExitOk;
}

int RunSweepCollect(const SweepOptions& o) {
  Result<std::string> table = sweep::CollectTable(o.collect_dir);
  if (!table) return Fail("sweep collect", table.error());
  const std::string report = o.collect_report.empty() ? o.collect_dir + "/report" : o.collect_report;
  if (Status st = sweep::WriteCollectReport(o.collect_dir, report); !st.ok()) return Fail("sweep collect", st.error());
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
  SetExamples(collect, {"./build/orrery sweep collect tests/fixtures/sweep/done --report /tmp/orrery-example-sweep-report"});
  collect->add_option("dir", o->collect_dir, "The sweep's output folder")->required();
  collect->add_option("--out", o->collect_out, "CSV file to write (default: standard output)");
  collect->add_option("--report", o->collect_report,
                      "Folder of the HTML report (report.html, report.json, csv/; default: DIR/report)");
  collect->callback([o, exit_code] { *exit_code = RunSweepCollect(*o); });
  cmd->add_flag("--slurm", o->slurm,
                "Submit the cells that are neither complete nor pending or running in the queue as one Slurm "
                "job array (--jobs: tasks at once) and return; run again to submit what is still missing");
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
