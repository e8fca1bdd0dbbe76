// Subcommands of the `orrery` executable. Each Register* adds one subcommand to
// `app`; when the user selects it, its callback runs the command and stores the
// process exit status in *exit_code (see base/result.h for the codes).
#pragma once

#include <CLI/CLI.hpp>
#include <initializer_list>
#include <string_view>

#include "base/result.h"

namespace orrery::cli {

void RegisterImport(CLI::App& app, int* exit_code);    // import_cmd.cc
void RegisterGenerate(CLI::App& app, int* exit_code);  // generate_cmd.cc
void RegisterSimulate(CLI::App& app, int* exit_code);  // simulate_cmd.cc
void RegisterPredict(CLI::App& app, int* exit_code);   // predict_cmd.cc
void RegisterAnalyze(CLI::App& app, int* exit_code);   // analyze_cmd.cc
void RegisterReport(CLI::App& app, int* exit_code);    // report_cmd.cc
void RegisterExplain(CLI::App& app, int* exit_code);   // explain_cmd.cc
void RegisterServe(CLI::App& app, int* exit_code);     // serve_cmd.cc (live mode)
void RegisterReplay(CLI::App& app, int* exit_code);    // replay_cmd.cc (live mode vs simulator)
void RegisterEval(CLI::App& app, int* exit_code);      // eval_cmd.cc (evaluation jobs)

// Ends `cmd`'s --help with "Examples (run from the repository root):" and one command
// line per example. Each runs as written there after a Release build into build/
// (tests/cli_help_examples_test.cc runs them); `slurm_examples` need a real Slurm cluster,
// are printed with kNeedsSlurm appended and are only shown.
inline constexpr std::string_view kNeedsSlurm = "   # needs a Slurm cluster";
void SetExamples(CLI::App* cmd, std::initializer_list<std::string_view> examples,
                 std::initializer_list<std::string_view> slurm_examples = {});  // examples.cc
void RegisterPlan(CLI::App& app, int* exit_code);      // plan_cmd.cc (training-job planner)
void RegisterPlanSearch(CLI::App& plan, int* exit_code);  // plan_search_cmd.cc
void RegisterInspect(CLI::App& app, int* exit_code);   // inspect_cmd.cc (launch-config reader)
void RegisterDiagnose(CLI::App& app, int* exit_code);  // diagnose_cmd.cc (failure logs)
void RegisterProgress(CLI::App& app, int* exit_code);  // progress_cmd.cc (training progress)
void RegisterResilience(CLI::App& app, int* exit_code);  // resilience_cmd.cc (fault tolerance figures)
void RegisterPlanShapeStudy(CLI::App& plan, int* exit_code);  // plan_shape_cmd.cc
void RegisterRl(CLI::App& app, int* exit_code);        // rl_cmd.cc (RL post-training steps)
void RegisterSweep(CLI::App& app, int* exit_code);     // sweep_cmd.cc (grids of simulations)

// A command's failure: prints "orrery <command>: <message>" on stderr (`command` as the user
// typed it, e.g. "plan shape-study") and returns the error's exit code.
int Fail(std::string_view command, const Error& e);  // commands.cc

}  // namespace orrery::cli
