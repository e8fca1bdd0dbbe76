// Running a grid: skip complete cells, run the rest on worker threads with bounded retries,
// write each cell's summary.json atomically and the grid's index, grid.json.
#include <filesystem>

#include "base/io.h"
#include "base/json_text.h"
#include "base/parallel.h"
#include "sweep/sweep.h"

namespace orrery::sweep {

namespace {

std::string CellDir(const std::string& dir, const Cell& c) { return dir + "/cells/" + c.id; }

// Runs one cell until it succeeds or has had 1 + retries attempts; writes its summary.json
// (temp name, then rename) or its error.txt.
CellOutcome RunOneCell(const SweepSpec& spec, const std::string& dir, const Cell& cell, const CellRunner& runner) {
  CellOutcome out{cell.id, CellOutcome::State::kSkipped, 0, ""};
  if (CellComplete(dir, cell)) return out;
  const std::string cdir = CellDir(dir, cell);
  std::error_code ec;
  std::filesystem::create_directories(cdir, ec);
  if (ec) {
    out.state = CellOutcome::State::kFailed;
    out.error = cdir + ": cannot create directory: " + ec.message();
    return out;
  }
  while (out.attempts < 1 + spec.retries) {
    ++out.attempts;
    Result<nlohmann::ordered_json> r = runner(spec, cell);
    Status written = r.ok() ? WriteFileAtomic(cdir + "/summary.json", DumpJson(*r, 2) + "\n") : Status(r.error());
    if (written.ok()) {
      out.state = CellOutcome::State::kRan;
      out.error.clear();
      std::filesystem::remove(cdir + "/error.txt", ec);
      return out;
    }
    out.error = written.error().message;
  }
  out.state = CellOutcome::State::kFailed;
  Status noted = WriteFileAtomic(cdir + "/error.txt", out.error + "\n");
  if (!noted.ok()) out.error += " (and " + noted.error().message + ")";
  return out;
}

nlohmann::ordered_json GridJson(const SweepSpec& spec, const std::vector<Cell>& cells, const SweepReport& rep) {
  nlohmann::ordered_json g;
  g["workload"] = spec.workload.trace.empty()
                      ? nlohmann::ordered_json{{"preset", spec.workload.preset}, {"jobs", spec.workload.jobs},
                                               {"days", spec.workload.days}}
                      : nlohmann::ordered_json{{"trace", spec.workload.trace}};
  g["cells"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < cells.size(); ++i) {
    const Cell& c = cells[i];
    g["cells"].push_back({{"id", c.id},
                          {"policy", c.policy},
                          {"cluster", c.cluster},
                          {"placer", c.placer},
                          {"load", c.load},
                          {"seed", c.seed},
                          {"complete", rep.cells[i].state != CellOutcome::State::kFailed}});
  }
  return g;
}

}  // namespace

bool CellComplete(const std::string& dir, const Cell& cell) {
  const std::string path = CellDir(dir, cell) + "/summary.json";
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return false;
  Result<nlohmann::ordered_json> j = ParseOrderedJson(*text, path);
  if (!j.ok()) return false;
  const auto c = j->find("cell");
  return c != j->end() && c->is_object() && c->value("key", std::string()) == cell.key && j->contains("run");
}

Result<SweepReport> RunSweep(const SweepSpec& spec, const std::string& dir, unsigned workers,
                             const CellRunner& runner) {
  std::error_code ec;
  std::filesystem::create_directories(dir + "/cells", ec);
  if (ec) return MakeError(dir + "/cells: cannot create directory: " + ec.message(), kExitRuntime);
  const std::vector<Cell> cells = ExpandGrid(spec);
  SweepReport rep;
  RunOrdered<CellOutcome>(
      cells.size(), workers ? workers : AvailableCpus(),
      [&](size_t i) { return RunOneCell(spec, dir, cells[i], runner); },
      [&](size_t, CellOutcome& o) {
        rep.skipped += o.state == CellOutcome::State::kSkipped;
        rep.ran += o.state == CellOutcome::State::kRan;
        rep.failed += o.state == CellOutcome::State::kFailed;
        rep.cells.push_back(std::move(o));
        return true;
      });
  ORR_RETURN_IF_ERROR(WriteFileAtomic(dir + "/grid.json", DumpJson(GridJson(spec, cells, rep), 2) + "\n"));
  return rep;
}

}  // namespace orrery::sweep
