// orrery: GPU-cluster workload manager. Thin entry point; commands live in cli/.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/flag_rules.h"
#include "semantic/semantic_estimator.h"
#ifdef ORRERY_PYTHON
#include "python/embed.h"
#endif

int main(int argc, char** argv) {
  CLI::App app{"Orrery: scheduling for GPU datacenters (simulate, import, generate, predict, analyze, report, explain, serve, replay, eval, plan, rl, sweep, inspect, diagnose, progress, resilience)"};
  app.set_version_flag("--version", std::string("orrery ") + ORRERY_VERSION);
  app.require_subcommand(1);
  orrery::cli::SetExamples(&app, {"./build/orrery simulate --no-output",
                                  "./build/orrery simulate --help"});
  int exit_code = 0;
  orrery::semantic::RegisterSemanticEstimator();  // "semantic" in MakeEstimator (predict evaluate, simulate)
#ifdef ORRERY_PYTHON
  orrery::python::InstallEmbeddedPython();  // `--policy py:module.Class` (docs/python.md)
#endif
  orrery::cli::RegisterImport(app, &exit_code);
  orrery::cli::RegisterGenerate(app, &exit_code);
  orrery::cli::RegisterSimulate(app, &exit_code);
  orrery::cli::RegisterPredict(app, &exit_code);
  orrery::cli::RegisterAnalyze(app, &exit_code);
  orrery::cli::RegisterReport(app, &exit_code);
  orrery::cli::RegisterExplain(app, &exit_code);
  orrery::cli::RegisterServe(app, &exit_code);
  orrery::cli::RegisterReplay(app, &exit_code);
  orrery::cli::RegisterEval(app, &exit_code);
  orrery::cli::RegisterPlan(app, &exit_code);
  orrery::cli::RegisterRl(app, &exit_code);
  orrery::cli::RegisterSweep(app, &exit_code);
  orrery::cli::RegisterInspect(app, &exit_code);
  orrery::cli::RegisterDiagnose(app, &exit_code);
  orrery::cli::RegisterProgress(app, &exit_code);
  orrery::cli::RegisterResilience(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const std::string hint = orrery::cli::SubcommandHint(app, std::vector<std::string>(argv + 1, argv + argc));
    if (!hint.empty()) {
      std::fprintf(stderr, "orrery: %s\n", hint.c_str());
      return 2;
    }
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return exit_code;
}
