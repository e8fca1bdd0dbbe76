// `orrery progress LOG...`: how far is a training job? Streams each log (file, .gz, "-")
// through the metric tracker and prints the latest reading: framework, step, total steps,
// epoch, loss, seconds per step, ETA, and loss anomalies. `orrery progress evaluate
// FILE.jsonl` scores the tracker on a labelled file of the progress-logs schema.
// Formats: docs/formats/progress.md.
#include <cmath>
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "cli/commands.h"
#include "logs/evaluate.h"
#include "logs/input.h"
#include "logs/llm.h"
#include "logs/progress.h"

namespace orrery::cli {

namespace {

struct ProgressArgs {
  std::vector<std::string> logs;
  bool json = false;
  std::string llm_config;
  std::string evaluate;
  logs::RecordFilter filter;
};

template <class T>
nlohmann::ordered_json Opt(const std::optional<T>& v) {
  if (!v || (std::is_floating_point_v<T> && !std::isfinite(static_cast<double>(*v)))) return nullptr;
  return *v;
}

nlohmann::ordered_json ToJson(const logs::Reading& r) {
  nlohmann::ordered_json j;
  std::string_view fw = logs::FrameworkName(r.framework);
  j["framework"] = fw.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(std::string(fw));
  j["step"] = Opt(r.step);
  j["total_steps"] = Opt(r.total_steps);
  j["epoch"] = Opt(r.epoch);
  j["loss"] = r.loss ? nlohmann::ordered_json(*r.loss) : nlohmann::ordered_json(nullptr);  // NaN prints as null
  j["seconds_per_step"] = Opt(r.seconds_per_step);
  j["eta_s"] = Opt(r.eta_s);
  j["reader"] = r.reader.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.reader);
  return j;
}

std::string EtaText(double s) {
  char b[64];
  auto t = static_cast<long long>(s);
  if (t >= 86400) std::snprintf(b, sizeof b, "%lldd %02lldh", t / 86400, t % 86400 / 3600);
  else if (t >= 3600) std::snprintf(b, sizeof b, "%lldh %02lldm", t / 3600, t % 3600 / 60);
  else std::snprintf(b, sizeof b, "%lldm %02llds", t / 60, t % 60);
  return b;
}

void PrintText(const std::string& name, const logs::Reading& r, const logs::ProgressTracker& t) {
  std::string fw(logs::FrameworkName(r.framework));
  std::string s = name + ": " + (fw.empty() ? "unknown framework" : fw);
  char b[96];
  if (r.step) {
    s += ", step " + std::to_string(*r.step);
    if (r.total_steps) {
      std::snprintf(b, sizeof b, "/%lld (%.1f %%)", static_cast<long long>(*r.total_steps),
                    100.0 * static_cast<double>(*r.step) / static_cast<double>(*r.total_steps));
      s += b;
    }
  }
  if (r.epoch) std::snprintf(b, sizeof b, ", epoch %g", *r.epoch), s += b;
  if (r.loss) std::snprintf(b, sizeof b, ", loss %.6g", *r.loss), s += b;
  if (r.seconds_per_step) std::snprintf(b, sizeof b, ", %.4g s/step", *r.seconds_per_step), s += b;
  if (r.eta_s) s += ", ETA " + EtaText(*r.eta_s);
  if (!r.step && !r.loss && !r.epoch) s += ": no progress line found";
  else s += " [" + r.reader + "]";
  std::printf("%s\n", s.c_str());
  for (const logs::Anomaly& a : t.anomalies()) {
    std::printf("  anomaly %s at step %s: loss %g (smoothed %g)\n", std::string(logs::AnomalyKindName(a.kind)).c_str(),
                a.step ? std::to_string(*a.step).c_str() : "?", a.loss, a.baseline);
  }
}

int RunProgress(const ProgressArgs& a) {
  if (a.logs.empty()) return Fail("progress", MakeError("no LOG given (a file, a .gz file or - for standard input)"));
  std::unique_ptr<llm::HttpChatClient> client;
  std::unique_ptr<llm::LlmCache> cache;
  std::unique_ptr<logs::LlmFormatOracle> oracle;
  if (!a.llm_config.empty()) {
    auto cfg = llm::LoadLlmConfig(a.llm_config);
    if (!cfg.ok()) return Fail("progress", cfg.error());
    std::string warning;
    cache = llm::OpenLlmCache(*cfg, &warning);
    if (!warning.empty()) std::fprintf(stderr, "orrery progress: warning: %s\n", warning.c_str());
    client = std::make_unique<llm::HttpChatClient>(*cfg);
    oracle = std::make_unique<logs::LlmFormatOracle>(client.get(), cache.get());
  }
  int rc = kExitOk;
  for (const std::string& path : a.logs) {
    logs::ProgressTracker t({}, oracle.get());
    Status st = logs::ForEachChunk(path, [&](std::string_view chunk) { t.Feed(chunk, kNoTime); });
    if (!st.ok()) {
      rc = Fail("progress", st.error());
      continue;
    }
    t.Finish(kNoTime);
    logs::Reading r = t.latest();
    if (a.json) std::printf("%s\n", DumpJson(ToJson(r)).c_str());
    else PrintText(path, r, t);
    if (t.progress_lines() == 0) {
      std::fprintf(stderr, "orrery progress: %s: no progress line found\n", path.c_str());
      rc = rc == kExitOk ? kExitRuntime : rc;
    }
  }
  std::fflush(stdout);
  return rc;
}

int RunEvaluate(const ProgressArgs& a) {
  auto s = logs::EvaluateProgress(a.evaluate, a.filter);
  if (!s.ok()) return Fail("progress", s.error());
  std::fputs(logs::FormatProgressScores(*s, a.json).c_str(), stdout);
  return kExitOk;
}

}  // namespace

void RegisterProgress(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<ProgressArgs>();
  auto* cmd = app.add_subcommand("progress", "How far is a training job? Step, total, epoch, loss, s/step, ETA from its log");
  SetExamples(cmd, {"./build/orrery progress tests/fixtures/logs/megatron-train.log",
                    "./build/orrery progress --json tests/fixtures/logs/megatron-train.log"});
  cmd->add_option("logs", a->logs, "Job output: files, .gz files, - for standard input");
  cmd->add_flag("--json", a->json, "JSON output, one object per log (docs/formats/progress.md)");
  cmd->add_option("--llm-config", a->llm_config, "TOML file with an [llm] table: ask that endpoint about unknown line formats");
  auto* ev = cmd->add_subcommand("evaluate", "Score the tracker on a labelled JSON Lines file (progress-logs schema)");
  SetExamples(ev, {"./build/orrery progress evaluate tests/fixtures/logs/progress-synthetic.jsonl",
                   "./build/orrery progress evaluate ../shared/corpora/progress-logs/dev.jsonl"});
  ev->add_option("file", a->evaluate, "Labelled records (e.g. ../shared/corpora/progress-logs/dev.jsonl)")->required();
  ev->add_flag("--json", a->json, "JSON output");
  ev->add_option("--ids", a->filter.only, "Score only these record ids (comma-separated)")->delimiter(',');
  ev->add_option("--except-ids", a->filter.except, "Leave these record ids out (comma-separated)")->delimiter(',');
  ev->callback([a, exit_code] { *exit_code = RunEvaluate(*a); });
  cmd->callback([a, exit_code, ev] {
    if (!ev->parsed()) *exit_code = RunProgress(*a);
  });
}

}  // namespace orrery::cli
