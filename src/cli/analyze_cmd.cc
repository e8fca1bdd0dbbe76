// `orrery analyze TRACE [--out-dir DIR] [--cluster CONFIG]`: workload characterization of any
// supported trace as an offline HTML report plus JSON and CSV (docs/reports.md).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "analysis/characterize.h"
#include "analysis/report_html.h"
#include "cli/commands.h"
#include "config/cluster_config.h"
#include "config/cluster_file.h"
#include "trace/import.h"

namespace orrery::cli {
namespace {

struct AnalyzeArgs {
  std::string trace;
  std::string format = "auto";
  std::string out = "orrery-analysis";
  std::string cluster;
  bool skip_bad_rows = false;
  bool quiet = false;
};

int Run(const AnalyzeArgs& a) {
  auto fmt = ParseTraceFormat(a.format);
  if (!fmt) return Fail("analyze", fmt.error());
  ImportOptions io;
  io.skip_bad_rows = a.skip_bad_rows;
  ImportReport rep;
  auto trace = LoadTrace(a.trace, *fmt, io, &rep);
  if (!trace) return Fail("analyze", trace.error());
  CharacterizeOptions opt;
  if (!a.cluster.empty()) {
    // A TOML cluster config, an Alibaba openb node list (.csv) or a slurm.conf.
    auto cl = LoadClusterFile(a.cluster);
    if (!cl) return Fail("analyze", cl.error());
    for (const auto& vc : cl->vcs) opt.vc_gpus[vc.name] += vc.gpus;
  }
  const Characterization c = Characterize(*trace, opt);
  // The page names the trace by its file name, so the report reads the same wherever the trace lies.
  const report::Page page = CharacterizationPage(c, std::filesystem::path(a.trace).filename().string());
  if (Status st = report::WriteReport(page, a.out); !st.ok()) return Fail("analyze", st.error());
  if (!a.quiet) {
    std::printf("%s: %llu jobs (%llu GPU, %llu CPU), %.0f GPU-hours\n", a.trace.c_str(),
                static_cast<unsigned long long>(c.jobs), static_cast<unsigned long long>(c.gpu_jobs),
                static_cast<unsigned long long>(c.cpu_jobs), c.total_gpu_seconds / 3600.0);
    for (const auto& m : c.missing) std::printf("  not available: %s\n", m.c_str());
    std::printf("wrote %s/report.html, report.json, csv/\n", a.out.c_str());
  }
  return 0;
}

}  // namespace

void RegisterAnalyze(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<AnalyzeArgs>();
  auto* cmd = app.add_subcommand("analyze", "Characterize a trace: HTML report (offline) + JSON + CSV");
  SetExamples(cmd, {"./build/orrery analyze tests/fixtures/trace/replay_philly.csv --cluster configs/philly.toml "
                    "--out /tmp/orrery-example-analysis"});
  cmd->add_option("trace", args->trace, "Trace file (any supported format, .gz ok)")->required();
  cmd->add_option("--format", args->format, "Trace format: auto, canonical, helios, philly, openb, swf, sacct, acme");
  cmd->add_option("--out-dir,--out", args->out, "Output directory (default orrery-analysis)");
  cmd->add_option("--cluster", args->cluster,
                  "Cluster config (TOML, an openb node list .csv or a slurm.conf) giving VC sizes, for VC utilization");
  cmd->add_flag("--skip-bad-rows", args->skip_bad_rows, "Skip malformed trace rows instead of failing");
  cmd->add_flag("-q,--quiet", args->quiet, "Print nothing on success");
  cmd->callback([args, exit_code] { *exit_code = Run(*args); });
}

}  // namespace orrery::cli
