#include "logs/llm.h"

#include <nlohmann/json.hpp>

#include "base/json_text.h"

namespace orrery::logs {

using llm::ChatClient;
using llm::LlmCache;

namespace {

using json = nlohmann::json;
using llm::KeepAnswer;
using llm::LlmHash;
using llm::StripFence;

bool SnakeCase(const std::string& s) {
  if (s.empty() || s.size() > 48 || !(s[0] >= 'a' && s[0] <= 'z')) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

constexpr const char* kDiagnoseSystem =
    "You diagnose why a GPU training job failed, from the end of its log (routine lines were removed; '(xN)' "
    "marks a line repeated N times). Answer with one JSON object and nothing else: "
    "{\"category\": \"infrastructure\"|\"framework\"|\"script\", \"subtype\": snake_case cause such as nccl_timeout, "
    "network_ib, nccl_system_error, gpu_xid, gpu_ecc, sigkill, host_oom_kill, storage_io, hang, time_limit, cuda_oom, "
    "illegal_memory_access, cuda_launch_failure, cudnn_error, deepspeed_assertion, fsdp_assertion, segfault, loss_nan, "
    "loss_scale_underflow, version_mismatch, module_not_found, file_not_found, user_code_exception, bad_arguments, "
    "shape_mismatch, syntax_error, node_failure, \"retry\": true if resubmitting unchanged on healthy nodes may "
    "succeed, \"suspect_node\": the host, IP or GPU PCI id the log names as the fault's place or \"\", \"evidence\": "
    "[the deciding log lines, verbatim]}. infrastructure = the cluster, node, GPU, network or storage failed or the "
    "system killed the job; framework = CUDA/NCCL/DeepSpeed/FSDP internals, numerics or installed versions; script = "
    "the user's code, arguments, paths or data. Prefer the root cause over its symptoms.";

constexpr const char* kFormatSystem =
    "A training job printed this progress line; its numbers are listed with indices. Answer with one JSON object and "
    "nothing else, mapping each of step, total_steps, epoch, loss, seconds_per_step to the index of the number that "
    "holds it, or null when the line does not show it, plus \"seconds_unit\": \"s\", \"ms\" or \"per_second\" (a rate "
    "such as it/s). Example: {\"step\": 0, \"total_steps\": 1, \"epoch\": null, \"loss\": 2, \"seconds_per_step\": 3, "
    "\"seconds_unit\": \"ms\"}.";

}  // namespace

Result<Diagnosis> ParseLlmDiagnosis(std::string_view content) {
  Result<json> parsed = ParseJson(StripFence(content), "content");
  if (!parsed.ok()) return MakeError("llm answer: " + parsed.error().message);
  const json j = std::move(*parsed);
  if (!j.is_object()) return MakeError("llm answer: expected a JSON object");
  Diagnosis d;
  d.source = DiagnosisSource::kLlm;
  d.confidence = 0.7;
  if (!j.contains("category") || !j["category"].is_string()) return MakeError("llm answer: 'category': expected a string");
  auto cat = ParseCategory(j["category"].get<std::string>());
  if (!cat) return MakeError("llm answer: 'category': expected infrastructure, framework or script, got \"" +
                             j["category"].get<std::string>().substr(0, 40) + "\"");
  d.category = *cat;
  if (!j.contains("subtype") || !j["subtype"].is_string() || !SnakeCase(j["subtype"].get<std::string>()))
    return MakeError("llm answer: 'subtype': expected a snake_case string");
  d.subtype = j["subtype"].get<std::string>();
  if (!j.contains("retry") || !j["retry"].is_boolean()) return MakeError("llm answer: 'retry': expected true or false");
  d.retry = j["retry"].get<bool>();
  if (j.contains("suspect_node")) {
    if (!j["suspect_node"].is_string()) return MakeError("llm answer: 'suspect_node': expected a string");
    d.suspect_node = j["suspect_node"].get<std::string>().substr(0, 200);
  }
  if (j.contains("evidence")) {
    if (!j["evidence"].is_array()) return MakeError("llm answer: 'evidence': expected an array of strings");
    for (const json& e : j["evidence"]) {
      if (!e.is_string()) return MakeError("llm answer: 'evidence': expected an array of strings");
      if (d.evidence.size() < 8) d.evidence.push_back(e.get<std::string>().substr(0, 400));
    }
  }
  return d;
}

LlmDiagnoser::LlmDiagnoser(const Diagnoser* rules, ChatClient* client, size_t max_context_bytes, LlmCache* cache)
    : rules_(rules), client_(client), max_context_(max_context_bytes), persistent_(cache) {}

// The answer about a compressed log: kept from an earlier process, else asked (and kept).
Result<std::string> LlmDiagnoser::Answer(const std::string& ctx) {
  if (persistent_) {
    if (auto kept = persistent_->Get("diagnose", kDiagnoseSystem, ctx)) {
      ++hits_;
      return *kept;
    }
  }
  ++calls_;
  Result<std::string> answer = client_->Complete(kDiagnoseSystem, ctx);
  if (answer.ok() && persistent_) KeepAnswer(persistent_, "diagnose", kDiagnoseSystem, ctx, *answer);
  return answer;
}

Diagnosis LlmDiagnoser::Diagnose(std::string_view tail) {
  CompressedLog log = Compress(tail, rules_->rules().compress);
  Diagnosis d = rules_->Classify(log);
  if (client_ == nullptr || (d.source == DiagnosisSource::kRules && d.confidence >= rules_->rules().llm_below)) return d;
  std::string ctx = log.Text(max_context_);
  if (ctx.empty()) return d;
  uint64_t key = LlmHash(ctx);
  auto it = cache_.find(key);
  if (it != cache_.end()) {
    ++hits_;
  } else {
    Result<std::string> answer = Answer(ctx);
    Result<Diagnosis> parsed = answer.ok() ? ParseLlmDiagnosis(*answer) : Result<Diagnosis>(answer.error());
    it = cache_.emplace(key, std::move(parsed)).first;
  }
  if (!it->second.ok()) {
    d.note = it->second.error().message + "; the rules' diagnosis stands";
    return d;
  }
  Diagnosis out = *it->second;
  if (out.evidence.empty()) out.evidence = d.evidence;
  out.note = "rules said " + std::string(CategoryName(d.category)) + "/" + d.subtype + " (confidence " +
             std::to_string(d.confidence).substr(0, 4) + ")";
  return out;
}

Result<Plan> ParseLlmPlan(std::string_view content, const MaskedLine& line) {
  Result<json> parsed = ParseJson(StripFence(content), "content");
  if (!parsed.ok()) return MakeError("llm answer: " + parsed.error().message);
  const json j = std::move(*parsed);
  if (!j.is_object()) return MakeError("llm answer: expected a JSON object");
  Plan p;
  p.param_count = line.params.size();
  p.from_oracle = true;
  double scale = 1;
  bool invert = false;
  if (j.contains("seconds_unit") && !j["seconds_unit"].is_null()) {
    if (!j["seconds_unit"].is_string()) return MakeError("llm answer: 'seconds_unit': expected \"s\", \"ms\" or \"per_second\"");
    std::string u = j["seconds_unit"].get<std::string>();
    if (u == "ms") scale = 0.001;
    else if (u == "per_second") invert = true;
    else if (u != "s") return MakeError("llm answer: 'seconds_unit': expected \"s\", \"ms\" or \"per_second\", got \"" + u.substr(0, 20) + "\"");
  }
  struct Key {
    const char* name;
    Field field;
  };
  for (Key k : {Key{"step", Field::kStep}, Key{"total_steps", Field::kTotal}, Key{"epoch", Field::kEpoch},
                Key{"loss", Field::kLoss}, Key{"seconds_per_step", Field::kSeconds}}) {
    if (!j.contains(k.name) || j[k.name].is_null()) continue;
    const json& v = j[k.name];
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= static_cast<int64_t>(line.params.size()))
      return MakeError(std::string("llm answer: '") + k.name + "': expected null or a number index in [0, " +
                       std::to_string(line.params.size()) + ")");
    auto idx = static_cast<uint32_t>(v.get<int64_t>());
    const MaskedParam& mp = line.params[idx];
    bool secs = k.field == Field::kSeconds;
    p.refs.push_back({k.field, idx, secs ? scale : 1.0, secs && invert, 0, mp.token, std::string(line.tokens[mp.token])});
  }
  if (p.refs.empty()) return MakeError("llm answer: no field mapped (the line is not progress)");
  return p;
}

// The answer about a template: kept from an earlier process, else asked (and kept).
std::optional<std::string> LlmFormatOracle::Ask(const MaskedLine& line, const std::string& template_text) {
  if (persistent_)
    if (auto kept = persistent_->Get("format", kFormatSystem, template_text)) return kept;
  std::string user = "line: " + std::string(line.source.substr(0, 2000)) + "\nnumbers:";
  for (size_t i = 0; i < line.params.size() && i < 64; ++i) user += " [" + std::to_string(i) + "] " + std::string(line.params[i].text);
  ++calls_;
  Result<std::string> a = client_->Complete(kFormatSystem, user);
  if (!a.ok()) return std::nullopt;  // a transport failure is not an answer: not kept across processes
  if (persistent_) KeepAnswer(persistent_, "format", kFormatSystem, template_text, *a);
  return *a;
}

std::optional<Plan> LlmFormatOracle::Explain(const MaskedLine& line, const std::string& template_text) {
  auto it = cache_.find(template_text);
  if (it != cache_.end()) return it->second;
  if (line.params.empty()) return std::nullopt;
  std::optional<Plan> plan;
  if (std::optional<std::string> a = Ask(line, template_text)) {
    if (Result<Plan> p = ParseLlmPlan(*a, line); p.ok()) plan = std::move(*p);  // validated against this line
  }
  cache_.emplace(template_text, plan);
  return plan;
}

}  // namespace orrery::logs

