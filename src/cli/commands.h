// Subcommands of the `orrery` executable. Each Register* adds one subcommand to
// `app`; when the user selects it, its callback runs the command and stores the
// process exit status in *exit_code (see base/result.h for the codes).
#pragma once

#include <CLI/CLI.hpp>

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
void RegisterPlan(CLI::App& app, int* exit_code);      // plan_cmd.cc (training-job planner)
void RegisterPlanSearch(CLI::App& plan, int* exit_code);  // plan_search_cmd.cc
void RegisterPlanShapeStudy(CLI::App& plan, int* exit_code);  // plan_shape_cmd.cc

}  // namespace orrery::cli
