// `orrery import --from FORMAT INPUT... --out FILE [--skip-bad-rows]`: any supported trace
// format -> Orrery's canonical trace (docs/formats/trace.md, docs/formats/importers.md).
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "trace/canonical.h"
#include "trace/import.h"

namespace orrery::cli {

namespace {

struct ImportArgs {
  std::string from = "auto";
  std::vector<std::string> inputs;
  std::string out;
  bool skip_bad_rows = false;
  bool swf_procs_as_gpus = false;
};

int RunImport(const ImportArgs& a) {
  auto t0 = std::chrono::steady_clock::now();
  Result<TraceFormat> fmt = ParseTraceFormat(a.from);
  if (!fmt.ok()) {
    std::fprintf(stderr, "orrery import: %s\n", fmt.error().message.c_str());
    return kExitBadInput;
  }
  ImportOptions opt;
  opt.skip_bad_rows = a.skip_bad_rows;
  opt.swf_procs_as_gpus = a.swf_procs_as_gpus;
  ImportReport rep;
  Result<Trace> trace = ImportTrace(*fmt, a.inputs, opt, &rep);
  if (!trace.ok()) {
    std::fprintf(stderr, "orrery import: %s\n", trace.error().message.c_str());
    std::fprintf(stderr, "orrery import: nothing written to %s\n", a.out.c_str());
    return trace.error().exit_code;
  }
  Status st = WriteCanonicalTrace(*trace, a.out);
  if (!st.ok()) {
    std::fprintf(stderr, "orrery import: %s\n", st.error().message.c_str());
    return st.error().exit_code;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double mb = static_cast<double>(rep.bytes_read) / 1e6;
  std::string msg = "orrery import: format " + trace->origin + ": read " + std::to_string(rep.rows_read) + " rows (" +
                    std::to_string(a.inputs.size()) + " input" + (a.inputs.size() == 1 ? "" : "s") + "), imported " +
                    std::to_string(rep.jobs_imported) + " jobs, skipped " + std::to_string(rep.rows_skipped);
  if (!rep.skipped_by_reason.empty()) {
    msg += " (";
    bool first = true;
    for (const auto& [reason, n] : rep.skipped_by_reason) {
      msg += (first ? "" : ", ") + reason + ": " + std::to_string(n);
      first = false;
    }
    msg += ")";
  }
  msg += "; " + std::to_string(rep.warnings.size()) + " warning" + (rep.warnings.size() == 1 ? "" : "s");
  for (const auto& w : rep.warnings) msg += "; " + w;
  char speed[96];
  std::snprintf(speed, sizeof speed, "; %.1f MB in %.3f s (%.1f MB/s)", mb, secs, secs > 0 ? mb / secs : 0.0);
  msg += speed;
  msg += "; wrote " + a.out + "\n";
  std::fputs(msg.c_str(), stderr);
  return kExitOk;
}

}  // namespace

void RegisterImport(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ImportArgs>();
  auto* cmd = app.add_subcommand("import", "Import a job trace into Orrery's canonical trace format");
  SetExamples(cmd, {"./build/orrery import --format swf --swf-procs-as-gpus tests/fixtures/swf/tiny.swf --out -",
                    "./build/orrery import tests/fixtures/trace/replay_philly.csv --out /tmp/orrery-example-philly.csv"});
  cmd->add_option("--format,--from", args->from,
                  "Input format: auto, canonical, helios, philly, openb, swf, sacct, acme (default: auto)");
  cmd->add_option("inputs", args->inputs, "Input files (plain or .gz)")->required();
  cmd->add_option("--out,-o", args->out, "Output canonical trace ('-' = stdout)")->required();
  cmd->add_flag("--skip-bad-rows", args->skip_bad_rows, "Skip malformed rows (counted per reason) instead of failing");
  cmd->add_flag("--swf-procs-as-gpus", args->swf_procs_as_gpus, "SWF: treat processors as GPUs");
  cmd->callback([args, exit_code] { *exit_code = RunImport(*args); });
}

}  // namespace orrery::cli
