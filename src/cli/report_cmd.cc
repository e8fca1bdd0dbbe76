// `orrery report RUN_DIR... [--out-dir DIR]`: compares simulation runs (folders written by
// `orrery simulate --out-dir`) in an offline HTML report plus JSON and CSV (docs/reports.md).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "analysis/report.h"
#include "cli/commands.h"

namespace orrery::cli {
namespace {

struct ReportArgs {
  std::vector<std::string> dirs;
  std::string out;
  bool quiet = false;
  bool allow_mixed = false;
};

// Runs of different workloads (their summary.json's scenario: the trace read, or the generator's
// preset, options and seed) are one comparison only with --allow-mixed, and then each run's label
// and the page's workload line say which workload it ran: "W1 a: fifo", "W1: <scenario>".
Status CheckOneWorkload(bool allow_mixed, std::vector<LoadedRun>* runs) {
  std::vector<std::string> seen;
  for (const LoadedRun& r : *runs)
    if (std::find(seen.begin(), seen.end(), r.scenario) == seen.end()) seen.push_back(r.scenario);
  if (seen.size() < 2) return Status::Ok();
  if (!allow_mixed) {
    std::string list;
    for (const std::string& s : seen) list += "\n  " + s;
    return MakeError("the runs are of " + std::to_string(seen.size()) + " different workloads:" + list +
                     "\ncompare runs of one workload, or pass --allow-mixed to put them side by side, labelled");
  }
  for (LoadedRun& r : *runs) {
    const size_t k = std::find(seen.begin(), seen.end(), r.scenario) - seen.begin() + 1;
    r.label = "W" + std::to_string(k) + " " + r.label;
    r.scenario = "W" + std::to_string(k) + ": " + r.scenario;
  }
  return Status::Ok();
}

int Run(const ReportArgs& a) {
  auto runs = LoadRuns(a.dirs);
  if (!runs) {
    std::fprintf(stderr, "orrery report: %s\n", runs.error().message.c_str());
    return runs.error().exit_code;
  }
  if (Status st = CheckOneWorkload(a.allow_mixed, &*runs); !st.ok()) {
    std::fprintf(stderr, "orrery report: %s\n", st.error().message.c_str());
    return st.error().exit_code;
  }
  const std::string out = a.out.empty() ? a.dirs.front() + "/report" : a.out;
  if (Status st = report::WriteReport(RunReportPage(*runs), out); !st.ok()) {
    std::fprintf(stderr, "orrery report: %s\n", st.error().message.c_str());
    return st.error().exit_code;
  }
  if (!a.quiet) std::printf("%zu runs; wrote %s/report.html, report.json, csv/\n", runs->size(), out.c_str());
  return 0;
}

}  // namespace

void RegisterReport(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ReportArgs>();
  auto* cmd = app.add_subcommand("report", "Compare simulation runs: HTML report (offline) + JSON + CSV");
  SetExamples(cmd, {"./build/orrery simulate --generate helios-venus --days 2 --policy fifo,easy -q --out-dir "
                    "/tmp/orrery-example-runs && ./build/orrery report /tmp/orrery-example-runs --out-dir "
                    "/tmp/orrery-example-report"});
  cmd->add_option("run_dirs", args->dirs, "Folders written by `orrery simulate --out-dir`")->required();
  cmd->add_option("--out-dir,--out", args->out, "Output directory (default <first RUN_DIR>/report)");
  cmd->add_flag("-q,--quiet", args->quiet, "Print nothing on success");
  cmd->add_flag("--allow-mixed", args->allow_mixed,
                "Compare runs of different workloads (refused by default); each run is labelled W1, W2, ... by workload");
  cmd->callback([args, exit_code] { *exit_code = Run(*args); });
}

}  // namespace orrery::cli
