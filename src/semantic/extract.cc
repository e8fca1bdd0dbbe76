#include "semantic/extract.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

#include "semantic/models.h"
#include "semantic/strings.h"

namespace orrery::semantic {

std::string_view FrameworkName(Framework f) {
  switch (f) {
    case Framework::kUnknown: return "";
    case Framework::kMegatronLM: return "Megatron-LM";
    case Framework::kMegatronDeepSpeed: return "Megatron-DeepSpeed";
    case Framework::kDeepSpeed: return "DeepSpeed";
    case Framework::kTorchtitan: return "torchtitan";
    case Framework::kLlamaFactory: return "LLaMA-Factory";
    case Framework::kAxolotl: return "axolotl";
    case Framework::kHfTransformers: return "Hugging Face Transformers";
    case Framework::kHfTrl: return "Hugging Face TRL";
    case Framework::kNeMo: return "NeMo";
    case Framework::kNanoGPT: return "nanoGPT";
    case Framework::kVerl: return "verl";
    case Framework::kOpenRLHF: return "OpenRLHF";
  }
  return "";
}

std::optional<Framework> FrameworkFromName(std::string_view name) {
  for (size_t i = 1; i <= static_cast<size_t>(Framework::kOpenRLHF); ++i)
    if (FrameworkName(static_cast<Framework>(i)) == name) return static_cast<Framework>(i);
  return std::nullopt;
}

std::optional<ParamsEstimate> EstimateParamsOf(const LaunchSchema& s, std::optional<double> vocab) {
  if (auto name = s.text(FieldId::kModelName)) {
    if (const ModelArch* m = FindModel(*name)) return ParamsEstimate{m->params_b, std::string("table: ") + m->label};
  }
  auto layers = s.number(FieldId::kNumLayers), hidden = s.number(FieldId::kHiddenSize);
  if (layers && hidden) {
    const double v = vocab.value_or(50257);
    const std::string vnote = vocab ? "V=" + FormatValue(Value(v)) : "V=50257 (GPT-2 BPE; the file gives none)";
    return ParamsEstimate{FormulaParamsBillion(*layers, *hidden, v),
                          "formula: 12*L*h^2 + V*h, L=" + FormatValue(Value(*layers)) + ", h=" + FormatValue(Value(*hidden)) + ", " + vnote};
  }
  if (auto p = s.number(FieldId::kParamsBillion)) return ParamsEstimate{*p, "the size the name states"};
  return std::nullopt;
}

namespace {

// `key` is `pattern` or ends with ".pattern" (a nested config key or a Hydra override).
bool KeyMatches(std::string_view key, std::string_view pattern) {
  if (key == pattern) return true;
  return key.size() > pattern.size() && EndsWith(key, pattern) && key[key.size() - pattern.size() - 1] == '.';
}

// ---------------------------------------------------------------------------------------
// The key table.

enum class Parse : uint8_t {
  kNumber,       // any number
  kPositive,     // a number > 0 (max_steps -1, save_freq -1, shard degree -1 mean "not set")
  kText,         // non-empty text other than null/None
  kGres,         // gpu:4, gpu:a100:4, a100:8, 4
  kLeadingInt,   // the first integer of "2-4" or "1:4"
  kFlagIsOne,    // a bare flag that means 1 (torchrun --standalone: one node)
  kModelLike,    // a run or job name: counts as the model only when it names a size
};

// Where a rule applies: anywhere, in Python configs only (nanoGPT's bare `batch_size`), or in
// `hf jobs` command lines only (their `--timeout` is the scheduler's limit).
enum class Scope : uint8_t { kAny, kPython, kHfJobs };

struct KeyRule {
  const char* pattern;  // a normalized key (KeyMatches)
  FieldId field;
  int weight;           // 1..100; the most specific key of a field has the highest
  Parse parse;
  Scope scope = Scope::kAny;
};

using F = FieldId;
constexpr KeyRule kRules[] = {
    // model
    {"actor_rollout_ref.model.path", F::kModelName, 95, Parse::kText},
    {"model_name_or_path", F::kModelName, 90, Parse::kText},
    {"base_model", F::kModelName, 90, Parse::kText},
    {"pretrain", F::kModelName, 85, Parse::kText},
    {"model_name", F::kModelName, 85, Parse::kText},
    {"model_path", F::kModelName, 80, Parse::kText},
    {"model_id", F::kModelName, 80, Parse::kText},
    {"run.name", F::kModelName, 55, Parse::kModelLike},
    {"wandb_run_name", F::kModelName, 45, Parse::kModelLike},
    {"sbatch.job_name", F::kModelName, 30, Parse::kModelLike},
    {"sbatch.j", F::kModelName, 30, Parse::kModelLike},
    {"job.description", F::kModelName, 50, Parse::kModelLike},
    {"num_layers", F::kNumLayers, 90, Parse::kPositive},
    {"n_layer", F::kNumLayers, 90, Parse::kPositive},
    {"n_layers", F::kNumLayers, 90, Parse::kPositive},
    {"num_hidden_layers", F::kNumLayers, 90, Parse::kPositive},
    {"nlayers", F::kNumLayers, 80, Parse::kPositive},
    {"hidden_size", F::kHiddenSize, 90, Parse::kPositive},
    {"n_embd", F::kHiddenSize, 90, Parse::kPositive},
    {"d_model", F::kHiddenSize, 80, Parse::kPositive},
    {"nhidden", F::kHiddenSize, 80, Parse::kPositive},
    {"num_attention_heads", F::kNumHeads, 90, Parse::kPositive},
    {"n_head", F::kNumHeads, 90, Parse::kPositive},
    {"n_heads", F::kNumHeads, 90, Parse::kPositive},
    {"num_heads", F::kNumHeads, 85, Parse::kPositive},
    {"nheads", F::kNumHeads, 80, Parse::kPositive},
    // sequence
    {"encoder_seq_length", F::kSeqLen, 95, Parse::kPositive},
    {"seq_length", F::kSeqLen, 90, Parse::kPositive},
    {"seq_len", F::kSeqLen, 90, Parse::kPositive},
    {"cutoff_len", F::kSeqLen, 90, Parse::kPositive},
    {"sequence_len", F::kSeqLen, 90, Parse::kPositive},
    {"data.max_len", F::kSeqLen, 90, Parse::kPositive},
    {"max_seq_length", F::kSeqLen, 85, Parse::kPositive},
    {"max_seq_len", F::kSeqLen, 85, Parse::kPositive},
    {"block_size", F::kSeqLen, 85, Parse::kPositive},
    {"context_length", F::kSeqLen, 70, Parse::kPositive},
    {"max_length", F::kSeqLen, 55, Parse::kPositive},
    {"max_len", F::kSeqLen, 50, Parse::kPositive},
    {"max_position_embeddings", F::kSeqLen, 40, Parse::kPositive},
    // batches
    {"data.train_batch_size", F::kGlobalBatch, 95, Parse::kPositive},
    {"global_batch_size", F::kGlobalBatch, 90, Parse::kPositive},
    {"rollout.batch_size", F::kGlobalBatch, 90, Parse::kPositive},
    {"rollout_batch_size", F::kGlobalBatch, 90, Parse::kPositive},
    {"train_batch_size", F::kGlobalBatch, 85, Parse::kPositive},
    {"gbs", F::kGlobalBatch, 70, Parse::kPositive},
    {"actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu", F::kMicroBatch, 95, Parse::kPositive},
    {"micro_batch_size", F::kMicroBatch, 90, Parse::kPositive},
    {"train_micro_batch_size_per_gpu", F::kMicroBatch, 90, Parse::kPositive},
    {"per_device_train_batch_size", F::kMicroBatch, 90, Parse::kPositive},
    {"micro_train_batch_size", F::kMicroBatch, 90, Parse::kPositive},
    {"local_batch_size", F::kMicroBatch, 90, Parse::kPositive},
    {"training.batch_size", F::kMicroBatch, 80, Parse::kPositive},
    {"mbs", F::kMicroBatch, 70, Parse::kPositive},
    {"batch_size", F::kMicroBatch, 60, Parse::kPositive, Scope::kPython},
    // length
    {"train_iters", F::kTrainSteps, 90, Parse::kPositive},
    {"max_steps", F::kTrainSteps, 90, Parse::kPositive},
    {"training.steps", F::kTrainSteps, 90, Parse::kPositive},
    {"max_iters", F::kTrainSteps, 90, Parse::kPositive},
    {"total_training_steps", F::kTrainSteps, 90, Parse::kPositive},
    {"max_train_steps", F::kTrainSteps, 85, Parse::kPositive},
    {"num_train_steps", F::kTrainSteps, 85, Parse::kPositive},
    {"train_steps", F::kTrainSteps, 85, Parse::kPositive},
    {"train_iter", F::kTrainSteps, 80, Parse::kPositive},
    {"total_steps", F::kTrainSteps, 70, Parse::kPositive},
    {"num_train_epochs", F::kEpochs, 90, Parse::kPositive},
    {"num_epochs", F::kEpochs, 90, Parse::kPositive},
    {"total_epochs", F::kEpochs, 90, Parse::kPositive},
    {"max_epochs", F::kEpochs, 90, Parse::kPositive},
    {"epochs", F::kEpochs, 80, Parse::kPositive},
    {"n_epochs", F::kEpochs, 80, Parse::kPositive},
    // parallelism
    {"actor_rollout_ref.rollout.tensor_model_parallel_size", F::kTp, 99, Parse::kPositive},
    {"vllm_tensor_parallel_size", F::kTp, 98, Parse::kPositive},
    {"vllm.tensor_parallel_size", F::kTp, 98, Parse::kPositive},
    {"tensor_model_parallel_size", F::kTp, 90, Parse::kPositive},
    {"tensor_parallel_degree", F::kTp, 90, Parse::kPositive},
    {"tensor_parallel_size", F::kTp, 85, Parse::kPositive},
    {"tp_size", F::kTp, 70, Parse::kPositive},
    {"tp", F::kTp, 60, Parse::kPositive},
    {"pipeline_model_parallel_size", F::kPp, 90, Parse::kPositive},
    {"pipeline_parallel_degree", F::kPp, 90, Parse::kPositive},
    {"pipeline_parallel_size", F::kPp, 85, Parse::kPositive},
    {"pp_size", F::kPp, 70, Parse::kPositive},
    {"pp", F::kPp, 60, Parse::kPositive},
    {"data_parallel_shard_degree", F::kDp, 90, Parse::kPositive},
    {"data_parallel_size", F::kDp, 85, Parse::kPositive},
    {"dp_size", F::kDp, 60, Parse::kPositive},
    {"zero_optimization.stage", F::kZeroStage, 95, Parse::kNumber},
    {"zero_stage", F::kZeroStage, 90, Parse::kNumber},
    // resources
    {"sbatch.nodes", F::kNodes, 95, Parse::kLeadingInt},
    {"sbatch.n", F::kNodes, 95, Parse::kLeadingInt},
    {"nnodes", F::kNodes, 85, Parse::kLeadingInt},
    {"num_nodes", F::kNodes, 85, Parse::kLeadingInt},
    {"num_machines", F::kNodes, 85, Parse::kLeadingInt},
    {"standalone", F::kNodes, 80, Parse::kFlagIsOne},
    {"nodes", F::kNodes, 70, Parse::kLeadingInt},
    {"sbatch.gres", F::kGpusPerNode, 95, Parse::kGres},
    {"sbatch.gpus_per_node", F::kGpusPerNode, 95, Parse::kGres},
    {"n_gpus_per_node", F::kGpusPerNode, 90, Parse::kPositive},
    {"trainer.devices", F::kGpusPerNode, 90, Parse::kPositive},
    {"nproc_per_node", F::kGpusPerNode, 85, Parse::kLeadingInt},
    {"num_gpus", F::kGpusPerNode, 80, Parse::kPositive},
    {"gpus_per_node", F::kGpusPerNode, 80, Parse::kPositive},
    {"num_gpus_per_node", F::kGpusPerNode, 80, Parse::kPositive},
    {"sbatch.time", F::kTimeLimit, 95, Parse::kText},
    {"sbatch.t", F::kTimeLimit, 95, Parse::kText},
    {"run.time_limit", F::kTimeLimit, 95, Parse::kText},
    {"time_limit", F::kTimeLimit, 70, Parse::kText},
    {"timeout", F::kTimeLimit, 90, Parse::kText, Scope::kHfJobs},
    {"save_interval", F::kCheckpointIntervalSteps, 90, Parse::kPositive},
    {"save_steps", F::kCheckpointIntervalSteps, 90, Parse::kPositive},
    {"save_freq", F::kCheckpointIntervalSteps, 90, Parse::kPositive},
    {"checkpoint.interval", F::kCheckpointIntervalSteps, 90, Parse::kPositive},
    {"every_n_train_steps", F::kCheckpointIntervalSteps, 85, Parse::kPositive},
    {"checkpoint_interval", F::kCheckpointIntervalSteps, 85, Parse::kPositive},
    {"save_every", F::kCheckpointIntervalSteps, 70, Parse::kPositive},
};

double ProvenanceFactor(Provenance p) {
  switch (p) {
    case Provenance::kWritten: return 1.0;
    case Provenance::kVariable: return 0.8;
    case Provenance::kDerived: return 0.85;
    case Provenance::kReferenced: return 0.7;
    case Provenance::kComment: return 0.5;
    case Provenance::kFileName: return 0.4;
    case Provenance::kLlm: return 0.3;
  }
  return 0.4;
}

Provenance ProvenanceOf(const Setting& s) {
  switch (s.kind) {
    case SettingKind::kFlag:
    case SettingKind::kConfigKey:
    case SettingKind::kSbatch: return Provenance::kWritten;
    case SettingKind::kVariable: return Provenance::kVariable;
    case SettingKind::kComment: return Provenance::kComment;
  }
  return Provenance::kWritten;
}

std::optional<double> ParseNumber(std::string_view v) {
  std::string digits;
  for (char c : v) {
    if (c != '_' && c != ',') digits.push_back(c);
  }
  if (digits.empty()) return std::nullopt;
  char* end = nullptr;
  double d = std::strtod(digits.c_str(), &end);
  if (end == nullptr || *end != '\0' || !std::isfinite(d)) return std::nullopt;
  return d;
}

std::optional<Value> ParseValue(const Setting& s, Parse p) {
  const std::string& v = s.value;
  switch (p) {
    case Parse::kNumber: {
      auto n = ParseNumber(v);
      if (!n) return std::nullopt;
      return Value(*n);
    }
    case Parse::kPositive: {
      auto n = ParseNumber(v);
      if (!n || *n <= 0) return std::nullopt;
      return Value(*n);
    }
    case Parse::kText: {
      std::string low = Lower(v);
      if (v.empty() || low == "null" || low == "none" || low == "~" || low == "true" || low == "false") return std::nullopt;
      return Value(v);
    }
    case Parse::kGres: {
      // gpu:4, gpu:a100:4, a100:8, 4 (the GPU entry of a comma-separated list)
      std::string_view g = v;
      size_t gpu = g.find("gpu");
      if (gpu != std::string_view::npos) g = g.substr(gpu);
      g = g.substr(0, g.find(','));
      size_t colon = g.rfind(':');
      auto n = ParseNumber(colon == std::string_view::npos ? g : g.substr(colon + 1));
      if (!n || *n <= 0) return std::nullopt;
      return Value(*n);
    }
    case Parse::kLeadingInt: {
      size_t e = 0;
      while (e < v.size() && std::isdigit(static_cast<unsigned char>(v[e]))) ++e;
      auto n = ParseNumber(std::string_view(v).substr(0, e));
      if (!n || *n <= 0 || (e < v.size() && v[e] != '-' && v[e] != ':')) return std::nullopt;
      return Value(*n);
    }
    case Parse::kFlagIsOne:
      if (v != "true") return std::nullopt;
      return Value(1.0);
    case Parse::kModelLike:
      if (!SizeFromName(v)) return std::nullopt;
      return ParseValue(s, Parse::kText);
  }
  return std::nullopt;
}

// Keys switched off by another key of the same file: torchtitan `checkpoint.enable = false`
// keeps `checkpoint.interval` from meaning anything; HF `save_strategy: epoch|no` likewise
// for `save_steps`.
bool Disabled(const Document& doc, const Setting& s) {
  auto value_of = [&](std::string_view key) -> std::string {
    for (const Setting& o : doc.settings) {
      if (o.key == key) return o.value;
    }
    return "";
  };
  if (KeyMatches(s.key, "checkpoint.interval")) {
    std::string section = s.key.substr(0, s.key.size() - std::string_view("interval").size());
    std::string en = Lower(value_of(section + "enable"));
    if (en.empty()) en = Lower(value_of(section + "enable_checkpoint"));
    return en == "false";
  }
  if (KeyMatches(s.key, "save_steps")) {
    std::string strat = Lower(value_of("save_strategy"));
    if (strat == "no" || strat == "epoch") return true;
    auto n = ParseNumber(s.value);
    return n && *n < 1;  // a fraction of the run, not a step interval
  }
  return false;
}

struct Candidate {
  FieldValue fv;
  double score = 0;
  size_t order = 0;
};

class Builder {
 public:
  explicit Builder(const Document& doc) : doc_(doc) {
    schema_.file = doc.file;
    schema_.warnings = doc.warnings;
  }

  LaunchSchema Run() {
    CollectSettings();
    CollectModelMentions();
    framework_ = DetectFramework(doc_);
    Choose();
    SetFramework();
    Derive();
    schema_.referenced_files = ReferencedFiles(doc_);
    return std::move(schema_);
  }

 private:
  Origin OriginOf(const Setting& s) const {
    Origin o;
    o.file = s.file < doc_.files.size() ? doc_.files[s.file] : doc_.file;
    o.line = s.loc.line;
    o.col = s.loc.col;
    o.key = s.raw_key;
    return o;
  }

  bool InScope(Scope scope) const {
    switch (scope) {
      case Scope::kAny: return true;
      case Scope::kPython: return doc_.format == Format::kPython;
      case Scope::kHfJobs: {
        auto has = [&](std::string_view p) { return std::find(doc_.programs.begin(), doc_.programs.end(), p) != doc_.programs.end(); };
        return (has("hf") || has("huggingface-cli")) && has("jobs");
      }
    }
    return false;
  }

  void Offer(FieldId f, Value v, Origin o, Provenance p, double weight, std::string note = "") {
    Candidate c;
    c.fv.value = std::move(v);
    c.fv.origin = std::move(o);
    c.fv.provenance = p;
    c.score = weight * ProvenanceFactor(p);
    c.fv.confidence = std::min(1.0, c.score / 100.0);
    c.fv.note = std::move(note);
    c.order = order_++;
    candidates_[static_cast<size_t>(f)].push_back(std::move(c));
  }

  void CollectSettings() {
    for (const Setting& s : doc_.settings) {
      if (s.unresolved || Disabled(doc_, s)) continue;
      for (const KeyRule& r : kRules) {
        if (!InScope(r.scope)) continue;
        if (!KeyMatches(s.key, r.pattern)) continue;
        auto v = ParseValue(s, r.parse);
        if (!v) continue;
        double w = r.weight * (s.file > 0 ? 0.95 : 1.0);  // a referenced file yields to the script
        Offer(r.field, std::move(*v), OriginOf(s), ProvenanceOf(s), w);
        break;  // one field per setting: the first (most specific) matching rule
      }
    }
    ComposeTorchtitanModel();
  }

  // torchtitan names a model by `model.name` + `model.flavor` ("llama3" "70B").
  void ComposeTorchtitanModel() {
    const Setting* name = nullptr;
    const Setting* flavor = nullptr;
    for (const Setting& s : doc_.settings) {
      if (s.key == "model.name") name = &s;
      if (s.key == "model.flavor") flavor = &s;
    }
    if (name == nullptr || flavor == nullptr) return;
    Offer(F::kModelName, Value(name->value + " " + flavor->value), OriginOf(*flavor), Provenance::kWritten, 80,
          "model.name + model.flavor");
  }

  // A full-line comment that mentions a model ("GPT-2 (124M)"), or states a size
  // ("Runs the 175B parameter model"); and the file's own name.
  // "# base_model: meta-llama/Llama-2-7b" or "# --model x": a setting switched off, not prose.
  static bool IsCommentedOutSetting(std::string_view text) {
    text = TrimView(text);
    if (text.rfind("--", 0) == 0) return true;
    size_t n = 0;
    while (n < text.size() && (std::isalnum(static_cast<unsigned char>(text[n])) || text[n] == '_' || text[n] == '.' || text[n] == '-')) ++n;
    std::string_view rest = TrimView(text.substr(n));
    return n > 0 && !rest.empty() && (rest[0] == ':' || rest[0] == '=') && rest.size() > 1;
  }

  void CollectModelMentions() {
    for (const Document::Note& c : doc_.comments) {
      if (IsCommentedOutSetting(c.text)) continue;
      Origin o{doc_.file, c.loc.line, c.loc.col, "comment"};
      // Only a mention with a size names this job's model ("llama model" is a family).
      if (auto m = FindModelMention(c.text); m && SizeFromName(*m)) Offer(F::kModelName, Value(*m), o, Provenance::kComment, 80);
      size_t p = c.text.find(" param");
      if (p != std::string::npos) {
        std::string before = c.text.substr(p >= 12 ? p - 12 : 0, p >= 12 ? 12 : p);
        std::string cleaned;
        for (char ch : before) cleaned.push_back(ch == '"' || ch == '\'' ? ' ' : ch);
        if (auto size = SizeFromName(cleaned)) stated_sizes_.push_back({*size, o, Provenance::kComment});
      }
    }
    std::string stem = doc_.file.substr(doc_.file.find_last_of('/') + 1);
    stem = stem.substr(0, stem.find('.'));
    if (auto m = FindModelMention(stem); m && SizeFromName(*m)) {
      Offer(F::kModelName, Value(*m), Origin{doc_.file, 0, 0, "file name"}, Provenance::kFileName, 80);
    }
  }

  void Choose() {
    for (size_t i = 0; i < kNumFields; ++i) {
      auto& cs = candidates_[i];
      if (cs.empty()) continue;
      auto best = std::max_element(cs.begin(), cs.end(), [](const Candidate& a, const Candidate& b) {
        return a.score != b.score ? a.score < b.score : a.order < b.order;  // later wins a tie
      });
      schema_.fields[i] = best->fv;
    }
  }

  void SetFramework() {
    if (framework_ == Framework::kUnknown) return;
    std::string name(FrameworkName(framework_));
    if (framework_ == Framework::kHfTrl || framework_ == Framework::kHfTransformers) {
      for (const std::string& p : doc_.programs) {
        if (p == "accelerate") name += " (accelerate launch)";
        if (p == "accelerate" || p == "torchrun" || p == "deepspeed") break;
      }
    }
    if (framework_ == Framework::kNeMo && HasKeyPrefix("run.")) name += " (NeMo-Framework-Launcher)";
    FieldValue fv;
    fv.value = name;
    fv.origin = Origin{doc_.file, 0, 0, "programs and keys"};
    fv.provenance = Provenance::kDerived;
    fv.confidence = 0.8;
    fv.note = "identified from the programs launched and the keys used";
    schema_.get(F::kFramework) = fv;
  }

  bool HasKeyPrefix(std::string_view prefix) const {
    for (const Setting& s : doc_.settings) {
      if (s.key.rfind(prefix, 0) == 0) return true;
    }
    return false;
  }

  const Setting* Find(std::initializer_list<std::string_view> patterns) const {
    for (std::string_view p : patterns) {
      const Setting* found = nullptr;
      for (const Setting& s : doc_.settings) {
        if (!s.unresolved && KeyMatches(s.key, p) && ParseNumber(s.value)) found = &s;
      }
      if (found) return found;
    }
    return nullptr;
  }

  std::optional<double> Num(FieldId f) const { return schema_.number(f); }

  void SetDerived(FieldId f, double v, std::string note, double confidence) {
    FieldValue fv;
    fv.value = v;
    fv.origin = Origin{doc_.file, 0, 0, "derived"};
    fv.provenance = Provenance::kDerived;
    fv.confidence = confidence;
    fv.note = std::move(note);
    schema_.get(f) = fv;
  }

  static std::string Fmt(double v) { return FormatValue(Value(v)); }

  void Derive() {
    DeriveGpusPerNode();
    DeriveDp();
    DeriveGlobalBatch();
    DeriveRlSeqLen();
    DeriveZeroFromFileName();
    DeriveParams();
  }

  void DeriveGpusPerNode() {
    if (Num(F::kGpusPerNode)) return;
    if (const Setting* per_task = Find({"sbatch.gpus_per_task"})) {
      double g = *ParseNumber(per_task->value);
      double tasks = 0;
      if (const Setting* tpn = Find({"sbatch.ntasks_per_node"})) tasks = *ParseNumber(tpn->value);
      else if (const Setting* nt = Find({"sbatch.ntasks"}); nt && Num(F::kNodes)) tasks = *ParseNumber(nt->value) / *Num(F::kNodes);
      if (tasks >= 1 && std::floor(tasks) == tasks) {
        SetDerived(F::kGpusPerNode, g * tasks, "#SBATCH --gpus-per-task " + Fmt(g) + " x " + Fmt(tasks) + " tasks per node", 0.85);
        return;
      }
    }
    if (const Setting* total = Find({"sbatch.gpus", "sbatch.g"}); total && Num(F::kNodes)) {
      double g = *ParseNumber(total->value), nodes = *Num(F::kNodes);
      if (g > 0 && std::fmod(g, nodes) == 0) {
        SetDerived(F::kGpusPerNode, g / nodes, "#SBATCH --gpus " + Fmt(g) + " / " + Fmt(nodes) + " nodes", 0.85);
        return;
      }
    }
    if (const Setting* procs = Find({"num_processes"})) {
      double total = *ParseNumber(procs->value);
      auto nodes = Num(F::kNodes);
      std::string machines = nodes ? Fmt(*nodes) + " machines" : "1 machine (accelerate's default)";
      if (total > 0 && std::fmod(total, nodes.value_or(1)) == 0)
        SetDerived(F::kGpusPerNode, total / nodes.value_or(1), "accelerate --num_processes " + Fmt(total) + " / " + machines, 0.7);
    }
  }

  // Frameworks whose only parallelism is data parallelism (DDP, FSDP or ZeRO sharding).
  // RL trainers are not among them, nor can dp be derived for them: their `tp` is the
  // rollout engine's, not the trainer's.
  bool DataParallelOnly() const {
    switch (framework_) {
      case Framework::kNanoGPT:
      case Framework::kHfTransformers:
      case Framework::kHfTrl:
      case Framework::kLlamaFactory:
      case Framework::kAxolotl:
      case Framework::kDeepSpeed: return true;
      case Framework::kUnknown:
      case Framework::kMegatronLM:
      case Framework::kMegatronDeepSpeed:
      case Framework::kTorchtitan:
      case Framework::kNeMo:
      case Framework::kVerl:
      case Framework::kOpenRLHF: return false;
    }
    return false;
  }

  void DeriveDp() {
    if (Num(F::kDp)) return;
    auto nodes = Num(F::kNodes), gpn = Num(F::kGpusPerNode);
    if (!gpn) return;
    if (!nodes && !Find({"num_processes"})) return;  // accelerate's process count is the whole world
    nodes = nodes.value_or(1);
    if (framework_ == Framework::kVerl || framework_ == Framework::kOpenRLHF) return;
    auto tp = Num(F::kTp), pp = Num(F::kPp);
    if (!tp && !pp && !DataParallelOnly()) return;
    double cp = 1;
    if (const Setting* c = Find({"context_parallel_size", "context_parallel_degree"})) cp = *ParseNumber(c->value);
    double world = *nodes * *gpn, model = tp.value_or(1) * pp.value_or(1) * cp;
    if (model <= 0 || world < model || std::fmod(world, model) != 0) {
      schema_.warnings.push_back(Warning{doc_.file, 0, 0,
                                         Fmt(world) + " GPUs cannot hold TP x PP x CP = " + Fmt(model) + ": dp left unknown"});
      return;
    }
    SetDerived(F::kDp, world / model,
               Fmt(*nodes) + " nodes x " + Fmt(*gpn) + " GPUs / (TP " + Fmt(tp.value_or(1)) + " x PP " + Fmt(pp.value_or(1)) +
                   " x CP " + Fmt(cp) + ")",
               0.85);
  }

  void DeriveGlobalBatch() {
    if (Num(F::kGlobalBatch)) return;
    auto micro = Num(F::kMicroBatch);
    const Setting* ga = Find({"gradient_accumulation_steps", "accumulate_grad_batches", "gas"});
    if (!micro || !ga) return;
    double g = *ParseNumber(ga->value);
    if (framework_ == Framework::kNanoGPT) {  // nanoGPT's count is the total over all ranks
      SetDerived(F::kGlobalBatch, *micro * g, "batch_size " + Fmt(*micro) + " x gradient_accumulation_steps " + Fmt(g) +
                                                   " (nanoGPT divides it by the world size)", 0.8);
      return;
    }
    auto dp = Num(F::kDp);
    if (!dp) return;
    SetDerived(F::kGlobalBatch, *micro * g * *dp,
               "micro " + Fmt(*micro) + " x grad. accumulation " + Fmt(g) + " x dp " + Fmt(*dp), 0.8);
  }

  // RL: the sequence is the prompt plus the response.
  void DeriveRlSeqLen() {
    if (Num(F::kSeqLen)) return;
    const Setting* prompt = Find({"max_prompt_length", "prompt_max_len"});
    const Setting* response = Find({"max_response_length", "generate_max_len"});
    if (!prompt || !response) return;
    double p = *ParseNumber(prompt->value), r = *ParseNumber(response->value);
    SetDerived(F::kSeqLen, p + r, "prompt " + Fmt(p) + " + response " + Fmt(r), 0.8);
  }

  // ds_z3_config.json, deepspeed_zero2.yaml, zero3_offload.json: the stage is in the name.
  void DeriveZeroFromFileName() {
    if (Num(F::kZeroStage)) return;
    for (const Setting& s : doc_.settings) {
      if (!IsConfigReference(s.key)) continue;
      std::string base = Lower(std::string_view(s.value).substr(s.value.find_last_of('/') + 1));
      for (size_t i = 0; i < base.size(); ++i) {
        if (base[i] != 'z') continue;
        size_t j = i + 1;
        if (base.compare(i, 4, "zero") == 0) j = i + 4;
        while (j < base.size() && (base[j] == '_' || base[j] == '-')) ++j;
        if (base.compare(j, 5, "stage") == 0) j += 5;
        bool word_start = i == 0 || !std::isalpha(static_cast<unsigned char>(base[i - 1]));
        if (word_start && j < base.size() && base[j] >= '0' && base[j] <= '3' &&
            (j + 1 == base.size() || !std::isdigit(static_cast<unsigned char>(base[j + 1])))) {
          FieldValue fv;
          fv.value = static_cast<double>(base[j] - '0');
          fv.origin = OriginOf(s);
          fv.provenance = Provenance::kReferenced;
          fv.confidence = 0.7;
          fv.note = "the referenced file's name " + base + " gives the stage";
          schema_.get(F::kZeroStage) = fv;
          return;
        }
      }
    }
  }

  void DeriveParams() {
    if (!Num(F::kParamsBillion)) {
      if (auto name = schema_.text(F::kModelName); name && SizeFromName(*name)) {
        FieldValue fv = *schema_.get(F::kModelName);
        fv.value = *SizeFromName(*name);
        fv.note = "the size the model name states";
        schema_.get(F::kParamsBillion) = fv;
      } else if (!stated_sizes_.empty()) {
        const StatedSize& s = stated_sizes_.front();
        FieldValue fv;
        fv.value = s.billions;
        fv.origin = s.origin;
        fv.provenance = s.provenance;
        fv.confidence = 0.5;
        fv.note = "a comment states the size";
        schema_.get(F::kParamsBillion) = fv;
      }
    }
    EstimateParams();
  }

  void EstimateParams() {
    std::optional<double> vocab;
    if (const Setting* v = Find({"padded_vocab_size", "vocab_size"})) vocab = *ParseNumber(v->value);
    schema_.params_estimate = EstimateParamsOf(schema_, vocab);
  }

  static bool IsConfigReference(std::string_view key) {
    return key == "deepspeed" || key == "deepspeed_config" || key == "config_file" || key == "ds_config" ||
           key == "deepspeed_config_file" || EndsWith(key, ".deepspeed") || EndsWith(key, "config_file");
  }

  struct StatedSize {
    double billions;
    Origin origin;
    Provenance provenance;
  };

  const Document& doc_;
  LaunchSchema schema_;
  Framework framework_ = Framework::kUnknown;
  std::array<std::vector<Candidate>, kNumFields> candidates_;
  std::vector<StatedSize> stated_sizes_;
  size_t order_ = 0;
};

// ---------------------------------------------------------------------------------------
// Framework identification.

enum class Evidence : uint8_t { kProgram, kKey, kKeyPrefix, kValuePrefix };

struct FrameworkRule {
  Framework fw;
  Evidence what;
  const char* needle;
  int score;
  Format only;  // kShell means "any format" for program evidence
  bool any_format;
};

constexpr FrameworkRule kFrameworkRules[] = {
    {Framework::kMegatronLM, Evidence::kProgram, "pretrain_gpt", 6, Format::kShell, true},
    {Framework::kMegatronLM, Evidence::kProgram, "pretrain_bert", 6, Format::kShell, true},
    {Framework::kMegatronLM, Evidence::kProgram, "pretrain_t5", 6, Format::kShell, true},
    {Framework::kMegatronLM, Evidence::kProgram, "pretrain_llama", 6, Format::kShell, true},
    {Framework::kMegatronLM, Evidence::kProgram, "pretrain_mamba", 6, Format::kShell, true},
    {Framework::kMegatronLM, Evidence::kProgram, "megatron", 4, Format::kShell, true},
    {Framework::kMegatronLM, Evidence::kKey, "tensor_model_parallel_size", 2, Format::kShell, false},
    {Framework::kMegatronLM, Evidence::kKey, "num_layers", 1, Format::kShell, false},
    {Framework::kMegatronLM, Evidence::kKey, "micro_batch_size", 1, Format::kShell, false},
    {Framework::kDeepSpeed, Evidence::kKey, "train_micro_batch_size_per_gpu", 3, Format::kJson, false},
    {Framework::kDeepSpeed, Evidence::kKey, "train_batch_size", 3, Format::kJson, false},
    {Framework::kDeepSpeed, Evidence::kKeyPrefix, "zero_optimization.", 3, Format::kJson, false},
    {Framework::kDeepSpeed, Evidence::kKey, "gradient_accumulation_steps", 2, Format::kJson, false},
    {Framework::kDeepSpeed, Evidence::kKey, "steps_per_print", 2, Format::kJson, false},
    {Framework::kDeepSpeed, Evidence::kKey, "wall_clock_breakdown", 2, Format::kJson, false},
    {Framework::kDeepSpeed, Evidence::kProgram, "deepspeed", 2, Format::kShell, true},
    {Framework::kTorchtitan, Evidence::kProgram, "torchtitan", 8, Format::kShell, true},
    {Framework::kTorchtitan, Evidence::kKey, "model.flavor", 4, Format::kToml, false},
    {Framework::kTorchtitan, Evidence::kKeyPrefix, "parallelism.", 3, Format::kToml, false},
    {Framework::kTorchtitan, Evidence::kKey, "training.local_batch_size", 2, Format::kToml, false},
    {Framework::kTorchtitan, Evidence::kKey, "job.dump_folder", 2, Format::kToml, false},
    {Framework::kLlamaFactory, Evidence::kProgram, "llamafactory", 8, Format::kShell, true},
    {Framework::kLlamaFactory, Evidence::kKey, "finetuning_type", 4, Format::kShell, true},
    {Framework::kLlamaFactory, Evidence::kKey, "cutoff_len", 3, Format::kShell, true},
    {Framework::kLlamaFactory, Evidence::kKey, "template", 1, Format::kShell, true},
    {Framework::kLlamaFactory, Evidence::kKey, "stage", 1, Format::kShell, true},
    {Framework::kLlamaFactory, Evidence::kKey, "infer_backend", 3, Format::kShell, true},
    {Framework::kAxolotl, Evidence::kProgram, "axolotl", 8, Format::kShell, true},
    {Framework::kAxolotl, Evidence::kKey, "sequence_len", 3, Format::kShell, true},
    {Framework::kAxolotl, Evidence::kKey, "sample_packing", 3, Format::kShell, true},
    {Framework::kAxolotl, Evidence::kKey, "base_model", 2, Format::kShell, true},
    {Framework::kAxolotl, Evidence::kKey, "saves_per_epoch", 2, Format::kShell, true},
    {Framework::kAxolotl, Evidence::kKey, "evals_per_epoch", 2, Format::kShell, true},
    {Framework::kAxolotl, Evidence::kKey, "lora_r", 1, Format::kShell, true},
    {Framework::kNeMo, Evidence::kKeyPrefix, "exp_manager.", 4, Format::kShell, true},
    {Framework::kNeMo, Evidence::kKey, "trainer.devices", 2, Format::kShell, true},
    {Framework::kNeMo, Evidence::kKey, "trainer.num_nodes", 2, Format::kShell, true},
    {Framework::kNeMo, Evidence::kKey, "model.tensor_model_parallel_size", 2, Format::kShell, true},
    {Framework::kNeMo, Evidence::kProgram, "nemo", 5, Format::kShell, true},
    {Framework::kNanoGPT, Evidence::kKey, "block_size", 2, Format::kPython, false},
    {Framework::kNanoGPT, Evidence::kKey, "n_layer", 2, Format::kPython, false},
    {Framework::kNanoGPT, Evidence::kKey, "n_embd", 2, Format::kPython, false},
    {Framework::kNanoGPT, Evidence::kKey, "max_iters", 2, Format::kPython, false},
    {Framework::kNanoGPT, Evidence::kKey, "eval_interval", 1, Format::kPython, false},
    {Framework::kNanoGPT, Evidence::kKey, "always_save_checkpoint", 2, Format::kPython, false},
    {Framework::kNanoGPT, Evidence::kKey, "init_from", 2, Format::kPython, false},
    {Framework::kNanoGPT, Evidence::kKey, "gradient_accumulation_steps", 1, Format::kPython, false},
    {Framework::kNanoGPT, Evidence::kProgram, "nanogpt", 6, Format::kShell, true},
    {Framework::kVerl, Evidence::kProgram, "verl.", 8, Format::kShell, true},
    {Framework::kVerl, Evidence::kKeyPrefix, "actor_rollout_ref.", 5, Format::kShell, true},
    {Framework::kOpenRLHF, Evidence::kProgram, "openrlhf", 8, Format::kShell, true},
    {Framework::kHfTrl, Evidence::kProgram, "trl", 4, Format::kShell, true},
    {Framework::kHfTrl, Evidence::kProgram, "examples/scripts/", 3, Format::kShell, true},
    {Framework::kHfTrl, Evidence::kValuePrefix, "trl-lib/", 3, Format::kShell, true},
    {Framework::kHfTransformers, Evidence::kKey, "per_device_train_batch_size", 2, Format::kShell, true},
    {Framework::kHfTransformers, Evidence::kKey, "model_name_or_path", 1, Format::kShell, true},
    {Framework::kHfTransformers, Evidence::kKey, "num_train_epochs", 1, Format::kShell, true},
    {Framework::kHfTransformers, Evidence::kKey, "output_dir", 1, Format::kShell, true},
    {Framework::kHfTransformers, Evidence::kKey, "gradient_accumulation_steps", 1, Format::kShell, true},
    {Framework::kHfTransformers, Evidence::kProgram, "run_*.py", 3, Format::kShell, true},
    {Framework::kHfTransformers, Evidence::kProgram, "examples/pytorch/", 3, Format::kShell, true},
};
constexpr size_t kNumFrameworks = static_cast<size_t>(Framework::kOpenRLHF) + 1;

// A substring, except two patterns: "trl" as a path component or module ("trl",
// "trl/scripts/sft.py", "trl.scripts"), and "run_*.py" (the Transformers example scripts:
// run_clm.py, run_glue.py, ...) as a base name.
bool ProgramMatches(std::string_view program, std::string_view needle) {
  if (needle == "run_*.py") {
    std::string_view base = program.substr(program.find_last_of('/') + 1);
    return base.rfind("run_", 0) == 0 && EndsWith(base, ".py");
  }
  if (needle != "trl") return program.find(needle) != std::string_view::npos;
  for (size_t p = program.find("trl"); p != std::string_view::npos; p = program.find("trl", p + 1)) {
    bool start = p == 0 || program[p - 1] == '/';
    bool end = p + 3 == program.size() || program[p + 3] == '/' || program[p + 3] == '.';
    if (start && end) return true;
  }
  return false;
}

bool RuleHolds(const Document& doc, const FrameworkRule& r) {
  switch (r.what) {
    case Evidence::kProgram:
      return std::any_of(doc.programs.begin(), doc.programs.end(), [&](const std::string& p) { return ProgramMatches(p, r.needle); });
    case Evidence::kKey:
      return std::any_of(doc.settings.begin(), doc.settings.end(), [&](const Setting& s) {
        return s.kind != SettingKind::kVariable && (s.key == r.needle || KeyMatches(s.key, r.needle));
      });
    case Evidence::kKeyPrefix:
      return std::any_of(doc.settings.begin(), doc.settings.end(), [&](const Setting& s) { return s.key.rfind(r.needle, 0) == 0; });
    case Evidence::kValuePrefix:
      return std::any_of(doc.settings.begin(), doc.settings.end(), [&](const Setting& s) { return s.value.rfind(r.needle, 0) == 0; });
  }
  return false;
}

bool UsesDeepSpeed(const Document& doc) {
  for (const Setting& s : doc.settings) {
    if (s.kind == SettingKind::kVariable) continue;
    if (s.key == "deepspeed" || s.key == "deepspeed_config" || s.key == "zero_stage") return true;
  }
  for (const std::string& p : doc.programs) {
    if (p.find("megatron-deepspeed") != std::string::npos || p.find("megatron_deepspeed") != std::string::npos) return true;
  }
  return false;
}

}  // namespace

Framework DetectFramework(const Document& doc) {
  std::array<int, kNumFrameworks> score{};
  for (const FrameworkRule& r : kFrameworkRules) {
    if (!r.any_format && r.only != doc.format) continue;
    if (RuleHolds(doc, r)) score[static_cast<size_t>(r.fw)] += r.score;
  }
  auto idx = [](Framework f) { return static_cast<size_t>(f); };
  if (score[idx(Framework::kHfTrl)] > 0) score[idx(Framework::kHfTrl)] += score[idx(Framework::kHfTransformers)];
  size_t best = 0;
  for (size_t i = 1; i < kNumFrameworks; ++i) {
    if (score[i] > score[best]) best = i;
  }
  if (score[best] < 2) return Framework::kUnknown;
  Framework f = static_cast<Framework>(best);
  if (f == Framework::kMegatronLM && UsesDeepSpeed(doc)) return Framework::kMegatronDeepSpeed;
  return f;
}

std::vector<std::string> ReferencedFiles(const Document& doc) {
  std::vector<std::string> out;
  for (const Setting& s : doc.settings) {
    if (s.unresolved || s.file != 0) continue;
    std::string_view v = s.value;
    if (IsConfigPath(v) && std::find(out.begin(), out.end(), s.value) == out.end()) out.push_back(s.value);
  }
  return out;
}

LaunchSchema Extract(const Document& doc) { return Builder(doc).Run(); }

}  // namespace orrery::semantic
