#include "plan/infer.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "base/gpu_names.h"
#include "base/parse.h"
#include "plan/model_names.h"
#include "plan/registry.h"

namespace orrery::plan {

namespace {

constexpr double kBf16 = 2.0;
constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

// The published configs (config.json of each model on its hub page): layers, hidden, heads,
// KV heads, MLP width, vocabulary, tied embeddings.
struct DecoderPreset {
  std::string_view name;
  DecoderShape shape;
};
const std::array<DecoderPreset, 7>& Presets() {
  static const std::array<DecoderPreset, 7> kPresets = {{
      {"qwen2.5-1.5b", {"qwen2.5-1.5b", 28, 1536, 12, 2, 8960, 151936, true}},
      {"qwen2.5-7b", {"qwen2.5-7b", 28, 3584, 28, 4, 18944, 152064, false}},
      {"qwen2.5-14b", {"qwen2.5-14b", 48, 5120, 40, 8, 13824, 152064, false}},
      {"qwen2.5-32b", {"qwen2.5-32b", 64, 5120, 40, 8, 27648, 152064, false}},
      {"qwen2.5-72b", {"qwen2.5-72b", 80, 8192, 64, 8, 29568, 152064, false}},
      {"llama3-8b", {"llama3-8b", 32, 4096, 32, 8, 14336, 128256, false}},
      {"llama3-70b", {"llama3-70b", 80, 8192, 64, 8, 28672, 128256, false}},
  }};
  return kPresets;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// One key=value of a llama: spec into the shape; bounds keep every product finite.
Status SetDecoderKey(std::string_view key, std::string_view value, DecoderShape* m) {
  struct Key {
    std::string_view name;
    uint32_t DecoderShape::*field;
    int64_t max;
  };
  static constexpr std::array<Key, 6> kKeys = {{{"layers", &DecoderShape::layers, 1000},
                                                {"hidden", &DecoderShape::hidden, 131072},
                                                {"heads", &DecoderShape::heads, 4096},
                                                {"kv_heads", &DecoderShape::kv_heads, 4096},
                                                {"ffn", &DecoderShape::ffn, 1048576},
                                                {"vocab", &DecoderShape::vocab, 4194304}}};
  int64_t v = 0;
  if (key == "tied") {
    if (value != "0" && value != "1") return MakeError(fmt::format("llama: key 'tied': expected 0 or 1, got {}", Quote(value)));
    m->tied_embeddings = value == "1";
    return Status::Ok();
  }
  for (const Key& k : kKeys) {
    if (key != k.name) continue;
    if (!ParseI64(value, &v) || v < 1 || v > k.max) {
      return MakeError(fmt::format("llama: key '{}': expected an integer in [1, {}], got {}", key, k.max, Quote(value)));
    }
    m->*k.field = static_cast<uint32_t>(v);
    return Status::Ok();
  }
  return MakeError(fmt::format("llama: unknown key {} (expected layers, hidden, heads, kv_heads, ffn, vocab, tied)", Quote(key)));
}

Status CheckDecoder(const DecoderShape& m) {
  for (auto [name, v] : {std::pair<std::string_view, uint32_t>{"layers", m.layers}, {"hidden", m.hidden},
                         {"heads", m.heads}, {"kv_heads", m.kv_heads}, {"ffn", m.ffn}, {"vocab", m.vocab}}) {
    if (v == 0) return MakeError(fmt::format("llama: missing key '{}'", name));
  }
  if (m.hidden % m.heads != 0) return MakeError(fmt::format("llama: heads {} do not divide hidden {}", m.heads, m.hidden));
  if (m.heads % m.kv_heads != 0) return MakeError(fmt::format("llama: kv_heads {} do not divide heads {}", m.kv_heads, m.heads));
  return Status::Ok();
}

// One rank's share of the shape under tensor parallelism `tp`.
struct RankShape {
  double layers, hidden, head_dim, heads, kv_heads, ffn, head_vocab;
};
RankShape Share(const DecoderShape& m, uint32_t tp, bool vocab_parallel) {
  const double t = tp;
  return {static_cast<double>(m.layers), static_cast<double>(m.hidden), static_cast<double>(m.HeadDim()),
          m.heads / t, std::max(1.0, m.kv_heads / t), m.ffn / t,
          vocab_parallel ? std::ceil(m.vocab / t) : static_cast<double>(m.vocab)};
}

// A GEMM of M tokens through a K×N weight: the slower of its FLOPs at the compute rate reached
// with M rows and its bytes (weight, input, output) at the streaming rate.
double Gemm(double M, double K, double N, const InferGpu& g) {
  const double eff = g.gemm_compute_eff * M / (M + g.gemm_half_tokens);
  const double compute = 2 * M * K * N / (g.peak_flops * eff);
  const double memory = kBf16 * (K * N + M * K + M * N) / (g.hbm_bytes_per_s * g.gemm_memory_eff);
  return std::max(compute, memory);
}

double LayerGemms(double M, const RankShape& r, const InferGpu& g) {
  const double qkv = (r.heads + 2 * r.kv_heads) * r.head_dim;
  return Gemm(M, r.hidden, qkv, g) + Gemm(M, r.heads * r.head_dim, r.hidden, g) + Gemm(M, r.hidden, 2 * r.ffn, g) +
         Gemm(M, r.ffn, r.hidden, g);
}

// One layer's attention for `batch` sequences with `fresh` new tokens each over `context`
// cached ones: decode and verify read the whole cache, prefill computes the causal square.
double LayerAttention(InferPhase phase, double batch, double context, double fresh, const RankShape& r,
                      const InferGpu& g) {
  const double compute_rate = g.peak_flops * g.attn_compute_eff;
  const double memory_rate = g.hbm_bytes_per_s * g.attn_memory_eff;
  switch (phase) {
    case InferPhase::kPrefill: {
      const double flops = 2 * batch * context * context * r.heads * r.head_dim;
      const double bytes = kBf16 * batch * context * (2 * r.heads + 2 * r.kv_heads) * r.head_dim;
      return std::max(flops / compute_rate, bytes / memory_rate);
    }
    case InferPhase::kDecode:
    case InferPhase::kVerify: {
      const double keys = context + fresh;
      const double flops = 4 * batch * fresh * keys * r.heads * r.head_dim;
      const double bytes = kBf16 * batch * keys * 2 * r.kv_heads * r.head_dim;
      return std::max(flops / compute_rate, bytes / memory_rate);
    }
  }
  return 0;
}

double FreshTokens(const InferStep& s) {
  switch (s.phase) {
    case InferPhase::kPrefill: return s.context;
    case InferPhase::kDecode: return 1;
    case InferPhase::kVerify: return s.verify_tokens;
  }
  return 1;
}

double WeightBytes(const DecoderShape& m, uint32_t tp) {
  const double t = tp;
  const double vocab_rows = std::ceil(m.vocab / t) * m.hidden;
  return kBf16 * (m.layers * (m.BlockMatmulParams() / t + 2.0 * m.hidden) + vocab_rows * (m.tied_embeddings ? 1 : 2) +
                  m.hidden);
}

}  // namespace

double DecoderShape::BlockMatmulParams() const {
  const double h = hidden, kv = static_cast<double>(kv_heads) * HeadDim();
  return 2 * h * h + 2 * h * kv + 3 * h * ffn;
}

double DecoderShape::Params() const {
  const double emb = static_cast<double>(vocab) * hidden;
  return layers * (BlockMatmulParams() + 2.0 * hidden) + emb * (tied_embeddings ? 1 : 2) + hidden;
}

double DecoderShape::KvBytesPerToken(uint32_t tp) const {
  const double kv = std::max(1.0, static_cast<double>(kv_heads) / std::max(1u, tp));
  return 2 * kBf16 * layers * kv * HeadDim();
}

Result<DecoderShape> ParseDecoder(std::string_view spec) {
  const std::string low = Lower(Trim(spec));
  if (low.rfind("llama:", 0) != 0) {
    ORR_ASSIGN_OR_RETURN(const ModelName* name,
                         ResolveModel(spec, ModelUse::kInference, "llama:layers=L,hidden=H,heads=A,kv_heads=K,ffn=F,vocab=V"));
    for (const DecoderPreset& p : Presets())
      if (p.name == name->canonical) return p.shape;
    return MakeError("model: " + std::string(name->canonical) + " has no decoder shape");  // the tables disagree
  }
  DecoderShape m;
  m.name = std::string(Trim(spec));
  std::string_view rest = std::string_view(low).substr(6);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) return MakeError(fmt::format("llama: expected key=value, got {}", Quote(item)));
    ORR_RETURN_IF_ERROR(SetDecoderKey(Trim(item.substr(0, eq)), Trim(item.substr(eq + 1)), &m), "model " + Quote(spec));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  ORR_RETURN_IF_ERROR(CheckDecoder(m), "model " + Quote(spec));
  return m;
}

std::vector<std::string> DecoderPresetNames() { return CanonicalModelNames(ModelUse::kInference); }

std::string_view InferPhaseName(InferPhase p) {
  switch (p) {
    case InferPhase::kPrefill: return "prefill";
    case InferPhase::kDecode: return "decode";
    case InferPhase::kVerify: return "verify";
  }
  return "?";
}

Result<InferPhase> ParseInferPhase(std::string_view text) {
  for (InferPhase p : {InferPhase::kPrefill, InferPhase::kDecode, InferPhase::kVerify}) {
    if (text == InferPhaseName(p)) return p;
  }
  return MakeError(fmt::format("phase: expected prefill, decode or verify, got {}", Quote(text)));
}

InferEstimate InferStepTime(const DecoderShape& m, const InferStep& s, const InferGpu& g, InferCounting c) {
  const RankShape r = Share(m, s.tp, c.vocab_parallel);
  const double sp = std::max(1u, s.sp);
  const double batch = s.batch, fresh = FreshTokens(s);
  const double tokens = batch * fresh / sp;  // this GPU's share of the step's tokens
  const double head_tokens = (s.phase == InferPhase::kVerify && c.verify_all_logits) ? tokens : batch;
  InferEstimate e;
  e.gemm_s = r.layers * LayerGemms(tokens, r, g) + Gemm(head_tokens, r.hidden, r.head_vocab, g);
  e.attention_s = r.layers * LayerAttention(s.phase, batch, s.context, fresh, r, g) / sp;
  if (sp > 1) {
    // Four all-to-alls a layer (q, k, v before attention, its output after), each sending
    // (sp - 1)/sp of this GPU's tokens' hidden/tp slice.
    const double bytes = kBf16 * tokens * (r.hidden / s.tp) * (sp - 1) / sp;
    e.comm_s += 4 * r.layers * (g.allreduce_s + bytes / g.link_bytes_per_s);
  }
  e.elementwise_s = r.layers * kBf16 * tokens * (r.hidden + r.ffn) * g.elementwise_passes /
                             (g.hbm_bytes_per_s * g.gemm_memory_eff);
  if (c.allreduce && s.tp > 1) {
    const double bytes = kBf16 * tokens * r.hidden;
    e.comm_s += 2 * r.layers * (g.allreduce_s + 2.0 * (s.tp - 1) / s.tp * bytes / g.link_bytes_per_s);
  }
  const double device = e.gemm_s + e.attention_s + e.elementwise_s + e.comm_s;
  if (s.phase == InferPhase::kPrefill) {
    // Prefill is issued eagerly: the step takes the longer of the GPU's work and the host's.
    e.fixed_s = g.step_s + std::max(0.0, r.layers * g.host_layer_s - device);
  } else {
    e.fixed_s = g.step_s + r.layers * g.layer_s;
  }
  e.step_time_s = device + e.fixed_s;
  e.weights_gib = WeightBytes(m, s.tp) / kBytesPerGiB;
  e.kv_cache_gib = batch * (s.phase == InferPhase::kPrefill ? s.context : s.context + fresh) * m.KvBytesPerToken(s.tp) / sp / kBytesPerGiB;
  e.max_batch = MaxBatch(m, (s.phase == InferPhase::kPrefill ? s.context : s.context + fresh) / sp, s.tp, g);
  e.fits = e.max_batch >= s.batch;
  return e;
}

Status CheckInferStep(const DecoderShape& m, const InferStep& s) {
  if (s.tp < 1 || s.tp > 1024) return MakeError(fmt::format("tp: expected an integer in [1, 1024], got {}", s.tp));
  if (m.heads % s.tp != 0 || m.ffn % s.tp != 0) {
    return MakeError(fmt::format("tp {} does not divide the {} heads and MLP width {} of {}", s.tp, m.heads, m.ffn, m.name));
  }
  if (s.tp > m.kv_heads ? s.tp % m.kv_heads != 0 : m.kv_heads % s.tp != 0) {
    return MakeError(fmt::format("tp {} neither divides nor is a multiple of the {} KV heads of {}", s.tp, m.kv_heads, m.name));
  }
  if (s.sp < 1 || s.sp > 1024) return MakeError(fmt::format("sp: expected an integer in [1, 1024], got {}", s.sp));
  if (s.sp > 1 && s.phase != InferPhase::kPrefill) {
    return MakeError(fmt::format("sp {}: sequence parallelism splits a prefill, not a {} step", s.sp, InferPhaseName(s.phase)));
  }
  if ((m.heads / s.tp) % s.sp != 0) {
    return MakeError(fmt::format("sp {} does not divide the {} heads of each of {}'s tp {} ranks", s.sp, m.heads / s.tp, m.name, s.tp));
  }
  if (s.batch < 1 || s.batch > 1000000) return MakeError(fmt::format("batch: expected an integer in [1, 1000000], got {}", s.batch));
  const double min_context = s.phase == InferPhase::kPrefill ? 1 : 0;
  if (!std::isfinite(s.context) || s.context < min_context || s.context > 1e7) {
    return MakeError(fmt::format("context: expected a number of tokens in [{}, 10000000], got {}", min_context, s.context));
  }
  const bool verify = s.phase == InferPhase::kVerify;
  if (verify && (s.verify_tokens < 1 || s.verify_tokens > 4096)) {
    return MakeError(fmt::format("verify tokens: expected an integer in [1, 4096] for a verify step, got {}", s.verify_tokens));
  }
  if (!verify && s.verify_tokens != 0) {
    return MakeError(fmt::format("verify tokens apply to a verify step only, not to {}", InferPhaseName(s.phase)));
  }
  return Status::Ok();
}

Result<InferEstimate> EstimateInfer(const DecoderShape& m, const InferStep& s, const InferGpu& g) {
  ORR_RETURN_IF_ERROR(CheckInferStep(m, s));
  return InferStepTime(m, s, g);
}

DecoderShape DrafterOf(const DecoderShape& target) {
  DecoderShape d = target;
  d.name = target.name + "-drafter";
  d.layers = 1;
  return d;
}

uint32_t MaxBatch(const DecoderShape& m, double context, uint32_t tp, const InferGpu& g) {
  const double usable = g.memory_bytes * (1 - g.mem_reserved_frac) - WeightBytes(m, tp);
  if (usable <= 0) return 0;
  const double per_sequence = m.KvBytesPerToken(tp) * std::max(1.0, context);
  return static_cast<uint32_t>(std::min(1e6, std::floor(usable / per_sequence)));
}

Result<InferGpu> InferGpuByName(std::string_view gpu) {
  const std::string_view canonical = CanonicalGpu(gpu);
  if (canonical != "h100" && canonical != "h200") {
    return MakeError(fmt::format("gpu {}: expected h100 or h200 (the GPUs with an inference profile)", Quote(gpu)));
  }
  return ReadInferGpu(DefaultProfilePaths().profile_dir + "/infer-" + std::string(canonical) + ".json");
}

}  // namespace orrery::plan
