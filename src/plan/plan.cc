#include "plan/plan.h"

#include <array>
#include <charconv>
#include <string>

#include <fmt/format.h>

namespace orrery::plan {

std::string_view FrameworkName(Framework f) {
  switch (f) {
    case Framework::kPlain: return "plain";
    case Framework::kDdp: return "ddp";
    case Framework::kFsdp: return "fsdp";
    case Framework::kDtensorTp: return "dtensor";
    case Framework::kMegatron: return "megatron";
  }
  return "?";
}

std::string_view RecomputeName(Recompute r) {
  switch (r) {
    case Recompute::kNone: return "none";
    case Recompute::kSelective: return "selective";
    case Recompute::kFull: return "full";
  }
  return "?";
}

std::string_view SeqParallelName(SeqParallel s) {
  switch (s) {
    case SeqParallel::kNone: return "none";
    case SeqParallel::kUlysses: return "ulysses";
    case SeqParallel::kRing: return "ring";
    case SeqParallel::kTwoD: return "2d";
  }
  return "?";
}

Result<Recompute> ParseRecompute(std::string_view text) {
  if (text == "none") return Recompute::kNone;
  if (text == "selective") return Recompute::kSelective;
  if (text == "full") return Recompute::kFull;
  return MakeError("recompute: expected none, selective or full, got \"" + std::string(text) + "\"");
}

namespace {

ParallelPlan DataParallel(std::string_view name, Framework f, int gpus, Sharding s) {
  ParallelPlan p;
  p.name = std::string(name);
  p.framework = f;
  p.dp = gpus;
  p.shard = s;
  return p;
}

// The strategies of ../shared/gpu-h200/README.md.
Result<ParallelPlan> Alias(std::string_view name, int gpus) {
  const Sharding none{1, 1, 1};
  if (name == "single") {
    if (gpus != 1) return MakeError("strategy 'single' runs on 1 GPU, got --gpus " + std::to_string(gpus));
    return DataParallel(name, Framework::kPlain, 1, none);
  }
  if (name == "ddp") return DataParallel(name, Framework::kDdp, gpus, none);
  if (name == "fsdp_no_shard") return DataParallel(name, Framework::kFsdp, gpus, none);
  if (name == "fsdp_grad_op") return DataParallel(name, Framework::kFsdp, gpus, Sharding{1, gpus, gpus});
  if (name == "fsdp_full") return DataParallel(name, Framework::kFsdp, gpus, Sharding{gpus, gpus, gpus});
  if (name == "fsdp_full_mp") {
    ParallelPlan p = DataParallel(name, Framework::kFsdp, gpus, Sharding{gpus, gpus, gpus});
    p.fsdp_bf16_params = true;
    return p;
  }
  if (name == "tp" || name == "tp_mega") {
    ParallelPlan p;
    p.name = std::string(name);
    p.framework = name == "tp" ? Framework::kDtensorTp : Framework::kMegatron;
    p.tp = gpus;
    return p;
  }
  return MakeError("strategy: unknown strategy \"" + std::string(name) +
                   "\" (expected single, ddp, fsdp_no_shard, fsdp_grad_op, fsdp_full, fsdp_full_mp, tp, "
                   "tp_mega or a plan dp=..,tp=..,pp=..,sp=..,zero=..)");
}

Result<int> PositiveInt(std::string_view key, std::string_view v) {
  int out = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || p != v.data() + v.size() || out <= 0) {
    return MakeError("strategy: '" + std::string(key) + "' must be a positive integer, got \"" + std::string(v) + "\"");
  }
  return out;
}

Result<Sharding> ParseLins(std::string_view v) {
  Sharding s;
  std::array<int*, 3> out = {&s.s_p, &s.s_g, &s.s_os};
  for (int i = 0; i < 3; ++i) {
    const size_t colon = v.find(':');
    if ((colon == std::string_view::npos) != (i == 2)) {
      return MakeError("strategy: 'lins' expects s_p:s_g:s_os (e.g. lins=1:1:8), got \"" + std::string(v) + "\"");
    }
    ORR_ASSIGN_OR_RETURN(*out[i], PositiveInt("lins", v.substr(0, colon)));
    v = colon == std::string_view::npos ? std::string_view() : v.substr(colon + 1);
  }
  return s;
}

struct PlanFields {
  int zero = -1;
  bool lins_given = false;
  bool framework_given = false;
};

Result<SeqParallel> ParseSpKind(std::string_view v) {
  if (v == "ulysses") return SeqParallel::kUlysses;
  if (v == "ring") return SeqParallel::kRing;
  if (v == "2d") return SeqParallel::kTwoD;
  return MakeError("strategy: 'sp_kind' must be ulysses, ring or 2d, got \"" + std::string(v) + "\"");
}

Result<Framework> ParseFramework(std::string_view v) {
  if (v == "megatron") return Framework::kMegatron;
  if (v == "ddp") return Framework::kDdp;
  if (v == "fsdp") return Framework::kFsdp;
  if (v == "dtensor") return Framework::kDtensorTp;
  if (v == "plain") return Framework::kPlain;
  return MakeError("strategy: 'framework' must be megatron, ddp, fsdp, dtensor or plain, got \"" + std::string(v) + "\"");
}

Status SetPlanField(ParallelPlan& p, PlanFields& f, std::string_view key, std::string_view v) {
  if (key == "dp") { ORR_ASSIGN_OR_RETURN(p.dp, PositiveInt(key, v)); return Status::Ok(); }
  if (key == "tp") { ORR_ASSIGN_OR_RETURN(p.tp, PositiveInt(key, v)); return Status::Ok(); }
  if (key == "pp") { ORR_ASSIGN_OR_RETURN(p.pp, PositiveInt(key, v)); return Status::Ok(); }
  if (key == "sp") { ORR_ASSIGN_OR_RETURN(p.sp, PositiveInt(key, v)); return Status::Ok(); }
  if (key == "micro") { ORR_ASSIGN_OR_RETURN(p.num_micro, PositiveInt(key, v)); return Status::Ok(); }
  if (key == "zero") {
    if (v.size() != 1 || v[0] < '0' || v[0] > '3') {
      return MakeError("strategy: 'zero' must be 0, 1, 2 or 3, got \"" + std::string(v) + "\"");
    }
    f.zero = v[0] - '0';
    return Status::Ok();
  }
  if (key == "lins") { ORR_ASSIGN_OR_RETURN(p.shard, ParseLins(v)); f.lins_given = true; return Status::Ok(); }
  if (key == "sp_kind") { ORR_ASSIGN_OR_RETURN(p.sp_kind, ParseSpKind(v)); return Status::Ok(); }
  if (key == "seqpar") { p.tp_seq_parallel = v == "1"; return Status::Ok(); }
  if (key == "vocab_parallel") { p.shard_embeddings = v == "1"; return Status::Ok(); }
  if (key == "framework") {
    ORR_ASSIGN_OR_RETURN(p.framework, ParseFramework(v));
    f.framework_given = true;
    return Status::Ok();
  }
  if (key == "precision") {
    if (v == "mixed") p.precision = Precision::kMixedBf16;
    else if (v == "autocast") p.precision = Precision::kAutocastFp32;
    else return MakeError("strategy: 'precision' must be mixed or autocast, got \"" + std::string(v) + "\"");
    return Status::Ok();
  }
  return MakeError("strategy: unknown key '" + std::string(key) +
                   "' (expected dp, tp, pp, sp, zero, lins, micro, sp_kind, seqpar, vocab_parallel, framework, precision)");
}

Sharding ZeroSharding(int zero, int dp) {
  switch (zero) {
    case 1: return Sharding{1, 1, dp};
    case 2: return Sharding{1, dp, dp};
    case 3: return Sharding{dp, dp, dp};
    default: return Sharding{1, 1, 1};
  }
}

Status CheckSharding(const ParallelPlan& p) {
  const Sharding& s = p.shard;
  if (!(s.s_p <= s.s_g && s.s_g <= s.s_os && s.s_os <= p.dp)) {
    return MakeError(fmt::format("strategy: Lins sharding needs s_p <= s_g <= s_os <= dp, got {}:{}:{} with dp={}",
                                 s.s_p, s.s_g, s.s_os, p.dp));
  }
  if (p.dp % s.s_p != 0 || p.dp % s.s_g != 0 || p.dp % s.s_os != 0) {
    return MakeError(fmt::format("strategy: sharding factors {}:{}:{} must divide dp={}", s.s_p, s.s_g, s.s_os, p.dp));
  }
  return Status::Ok();
}

// The implementation a general plan runs on when none is named: Megatron for model parallelism,
// FSDP when parameters or gradients are sharded, DDP for plain data parallelism.
Framework DefaultFramework(const ParallelPlan& p) {
  if (p.tp > 1 || p.pp > 1 || p.sp > 1) return Framework::kMegatron;
  if (p.shard.s_p > 1 || p.shard.s_g > 1 || p.shard.s_os > 1) return Framework::kFsdp;
  return p.dp > 1 ? Framework::kDdp : Framework::kPlain;
}

Result<ParallelPlan> GeneralPlan(std::string_view text, int gpus) {
  ParallelPlan p;
  p.name = "custom";
  PlanFields f;
  std::string_view rest = text;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view kv = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const size_t eq = kv.find('=');
    if (eq == std::string_view::npos) return MakeError("strategy: expected key=value, got \"" + std::string(kv) + "\"");
    ORR_RETURN_IF_ERROR(SetPlanField(p, f, kv.substr(0, eq), kv.substr(eq + 1)));
  }
  if (f.zero >= 0 && f.lins_given) return MakeError("strategy: give either 'zero' or 'lins', not both");
  if (f.zero >= 0) p.shard = ZeroSharding(f.zero, p.dp);
  if (p.sp > 1 && p.sp_kind == SeqParallel::kNone) p.sp_kind = SeqParallel::kUlysses;
  if (!f.framework_given) p.framework = DefaultFramework(p);
  if (p.Gpus() != gpus) {
    return MakeError(fmt::format("strategy: dp*tp*pp*sp = {}*{}*{}*{} = {} GPUs, but --gpus is {}", p.dp, p.tp, p.pp,
                                 p.sp, p.Gpus(), gpus));
  }
  ORR_RETURN_IF_ERROR(CheckSharding(p));
  return p;
}

}  // namespace

Result<ParallelPlan> ParseStrategy(std::string_view text, int gpus) {
  if (gpus <= 0) return MakeError("strategy: --gpus must be positive, got " + std::to_string(gpus));
  if (text.find('=') != std::string_view::npos) return GeneralPlan(text, gpus);
  return Alias(text, gpus);
}

std::string DescribePlan(const ParallelPlan& p) {
  std::string s = fmt::format("dp={},tp={},pp={},sp={},lins={}:{}:{},micro={}", p.dp, p.tp, p.pp, p.sp, p.shard.s_p,
                              p.shard.s_g, p.shard.s_os, p.num_micro);
  if (p.sp > 1) s += ",sp_kind=" + std::string(SeqParallelName(p.sp_kind));
  if (p.tp_seq_parallel) s += ",seqpar=1";
  s += ",framework=" + std::string(FrameworkName(p.framework));
  s += p.precision == Precision::kMixedBf16 ? ",precision=mixed" : ",precision=autocast";
  return s;
}

}  // namespace orrery::plan
