// Running a grid: skip complete cells, run the rest on worker threads with bounded retries,
// write each cell's summary.json atomically and the grid's index, grid.json.
#include <filesystem>

#include "base/io.h"
#include "base/json_text.h"
#include "base/parallel.h"
#include "sweep/sweep.h"

namespace orrery::sweep {

namespace {

std::string SweepCellDir(const std::string& dir, const Cell& c) { return dir + "/cells/" + c.id; }

}  // namespace

CellOutcome RunCell(const SweepSpec& spec, const std::string& dir, const Cell& cell, const CellRunner& runner,
                    const CellClaim& claim) {
  CellOutcome out{cell.id, CellOutcome::State::kSkipped, 0, "", ""};
  if (CellComplete(dir, cell)) return out;
  const std::string cdir = SweepCellDir(dir, cell);
  std::error_code ec;
  std::filesystem::create_directories(cdir, ec);
  Result<std::string> holder = ec ? Result<std::string>(MakeError(cdir + ": cannot create directory: " + ec.message()))
                                  : ClaimCell(cdir, claim);
  if (!holder.ok()) {
    out.state = CellOutcome::State::kFailed;
    out.error = holder.error().message;
    return out;
  }
  if (!holder->empty()) {
    out.state = CellOutcome::State::kBusy;
    out.holder = *holder;
    return out;
  }
  // Claimed; a run that held the claim before may have completed the cell meanwhile.
  if (CellComplete(dir, cell)) {
    ReleaseCell(cdir, claim);
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
      ReleaseCell(cdir, claim);
      return out;
    }
    out.error = written.error().message;
  }
  out.state = CellOutcome::State::kFailed;
  Status noted = WriteFileAtomic(cdir + "/error.txt", out.error + "\n");
  if (!noted.ok()) out.error += " (and " + noted.error().message + ")";
  ReleaseCell(cdir, claim);
  return out;
}

namespace {

nlohmann::ordered_json SweepWorkloadJson(const SweepSpec& spec) {
  return spec.workload.trace.empty()
             ? nlohmann::ordered_json{{"preset", spec.workload.preset}, {"jobs", spec.workload.jobs},
                                      {"days", spec.workload.days}}
             : nlohmann::ordered_json{{"trace", spec.workload.trace}};
}

}  // namespace

Status WriteSpecJson(const SweepSpec& spec, const std::string& dir) {
  nlohmann::ordered_json j;
  j["workload"] = SweepWorkloadJson(spec);
  j["policies"] = spec.policies;
  j["seeds"] = spec.seeds;
  j["clusters"] = spec.clusters;
  j["loads"] = spec.loads;
  j["placers"] = spec.placers;
  j["workload_options"] = nlohmann::ordered_json::object();
  for (const auto& [key, values] : spec.workload_axes) j["workload_options"][key] = values;
  j["retries"] = spec.retries;
  return WriteFileAtomic(dir + "/sweep.json", DumpJson(j, 2) + "\n");
}

Result<SweepSpec> LoadSpecJson(const std::string& dir) {
  const std::string path = dir + "/sweep.json";
  ORR_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  ORR_ASSIGN_OR_RETURN(nlohmann::json j, ParseJson(text, path));
  return ReadJsonGuarded(path, [&]() -> Result<SweepSpec> {
    SweepSpec s;
    const nlohmann::json& w = j.at("workload");
    if (w.contains("trace")) {
      s.workload.trace = w.at("trace").get<std::string>();
    } else {
      s.workload.preset = w.at("preset").get<std::string>();
      s.workload.jobs = w.at("jobs").get<uint64_t>();
      s.workload.days = w.at("days").get<double>();
    }
    s.policies = j.at("policies").get<std::vector<std::string>>();
    s.seeds = j.at("seeds").get<std::vector<uint64_t>>();
    s.clusters = j.at("clusters").get<std::vector<std::string>>();
    s.loads = j.at("loads").get<std::vector<double>>();
    s.placers = j.at("placers").get<std::vector<std::string>>();
    // Absent in folders written before the workload options existed: none.
    const nlohmann::json axes = j.contains("workload_options") ? j.at("workload_options") : nlohmann::json::object();
    size_t known = 0;
    for (const std::string& key : kWorkloadAxes)
      if (axes.contains(key)) {
        s.workload_axes.emplace_back(key, axes.at(key).get<std::vector<std::string>>());
        ++known;
      }
    if (known != axes.size())
      return Result<SweepSpec>(MakeError(path + ": expected \"workload_options\" keys among jobs, days, arrivals, "
                                         "batches, long_runs, long_run_sizes, got " + axes.dump()));
    s.retries = j.at("retries").get<uint32_t>();
    return s;
  });
}

Status WriteGridJson(const SweepSpec& spec, const std::string& dir, const std::vector<Cell>& cells,
                     const std::vector<bool>& complete) {
  nlohmann::ordered_json g;
  g["workload"] = SweepWorkloadJson(spec);
  g["cells"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < cells.size(); ++i) {
    const Cell& c = cells[i];
    g["cells"].push_back({{"id", c.id},
                          {"policy", c.policy},
                          {"cluster", c.cluster},
                          {"placer", c.placer},
                          {"load", c.load},
                          {"workload", c.workload_text},
                          {"seed", c.seed},
                          {"complete", static_cast<bool>(complete[i])}});
  }
  return WriteFileAtomic(dir + "/grid.json", DumpJson(g, 2) + "\n");
}

bool CellComplete(const std::string& dir, const Cell& cell) {
  const std::string path = SweepCellDir(dir, cell) + "/summary.json";
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return false;
  Result<nlohmann::ordered_json> j = ParseOrderedJson(*text, path);
  if (!j.ok()) return false;
  const auto c = j->find("cell");
  return c != j->end() && c->is_object() && c->value("key", std::string()) == cell.key && j->contains("run");
}

Result<SweepReport> RunSweep(const SweepSpec& spec, const std::string& dir, unsigned workers,
                             const CellRunner& runner) {
  return RunSweep(spec, dir, workers, runner, CellClaim{LocalOwner(), LocalOwnerAlive});
}

Result<SweepReport> RunSweep(const SweepSpec& spec, const std::string& dir, unsigned workers,
                             const CellRunner& runner, const CellClaim& claim) {
  std::error_code ec;
  std::filesystem::create_directories(dir + "/cells", ec);
  if (ec) return MakeError(dir + "/cells: cannot create directory: " + ec.message(), kExitRuntime);
  ORR_RETURN_IF_ERROR(WriteSpecJson(spec, dir));
  const std::vector<Cell> cells = ExpandGrid(spec);
  SweepReport rep;
  RunOrdered<CellOutcome>(
      cells.size(), workers ? workers : AvailableCpus(),
      [&](size_t i) { return RunCell(spec, dir, cells[i], runner, claim); },
      [&](size_t, CellOutcome& o) {
        rep.skipped += o.state == CellOutcome::State::kSkipped;
        rep.ran += o.state == CellOutcome::State::kRan;
        rep.failed += o.state == CellOutcome::State::kFailed;
        rep.busy += o.state == CellOutcome::State::kBusy;
        rep.cells.push_back(std::move(o));
        return true;
      });
  std::vector<bool> complete;
  for (const CellOutcome& o : rep.cells)
    complete.push_back(o.state == CellOutcome::State::kSkipped || o.state == CellOutcome::State::kRan);
  ORR_RETURN_IF_ERROR(WriteGridJson(spec, dir, cells, complete));
  return rep;
}

}  // namespace orrery::sweep
