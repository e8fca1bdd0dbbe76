// `orrery plan estimate|validate|search`: the training-job planner (docs/design/planner.md).
#include <algorithm>
#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/io.h"
#include "cli/commands.h"
#include "cli/flag_rules.h"
#include "cli/plan_infer.h"
#include "plan/estimate.h"
#include "plan/lins.h"
#include "plan/model_names.h"
#include "plan/registry.h"
#include "plan/validate.h"

namespace orrery::cli {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct GpuArgs {
  std::string gpu = "H200";
  std::string profile;  // a profile file instead of --gpu
};

Result<plan::GpuProfile> LoadGpu(const GpuArgs& a) {
  if (!a.profile.empty()) return plan::LoadProfile(a.profile);
  return plan::ResolveGpu(a.gpu, plan::DefaultProfilePaths());
}

struct EstimateArgs {
  GpuArgs gpu;
  std::string model, strategy, recompute = "none";
  int64_t seq = 2048;
  int micro_batch = 1;
  int gpus = 1;
  int gpus_per_node = 0;
  bool json = false;
  bool allow_oom = false;
  InferEstimateArgs infer;
};

nlohmann::json EstimateJson(const plan::Workload& w, const plan::ParallelPlan& p, const plan::StepEstimate& e,
                            const plan::GpuProfile& gpu) {
  const plan::TimeBreakdown& t = e.time;
  const plan::MemoryBreakdown& m = e.memory;
  nlohmann::json j;
  j["step_time_s"] = t.step_s;
  j["peak_alloc_gib"] = m.peak_bytes / kGiB;
  j["fits"] = e.fits;
  j["device_memory_gib"] = e.device_memory_bytes / kGiB;
  j["tokens_per_s"] = e.tokens_per_s;
  j["mfu"] = e.mfu;
  j["plan"] = plan::DescribePlan(p);
  j["gpu"] = gpu.gpu;
  j["model"] = {{"layers", w.model.layers}, {"hidden", w.model.hidden}, {"heads", w.model.heads},
                {"vocab", w.model.vocab}, {"ffn", w.model.ffn}, {"params", w.model.TotalParams()}};
  j["time"] = {{"gpu_busy_s", t.gpu_busy_s}, {"host_s", t.host_s}, {"gemm_s", t.gemm_s},
               {"attention_s", t.attention_s}, {"elementwise_s", t.elementwise_s},
               {"optimizer_s", t.optimizer_s}, {"recompute_s", t.recompute_s}, {"comm_s", t.comm_s},
               {"comm_exposed_s", t.comm_exposed_s}, {"pipeline_bubble_s", t.pipeline_bubble_s},
               {"host_bound", t.host_bound}};
  j["memory"] = {{"params_gib", m.params_bytes / kGiB}, {"grads_gib", m.grads_bytes / kGiB},
                 {"optimizer_gib", m.optimizer_bytes / kGiB}, {"buffers_gib", m.buffers_bytes / kGiB},
                 {"activations_gib", m.activations_bytes / kGiB}, {"logits_gib", m.logits_bytes / kGiB},
                 {"transient_gib", m.transient_bytes / kGiB}, {"peak_phase", plan::MemoryPhaseName(m.peak_phase)}};
  return j;
}

int RunEstimate(const CLI::App& cmd, const EstimateArgs& a) {
  if (!a.infer.phase.empty()) return RunInferEstimate(cmd, a.infer, a.model, a.gpu.gpu, a.json);
  Status refused = RefuseInferenceOnly(cmd);
  if (!refused.ok()) return Fail("plan", refused.error());
  if (a.strategy.empty()) return Fail("plan", MakeError("a training estimate needs --strategy (or --phase for an inference step)"));
  Result<plan::GptModel> model = plan::ParseModelSpec(a.model);
  if (!model.ok()) return Fail("plan", model.error().With("--model"));
  Result<plan::ParallelPlan> p = plan::ParseStrategy(a.strategy, a.gpus);
  if (!p.ok()) return Fail("plan", p.error());
  Result<plan::Recompute> rc = plan::ParseRecompute(a.recompute);
  if (!rc.ok()) return Fail("plan", rc.error());
  p->recompute = *rc;
  Result<plan::GpuProfile> gpu = LoadGpu(a.gpu);
  if (!gpu.ok()) return Fail("plan", gpu.error());
  plan::Workload w{*model, a.seq, a.micro_batch};
  const int per_node = a.gpus_per_node > 0 ? a.gpus_per_node : std::max(gpu->gpus_per_node, 1);
  Result<plan::StepEstimate> e = plan::EstimateStep(w, *p, *gpu, per_node);
  if (!e.ok()) return Fail("plan", e.error());
  if (!e->fits && !a.allow_oom) {
    return Fail("plan", MakeError(fmt::format(
        "plan does not fit in memory: predicted peak {:.1f} GiB > {:.1f} GiB on {} (peak at the {}; try "
        "--recompute full, more GPUs, a ZeRO stage or tensor/pipeline parallelism; --allow-oom prints the estimate)",
        e->memory.peak_bytes / kGiB, e->device_memory_bytes / kGiB, gpu->gpu, plan::MemoryPhaseName(e->memory.peak_phase))));
  }
  const nlohmann::json j = EstimateJson(w, *p, *e, *gpu);
  if (a.json) {
    std::printf("%s\n", DumpJson(j, 2).c_str());
  } else {
    std::printf("step time     %.4f s (%s)\npeak memory   %.2f GiB of %.1f GiB (%s)\nthroughput    %.0f tokens/s, MFU %.1f %%\nplan          %s\n",
                e->time.step_s, e->time.host_bound ? "host-bound" : "device-bound", e->memory.peak_bytes / kGiB,
                e->device_memory_bytes / kGiB, std::string(plan::MemoryPhaseName(e->memory.peak_phase)).c_str(), e->tokens_per_s, 100 * e->mfu,
                plan::DescribePlan(*p).c_str());
  }
  return e->fits ? kExitOk : kExitBadInput;
}

struct ValidateArgs {
  GpuArgs gpu;
  std::string csv;
  bool json = false;
  bool leave_one_size_out = false;
};

void PrintStats(const char* label, const plan::ErrorStats& s) {
  if (s.n == 0) return;
  std::printf("%-28s n=%2d  time mean %5.2f %% max %5.2f %%   memory mean %5.2f %% max %5.2f %%\n", label, s.n,
              100 * s.mean_time, 100 * s.max_time, 100 * s.mean_mem, 100 * s.max_mem);
}

void PrintRow(const plan::ValidationRow& r) {
  std::printf("%-30s %-4s %-5s %9.4f %9.4f %6.1f%% %8.2f %8.2f %6.1f%%\n", r.measured.id.c_str(),
              r.split == plan::Split::kFit ? "fit" : "held", r.regime == plan::Regime::kHostBound ? "host" : "gpu",
              r.measured.t_median_s, r.pred_step_s, 100 * r.err_time, r.measured.peak_alloc_gib, r.pred_peak_gib,
              100 * r.err_mem);
}

void PrintHeader() {
  std::printf("%-30s %-4s %-5s %9s %9s %7s %8s %8s %7s\n", "id", "set", "regime", "t_meas", "t_pred", "err", "mem_meas",
              "mem_pred", "err");
}

// Leave-one-size-out (docs/plan-multigpu.md): every row predicted with the constants fitted on
// the other model sizes; per-strategy held-out errors.
int RunLeaveOneSizeOut(const std::vector<plan::MeasuredStep>& rows, const plan::GpuProfile& gpu) {
  Result<plan::LosoReport> rep = plan::LeaveOneSizeOut(rows, gpu);
  if (!rep.ok()) return Fail("plan", rep.error());
  PrintHeader();
  for (const plan::ValidationRow& r : rep->held_out.rows) PrintRow(r);
  std::printf("\nfolds (held-out size: constants fitted on the other sizes, fit-set mean step-time error)\n");
  for (const plan::FoldFit& f : rep->folds) {
    std::printf("  %-6s comm_compute_slowdown %.3f (%.2f %%)  dtensor_op_factor %.1f (%.2f %%)\n", f.held_out.c_str(),
                f.comm_compute_slowdown, 100 * f.fit_error_dp, f.dtensor_op_factor, 100 * f.fit_error_tp);
  }
  std::printf("  all    comm_compute_slowdown %.3f (%.2f %%)  dtensor_op_factor %.1f (%.2f %%)  (every size: the defaults)\n",
              rep->all.comm_compute_slowdown, 100 * rep->all.fit_error_dp, rep->all.dtensor_op_factor,
              100 * rep->all.fit_error_tp);
  std::vector<std::string> strategies;
  for (const plan::ValidationRow& r : rep->held_out.rows) {
    if (std::find(strategies.begin(), strategies.end(), r.measured.strategy) == strategies.end()) {
      strategies.push_back(r.measured.strategy);
    }
  }
  std::printf("\nheld-out errors per strategy: step time over GPU-bound rows, memory over all rows\n");
  std::printf("%-14s %4s %10s %10s %4s %10s %10s\n", "strategy", "n_t", "time mean", "time max", "n_m", "mem mean", "mem max");
  strategies.push_back("");
  for (const std::string& st : strategies) {
    const plan::ErrorStats t = rep->Strategy(st, plan::Regime::kGpuBound);
    const plan::ErrorStats m = rep->Strategy(st, std::nullopt);
    std::printf("%-14s %4d %9.2f%% %9.2f%% %4d %9.2f%% %9.2f%%\n", st.empty() ? "all" : st.c_str(), t.n,
                100 * t.mean_time, 100 * t.max_time, m.n, 100 * m.mean_mem, 100 * m.max_mem);
  }
  return kExitOk;
}

int RunValidate(const ValidateArgs& a) {
  Result<std::string> text = ReadFile(a.csv);
  if (!text.ok()) return Fail("plan", text.error());
  Result<std::vector<plan::MeasuredStep>> rows = plan::ParseCalibrationCsv(*text, a.csv);
  if (!rows.ok()) return Fail("plan", rows.error());
  Result<plan::GpuProfile> gpu = LoadGpu(a.gpu);
  if (!gpu.ok()) return Fail("plan", gpu.error());
  if (a.leave_one_size_out) return RunLeaveOneSizeOut(*rows, *gpu);
  Result<plan::ValidationReport> rep = plan::Validate(*rows, *gpu);
  if (!rep.ok()) return Fail("plan", rep.error());
  PrintHeader();
  for (const plan::ValidationRow& r : rep->rows) PrintRow(r);
  using plan::Regime;
  using plan::Split;
  PrintStats("held-out, all", rep->Stats(Split::kHeldOut, std::nullopt));
  PrintStats("held-out, host-bound", rep->Stats(Split::kHeldOut, Regime::kHostBound));
  PrintStats("held-out, GPU-bound", rep->Stats(Split::kHeldOut, Regime::kGpuBound));
  PrintStats("fit set (1.3B), all", rep->Stats(Split::kFit, std::nullopt));
  std::printf("measured OOM rows: %d, predicted not to fit: %d\n", rep->oom_rows, rep->oom_predicted);
  return kExitOk;
}

struct ConvertArgs {
  GpuArgs gpu;
  std::string output = "-";
};

int RunConvert(const ConvertArgs& a) {
  Result<plan::GpuProfile> gpu = LoadGpu(a.gpu);
  if (!gpu.ok()) return Fail("plan", gpu.error());
  const std::string text = plan::ProfileToJson(*gpu);
  if (a.output == "-") {
    std::fputs(text.c_str(), stdout);
    return kExitOk;
  }
  Status w = WriteFileAtomic(a.output, text);
  return w.ok() ? kExitOk : Fail("plan", w.error());
}

struct LinsArgs {
  std::string model = "llama-7b";
  int64_t seq = 4096;
  double tokens = 4.0 * 1024 * 1024;
};

int RunLins(const LinsArgs& a) {
  Result<plan::GptModel> m = plan::ParseModelSpec(a.model);
  if (!m.ok()) return Fail("plan", m.error().With("--model"));
  const plan::IbFabric f;
  std::printf("%6s %-7s %6s %10s %10s %10s\n", "gpus", "scheme", "MFU", "s_p:s_g:s_os", "compute_s", "exposed_s");
  for (int g : {8, 16, 32, 64, 128, 256, 512, 1024}) {
    for (plan::ZeroScheme s : {plan::ZeroScheme::kLins, plan::ZeroScheme::kMics, plan::ZeroScheme::kZero1,
                               plan::ZeroScheme::kZero3}) {
      const plan::ScalePoint p = plan::LinsStep(*m, a.seq, a.tokens, g, s, f, 80e9);
      std::printf("%6d %-7s %5.1f%% %4d:%d:%-4d %10.3f %10.3f\n", g, std::string(plan::SchemeName(s)).c_str(),
                  100 * p.mfu, p.shard.s_p, p.shard.s_g, p.shard.s_os, p.compute_s, p.exposed_comm_s);
    }
  }
  return kExitOk;
}

void AddGpuFlags(CLI::App* c, GpuArgs* g) {
  c->add_option("--gpu", g->gpu, "GPU: h200, h100, a100-40, a100-80, v100 (any case), H200-shared, or a profile in data/profiles");
  c->add_option("--profile", g->profile, "profile file (docs/formats/gpu-profile.md) instead of --gpu");
}

}  // namespace

void RegisterPlan(CLI::App& app, int* exit_code) {
  CLI::App* plan_cmd = app.add_subcommand("plan", "training-job planner: step time, memory, plan search");
  SetExamples(plan_cmd, {"./build/orrery plan estimate --model gpt-6.7b --seq 8192 --gpus 16 --strategy dp=2,tp=4,pp=2,zero=1,micro=8 --gpu H200",
                         "./build/orrery plan search --model opt-350m --pool sailor:A100-40=16,V100-16=32"});
  plan_cmd->require_subcommand(1);

  auto est = std::make_shared<EstimateArgs>();
  CLI::App* e = plan_cmd->add_subcommand("estimate", "predict step time and memory of one training plan or one inference step");
  SetExamples(e, {"./build/orrery plan estimate --model gpt-6.7b --seq 8192 --gpus 16 --strategy dp=2,tp=4,pp=2,zero=1,micro=8 --gpu H200",
                  "./build/orrery plan estimate --phase decode --model qwen2.5-32b --batch 64 --context 8192 --tp 4 --gpu h100 --json"});
  e->add_option("--model", est->model,
                "training: " + plan::CanonicalModelList(plan::ModelUse::kTraining) +
                    " or gpt:layers=L,hidden=H,heads=A,vocab=V; inference (--phase): " +
                    plan::CanonicalModelList(plan::ModelUse::kInference) +
                    " or llama:layers=L,hidden=H,heads=A,kv_heads=K,ffn=F,vocab=V (docs/cli.md, model names)")
      ->required();
  e->add_option("--seq", est->seq, "sequence length");
  e->add_option("--micro-batch", est->micro_batch, "sequences per GPU replica per micro-step");
  e->add_option("--gpus", est->gpus, "GPUs");
  e->add_option("--gpus-per-node", est->gpus_per_node, "GPUs per node (default: the profile's)");
  e->add_option("--strategy", est->strategy, "single, ddp, fsdp_*, tp, tp_mega or dp=..,tp=..,pp=..,sp=..,zero=.. (training)");
  e->add_option("--recompute", est->recompute, "none | selective | full");
  e->add_flag("--json", est->json, "JSON output");
  e->add_flag("--allow-oom", est->allow_oom, "print the estimate even when the plan does not fit (exit 2)");
  AddGpuFlags(e, &est->gpu);
  AddInferEstimateOptions(e, &est->infer);
  e->callback([est, e, exit_code] { *exit_code = RunEstimate(*e, *est); });

  auto val = std::make_shared<ValidateArgs>();
  CLI::App* v = plan_cmd->add_subcommand("validate", "prediction error on measured steps (calibration.csv format)");
  SetExamples(v, {"./build/orrery plan validate ../shared/gpu-h200/calibration.csv --gpu H200",
                  "./build/orrery plan validate ../shared/gpu-h200/calibration-2gpu.csv --gpu H200"});
  v->add_option("csv", val->csv, "measured steps")->required();
  v->add_flag("--leave-one-size-out", val->leave_one_size_out,
              "fit the multi-GPU constants on all model sizes but one, predict that one; rotate (docs/plan-multigpu.md)");
  AddGpuFlags(v, &val->gpu);
  v->callback([val, exit_code] { *exit_code = RunValidate(*val); });

  auto conv = std::make_shared<ConvertArgs>();
  CLI::App* c = plan_cmd->add_subcommand("profile", "read a GPU profile (any supported source) and write it in the project's format");
  SetExamples(c, {"./build/orrery plan profile --gpu H200 -o /tmp/orrery-example-h200.json"});
  AddGpuFlags(c, &conv->gpu);
  c->add_option("--out,-o,--output", conv->output, "output file ('-' = stdout)");
  c->callback([conv, exit_code] { *exit_code = RunConvert(*conv); });

  auto lins = std::make_shared<LinsArgs>();
  CLI::App* l = plan_cmd->add_subcommand("lins-scaling", "MFU vs scale of ZeRO-1/ZeRO-3/MiCS/Lins on A800 + InfiniBand (docs/validation/planner.md §P.2)");
  SetExamples(l, {"./build/orrery plan lins-scaling --model llama-7b"});
  l->add_option("--model", lins->model,
                plan::CanonicalModelList(plan::ModelUse::kTraining) + " or gpt:layers=L,hidden=H,heads=A,vocab=V (default llama-7b)");
  l->add_option("--seq", lins->seq, "sequence length");
  l->add_option("--global-tokens", lins->tokens, "tokens per step");
  l->callback([lins, exit_code] { *exit_code = RunLins(*lins); });

  RegisterPlanInfer(*plan_cmd, exit_code);
  RegisterPlanSearch(*plan_cmd, exit_code);
  RegisterPlanShapeStudy(*plan_cmd, exit_code);
}

}  // namespace orrery::cli
