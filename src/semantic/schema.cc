#include "semantic/schema.h"

#include <cmath>
#include <cstdio>

namespace orrery::semantic {

namespace {
constexpr std::string_view kFieldNames[kNumFields] = {
    "framework", "model_name", "params_billion", "num_layers", "hidden_size", "num_heads", "seq_len",
    "global_batch", "micro_batch", "train_steps", "epochs", "tp", "pp", "dp", "zero_stage", "nodes",
    "gpus_per_node", "time_limit", "checkpoint_interval_steps"};
}  // namespace

std::string_view FieldName(FieldId f) { return kFieldNames[static_cast<size_t>(f)]; }

bool ParseFieldName(std::string_view name, FieldId* out) {
  for (size_t i = 0; i < kNumFields; ++i) {
    if (kFieldNames[i] == name) {
      *out = FieldAt(i);
      return true;
    }
  }
  return false;
}

bool IsTextField(FieldId f) {
  return f == FieldId::kFramework || f == FieldId::kModelName || f == FieldId::kTimeLimit;
}

std::string FormatValue(const Value& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  double d = std::get<double>(v);
  if (std::fabs(d) < 9e15 && d == std::floor(d)) return std::to_string(static_cast<long long>(d));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", d);
  return buf;
}

std::string_view ProvenanceName(Provenance p) {
  switch (p) {
    case Provenance::kWritten: return "written";
    case Provenance::kVariable: return "variable";
    case Provenance::kDerived: return "derived";
    case Provenance::kReferenced: return "referenced file name";
    case Provenance::kComment: return "comment";
    case Provenance::kFileName: return "file name";
    case Provenance::kLlm: return "llm";
  }
  return "written";
}

std::string FormatWarning(const Warning& w) {
  return w.file + ":" + std::to_string(w.line) + ":" + std::to_string(w.col) + ": " + w.message;
}

std::optional<double> LaunchSchema::number(FieldId f) const {
  const auto& fv = get(f);
  if (!fv) return std::nullopt;
  if (const auto* d = std::get_if<double>(&fv->value)) return *d;
  return std::nullopt;
}

std::optional<std::string> LaunchSchema::text(FieldId f) const {
  const auto& fv = get(f);
  if (!fv) return std::nullopt;
  if (const auto* s = std::get_if<std::string>(&fv->value)) return *s;
  return std::nullopt;
}

std::optional<double> LaunchSchema::gpus() const {
  auto n = number(FieldId::kNodes), g = number(FieldId::kGpusPerNode);
  if (!n || !g) return std::nullopt;
  return *n * *g;
}

}  // namespace orrery::semantic
