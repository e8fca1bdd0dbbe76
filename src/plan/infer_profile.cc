// The inference profile file (docs/formats/infer-profile.md): one GPU kind's datasheet figures
// and fitted constants of the inference cost model, with where they come from.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/io.h"
#include "base/json_text.h"
#include "plan/infer.h"
#include "plan/json_fields.h"

namespace orrery::plan {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr std::string_view kFormat = "orrery-infer-profile";

struct NumberField {
  std::string_view key;
  double InferGpu::*field;
  bool efficiency;  // a fraction in (0, 1]
  bool may_be_zero;
};
constexpr NumberField kNumbers[] = {
    {"memory_bytes", &InferGpu::memory_bytes, false, false},
    {"peak_flops", &InferGpu::peak_flops, false, false},
    {"hbm_bytes_per_s", &InferGpu::hbm_bytes_per_s, false, false},
    {"gemm_compute_eff", &InferGpu::gemm_compute_eff, true, false},
    {"gemm_half_tokens", &InferGpu::gemm_half_tokens, false, true},
    {"gemm_memory_eff", &InferGpu::gemm_memory_eff, true, false},
    {"attn_memory_eff", &InferGpu::attn_memory_eff, true, false},
    {"attn_compute_eff", &InferGpu::attn_compute_eff, true, false},
    {"elementwise_passes", &InferGpu::elementwise_passes, false, true},
    {"layer_s", &InferGpu::layer_s, false, true},
    {"host_layer_s", &InferGpu::host_layer_s, false, true},
    {"step_s", &InferGpu::step_s, false, true},
    {"allreduce_s", &InferGpu::allreduce_s, false, true},
    {"link_bytes_per_s", &InferGpu::link_bytes_per_s, false, false},
    {"mem_reserved_frac", &InferGpu::mem_reserved_frac, true, true},
};

Result<InferGpu> ParseInferGpu(const json& j, const Where& w) {
  ORR_RETURN_IF_ERROR(OnlyKeys(j, {"format", "version", "gpu", "memory_bytes", "peak_flops", "hbm_bytes_per_s",
                                   "gemm_compute_eff", "gemm_half_tokens", "gemm_memory_eff", "attn_memory_eff",
                                   "attn_compute_eff", "elementwise_passes", "layer_s", "host_layer_s", "step_s",
                                   "allreduce_s", "link_bytes_per_s", "mem_reserved_frac", "source", "fit"},
                          w));
  ORR_ASSIGN_OR_RETURN(std::string format, String(j, "format", w));
  if (format != kFormat) return w.Child("format").Fail(fmt::format("expected \"{}\", got \"{}\"", kFormat, format));
  ORR_ASSIGN_OR_RETURN(int version, Integer(j, "version", w, 1));
  if (version != 1) return w.Child("version").Fail(fmt::format("expected 1, got {}", version));
  InferGpu g;
  ORR_ASSIGN_OR_RETURN(g.name, String(j, "gpu", w));
  ORR_ASSIGN_OR_RETURN(g.source, String(j, "source", w));
  for (const NumberField& f : kNumbers) {
    ORR_ASSIGN_OR_RETURN(double v, Number(j, f.key, w, !f.may_be_zero));
    if (f.efficiency && v > 1) return w.Child(f.key).Fail(fmt::format("expected a fraction of at most 1, got {}", v));
    g.*f.field = v;
  }
  if (j.contains("fit") && !j["fit"].is_object()) return w.Child("fit").Fail("expected an object, got " + Shown(j["fit"]));
  return g;
}

}  // namespace

Result<InferGpu> ReadInferGpu(const std::string& path) {
  ORR_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseInferGpuText(text, path);
}

Result<InferGpu> ParseInferGpuText(std::string_view text, const std::string& path) {
  ORR_ASSIGN_OR_RETURN(json j, ParseJson(text, path));
  const Where w{path, ""};
  return ReadJsonGuarded(path, [&] { return ParseInferGpu(j, w); });
}

std::string InferGpuJson(const InferGpu& g) {
  ordered_json j;
  j["format"] = kFormat;
  j["version"] = 1;
  j["gpu"] = g.name;
  for (const NumberField& f : kNumbers) j[std::string(f.key)] = g.*f.field;
  j["source"] = g.source;
  return DumpJson(j, 1) + "\n";
}

}  // namespace orrery::plan
