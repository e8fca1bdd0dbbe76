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
  // MMEngine's "Epoch(train)" / "Iter(train)": the phase names the training counter.
  if (EndsWith(k, "(train)")) k.remove_suffix(7);
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
  // A loss named for the current batch or step beside a plain "loss": the plain one is then the
  // running average (AllenNLP's "batch_loss" and "loss", Ignite's "batch loss").
  for (std::string_view t : {"batch_loss", "batch loss", "step_loss", "step loss", "cur_loss", "current_loss", "curr_loss",
                             "iter_loss", "loss_batch"})
    if (last == t || Has(k, t)) return 0;
  if (last == "loss") return 1;
  for (std::string_view x : {"nll", "aux", "z_loss", "kl", "moe", "balanc", "entropy", "vf_"})
    if (Has(last, x)) return -1;
  return 2;
}

// Step keys: 0 = a global counter by name, 1 = "step"/"steps"/"update", 2 = "iteration"/"iter"/
// "it"/"batch"; -1 = none.
int StepRank(std::string_view k) {
  if (Words(k) > 3) return -1;
  for (std::string_view x : {"time", "total", "max", "skip", "nan", "warmup", "sample", "token", "consumed", "save",
                             "ckpt", "checkpoint", "log", "eval", "val", "per", "rate"})
    if (Has(k, x)) return -1;
  std::string_view last = LastSegment(k);
  if (last == "global_step" || last == "num_updates" || last == "global step" || k == "global step") return 0;
  // Beside each other the optimizer's "step" outranks a micro-batch "iter" (LitGPT's "iter 100 step 25").
  if (last == "step" || last == "steps" || last == "update") return 1;
  if (last == "iteration" || last == "iter" || last == "it" || last == "batch") return 2;
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
  // "epoch", "train epoch", and a bar's description "Train step of epoch".
  if (EndsWith(k, " of epoch") && Words(k) <= 5 && !Has(k, "number") && !Has(k, "num")) return true;
  return Words(k) <= 2 && LastSegment(k) == "epoch" && !Has(k, "step") && !Has(k, "number") && !Has(k, "num");
}

// Seconds per step from a key (and the unit after the number): scale, or 0 if none.
// A part of a step timed on its own (ESPnet's "forward_time", "optim_step_time", MMEngine's
// "data_time"): never the step's time.
bool IsPhaseTimeKey(std::string_view k) {
  std::string_view last = LastSegment(k);
  for (std::string_view p : {"forward", "backward", "optim", "data", "load", "fetch", "comm", "wait", "sync", "fwd", "bwd",
                             "h2d", "d2h", "ckpt", "save", "eval", "val", "elapsed", "total", "eta", "remaining"})
    if (StartsWith(last, p)) return true;
  return false;
}

double SecondsScale(std::string_view k, std::string_view suffix, bool* invert) {
  *invert = false;
  if (IsPhaseTimeKey(k) && !Has(k, "per_") && !Has(k, "per ")) return 0;
  bool ms_key = Has(k, "(ms)") || Has(k, "_ms") || Has(k, " ms") || Has(k, "in ms");
  // The unit may follow after one space: "iter time: 512.00 ms", "batch_cost: 0.51 s".
  std::string_view u = StartsWith(suffix, " ") ? suffix.substr(1) : suffix;
  const bool unit_ms = StartsWith(u, "ms") && (u.size() == 2 || !IsAlphaC(u[2]));
  const bool unit_s = StartsWith(u, "s") && (u.size() == 1 || !IsAlphaC(u[1]));
  for (std::string_view t : {"time per iteration", "time_per_iteration", "step_timing", "timing_s/step", "time_per_step",
                             "step_time", "time/step", "iter_time", "sec/step", "seconds_per_step", "time/iter",
                             "time_per_iter", "iteration_time", "step time", "iter time", "time per step"})
    if (Has(k, t)) return ms_key || unit_ms ? 0.001 : 1.0;
  if ((LastSegment(k) == "time" && Words(k) <= 2) || k == "batch_cost") {  // batch_cost: PaddlePaddle
    if (unit_ms) return 0.001;
    if (unit_s) return 1.0;
    // "time: 0.4123  data_time: 0.0012" (detectron2, MMEngine): seconds without a unit.
    if ((k == "time" || k == "batch_cost") && (suffix.empty() || suffix[0] == ' ' || suffix[0] == ',' || suffix[0] == '|'))
      return 1.0;
  }
  // "dt=0.305s", "dt: 512.00ms": a step's duration only with its unit.
  if (k == "dt" || k == "step_dt") {
    if (unit_ms) return 0.001;
    if (unit_s) return 1.0;
  }
  if (k == "seconds" || k == "step_seconds" || k == "sec_per_step") return 1.0;  // MaxText "seconds: 0.512"
  if (EndsWith(k, "steps_per_second") || EndsWith(k, "steps_per_sec") || EndsWith(k, "steps/s") || EndsWith(k, "steps/sec")) {
    *invert = !Has(k, "train_steps_per_second");  // HF Trainer's run summary averages over the run
    return *invert ? 1.0 : 0;
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
  if (Has(s, "RunningAvgSamplesPerSec") || Has(s, "[deepspeed]") || Has(s, "] step=") ||
      (StartsWith(s, "steps: ") && Has(s, "iter time (s): ")))  // the pipeline engine's own line
    return Framework::kDeepSpeed;
  if (Has(s, "iter ") && Has(s, ": loss ")) return Framework::kNanoGpt;  // "iter 12: loss 3.1, time 560.1ms"
  // The Trainer's log dicts always carry its 'epoch'; a loop's own dict of 'learning_rate' and
  // 'loss' (EasyLM's pprint) does not.
  if (Has(s, "{'loss'") || Has(s, "'epoch':") || Has(s, "{\"loss\"")) return Framework::kHfTrainer;
  if (Has(s, "v_num") || (Has(s, "Epoch ") && Has(s, "%||"))) return Framework::kLightning;
  if (Has(s, " - mmengine - ") || Has(s, "Epoch(train)") || Has(s, "Iter(train)") || Has(s, " - mmdet - ") ||
      Has(s, " - mmseg - ") || (Has(s, "Epoch [") && Has(s, "][") && Has(s, "data_time")))
    return Framework::kMmengine;
  if (Has(s, "d2.utils.events") || (Has(s, "iter: ") && Has(s, "total_loss: "))) return Framework::kDetectron2;
  if (StartsWith(s, "Train: ") && Has(s, " [") && Has(s, "%)]")) return Framework::kTimm;
  if ((Has(s, " [=") && (Has(s, "/step - ") || Has(s, " - ETA: "))) || (Has(s, "ms/step") && Has(s, " - loss: ")))
    return Framework::kKeras;
  if (BareBar(s)) return Framework::kHfTrainer;  // the Trainer's bar has no description
  return Framework::kUnknown;
}

bool IsEvalLine(std::string_view s) {
  for (std::string_view p : {"valid on '", "Validation", "Validating", "Evaluating", "Evaluation", "evaluation:", "Testing",
                             "(val)", "(test)", "Test: ["})
    if (Has(s, p)) return true;
  return false;
}

// A progress bar that is not training: loading, downloading, data preparation, saving
// (HF's "Loading checkpoint shards", datasets' "Map: ... examples/s", hub downloads in B/s).
bool IsAuxiliaryBar(std::string_view s) {
  size_t bar = s.find("%||");
  if (bar == std::string_view::npos) return false;
  std::string_view desc = s.substr(0, bar);
  for (std::string_view w : {"Loading", "Downloading", "Download", "Map", "Tokeniz", "Generating", "Filter", "Saving",
                             "Fetching", "Resolving", "Processing", "Preprocessing", "Uploading", "Extracting",
                             "Converting", "Packing", "Shuffling", "Writing", "Processed", "prompts", "Rollout",
                             "Sampling", "Encoding", "Embedding", "Indexing", "Caching"})
    if (Has(desc, w)) return true;
  for (std::string_view u : {"examples/s", "ba/s", "B/s]", "B/s,", "files/s", "shards/s", "docs/s", "toks/s", "tokens/s",
                             "tok/s", "prompts/s", "req/s", "seqs/s"})
    if (Has(s.substr(bar), u)) return true;
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

}  // namespace

// A tqdm bar's "[elapsed<remaining" ("[00:41<00:10]", "[1:02:05<7:36:07"): elapsed seconds.
std::optional<double> ElapsedBefore(std::string_view s) {
  size_t lt = s.rfind('<');
  while (lt != std::string_view::npos) {
    size_t b = lt;
    while (b > 0 && ((s[b - 1] >= '0' && s[b - 1] <= '9') || s[b - 1] == ':')) --b;
    if (b > 0 && s[b - 1] == '[' && b < lt) {
      std::string_view t = s.substr(b, lt - b);
      double total = 0;
      int parts = 0;
      size_t i = 0;
      bool ok = true;
      while (i <= t.size()) {
        size_t j = t.find(':', i);
        if (j == std::string_view::npos) j = t.size();
        std::string_view f = t.substr(i, j - i);
        if (f.empty() || f.size() > 2 + (parts == 0 ? 4 : 0)) { ok = false; break; }
        int v = 0;
        for (char c : f) v = v * 10 + (c - '0');
        total = total * 60 + v;
        ++parts;
        i = j + 1;
      }
      if (ok && parts >= 2 && parts <= 3) return total;
    }
    if (lt == 0) break;
    lt = s.rfind('<', lt - 1);
  }
  return std::nullopt;
}

namespace {

struct Learner {
  const MaskedLine& line;
  Plan plan;
  int step_rank = 99, loss_rank = 99, sec_rank = 99;
  int step_param = -1;
  std::vector<size_t> keyed;  // parameters with words before them

  bool Claimed(size_t k) const {
    return std::find(keyed.begin(), keyed.end(), k) != keyed.end() ||
           std::any_of(plan.refs.begin(), plan.refs.end(), [&](const FieldRef& r) { return r.param == k; });
  }

  void Add(Field f, size_t k, double scale = 1, bool invert = false, int rank = 0) {
    const MaskedParam& p = line.params[k];
    plan.refs.push_back({f, static_cast<uint32_t>(k), scale, invert, rank, p.token, std::string(line.tokens[p.token])});
  }

  void Keyed(size_t k, bool* any_eval, bool* any_train_loss) {
    std::string_view s = line.source;
    const MaskedParam& p = line.params[k];
    std::string key = KeyBefore(s, p.offset);
    std::string_view suffix = s.substr(std::min(s.size(), p.offset + p.text.size()), 8);
    if (StartsWith(suffix, "%")) return;  // a percentage ("Steps:  12%|"): never a step, loss or time
    // "0.51 s/step", "0.52 s/it": a unit after one space reads as one right after the number.
    for (std::string_view u : {" s/step", " ms/step", " s/it", " it/s", " sec/step", " sec/it"})
      if (StartsWith(suffix, u)) suffix.remove_prefix(1);
    if (IsEvalKey(key)) *any_eval = true;
    if (!key.empty()) keyed.push_back(k);
    bool invert = false;
    // "'global_step/max_steps': '30/250'": a step key and a total key over an N/M value.
    if (size_t slash = key.rfind('/'); slash != std::string::npos && k + 1 < line.params.size() &&
                                       SlashJoined(s, p, line.params[k + 1])) {
      std::string_view a = std::string_view(key).substr(0, slash), b = std::string_view(key).substr(slash + 1);
      if (int sr = StepRank(a); sr >= 0 && IsTotalKey(b)) {
        Add(Field::kStep, k, 1, false, sr);
        if (sr < step_rank || step_param < 0) step_rank = sr, step_param = static_cast<int>(k);
        Add(Field::kTotal, k + 1, 1, false, sr);
        keyed.push_back(k + 1);
        return;
      }
    }
    // A counter word glued after the number: "12epoch", "2001-2100batch" (ESPnet): the epoch, or
    // the upper end of a range of batches. Not after '/' ("12/70epoch" counts epochs).
    if (LossRank(key) < 0 && StepRank(key) < 0 && !IsEpochKey(key) && (p.offset == 0 || s[p.offset - 1] != '/')) {
      const bool range_end = !p.text.empty() && p.text[0] == '-' && p.offset > 0 && s[p.offset - 1] >= '0' && s[p.offset - 1] <= '9';
      // Singular only: "12epoch" is a position, "5epochs" or "100steps" a count.
      auto word = [&](std::string_view w) {
        return StartsWith(suffix, w) && (suffix.size() == w.size() || (suffix[w.size()] != 's' && suffix[w.size()] != 'e'));
      };
      const bool glued_next = !suffix.empty() && IsAlphaC(suffix[0]) && !Has(key, "warmup") && !Has(key, "total") &&
                              !Has(key, "max");
      if (glued_next && word("epoch")) {
        Add(Field::kEpoch, k);
        return;
      }
      if (glued_next && (word("batch") || word("iter") || word("step"))) {
        Add(Field::kStep, k, range_end ? -1 : 1, false, 2);
        if (2 < step_rank || step_param < 0) step_rank = 2, step_param = static_cast<int>(k);
        return;
      }
    }
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
    } else if (StartsWith(suffix, "ms/step")) {  // Keras "24ms/step"
      Add(Field::kSeconds, k, 0.001);
    } else if (StartsWith(suffix, "s/step") || StartsWith(suffix, "sec/step")) {
      Add(Field::kSeconds, k);
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

  // A rich progress bar ("━━━━━╸━━━ 120/500 0:02:01"): the counter right after the bar's
  // cells (box-drawing characters, so the byte before the counter is not ASCII).
  bool Rich() {
    std::string_view s = line.source;
    for (size_t k = 0; k + 1 < line.params.size(); ++k) {
      size_t at = line.params[k].offset;
      size_t b = at;
      while (b > 0 && s[b - 1] == ' ') --b;
      if (b == at || b == 0 || static_cast<unsigned char>(s[b - 1]) < 0x80) continue;
      if (Claimed(k) || !SlashJoined(s, line.params[k], line.params[k + 1])) continue;
      Add(Field::kBarStep, k);
      Add(Field::kBarTotal, k + 1);
      return true;
    }
    return false;
  }

  // A line that times a step's phases ("forward_time=0.12, backward_time=0.10, ...,
  // train_time=0.45", ESPnet): its "train_time" is the whole step's.
  void PhaseBreakdown() {
    std::string_view s = line.source;
    bool phases = false;
    int train = -1;
    for (size_t k = 0; k < line.params.size(); ++k) {
      std::string key = KeyBefore(s, line.params[k].offset);
      if (EndsWith(key, "_time") && IsPhaseTimeKey(key)) phases = true;
      if (key == "train_time" || key == "batch_time" || key == "train_step_time") train = static_cast<int>(k);
    }
    if (phases && train >= 0 && std::none_of(plan.refs.begin(), plan.refs.end(), [&](const FieldRef& r) {
          return r.param == static_cast<uint32_t>(train);
        }))
      Add(Field::kSeconds, static_cast<size_t>(train));
  }

  // "[1200] steps_per_second=4.2, train_loss=2.1" (clu's LoggingWriter): a lone integer in
  // brackets before a line's metrics is their step.
  bool BracketStep() {
    std::string_view s = line.source;
    bool metrics = std::any_of(plan.refs.begin(), plan.refs.end(), [](const FieldRef& r) {
      return r.field == Field::kLoss || r.field == Field::kSeconds;
    });
    if (!metrics) return false;
    for (const FieldRef& r : plan.refs)
      if (r.field == Field::kStep || r.field == Field::kBarStep) return false;
    for (size_t k = 0; k < line.params.size(); ++k) {
      const MaskedParam& a = line.params[k];
      if (Claimed(k) || a.offset == 0 || s[a.offset - 1] != '[') continue;
      size_t end = a.offset + a.text.size();
      if (end >= s.size() || s[end] != ']' || a.text.find_first_not_of("0123456789") != std::string_view::npos) continue;
      if (a.text == "0") continue;  // "[0] loss=...": more often the printing rank than step 0
      Add(Field::kBarStep, k);
      return true;
    }
    return false;
  }

  // A counter without a key: "[ 50/500]", "[ 100/1251 (  8%)]" (MMEngine, mmcv, timm) or a
  // line that starts "120/500 [" (Keras). A date ("2026/12/07") has neither shape.
  bool Counter() {
    std::string_view s = line.source;
    for (size_t k = 0; k + 1 < line.params.size(); ++k) {
      const MaskedParam& a = line.params[k];
      const MaskedParam& b = line.params[k + 1];
      if (Claimed(k) || Claimed(k + 1) || !SlashJoined(s, a, b)) continue;
      size_t before = a.offset;
      while (before > 0 && s[before - 1] == ' ') --before;
      size_t after = b.offset + b.text.size();
      while (after < s.size() && s[after] == ' ') ++after;
      char next = after < s.size() ? s[after] : '\0';
      bool bracketed = before > 0 && s[before - 1] == '[' && (next == ']' || next == '(');
      // "1.2% (1200/100000)": a share of the run, then its counter in parentheses.
      if (!bracketed && before > 1 && s[before - 1] == '(' && next == ')') {
        size_t q = before - 1;
        while (q > 0 && s[q - 1] == ' ') --q;
        bracketed = q > 0 && s[q - 1] == '%';
      }
      bool leading = before == 0 && (next == '[' || next == '-');  // Keras "120/500 [===" and "100/100 - 12s"
      if (!bracketed && !leading) continue;
      Add(Field::kBarStep, k);
      Add(Field::kBarTotal, k + 1);
      return true;
    }
    return false;
  }

  // timm's "Train: 3 [ 100/1251 (  8%)]": the number between "Train:" and the counter is the epoch.
  void TimmEpoch() {
    std::string_view s = line.source;
    if (!StartsWith(s, "Train: ") || line.params.empty()) return;
    for (const FieldRef& r : plan.refs)
      if (r.param == 0) return;
    size_t end = line.params[0].offset + line.params[0].text.size();
    if (line.params[0].offset == 7 && s.substr(end, 2) == " [") Add(Field::kEpoch, 0);
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
  Learner l{line, {}, 99, 99, 99, -1, {}};
  l.plan.param_count = line.params.size();
  l.plan.framework = DetectFramework(line.source);
  bool any_eval = false, any_train_loss = false;
  for (size_t k = 0; k < line.params.size(); ++k) l.Keyed(k, &any_eval, &any_train_loss);
  const size_t keyed_refs = l.plan.refs.size();
  l.Bar();
  bool bar = l.plan.refs.size() > keyed_refs;
  bool rich = !bar && l.Rich();
  if (l.plan.framework == Framework::kTimm) l.TimmEpoch();
  bool counter = !bar && !rich && l.Counter();
  l.DeepSpeedTimer();
  l.PhaseBreakdown();
  if (!bar && !rich && !counter) counter = l.BracketStep();
  // A bar that prints no rate ("[312/391]  80%|███ , batch loss=0.612 [00:41<00:10]", Ignite):
  // its elapsed time over its count is the time per step.
  if (bar || counter) {
    bool timed = std::any_of(l.plan.refs.begin(), l.plan.refs.end(), [](const FieldRef& r) {
      return r.field == Field::kSeconds || r.field == Field::kBarSeconds;
    });
    l.plan.elapsed_rate = !timed && ElapsedBefore(line.source).has_value();
  }
  size_t lead = line.source.find_first_not_of(' ');
  bool json_line = lead != std::string_view::npos && line.source[lead] == '{';
  l.plan.generic = json_line ? GenericReader::kJson
                   : bar     ? GenericReader::kTqdm
                   : rich    ? GenericReader::kRich
                   : counter ? GenericReader::kCounter
                             : GenericReader::kKeyValue;
  l.plan.eval = IsEvalLine(line.source) || IsAuxiliaryBar(line.source) || (any_eval && !any_train_loss);
  return l.plan;
}

std::vector<std::string_view> TableCells(std::string_view line) {
  std::vector<std::string_view> cells;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i == line.size()) break;
    size_t j = i;
    // A cell ends at a tab or at two spaces; one space stays inside ("Training Loss").
    while (j < line.size() && line[j] != '\t' && !(line[j] == ' ' && j + 1 < line.size() && line[j + 1] == ' ') &&
           !(line[j] == ' ' && j + 1 == line.size()))
      ++j;
    cells.push_back(line.substr(i, j - i));
    i = j;
  }
  return cells;
}

int TableColumn(std::string_view name) {
  std::string k;
  for (char c : name) k.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  if (IsEpochKey(k)) return 1;
  // Only a main loss: a table of several "*_loss" columns (box, cls, dfl) has no single one.
  if (int r = LossRank(k); r >= 0 && r <= 1) return 2;
  if (StepRank(k) >= 0 && StepRank(k) <= 1) return 0;
  return -1;
}

std::vector<std::string> TableHeader(std::string_view line) {
  std::vector<std::string_view> cells = TableCells(line);
  std::vector<std::string> out;
  if (cells.size() < 2 || cells.size() > 24) return out;
  bool named = false;
  for (std::string_view c : cells) {
    if (c.size() > 32 || !IsAlphaC(c[0])) return {};
    named = named || TableColumn(c) >= 0;
  }
  if (!named) return out;
  for (std::string_view c : cells) out.emplace_back(c);
  return out;
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
    case Framework::kMmengine: return "mmengine";
    case Framework::kDetectron2: return "detectron2";
    case Framework::kTimm: return "timm";
    case Framework::kKeras: return "keras";
  }
  return "";
}

std::string_view GenericReaderName(GenericReader g) {
  switch (g) {
    case GenericReader::kKeyValue: return "keyvalue";
    case GenericReader::kJson: return "json";
    case GenericReader::kTqdm: return "tqdm";
    case GenericReader::kRich: return "rich";
    case GenericReader::kCounter: return "counter";
    case GenericReader::kTable: return "table";
  }
  return "";
}

std::string ReaderName(const Plan& plan) {
  if (!plan.progress()) return "";
  if (plan.from_oracle) return "llm";
  if (plan.framework != Framework::kUnknown) return "rule:" + std::string(FrameworkName(plan.framework));
  return "generic:" + std::string(GenericReaderName(plan.generic));
}

}  // namespace orrery::logs
