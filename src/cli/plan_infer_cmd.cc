#include <cstdio>
#include <memory>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/io.h"
#include "base/json_text.h"
#include "cli/commands.h"
#include "cli/flag_rules.h"
#include "cli/plan_infer.h"
#include "plan/infer.h"
#include "plan/infer_fit.h"

namespace orrery::cli {

namespace {

nlohmann::ordered_json EstimateJson(const plan::DecoderShape& m, const plan::InferStep& s, const plan::InferGpu& g,
                                    const plan::InferEstimate& e) {
  nlohmann::ordered_json j;
  j["model"] = m.name;
  j["gpu"] = g.name;
  j["phase"] = plan::InferPhaseName(s.phase);
  j["batch"] = s.batch;
  j["context"] = s.context;
  j["verify_tokens"] = s.verify_tokens;
  j["tp"] = s.tp;
  j["sp"] = s.sp;
  j["step_time_s"] = e.step_time_s;
  j["breakdown"] = {{"gemm_s", e.gemm_s}, {"attention_s", e.attention_s}, {"elementwise_s", e.elementwise_s}, {"comm_s", e.comm_s}, {"fixed_s", e.fixed_s}};
  j["kv_cache_gib"] = e.kv_cache_gib;
  j["weights_gib"] = e.weights_gib;
  j["max_batch"] = e.max_batch;
  j["fits"] = e.fits;
  const double fresh = s.phase == plan::InferPhase::kDecode ? 1 : (s.phase == plan::InferPhase::kVerify ? s.verify_tokens : s.context);
  j["tokens_per_s"] = s.batch * fresh / e.step_time_s;
  return j;
}

std::string ErrorTable(const plan::InferValidation& v) {
  std::ostringstream o;
  o << fmt::format("  {:<22} {:>6} {:>10} {:>10}\n", "group", "points", "mean |err|", "max |err|");
  auto row = [&](const plan::InferErrorRow& r) {
    o << fmt::format("  {:<22} {:>6} {:>9.1f}% {:>9.1f}%\n", r.group, r.points, 100 * r.mean_abs_rel, 100 * r.max_abs_rel);
  };
  for (const auto& r : v.by_phase) row(r);
  for (const auto& r : v.by_config) row(r);
  row(v.all);
  return o.str();
}

nlohmann::ordered_json ErrorsJson(const plan::InferValidation& v) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  auto add = [&](const plan::InferErrorRow& r) {
    j[r.group] = {{"points", r.points}, {"mean_abs_rel", r.mean_abs_rel}, {"max_abs_rel", r.max_abs_rel}};
  };
  for (const auto& r : v.by_phase) add(r);
  for (const auto& r : v.by_config) add(r);
  add(v.all);
  return j;
}

struct FitArgs {
  std::string csv, gpu = "h100", hold_out, out;
};

int RunFit(const FitArgs& a) {
  auto points = plan::ReadInferSteps(a.csv);
  if (!points.ok()) return Fail("plan", points.error());
  auto start = plan::InferDatasheet(a.gpu);
  if (!start.ok()) return Fail("plan", start.error());
  std::vector<std::string> hold;
  std::stringstream ss(a.hold_out);
  for (std::string item; std::getline(ss, item, ',');) {
    if (!item.empty()) hold.push_back(item);
  }
  auto fit = plan::FitInfer(*points, hold, *start);
  if (!fit.ok()) return Fail("plan", fit.error());
  fit->gpu.source = fmt::format("fitted by `orrery plan fit-infer {} --gpu {} --hold-out {}`", a.csv, a.gpu, a.hold_out);
  std::printf("fitted on %zu points:\n%sheld out (%s), %zu points:\n%s", fit->fitted.all.points,
              ErrorTable(fit->fitted).c_str(), a.hold_out.c_str(), fit->held_out.all.points, ErrorTable(fit->held_out).c_str());
  auto doc = ParseOrderedJson(plan::InferGpuJson(fit->gpu), "profile");
  if (!doc.ok()) return Fail("plan", doc.error());
  (*doc)["fit"] = {{"held_out", hold}, {"fitted", ErrorsJson(fit->fitted)}, {"held_out_errors", ErrorsJson(fit->held_out)}};
  const std::string text = DumpJson(*doc, 1) + "\n";
  if (a.out.empty()) {
    std::printf("%s", text.c_str());
    return kExitOk;
  }
  Status st = WriteFileAtomic(a.out, text);
  return st.ok() ? kExitOk : Fail("plan", st.error());
}

struct InferValidateArgs {
  std::string csv, gpu = "h100";
};

int RunValidateInfer(const InferValidateArgs& a) {
  auto points = plan::ReadInferSteps(a.csv);
  if (!points.ok()) return Fail("plan", points.error());
  auto g = plan::InferGpuByName(a.gpu);
  if (!g.ok()) return Fail("plan", g.error());
  std::printf("%s: %zu measured steps against the %s profile (the profiler's counting)\n%s", a.csv.c_str(),
              points->size(), g->name.c_str(), ErrorTable(plan::ValidateInfer(*points, *g)).c_str());
  return kExitOk;
}

}  // namespace

Status RefuseInferenceOnly(const CLI::App& estimate) {
  return RefuseGiven(estimate, {"--batch", "--context", "--verify-tokens", "--tp", "--sp"}, "it belongs to an inference estimate (--phase)");
}

void AddInferEstimateOptions(CLI::App* e, InferEstimateArgs* a) {
  e->add_option("--phase", a->phase, "inference step instead of a training step: prefill, decode or verify");
  e->add_option("--batch", a->batch, "inference: sequences in the step")->check(CountInRange(1, 1000000, "sequences"));
  e->add_option("--context", a->context, "inference: KV tokens per sequence before the step (prefill: the prompt length)")
      ->check(InRange(0, 1e7, false, "tokens"));
  e->add_option("--verify-tokens", a->verify_tokens, "verify: draft tokens checked per sequence")
      ->check(CountInRange(1, 4096, "tokens"));
  e->add_option("--tp", a->tp, "inference: tensor-parallel GPUs")->check(CountInRange(1, 1024, "GPUs"));
  e->add_option("--sp", a->sp, "prefill: sequence-parallel groups of --tp GPUs (Ulysses)")->check(CountInRange(1, 1024, "groups"));
}

int RunInferEstimate(const CLI::App& cmd, const InferEstimateArgs& a, const std::string& model, const std::string& gpu,
                     bool json) {
  Status refused = RefuseGiven(cmd, {"--strategy", "--seq", "--micro-batch", "--gpus", "--gpus-per-node", "--recompute", "--allow-oom", "--profile"},
                               "it belongs to a training estimate, not to --phase");
  if (!refused.ok()) return Fail("plan", refused.error());
  if (FirstGiven(cmd, {"--context"}).empty()) return Fail("plan", MakeError("--phase needs --context (KV tokens per sequence; for prefill the prompt length)"));
  auto phase = plan::ParseInferPhase(a.phase);
  if (!phase.ok()) return Fail("plan", phase.error());
  auto m = plan::ParseDecoder(model);
  if (!m.ok()) return Fail("plan", m.error().With("--model"));
  auto g = plan::InferGpuByName(gpu);
  if (!g.ok()) return Fail("plan", g.error());
  const plan::InferStep s{*phase, a.batch, a.context, a.verify_tokens, a.tp, a.sp};
  auto e = plan::EstimateInfer(*m, s, *g);
  if (!e.ok()) return Fail("plan", e.error());
  if (!e->fits) {
    return Fail("plan", MakeError(fmt::format("{} sequences of {} tokens need {:.1f} GiB of KV cache per GPU beside {:.1f} GiB of weights; "
                                      "at most {} fit on {} with tp {} (try a smaller --batch or a larger --tp)",
                                      a.batch, a.context, e->kv_cache_gib, e->weights_gib, e->max_batch, g->name, a.tp)));
  }
  const auto j = EstimateJson(*m, s, *g, *e);
  if (json) {
    std::printf("%s\n", DumpJson(j, 2).c_str());
  } else {
    std::printf("step time     %.6f s (%s, %u sequences, context %.0f, tp %u, %s)\n"
                "breakdown     GEMM %.6f s, attention %.6f s, elementwise %.6f s, all-reduce %.6f s, fixed %.6f s\n"
                "memory        KV cache %.2f GiB + weights %.2f GiB per GPU; at most %u such sequences fit\n",
                e->step_time_s, std::string(plan::InferPhaseName(s.phase)).c_str(), a.batch, a.context, a.tp, g->name.c_str(),
                e->gemm_s, e->attention_s, e->elementwise_s, e->comm_s, e->fixed_s, e->kv_cache_gib, e->weights_gib, e->max_batch);
  }
  return kExitOk;
}

void RegisterPlanInfer(CLI::App& plan, int* exit_code) {
  auto fit = std::make_shared<FitArgs>();
  CLI::App* f = plan.add_subcommand("fit-infer", "fit a GPU's inference constants on measured steps, with configurations held out");
  SetExamples(f, {"./build/orrery plan fit-infer data/profiles/h100-infer-steps.csv --gpu h100 "
                  "--hold-out llama3-8b:1,llama3-70b:8,qwen2.5-72b:4 --out /tmp/orrery-example-infer-h100.json"});
  f->add_option("csv", fit->csv, "measured steps (tools/profile/infer.py)")->required();
  f->add_option("--gpu", fit->gpu, "GPU kind of the datasheet figures: h100 or h200");
  f->add_option("--hold-out", fit->hold_out, "model:tp configurations set aside before fitting, comma-separated");
  f->add_option("--out", fit->out, "profile file to write (default: standard output)");
  f->callback([fit, exit_code] { *exit_code = RunFit(*fit); });

  auto val = std::make_shared<InferValidateArgs>();
  CLI::App* v = plan.add_subcommand("validate-infer", "error of the inference cost model on measured steps");
  SetExamples(v, {"./build/orrery plan validate-infer data/profiles/h100-infer-steps.csv --gpu h100"});
  v->add_option("csv", val->csv, "measured steps (tools/profile/infer.py)")->required();
  v->add_option("--gpu", val->gpu, "inference profile: h100 or h200");
  v->callback([val, exit_code] { *exit_code = RunValidateInfer(*val); });
}

}  // namespace orrery::cli
