// `orrery eval`: evaluation jobs (docs/design/eval.md).
//   eval plan SUITE --model 7B --nodes N [--strategy S] [--json] [--out FILE]
//   eval compare SUITE --model 7B [--nodes-list 1,2,4,8] [--strategies "S;S;..."] [--json]
//   eval submit SUITE ... --partition P --cpu-partition Q --workdir DIR [--wait]   (eval_submit.cc)
//   eval record WORKDIR --history DB                                             (eval_submit.cc)
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/io.h"
#include "cli/commands.h"
#include "cli/eval_setup.h"
#include "cli/eval_submit.h"
#include "eval/report.h"
#include "eval/strategy.h"

namespace orrery::cli {

namespace {

void NoteDropped(const char* cmd, const EvalSetup& s) {
  if (!s.dropped.empty())
    fmt::print(stderr, "orrery eval {}: note: skipped {} dataset(s) without an example count: {}\n", cmd,
               s.dropped.size(), fmt::join(s.dropped, ", "));
}

struct PlanArgs {
  EvalArgs eval;
  std::string strategy = "acme";
  bool json = false;
  std::string out;
};

int RunPlan(const PlanArgs& a) {
  auto setup = PrepareEval(a.eval);
  if (!setup.ok()) return EvalFail("plan", setup.error());
  NoteDropped("plan", *setup);
  auto strategy = eval::MakeStrategy(a.strategy);
  if (!strategy.ok()) return EvalFail("plan", strategy.error());
  auto plan = eval::BuildPlan(**strategy, a.strategy, setup->workload, setup->cluster);
  if (!plan.ok()) return EvalFail("plan", plan.error());
  auto sched = eval::Execute(setup->workload, *plan, setup->cluster);
  if (!sched.ok()) return EvalFail("plan", sched.error());
  eval::PlanReport r{a.eval.suite, &setup->workload, &*plan, &*sched, setup->cluster, setup->priors};
  if (!a.out.empty()) {
    if (Status st = WriteFileAtomic(a.out, DumpJson(eval::PlanJson(r), 2) + "\n"); !st.ok()) return EvalFail("plan", st.error());
  }
  const std::string text = a.json ? DumpJson(eval::PlanJson(r), 2) + "\n" : eval::PlanText(r);
  std::fputs(text.c_str(), stdout);
  return kExitOk;
}

struct CompareArgs {
  EvalArgs eval;
  std::vector<uint32_t> nodes = {1, 2, 4, 8};
  std::vector<std::string> strategies = {"coupled", "opencompass-size", "opencompass-workers", "acme"};
  bool json = false;
};

// Makespan of every strategy at every node count, and each one's speed-up over coupled.
int RunCompare(CompareArgs a) {
  if (a.nodes.empty()) return EvalFail("compare", MakeError("--nodes-list: expected at least one node count"));
  a.eval.nodes = a.nodes.front();  // the workload does not depend on it; every count is checked below
  auto setup = PrepareEval(a.eval);
  if (!setup.ok()) return EvalFail("compare", setup.error());
  NoteDropped("compare", *setup);
  nlohmann::json rows = nlohmann::json::array();
  std::string table = fmt::format("{:<48}", "strategy \\ nodes");
  for (uint32_t n : a.nodes) table += fmt::format(" {:>15}", fmt::format("{} x {}", n, a.eval.gpus_per_node));
  table += "\n";
  std::vector<double> coupled(a.nodes.size(), 0);
  for (const std::string& spec : a.strategies) {
    auto strategy = eval::MakeStrategy(spec);
    if (!strategy.ok()) return EvalFail("compare", strategy.error());
    std::string line = fmt::format("{:<48}", spec);
    for (size_t i = 0; i < a.nodes.size(); ++i) {
      const eval::ClusterSpec c = ClusterFor(a.eval, a.nodes[i]);
      if (Status st = eval::ValidateCluster(c); !st.ok()) return EvalFail("compare", st.error());
      auto plan = eval::BuildPlan(**strategy, spec, setup->workload, c);
      if (!plan.ok()) return EvalFail("compare", plan.error());
      auto s = eval::Execute(setup->workload, *plan, c);
      if (!s.ok()) return EvalFail("compare", s.error());
      if ((*strategy)->name() == "coupled") coupled[i] = s->makespan_s;
      const double ratio = coupled[i] > 0 ? coupled[i] / s->makespan_s : 0;
      line += fmt::format(" {:>7.0f} s{}", s->makespan_s, ratio > 0 ? fmt::format(" {:>4.2f}x", ratio) : "      ");
      rows.push_back({{"strategy", spec}, {"nodes", a.nodes[i]}, {"makespan_s", std::round(s->makespan_s * 1000) / 1000},
                      {"gpu_hours", std::round(s->gpu_hours * 1000) / 1000},
                      {"gpu_idle_hours", std::round(s->gpu_idle_hours * 1000) / 1000},
                      {"gpu_jobs", plan->gpu_jobs.size()},
                      {"speedup_over_coupled", ratio > 0 ? nlohmann::json(std::round(ratio * 1000) / 1000) : nlohmann::json()}});
    }
    table += line + "\n";
  }
  if (a.json) {
    std::fputs((nlohmann::json{{"suite", a.eval.suite}, {"model_size", setup->model.label}, {"rows", rows}}.dump(2) + "\n").c_str(), stdout);
  } else {
    fmt::print("makespan of {} ({} datasets) for a {} model on {}; speed-up over coupled (list coupled first)\n{}",
               a.eval.suite, setup->workload.datasets.size(), setup->model.label, setup->gpu.name, table);
  }
  return kExitOk;
}

}  // namespace

void RegisterEval(CLI::App& app, int* exit_code) {
  CLI::App* ev = app.add_subcommand("eval", "evaluation jobs: plan, compare and submit a checkpoint's evaluation suite");
  SetExamples(ev, {"./build/orrery eval plan tests/fixtures/eval_sim/suite.csv --model 7B --nodes 1 --strategy acme",
                   "./build/orrery eval compare tests/fixtures/eval_sim/suite.csv --model 7B"});
  ev->require_subcommand(1);

  auto pa = std::make_shared<PlanArgs>();
  CLI::App* plan = ev->add_subcommand("plan", "print the plan of one strategy and its predicted makespan");
  SetExamples(plan, {"./build/orrery eval plan tests/fixtures/eval_sim/suite.csv --model 7B --nodes 1 --strategy acme",
                     "./build/orrery eval plan ../shared/corpora/eval-suite/datasets.csv --skip-unsized --model 7B --nodes 4 --strategy opencompass-size"});
  AddEvalFlags(plan, &pa->eval, /*nodes_required=*/true);
  plan->add_option("--strategy", pa->strategy, "coupled | opencompass-size[:k=v,...] | opencompass-workers[:k=v,...] | acme[:k=v,...]");
  plan->add_flag("--json", pa->json, "print the plan as JSON (docs/formats/eval-plan.md)");
  plan->add_option("--out", pa->out, "also write the JSON plan to FILE (atomically)");
  plan->callback([=] { *exit_code = RunPlan(*pa); });

  auto ca = std::make_shared<CompareArgs>();
  CLI::App* cmp = ev->add_subcommand("compare", "makespan of every strategy at several node counts");
  SetExamples(cmp, {"./build/orrery eval compare tests/fixtures/eval_sim/suite.csv --model 7B"});
  AddEvalFlags(cmp, &ca->eval, /*nodes_required=*/false);
  cmp->add_option("--nodes-list", ca->nodes, "node counts (default 1,2,4,8)")->delimiter(',');
  cmp->add_option("--strategies", ca->strategies, "strategy specs separated by ';' (default: all four, coupled first)")
      ->delimiter(';');
  cmp->add_flag("--json", ca->json, "print the table as JSON");
  cmp->callback([=] { *exit_code = RunCompare(*ca); });

  RegisterEvalSubmit(ev, exit_code);
}

}  // namespace orrery::cli
