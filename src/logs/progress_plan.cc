// Plan learning: what each number of a progress line means, from the words around it.
// Runs once per Drain template (ProgressTracker caches the plan), so clarity beats speed.
#include <algorithm>
#include <cstring>

#include "logs/progress.h"

namespace orrery::logs {

namespace {

bool Has(std::string_view s, std::string_view x) { return s.find(x) != std::string_view::npos; }
bool EndsWith(std::string_view s, std::string_view x) { return s.size() >= x.size() && s.substr(s.size() - x.size()) == x; }
bool StartsWith(std::string_view s, std::string_view x) { return s.substr(0, x.size()) == x; }
bool IsAlphaC(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// The words printed before the number at `off`: "elapsed time per iteration (ms)",
// "lm loss", "train/loss", "'epoch'" -> "epoch". Lowercase, single spaces, at most 48 bytes.
std::string KeyBefore(std::string_view s, size_t off) {
  size_t i = off;
  for (int skipped = 0; i > 0 && skipped < 8 && std::strchr(" \t:='\"[", s[i - 1]) != nullptr && s[i - 1] != 0; ++skipped) --i;
  size_t end = i;
  while (i > 0 && end - i < 48) {
    char c = s[i - 1];
    if (IsAlphaC(c) || c == '_' || c == '/' || c == '-' || c == '.' || c == ' ' || c == '(' || c == ')') --i;
    else break;
  }
  std::string_view k = s.substr(i, end - i);
  // A key ends at a field separator: " - " (verl, Python logging) or a run of spaces.
  for (std::string_view sep : {" - ", "  "}) {
    size_t p = k.rfind(sep);
    if (p != std::string_view::npos) k.remove_prefix(p + sep.size());
  }
  while (!k.empty() && std::strchr(" -./()", k.front()) != nullptr) k.remove_prefix(1);
  while (!k.empty() && k.back() == ' ') k.remove_suffix(1);
  std::string out;
  for (char c : k) {
    if (c == ' ' && !out.empty() && out.back() == ' ') continue;
    out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  }
  return out;
}

size_t Words(std::string_view k) { return k.empty() ? 0 : static_cast<size_t>(std::count(k.begin(), k.end(), ' ')) + 1; }

std::string_view LastSegment(std::string_view k) {
  size_t p = k.find_last_of(" /");
  return p == std::string_view::npos ? k : k.substr(p + 1);
}

bool IsEvalKey(std::string_view k) {
  for (std::string_view p : {"val", "eval", "valid", "test"}) {
    if (StartsWith(k, p) && (k.size() == p.size() || !IsAlphaC(k[p.size()]) || p == "valid" || p == "eval")) return true;
  }
  return Has(k, "val_") || Has(k, "val/") || Has(k, "val-") || Has(k, "eval_") || Has(k, "valid_") || Has(k, "val loss");
}

// Loss keys: 0 = the training loss by name, 1 = plain "loss", 2 = another loss; -1 = none.
int LossRank(std::string_view k) {
  std::string_view last = LastSegment(k);
  for (std::string_view suf : {"_step", "_epoch"})
    if (EndsWith(last, suf)) last.remove_suffix(suf.size());
  if (!EndsWith(last, "loss") || IsEvalKey(k)) return -1;
  for (std::string_view t : {"reduced_train_loss", "lm loss", "train/loss", "train_loss", "training_loss", "train loss",
                             "loss/train", "train/lm_loss"})
    if (Has(k, t)) return 0;
  if (last == "loss") return 1;
  for (std::string_view x : {"nll", "aux", "z_loss", "kl", "moe", "balanc", "entropy", "vf_"})
    if (Has(last, x)) return -1;
  return 2;
}

// Step keys: 0 = a global counter by name, 1 = "step"/"iteration"/"iter"; -1 = none.
int StepRank(std::string_view k) {
  if (Words(k) > 3) return -1;
  for (std::string_view x : {"time", "total", "max", "skip", "nan", "warmup", "sample", "token", "consumed", "save",
                             "ckpt", "checkpoint", "log", "eval", "val", "per", "rate"})
    if (Has(k, x)) return -1;
  std::string_view last = LastSegment(k);
  if (last == "global_step" || last == "num_updates" || last == "global step" || k == "global step") return 0;
  if (last == "step" || last == "iteration" || last == "iter" || last == "it" || last == "update") return 1;
  return -1;
}

bool IsTotalKey(std::string_view k) {
  for (std::string_view t : {"total number of steps", "total optimization steps", "max_steps", "train_iters", "total_steps",
                             "total steps", "total_training_steps", "total iterations", "max_iters", "max iters",
                             "num_training_steps", "total_iters", "total training steps", "max steps"})
    if (EndsWith(k, t)) return true;
  return false;
}

bool IsEpochKey(std::string_view k) {
  return Words(k) <= 2 && LastSegment(k) == "epoch" && !Has(k, "step") && !Has(k, "number") && !Has(k, "num");
}

// Seconds per step from a key (and the unit after the number): scale, or 0 if none.
double SecondsScale(std::string_view k, std::string_view suffix, bool* invert) {
  *invert = false;
  bool ms_key = Has(k, "(ms)") || Has(k, "_ms") || Has(k, " ms") || Has(k, "in ms");
  for (std::string_view t : {"time per iteration", "time_per_iteration", "step_timing", "timing_s/step", "time_per_step",
                             "step_time", "time/step", "iter_time", "sec/step", "seconds_per_step", "time/iter",
                             "time_per_iter", "iteration_time", "step time", "iter time", "time per step"})
    if (Has(k, t)) return ms_key || StartsWith(suffix, "ms") ? 0.001 : 1.0;
  if (LastSegment(k) == "time" && Words(k) <= 2) {
    if (StartsWith(suffix, "ms")) return 0.001;
    if (StartsWith(suffix, "s") && (suffix.size() == 1 || !IsAlphaC(suffix[1]))) return 1.0;
    // "time: 0.4123  data_time: 0.0012" (detectron2, MMEngine): seconds without a unit.
    if (k == "time" && (suffix.empty() || suffix[0] == ' ' || suffix[0] == ',' || suffix[0] == '|')) return 1.0;
  }
  if (k == "ups" || EndsWith(k, " ups")) {
    *invert = true;
    return 1.0;
  }
  return 0;
}

// "  40%||  40/100 [...]": a tqdm bar with nothing before its percentage.
bool BareBar(std::string_view s) {
  size_t p = s.find("%||");
  if (p == std::string_view::npos) return false;
  size_t q = p;
  while (q > 0 && s[q - 1] >= '0' && s[q - 1] <= '9') --q;
  return q < p && s.substr(0, q).find_first_not_of(' ') == std::string_view::npos;
}

Framework DetectFramework(std::string_view s) {
  if (Has(s, "reduced_train_loss") || Has(s, "train_step_timing") || (Has(s, "Training epoch") && Has(s, "iteration")))
    return Framework::kNemo;
  if (Has(s, "consumed samples") || Has(s, "elapsed time per iteration") || Has(s, "lm loss")) return Framework::kMegatron;
  if (Has(s, "[titan]") || (Has(s, "tflops") && Has(s, "mfu"))) return Framework::kTorchtitan;
  if (Has(s, "num_updates") || (Has(s, "| epoch ") && (Has(s, "ups=") || Has(s, "wps=")))) return Framework::kFairseq;
  if (Has(s, "training/global_step") || Has(s, "timing_s/") || Has(s, " - train/loss") || Has(s, "Training Progress") ||
      (Has(s, "step:") && Has(s, " - ")))
    return Framework::kVerl;
  if (Has(s, "RunningAvgSamplesPerSec") || Has(s, "[deepspeed]") || Has(s, "] step=")) return Framework::kDeepSpeed;
  if (Has(s, "iter ") && Has(s, ": loss ")) return Framework::kNanoGpt;  // "iter 12: loss 3.1, time 560.1ms"
  if (Has(s, "{'loss'") || Has(s, "'epoch':") || Has(s, "'learning_rate'") || Has(s, "{\"loss\"")) return Framework::kHfTrainer;
  if (Has(s, "v_num") || (Has(s, "Epoch ") && Has(s, "%||"))) return Framework::kLightning;
  if (BareBar(s)) return Framework::kHfTrainer;  // the Trainer's bar has no description
  return Framework::kUnknown;
}

bool IsEvalLine(std::string_view s) {
  for (std::string_view p : {"valid on '", "Validation", "Validating", "Evaluating", "Evaluation", "evaluation:", "Testing"})
    if (Has(s, p)) return true;
  return false;
}

// Only spaces and one '/' between the end of number a and the start of number b.
bool SlashJoined(std::string_view s, const MaskedParam& a, const MaskedParam& b) {
  size_t from = a.offset + a.text.size();
  if (b.offset < from || b.offset - from > 8) return false;
  std::string_view gap = s.substr(from, b.offset - from);
  return std::count(gap.begin(), gap.end(), '/') == 1 &&
         std::all_of(gap.begin(), gap.end(), [](char c) { return c == '/' || c == ' '; });
}

struct Learner {
  const MaskedLine& line;
  Plan plan;
  int step_rank = 99, loss_rank = 99, sec_rank = 99;
  int step_param = -1;

  void Add(Field f, size_t k, double scale = 1, bool invert = false, int rank = 0) {
    const MaskedParam& p = line.params[k];
    plan.refs.push_back({f, static_cast<uint32_t>(k), scale, invert, rank, p.token, std::string(line.tokens[p.token])});
  }

  void Keyed(size_t k, bool* any_eval, bool* any_train_loss) {
    std::string_view s = line.source;
    const MaskedParam& p = line.params[k];
    std::string key = KeyBefore(s, p.offset);
    std::string_view suffix = s.substr(std::min(s.size(), p.offset + p.text.size()), 6);
    if (IsEvalKey(key)) *any_eval = true;
    bool invert = false;
    if (int r = LossRank(key); r >= 0) {
      *any_train_loss = true;
      Add(Field::kLoss, k, 1, false, r);
    } else if (int sr = StepRank(key); sr >= 0) {
      Add(Field::kStep, k, 1, false, sr);
      if (sr < step_rank || step_param < 0) {
        step_rank = sr;
        step_param = static_cast<int>(k);
      }
      if (k + 1 < line.params.size() && SlashJoined(s, p, line.params[k + 1])) Add(Field::kTotal, k + 1, 1, false, sr);
    } else if (IsTotalKey(key)) {
      Add(Field::kTotal, k, 1, false, -1);
    } else if (IsEpochKey(key)) {
      Add(Field::kEpoch, k);
    } else if (double sc = SecondsScale(key, suffix, &invert); sc > 0) {
      Add(Field::kSeconds, k, sc, invert);
    } else if (StartsWith(suffix, "s/it")) {
      Add(Field::kBarSeconds, k);
    } else if (StartsWith(suffix, "it/s")) {
      Add(Field::kBarSeconds, k, 1, true);
    }
  }

  // "37%||  5/18 [": the counter after a tqdm bar (cells removed by Mask).
  void Bar() {
    std::string_view s = line.source;
    size_t bar = s.find("%||");
    if (bar == std::string_view::npos) return;
    for (size_t k = 0; k + 1 < line.params.size(); ++k) {
      if (line.params[k].offset < bar + 3) continue;
      if (SlashJoined(s, line.params[k], line.params[k + 1])) {
        Add(Field::kBarStep, k);
        Add(Field::kBarTotal, k + 1);
      }
      return;
    }
  }

  // DeepSpeed's ThroughputTimer: "[timer.py:...:stop] EPOCH/STEP, RunningAvgSamplesPerSec=...".
  void DeepSpeedTimer() {
    std::string_view s = line.source;
    size_t at = s.find("RunningAvgSamplesPerSec");
    if (at == std::string_view::npos) return;
    for (size_t k = 0; k + 1 < line.params.size(); ++k) {
      if (line.params[k + 1].offset > at) return;
      if (SlashJoined(s, line.params[k], line.params[k + 1]) && line.params[k + 1].offset + 24 > at) {
        Add(Field::kEpoch, k);
        Add(Field::kStep, k + 1, 1, false, 0);
        return;
      }
    }
  }
};

}  // namespace

Plan LearnPlan(const MaskedLine& line) {
  Learner l{line, {}};
  l.plan.param_count = line.params.size();
  l.plan.framework = DetectFramework(line.source);
  bool any_eval = false, any_train_loss = false;
  for (size_t k = 0; k < line.params.size(); ++k) l.Keyed(k, &any_eval, &any_train_loss);
  l.Bar();
  l.DeepSpeedTimer();
  l.plan.eval = IsEvalLine(line.source) || (any_eval && !any_train_loss);
  return l.plan;
}

std::string_view FrameworkName(Framework f) {
  switch (f) {
    case Framework::kUnknown: return "";
    case Framework::kMegatron: return "megatron-lm";
    case Framework::kNemo: return "nemo";
    case Framework::kTorchtitan: return "torchtitan";
    case Framework::kFairseq: return "fairseq";
    case Framework::kVerl: return "verl";
    case Framework::kDeepSpeed: return "deepspeed";
    case Framework::kNanoGpt: return "nanogpt";
    case Framework::kHfTrainer: return "hf_trainer";
    case Framework::kAxolotl: return "axolotl";
    case Framework::kLightning: return "pytorch_lightning";
  }
  return "";
}

}  // namespace orrery::logs
