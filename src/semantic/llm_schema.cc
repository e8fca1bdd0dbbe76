#include "semantic/llm_schema.h"

#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "semantic/extract.h"

namespace orrery::semantic {

namespace {

using json = nlohmann::json;
using F = FieldId;

// Template version 1. A change of wording is a new template: its hash is in every cache key,
// so old answers are not reused for it; bump the version in the text with it.
constexpr std::string_view kSchemaPrompt =
    "Orrery launch-config reader, template v1. You read one training job's launch script or config file and say "
    "what the job will do. Answer with one JSON object and nothing else, with exactly these keys, each null when "
    "the text does not state it (never guess a framework default): \"framework\" (one of: Megatron-LM, "
    "Megatron-DeepSpeed, DeepSpeed, torchtitan, LLaMA-Factory, axolotl, Hugging Face Transformers, Hugging Face "
    "TRL, NeMo, nanoGPT, verl, OpenRLHF), \"model_name\" (as the text names it), \"params_billion\" (total "
    "parameters in billions, only when the name or a comment gives the size), \"num_layers\", \"hidden_size\", "
    "\"num_heads\", \"seq_len\" (training sequence length in tokens), \"global_batch\" (sequences per optimizer "
    "step), \"micro_batch\" (per GPU), \"train_steps\" (optimizer steps; null when given in samples or tokens), "
    "\"epochs\", \"tp\", \"pp\", \"dp\" (tensor-, pipeline-, data-parallel degrees), \"zero_stage\" (DeepSpeed "
    "ZeRO 0-3), \"nodes\", \"gpus_per_node\", \"time_limit\" (the scheduler's wall-clock limit verbatim, e.g. "
    "\"2-00:00:00\"), \"checkpoint_interval_steps\". Numbers are JSON numbers, not strings.";

struct IntRange {
  FieldId field;
  double lo, hi;
};
// The integer fields and their ranges (generous: a bound only catches nonsense).
constexpr IntRange kIntRanges[] = {
    {F::kNumLayers, 1, 1000},        {F::kHiddenSize, 1, 1e6},  {F::kNumHeads, 1, 1e4},
    {F::kSeqLen, 1, 1e8},            {F::kGlobalBatch, 1, 1e8}, {F::kMicroBatch, 1, 1e6},
    {F::kTrainSteps, 1, 1e10},       {F::kTp, 1, 1e6},          {F::kPp, 1, 1e6},
    {F::kDp, 1, 1e6},                {F::kZeroStage, 0, 3},     {F::kNodes, 1, 1e5},
    {F::kGpusPerNode, 1, 64},        {F::kCheckpointIntervalSteps, 1, 1e10},
};

std::string Num(double v) { return FormatValue(Value(v)); }

std::string Shown(const json& v) { return DumpJson(v).substr(0, 40); }

Error Bad(FieldId f, const std::string& expected, const json& got) {
  return MakeError("'" + std::string(FieldName(f)) + "': expected null or " + expected + ", got " + Shown(got));
}

// [D-]HH:MM:SS and Slurm's shorter forms (M, M:S, H:M:S, D-H, D-H:M, D-H:M:S), or UNLIMITED.
bool SlurmTimeLimit(std::string_view t) {
  if (t == "UNLIMITED" || t == "INFINITE" || t == "infinite" || t == "unlimited") return true;
  size_t dash = t.find('-');
  std::string_view rest = dash == std::string_view::npos ? t : t.substr(dash + 1);
  if (dash != std::string_view::npos) {
    if (dash == 0 || dash > 4) return false;
    for (char c : t.substr(0, dash))
      if (c < '0' || c > '9') return false;
  }
  size_t groups = 1, digits = 0;
  for (char c : rest) {
    if (c == ':') {
      if (digits == 0) return false;
      ++groups, digits = 0;
    } else if (c >= '0' && c <= '9') {
      if (++digits > 6) return false;
    } else {
      return false;
    }
  }
  return digits > 0 && groups <= 3;
}

Result<Value> TextValue(FieldId f, const json& v) {
  if (!v.is_string()) return Bad(f, "a string", v);
  const std::string s = v.get<std::string>();
  if (f == F::kFramework) {
    if (FrameworkFromName(s)) return Value(s);
    std::string names;
    for (size_t i = 1; i <= static_cast<size_t>(Framework::kOpenRLHF); ++i)
      names += (names.empty() ? "" : ", ") + std::string(FrameworkName(static_cast<Framework>(i)));
    return Bad(f, "one of " + names, v);
  }
  if (f == F::kTimeLimit) {
    if (SlurmTimeLimit(s)) return Value(s);
    return Bad(f, "a Slurm time limit ([D-]HH:MM:SS)", v);
  }
  bool printable = !s.empty() && s.size() <= 200;
  for (unsigned char c : s) printable = printable && c >= 0x20 && c != 0x7f;
  if (!printable) return Bad(f, "a non-empty printable string of at most 200 bytes", v);
  return Value(s);
}

Result<Value> NumberValue(FieldId f, const json& v) {
  if (f == F::kParamsBillion || f == F::kEpochs) {
    const double hi = f == F::kParamsBillion ? 1e5 : 1e6;
    if (!v.is_number() || !(v.get<double>() > 0) || v.get<double>() > hi) return Bad(f, "a positive number up to " + Num(hi), v);
    return Value(v.get<double>());
  }
  for (const IntRange& r : kIntRanges) {
    if (r.field != f) continue;
    const std::string expected = (r.lo == 0 ? "an integer in [" : "a positive integer in [") + Num(r.lo) + ", " + Num(r.hi) + "]";
    if (!v.is_number()) return Bad(f, expected, v);
    const double d = v.get<double>();
    if (!(d >= r.lo && d <= r.hi) || d != std::floor(d)) return Bad(f, expected, v);
    return Value(d);
  }
  return Bad(f, "a number", v);
}

// A field's value: the schema's located one, else the answer's.
std::optional<double> Either(const LaunchSchema& located, const LlmFields& a, FieldId f, bool* from_answer) {
  if (auto d = located.number(f)) return d;
  const auto& v = a[static_cast<size_t>(f)];
  if (!v) return std::nullopt;
  *from_answer = true;
  return std::get<double>(*v);
}

Status CheckParallelism(const LaunchSchema& located, const LlmFields& a) {
  bool answered = false;
  auto tp = Either(located, a, F::kTp, &answered), pp = Either(located, a, F::kPp, &answered),
       dp = Either(located, a, F::kDp, &answered), nodes = Either(located, a, F::kNodes, &answered),
       gpn = Either(located, a, F::kGpusPerNode, &answered);
  if (!answered || !tp || !pp || !dp || !nodes || !gpn) return Status::Ok();
  const double model = *tp * *pp * *dp, world = *nodes * *gpn;
  if (world >= model && std::fmod(world, model) == 0) return Status::Ok();
  return MakeError("tp x pp x dp = " + Num(*tp) + " x " + Num(*pp) + " x " + Num(*dp) + " = " + Num(model) +
                   " does not divide nodes x gpus_per_node = " + Num(*nodes) + " x " + Num(*gpn) + " = " + Num(world));
}

Status CheckBatches(const LaunchSchema& located, const LlmFields& a) {
  bool answered = false;
  auto micro = Either(located, a, F::kMicroBatch, &answered), global = Either(located, a, F::kGlobalBatch, &answered);
  if (answered && micro && global && *micro > *global)
    return MakeError("micro_batch " + Num(*micro) + " is larger than global_batch " + Num(*global));
  answered = false;
  auto heads = Either(located, a, F::kNumHeads, &answered), hidden = Either(located, a, F::kHiddenSize, &answered);
  if (answered && heads && hidden && std::fmod(*hidden, *heads) != 0)
    return MakeError("num_heads " + Num(*heads) + " does not divide hidden_size " + Num(*hidden));
  return Status::Ok();
}

Status CheckParams(const LaunchSchema& located, const LlmFields& a) {
  bool answered = false;
  auto layers = Either(located, a, F::kNumLayers, &answered), hidden = Either(located, a, F::kHiddenSize, &answered),
       params = Either(located, a, F::kParamsBillion, &answered);
  if (!answered || !layers || !hidden || !params) return Status::Ok();
  const double dense = 12 * *layers * *hidden * *hidden / 1e9;
  const double lo = 0.5 * dense, hi = 64 * (dense + 256000 * *hidden / 1e9);
  if (*params >= lo && *params <= hi) return Status::Ok();
  char b[64];
  std::snprintf(b, sizeof b, "[%.4g, %.4g]", lo, hi);
  return MakeError("params_billion " + Num(*params) + " is not consistent with num_layers " + Num(*layers) +
                   " x hidden_size " + Num(*hidden) + " (expected " + b + ")");
}

Result<LlmFields> ParseAnswer(std::string_view content, const LaunchSchema& located) {
  ORR_ASSIGN_OR_RETURN(const json j, ParseJson(llm::StripFence(content), "content"));
  if (!j.is_object()) return MakeError("expected a JSON object");
  LlmFields out;
  for (const auto& [key, v] : j.items()) {
    FieldId f;
    if (!ParseFieldName(key, &f)) return MakeError("unknown key '" + key.substr(0, 40) + "'");
    if (v.is_null()) continue;
    Result<Value> value = IsTextField(f) ? TextValue(f, v) : NumberValue(f, v);
    if (!value.ok()) return value.error();
    out[static_cast<size_t>(f)] = std::move(*value);
  }
  ORR_RETURN_IF_ERROR(CheckParallelism(located, out));
  ORR_RETURN_IF_ERROR(CheckBatches(located, out));
  ORR_RETURN_IF_ERROR(CheckParams(located, out));
  return out;
}

}  // namespace

LlmNeed NeedsLlm(const LaunchSchema& s) {
  if (!s.get(F::kFramework)) return LlmNeed::kNoFramework;
  size_t known = 0;
  for (const auto& fv : s.fields) known += fv.has_value();
  return known < kLlmMinFields ? LlmNeed::kTooFewFields : LlmNeed::kNone;
}

std::string_view LlmNeedName(LlmNeed n) {
  static_assert(kLlmMinFields == 4, "the reason below names the threshold");
  switch (n) {
    case LlmNeed::kNone: return "";
    case LlmNeed::kNoFramework: return "no framework recognised";
    case LlmNeed::kTooFewFields: return "fewer than 4 fields located";
  }
  return "";
}

std::string NormaliseConfig(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    size_t e = text.find_first_of("\r\n", i);
    if (e == std::string_view::npos) e = text.size();
    std::string_view line = text.substr(i, e - i);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    if (!line.empty()) out.append(line).push_back('\n');
    i = e + (e + 1 < text.size() && text[e] == '\r' && text[e + 1] == '\n' ? 2 : 1);
  }
  return out;
}

std::string_view SchemaPrompt() { return kSchemaPrompt; }

std::string SchemaQuestion(std::string_view file_name, std::string_view normalised, size_t max_bytes) {
  std::string q = "file: " + std::string(file_name.substr(0, 200)) + "\n";
  if (normalised.size() > max_bytes) {
    q += "(the first " + std::to_string(max_bytes) + " of " + std::to_string(normalised.size()) + " bytes)\n";
    normalised = normalised.substr(0, max_bytes);
  }
  return q + std::string(normalised);
}

Result<LlmFields> ParseLlmSchema(std::string_view content, const LaunchSchema& located) {
  Result<LlmFields> r = ParseAnswer(content, located);
  if (!r.ok()) return MakeError("llm answer: " + r.error().message);
  return r;
}

size_t MergeLlmFields(LaunchSchema* s, const LlmFields& fields, const std::string& model) {
  size_t added = 0;
  for (size_t i = 0; i < kNumFields; ++i) {
    if (s->fields[i] || !fields[i]) continue;
    FieldValue fv;
    fv.value = *fields[i];
    fv.origin = Origin{s->file, 0, 0, "llm:" + model};
    fv.provenance = Provenance::kLlm;
    fv.confidence = kLlmConfidence;
    fv.note = "the LLM backend's answer (the readers did not find it)";
    s->fields[i] = std::move(fv);
    ++added;
  }
  if (added > 0 && !s->params_estimate) s->params_estimate = EstimateParamsOf(*s, std::nullopt);
  return added;
}

LlmSchemaFiller::LlmSchemaFiller(llm::ChatClient* client, llm::LlmCache* cache, std::string model, size_t max_context_bytes)
    : client_(client), cache_(cache), model_(std::move(model)), max_context_(max_context_bytes) {}

std::string LlmSchemaFiller::Key(const InputFile& file) const { return NormaliseConfig(file.text); }

std::string LlmSchemaFiller::Question(const InputFile& file) const {
  return SchemaQuestion(file.name, NormaliseConfig(file.text), max_context_);
}

LlmOutcome LlmSchemaFiller::Apply(LaunchSchema* s, const std::string& answer) {
  Result<LlmFields> fields = ParseLlmSchema(answer, *s);
  if (!fields.ok()) {
    s->warnings.push_back(Warning{s->file, 0, 0, "llm (" + model_ + "): " + fields.error().message + "; answer rejected"});
    return LlmOutcome::kRejected;
  }
  MergeLlmFields(s, *fields, model_);
  return LlmOutcome::kMerged;
}

LlmOutcome LlmSchemaFiller::NoAnswer(LaunchSchema* s, const Error& e) {
  s->warnings.push_back(Warning{s->file, 0, 0, "llm (" + model_ + "): no answer (" + e.message + "); the readers' schema stands"});
  return LlmOutcome::kNoAnswer;
}

LlmOutcome LlmSchemaFiller::FromCache(LaunchSchema* s, const InputFile& file) {
  if (NeedsLlm(*s) == LlmNeed::kNone) return LlmOutcome::kNotNeeded;
  if (auto kept = cache_->Get(kLlmKind, kSchemaPrompt, Key(file))) {
    ++hits_;
    return Apply(s, *kept);
  }
  return LlmOutcome::kPending;
}

LlmOutcome LlmSchemaFiller::Answered(LaunchSchema* s, const InputFile& file, const Result<std::string>& answer) {
  if (!answer.ok()) return NoAnswer(s, answer.error());
  llm::KeepAnswer(cache_, kLlmKind, kSchemaPrompt, Key(file), *answer);
  return Apply(s, *answer);
}

LlmOutcome LlmSchemaFiller::Fill(LaunchSchema* s, const InputFile& file) {
  const LlmOutcome cached = FromCache(s, file);
  if (cached != LlmOutcome::kPending) return cached;
  const std::string key = Key(file);
  if (client_ == nullptr || failed_.count(key)) return NoAnswer(s, MakeError("the endpoint failed earlier in this run"));
  ++calls_;
  Result<std::string> answer = client_->Complete(std::string(kSchemaPrompt), Question(file));
  if (!answer.ok()) failed_.insert(key);
  return Answered(s, file, answer);
}

}  // namespace orrery::semantic
