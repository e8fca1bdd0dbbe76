// `orrery generate`: synthetic workload from a named preset (docs/workload.md).
//
//   orrery generate                                  # default preset, prints its stats table
//   orrery generate --preset helios-venus --days 30 --seed 7 --out venus30.csv --stats
//   orrery generate --preset scale --jobs 1000000 --out scale1m.csv
#include <chrono>
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/workload_flags.h"
#include "trace/canonical.h"
#include "workload/generator.h"
#include "workload/spec.h"
#include "workload/stats.h"

namespace orrery::cli {
namespace {

struct GenerateArgs {
  std::string preset = std::string(workload::kDefaultPreset);
  uint64_t seed = 1;
  uint64_t jobs = 0;
  double days = 0;
  double load = 1.0;
  bool cpu_jobs = false;
  WorkloadModelFlags model;
  std::string out;
  bool stats = false;
  bool list = false;
};

int RunGenerate(const GenerateArgs& a) {
  if (a.list) {
    for (const auto& n : workload::PresetNames()) {
      auto s = workload::GetPreset(n);
      std::printf("%-14s %s\n", n.c_str(), s->description.c_str());
    }
    return kExitOk;
  }
  auto spec_r = workload::GetPreset(a.preset);
  if (!spec_r.ok()) {
    std::fprintf(stderr, "orrery generate: %s\n", spec_r.error().message.c_str());
    return spec_r.error().exit_code;
  }
  workload::WorkloadSpec spec = std::move(spec_r.value());
  if (a.jobs > 0) spec.jobs = a.jobs;
  if (a.days > 0) {
    spec.days = a.days;
    spec.jobs = a.jobs;  // --days without --jobs: horizon by time
  }
  spec.load = a.load;
  spec.include_cpu_jobs = a.cpu_jobs;
  if (Status st = ApplyWorkloadModelFlags(a.model, &spec); !st.ok()) {
    std::fprintf(stderr, "orrery generate: %s\n", st.error().message.c_str());
    return st.error().exit_code;
  }
  if (Status st = workload::ValidateSpec(spec); !st.ok()) {
    std::fprintf(stderr, "orrery generate: %s\n", st.error().message.c_str());
    return st.error().exit_code;
  }
  auto t0 = std::chrono::steady_clock::now();
  Trace trace = workload::GenerateWorkload(spec, a.seed);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "generated %zu jobs (preset %s, seed %llu) in %.2f s (%.0f jobs/s)\n", trace.jobs.size(),
               spec.name.c_str(), static_cast<unsigned long long>(a.seed), secs,
               secs > 0 ? trace.jobs.size() / secs : 0.0);
  if (!a.out.empty()) {
    Status st = WriteCanonicalTrace(trace, a.out);
    if (!st.ok()) {
      std::fprintf(stderr, "orrery generate: %s\n", st.error().message.c_str());
      return st.error().exit_code;
    }
  }
  if (a.stats || a.out.empty() || a.out == "-") {
    // With --out - the trace goes to stdout, so the table goes to stderr.
    FILE* f = (a.out == "-") ? stderr : stdout;
    auto st = workload::ComputeWorkloadStats(trace, spec.cluster_gpus());
    workload::WorkloadTargets targets = spec.targets;
    if (spec.load != 1.0 || spec.include_cpu_jobs || spec.jobs > 0 || spec.days != workload::GetPreset(spec.name)->days) {
      // Targets are for the calibrated scenario; counts differ when the scenario is changed.
      targets.gpu_jobs = -1;
      targets.days = -1;
      if (spec.load != 1.0 && targets.offered_load > 0) targets.offered_load *= spec.load;
    }
    std::fprintf(f, "preset %s (seed %llu): %s\ntargets: %s\n", spec.name.c_str(),
                 static_cast<unsigned long long>(a.seed), spec.description.c_str(),
                 targets.source.empty() ? "-" : targets.source.c_str());
    std::fputs(workload::FormatStatsTable(st, targets).c_str(), f);
  }
  return kExitOk;
}

}  // namespace

void RegisterGenerate(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<GenerateArgs>();
  auto* cmd = app.add_subcommand("generate", "Generate a synthetic workload trace from a calibrated preset");
  SetExamples(cmd, {"./build/orrery generate --preset helios-venus --days 7 --stats",
                    "./build/orrery generate --preset acme-kalos --days 30 --seed 7 --out /tmp/orrery-example-kalos.csv",
                    "./build/orrery generate --preset helios-venus --days 30 --arrivals closed-loop --out "
                    "/tmp/orrery-example-venus-closed.csv",
                    "./build/orrery generate --preset acme-seren --days 7 --batches sweeps --stats",
                    "./build/orrery generate --list"});
  cmd->add_option("--preset", args->preset, "workload preset (see --list)")->capture_default_str();
  cmd->add_option("--seed", args->seed, "random seed (same seed -> identical trace)")->capture_default_str();
  cmd->add_option("--jobs", args->jobs, "number of jobs to generate (default: the preset's days)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--days", args->days, "horizon in days (default: the preset's, e.g. 181 for Helios)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--load", args->load, "scale factor on the arrival rate (1 = calibrated)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_flag("--cpu-jobs", args->cpu_jobs, "also generate CPU-only jobs at the summary's share");
  AddWorkloadModelFlags(cmd, &args->model);
  cmd->add_option("--out", args->out, "write the canonical trace here (atomic; '-' = stdout)");
  cmd->add_flag("--stats", args->stats, "print generated statistics next to the preset's targets");
  cmd->add_flag("--list", args->list, "list the presets and exit");
  cmd->callback([args, exit_code] { *exit_code = RunGenerate(*args); });
}

}  // namespace orrery::cli
