// `orrery rl step`: one step of an RL post-training job (rollout, reward and log-probs,
// training, weight sync) under each strategy (docs/design/rl.md, docs/formats/rl-step.md).
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "cli/commands.h"
#include "cli/flag_rules.h"
#include "plan/model_names.h"
#include "rl/strategy.h"

namespace orrery::cli {
namespace {

struct RlStepArgs {
  rl::JobRequest job;
  std::string strategies = "sync,tlt,tail-batch,partial,async";
  bool json = false;
  bool list = false;
};

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

nlohmann::json StrategyJson(const rl::StepResult& r) {
  nlohmann::json j;
  j["name"] = r.name;
  j["step_time_s"] = r.step_time_s;
  j["speedup_vs_sync"] = r.speedup_vs_sync;
  j["rollout_s"] = r.rollout_s;
  j["tail_s"] = r.tail_s;
  j["reward_s"] = r.reward_s;
  j["train_s"] = r.train_s;
  j["sync_s"] = r.sync_s;
  j["other_s"] = r.other_s;
  j["idle_gpu_frac"] = r.idle_gpu_frac;
  j["harvestable_gpu_s"] = r.harvestable_gpu_s;
  j["policy_lag_steps"] = r.policy_lag;
  j["accept_length"] = r.accept_length;
  j["drafter_trained"] = r.drafter_trained;
  j["rollout_gpus"] = r.rollout_gpus;
  for (const rl::StrategyInfo& s : rl::Strategies())
    if (s.name == r.name) j["settings"] = std::string(s.defaults);
  nlohmann::json t = nlohmann::json::array();
  for (const rl::BusySegment& s : r.timeline) t.push_back({s.t0, s.t1, s.busy_gpus});
  j["timeline"] = t;
  return j;
}

nlohmann::json StepJson(const rl::JobRequest& a, const rl::CostSetup& s, const std::vector<rl::StepResult>& rows) {
  nlohmann::json j;
  j["model"] = s.model.name;
  j["params"] = s.model.Params();
  j["gpu"] = s.gpu.name;
  j["gpus"] = s.job.gpus;
  j["tp"] = s.job.tp;
  j["workers"] = s.job.gpus / s.job.tp;
  j["prompts"] = s.job.prompts;
  j["samples"] = s.job.samples;
  j["prompt_len"] = s.job.prompt_len;
  j["max_response"] = s.job.lengths.max_tokens;
  j["lengths"] = {{"spec", a.lengths}, {"mean_frac", rl::ClippedMeanFrac(s.job.lengths)},
                  {"clip_ratio", rl::ClipRatio(s.job.lengths)}, {"corr", s.job.lengths.corr},
                  {"mu", s.job.lengths.mu}, {"sigma", s.job.lengths.sigma}};
  j["max_running"] = s.job.max_running;
  j["tlt_max_running"] = s.job.tlt_max_running;
  j["seed"] = s.job.seed;
  nlohmann::json list = nlohmann::json::array();
  for (const rl::StepResult& r : rows) list.push_back(StrategyJson(r));
  j["strategies"] = list;
  return j;
}

void PrintTable(const rl::CostSetup& s, const std::vector<rl::StepResult>& rows) {
  std::printf("%s on %u %s GPUs: %u rollout workers of TP %u, %u prompts x %u samples, max response %u, running cap %u\n",
              s.model.name.c_str(), s.job.gpus, s.gpu.name.c_str(), s.job.gpus / s.job.tp, s.job.tp, s.job.prompts,
              s.job.samples, s.job.lengths.max_tokens, s.job.max_running);
  std::printf("%-11s %10s %8s %10s %9s %9s %9s %8s %6s\n", "strategy", "step_s", "speedup", "rollout_s", "tail_s",
              "reward_s", "train_s", "sync_s", "idle%");
  for (const rl::StepResult& r : rows) {
    std::printf("%-11s %10.1f %7.2fx %10.1f %9.1f %9.1f %9.1f %8.2f %5.1f%%", r.name.c_str(), r.step_time_s,
                r.speedup_vs_sync, r.rollout_s, r.tail_s, r.reward_s, r.train_s, r.sync_s, 100 * r.idle_gpu_frac);
    if (r.name == "tlt") std::printf("  accept %.2f tokens/step, drafter trained %.0f%%", r.accept_length, 100 * r.drafter_trained);
    if (r.name == "partial" || r.name == "async") std::printf("  policy lag %.2f steps", r.policy_lag);
    if (r.name == "async") std::printf(", %u rollout GPUs", r.rollout_gpus);
    if (r.name == "harvest") std::printf("  harvestable %.0f GPU-s, return %.0f s", r.harvestable_gpu_s, r.other_s);
    std::printf("\n");
  }
}

int RunStep(const RlStepArgs& a, const CLI::App& cmd) {
  if (a.list) {
    if (Status st = RefuseAllBut(cmd, "--list-strategies", "--list-strategies prints the strategies and runs nothing");
        !st.ok())
      return Fail("rl step", st.error());
    for (const rl::StrategyInfo& s : rl::Strategies())
      std::printf("%-11s %s\n            defaults: %s\n", std::string(s.name).c_str(), std::string(s.summary).c_str(),
                  std::string(s.defaults).c_str());
    return kExitOk;
  }
  Result<rl::CostSetup> s = rl::SetUpJob(a.job);
  if (!s.ok()) return Fail("rl step", s.error());
  const rl::CostTimer timer(s->model, s->gpu, s->job.tp, s->params);
  const rl::CostPhaseModel phases(s->model, s->gpu, s->job.tp, s->params);
  rl::RlEnv env;
  env.timer = &timer;
  env.phases = &phases;
  env.draft_steps = s->params.draft_steps;
  Result<std::vector<rl::StepResult>> rows = rl::RunStrategies(SplitList(a.strategies), s->job, env);
  if (!rows.ok()) return Fail("rl step", rows.error());
  if (a.json) {
    std::printf("%s\n", DumpJson(StepJson(a.job, *s, *rows), 2).c_str());
  } else {
    PrintTable(*s, *rows);
  }
  return kExitOk;
}

}  // namespace

void RegisterRl(CLI::App& app, int* exit_code) {
  CLI::App* rl_cmd = app.add_subcommand("rl", "RL post-training jobs: step time of rollout, reward, training and sync per strategy");
  SetExamples(rl_cmd, {"./build/orrery rl step --model qwen2.5-7b --gpus 32 --gpu h100 --strategy sync,tlt"});
  rl_cmd->require_subcommand(1);
  auto a = std::make_shared<RlStepArgs>();
  CLI::App* c = rl_cmd->add_subcommand("step", "one RL step under each strategy: time, breakdown, idle GPUs, speedup over sync");
  SetExamples(c, {"./build/orrery rl step --model qwen2.5-7b --gpus 32 --gpu h100 --prompts 64 --samples 8 --max-response 32768 --strategy sync,tlt,tail-batch,partial,async",
                  "./build/orrery rl step --model qwen2.5-32b --gpus 128 --gpu h100 --strategy sync,tlt,harvest --json",
                  "./build/orrery rl step --list-strategies"});
  c->add_option("--model", a->job.model,
                "decoder: " + plan::CanonicalModelList(plan::ModelUse::kInference) +
                    " or llama:layers=L,hidden=H,heads=A,kv_heads=K,ffn=F,vocab=V (default qwen2.5-7b)");
  c->add_option("--gpus", a->job.gpus, "GPUs of the job (default 32)")->check(CountInRange(1, 1000000, "GPUs"));
  c->add_option("--gpu", a->job.gpu, "GPU kind of the inference profile: h100 or h200 (default h100)");
  c->add_option("--prompts", a->job.prompts, "prompts per step, P (default 64)")->check(CountInRange(1, 1000000, "prompts"));
  c->add_option("--samples", a->job.samples, "responses per prompt, G (default 8)")->check(CountInRange(1, 4096, "samples"));
  c->add_option("--max-response", a->job.max_response, "maximum response length in tokens (default 32768)")
      ->check(CountInRange(2, 1048576, "tokens"));
  c->add_option("--prompt-len", a->job.prompt_len, "tokens of every prompt (default 1024)")->check(CountInRange(0, 1048576, "tokens"));
  c->add_option("--lengths", a->job.lengths, "response lengths: a preset (verl, deepscaler) or mean=F,clip=C[,corr=R] as fractions of the maximum (default verl)");
  c->add_option("--strategy", a->strategies, "comma-separated strategies (default sync,tlt,tail-batch,partial,async; --list-strategies)");
  c->add_option("--tp", a->job.tp, "GPUs per rollout worker (default 4, or 8 when the weights leave no room at 4)")
      ->check(CountInRange(1, 64, "GPUs per worker"));
  c->add_option("--seed", a->job.seed, "seed of the response lengths (default 1)");
  c->add_flag("--json", a->json, "JSON to stdout (docs/formats/rl-step.md)");
  c->add_flag("--list-strategies", a->list, "print the strategies with their papers' defaults and exit");
  c->callback([a, c, exit_code] { *exit_code = RunStep(*a, *c); });
}

}  // namespace orrery::cli
