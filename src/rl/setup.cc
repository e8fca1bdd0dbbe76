// SetUpJob: an RL job on the inference cost model, with the checks that make bad input a
// located error (docs/design/rl.md, "Setup").
#include <algorithm>
#include <cmath>
#include <string>

#include "base/rng.h"
#include "rl/strategy.h"

namespace orrery::rl {
namespace {

// Mean KV length of a running sequence: a decoding slot belongs to a response of length r with
// probability ∝ r and sits uniformly along it, so prompt + E[r²] / (2·E[r]) (lengths drawn from
// their own stream).
double RunningContext(const LengthDist& d, uint32_t prompt_len, uint64_t seed) {
  Rng rng(seed, "rl/kv-context");
  double sum = 0, sq = 0;
  for (uint32_t len : SampleGroups(d, 4096, 1, rng)) {
    sum += len;
    sq += static_cast<double>(len) * len;
  }
  return prompt_len + sq / (2 * sum);
}

// The default rollout TP: 4 (TLT's 7B script, verl's DAPO 32B recipe), 8 when the weights do
// not leave room for one longest sequence at 4.
uint32_t DefaultTp(const plan::DecoderShape& m, double longest, const plan::InferGpu& g) {
  return plan::MaxBatch(m, longest, 4, g) > 0 || m.heads % 8 != 0 ? 4 : 8;
}

// `r` with "<flag>: " before its error.
template <class T>
Result<T> Within(Result<T> r, const std::string& flag) {
  if (!r.ok()) return r.error().With(flag);
  return r;
}

}  // namespace

Result<CostSetup> SetUpJob(const JobRequest& r) {
  CostSetup s;
  ORR_ASSIGN_OR_RETURN(s.model, Within(plan::ParseDecoder(r.model), "--model"));
  ORR_ASSIGN_OR_RETURN(s.gpu, Within(plan::InferGpuByName(r.gpu), "--gpu"));
  if (r.prompts == 0 || r.samples == 0) return MakeError("--prompts and --samples: expected at least 1");
  if (r.max_response < 2) return MakeError("--max-response: expected at least 2 tokens");
  ORR_ASSIGN_OR_RETURN(const LengthSpec spec, Within(ParseLengthSpec(r.lengths), "--lengths"));
  ORR_ASSIGN_OR_RETURN(s.job.lengths, Within(FitLengths(spec, r.max_response), "--lengths"));
  // The rollout engine owns rollout_mem_frac of each GPU; the training states are offloaded.
  plan::InferGpu engine = s.gpu;
  engine.memory_bytes *= s.params.rollout_mem_frac;
  const double longest = static_cast<double>(r.prompt_len) + r.max_response;
  const uint32_t tp = r.tp != 0 ? r.tp : DefaultTp(s.model, longest, engine);
  if (r.gpus == 0 || r.gpus % tp != 0)
    return MakeError("--gpus: " + std::to_string(r.gpus) + " GPUs do not split into rollout workers of TP " +
                     std::to_string(tp));
  const plan::InferStep probe{plan::InferPhase::kDecode, 1, longest, 0, tp};
  ORR_RETURN_IF_ERROR(plan::EstimateInfer(s.model, probe, engine), "--tp");
  if (plan::MaxBatch(s.model, longest, tp, engine) == 0)
    return MakeError("impossible batch: one sequence of " + std::to_string(static_cast<uint64_t>(longest)) +
                     " tokens (prompt + --max-response) does not fit beside the weights of " + s.model.name +
                     " in a rollout worker of TP " + std::to_string(tp) + " (" +
                     std::to_string(static_cast<int>(s.params.rollout_mem_frac * 100)) + " % of each " + s.gpu.name +
                     "'s memory); raise --tp");
  const uint32_t cap = std::max<uint32_t>(1, plan::MaxBatch(s.model, RunningContext(s.job.lengths, r.prompt_len, r.seed), tp, engine));
  s.job.gpus = r.gpus;
  s.job.tp = tp;
  s.job.prompts = r.prompts;
  s.job.samples = r.samples;
  s.job.prompt_len = r.prompt_len;
  s.job.max_running = std::min(s.params.engine_max_running, cap);
  s.job.tlt_max_running = std::min(s.params.tlt_max_running, cap);
  s.job.seed = r.seed;
  return s;
}

}  // namespace orrery::rl
