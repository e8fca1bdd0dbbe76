#include "cli/out_dir.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "base/io.h"

namespace orrery::cli {

namespace fs = std::filesystem;

namespace {

// The earlier run's outputs found in `dir`: its summary.json (parsed; discarded when absent or
// unreadable) and its policy folders (sub-folders holding a jobs.csv), sorted.
struct Earlier {
  bool has_summary = false;
  nlohmann::ordered_json summary;  // discarded when has_summary is false or it did not parse
  std::vector<std::string> folders;
  bool any() const { return has_summary || !folders.empty(); }
};

Earlier FindEarlier(const std::string& dir) {
  Earlier e;
  std::error_code ec;
  const fs::path summary = fs::path(dir) / "summary.json";
  if (fs::is_regular_file(summary, ec)) {
    e.has_summary = true;
    Result<std::string> text = ReadFile(summary.string());
    e.summary = nlohmann::ordered_json::parse(text.ok() ? *text : std::string(), nullptr, /*allow_exceptions=*/false);
  }
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_directory(ec) && fs::is_regular_file(it->path() / "jobs.csv", ec)) e.folders.push_back(it->path().string());
  std::sort(e.folders.begin(), e.folders.end());
  return e;
}

// True when `e` holds the outputs of the run that `header` and `policies` describe.
bool SameRun(const Earlier& e, const nlohmann::ordered_json& header, const std::vector<std::string>& policies,
             const std::vector<std::string>& run_dirs) {
  const nlohmann::ordered_json& s = e.summary;
  if (!e.has_summary || !s.is_object()) return false;
  for (const char* key : {"scenario", "cluster", "seed", "jobs"})
    if (!s.contains(key) || !header.contains(key) || s[key] != header[key]) return false;
  if (!s.contains("runs") || !s["runs"].is_array() || s["runs"].size() != policies.size()) return false;
  for (size_t i = 0; i < policies.size(); ++i) {
    const nlohmann::ordered_json& r = s["runs"][i];
    if (!r.is_object() || !r.contains("policy") || r["policy"] != policies[i]) return false;
  }
  return std::all_of(e.folders.begin(), e.folders.end(), [&](const std::string& f) {
    return std::any_of(run_dirs.begin(), run_dirs.end(), [&](const std::string& d) { return fs::path(d) == fs::path(f); });
  });
}

std::string Describe(const Earlier& e) {
  std::string what;
  if (e.has_summary && e.summary.is_object() && e.summary.contains("scenario") && e.summary["scenario"].is_string())
    what = "the outputs of another run (" + e.summary["scenario"].get<std::string>() + ")";
  else if (e.has_summary)
    what = "a summary.json of another run";
  else
    what = "policy folders of another run without its summary.json";
  return what;
}

}  // namespace

Status ClaimOutDir(const std::string& dir, const nlohmann::ordered_json& header, const std::vector<std::string>& policies,
                   const std::vector<std::string>& run_dirs, bool force) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return Status::Ok();
  if (!fs::is_directory(dir, ec)) return MakeError("--out-dir " + dir + ": exists and is not a folder");
  const Earlier e = FindEarlier(dir);
  if (!e.any()) return Status::Ok();
  if (!force && !SameRun(e, header, policies, run_dirs))
    return MakeError("--out-dir " + dir + " holds " + Describe(e) +
                     "; choose another --out-dir, or pass --force to replace them");
  // Cleared before anything is written: this run's folders too, so that no file of the
  // earlier run (attempts.csv, the sharing CSVs) is left beside the new ones.
  std::vector<std::string> doomed = e.folders;
  for (const std::string& d : run_dirs)
    if (fs::exists(fs::path(d) / "jobs.csv", ec)) doomed.push_back(d);
  for (const std::string& d : doomed) {
    fs::remove_all(d, ec);
    if (ec) return MakeError("--out-dir: cannot remove " + d + ": " + ec.message(), kExitRuntime);
  }
  fs::remove(fs::path(dir) / "summary.json", ec);
  if (ec) return MakeError("--out-dir: cannot remove " + dir + "/summary.json: " + ec.message(), kExitRuntime);
  return Status::Ok();
}

}  // namespace orrery::cli
