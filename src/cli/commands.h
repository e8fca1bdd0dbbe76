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
void RegisterInspect(CLI::App& app, int* exit_code);   // inspect_cmd.cc (launch-config reader)
void RegisterDiagnose(CLI::App& app, int* exit_code);  // diagnose_cmd.cc (failure logs)
void RegisterProgress(CLI::App& app, int* exit_code);  // progress_cmd.cc (training progress)

}  // namespace orrery::cli
