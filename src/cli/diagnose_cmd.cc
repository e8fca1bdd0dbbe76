// `orrery diagnose LOG...`: why did a training job fail? Reads the tail of each log (file,
// .gz, "-" = stdin), compresses it with the Drain miner and classifies it with the rules
// (configs/logs/diagnose-rules.toml unless --rules), optionally asking an LLM endpoint in
// low-confidence cases (--llm-config). `orrery diagnose evaluate FILE.jsonl` scores it on a
// labelled file of the failure-logs schema. Formats: docs/formats/diagnose.md.
#include <cstdio>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "cli/commands.h"
#include "logs/diagnose.h"
#include "logs/evaluate.h"
#include "logs/input.h"
#include "logs/llm.h"

namespace orrery::cli {

namespace {

struct DiagnoseArgs {
  std::vector<std::string> logs;
  std::string rules, extra_rules, llm_config;
  bool json = false, explain = false;
  size_t tail_bytes = 16u << 20;
  std::string evaluate;  // labelled JSONL (the evaluate subcommand)
  logs::RecordFilter filter;
};

Result<logs::RuleSet> Rules(const DiagnoseArgs& a) {
  logs::RuleSet rs = logs::DefaultRules();
  if (!a.rules.empty()) {
    ORR_ASSIGN_OR_RETURN(rs, logs::LoadRules(a.rules));
  }
  if (!a.extra_rules.empty()) {
    ORR_ASSIGN_OR_RETURN(logs::RuleSet extra, logs::LoadRules(a.extra_rules));
    rs = logs::MergeRules(std::move(rs), extra);
  }
  return rs;
}

// The diagnoser, with the LLM backend in front when configured.
struct Engine {
  std::unique_ptr<logs::Diagnoser> rules;
  std::unique_ptr<llm::HttpChatClient> client;
  std::unique_ptr<llm::LlmCache> cache;
  std::unique_ptr<logs::LlmDiagnoser> llm;
  logs::Diagnosis Diagnose(std::string_view text) { return llm ? llm->Diagnose(text) : rules->Diagnose(text); }
};

Result<Engine> MakeEngine(const DiagnoseArgs& a) {
  ORR_ASSIGN_OR_RETURN(logs::RuleSet rs, Rules(a));
  Engine e;
  e.rules = std::make_unique<logs::Diagnoser>(std::move(rs));
  if (!a.llm_config.empty()) {
    ORR_ASSIGN_OR_RETURN(llm::LlmConfig cfg, llm::LoadLlmConfig(a.llm_config));
    std::string warning;
    e.cache = llm::OpenLlmCache(cfg, &warning);
    if (!warning.empty()) std::fprintf(stderr, "orrery diagnose: warning: %s\n", warning.c_str());
    size_t max_ctx = cfg.max_context_bytes;
    e.client = std::make_unique<llm::HttpChatClient>(std::move(cfg));
    e.llm = std::make_unique<logs::LlmDiagnoser>(e.rules.get(), e.client.get(), max_ctx, e.cache.get());
  }
  return e;
}

nlohmann::ordered_json ToJson(const logs::Diagnosis& d) {
  nlohmann::ordered_json j;
  j["category"] = std::string(logs::CategoryName(d.category));
  j["subtype"] = d.subtype;
  j["retry"] = d.retry;
  j["suspect_node"] = d.suspect_node;
  j["evidence"] = d.evidence;
  return j;
}

void PrintText(const std::string& name, const logs::Diagnosis& d, bool explain) {
  std::printf("%s: %s / %s, retry: %s, suspect: %s (%s%s, confidence %.2f)\n", name.c_str(),
              std::string(logs::CategoryName(d.category)).c_str(), d.subtype.c_str(), d.retry ? "yes" : "no",
              d.suspect_node.empty() ? "-" : d.suspect_node.c_str(), std::string(logs::DiagnosisSourceName(d.source)).c_str(),
              d.rule.empty() ? "" : (" " + d.rule).c_str(), d.confidence);
  for (const std::string& e : d.evidence) std::printf("  | %s\n", e.c_str());
  if (explain && !d.note.empty()) std::printf("  note: %s\n", d.note.c_str());
}

int RunDiagnose(const DiagnoseArgs& a) {
  if (a.logs.empty()) return Fail("diagnose", MakeError("no LOG given (a file, a .gz file or - for standard input)"));
  auto engine = MakeEngine(a);
  if (!engine.ok()) return Fail("diagnose", engine.error());
  int rc = kExitOk;
  for (const std::string& path : a.logs) {
    auto text = logs::ReadTail(path, a.tail_bytes);
    if (!text.ok()) {
      rc = Fail("diagnose", text.error());
      continue;
    }
    logs::Diagnosis d = engine->Diagnose(*text);
    if (a.json) {
      std::printf("%s\n", DumpJson(ToJson(d)).c_str());
    } else {
      PrintText(path, d, a.explain);
    }
    if (text->empty()) {
      std::fprintf(stderr, "orrery diagnose: %s: empty log, nothing to diagnose\n", path.c_str());
      rc = rc == kExitOk ? kExitRuntime : rc;
    }
  }
  std::fflush(stdout);
  return rc;
}

int RunEvaluate(const DiagnoseArgs& a) {
  auto engine = MakeEngine(a);
  if (!engine.ok()) return Fail("diagnose", engine.error());
  auto scores = logs::EvaluateDiagnosis(a.evaluate, [&](const std::string& t) { return engine->Diagnose(t); }, a.filter);
  if (!scores.ok()) return Fail("diagnose", scores.error());
  std::fputs(logs::FormatDiagnoseScores(*scores, a.json).c_str(), stdout);
  return kExitOk;
}

void AddEngineOptions(CLI::App* c, DiagnoseArgs* a) {
  c->add_option("--rules", a->rules, "Rule file replacing the embedded configs/logs/diagnose-rules.toml");
  c->add_option("--extra-rules", a->extra_rules, "Rule file added to the rules (same name replaces a rule)");
  c->add_option("--llm-config", a->llm_config, "TOML file with an [llm] table: ask that endpoint in low-confidence cases");
  c->add_flag("--json", a->json, "JSON output (docs/formats/diagnose.md)");
}

}  // namespace

void RegisterDiagnose(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<DiagnoseArgs>();
  auto* cmd = app.add_subcommand("diagnose", "Why did a training job fail? Category, cause, retry, suspect node");
  SetExamples(cmd, {"./build/orrery diagnose tests/fixtures/logs/nccl-ib-failure.log",
                    "./build/orrery diagnose --json tests/fixtures/logs/nccl-ib-failure.log"});
  cmd->add_option("logs", a->logs, "Job output: files, .gz files, - for standard input");
  AddEngineOptions(cmd, a.get());
  cmd->add_flag("--explain", a->explain, "Text output: also the reason an LLM answer was or was not used");
  cmd->add_option("--tail-bytes", a->tail_bytes, "Diagnose only the last N bytes of each log (0 = all)");
  auto* ev = cmd->add_subcommand("evaluate", "Score the diagnosis on a labelled JSON Lines file (failure-logs schema)");
  SetExamples(ev, {"./build/orrery diagnose evaluate tests/fixtures/logs/failure-synthetic.jsonl",
                   "./build/orrery diagnose evaluate ../shared/corpora/failure-logs/dev.jsonl"});
  ev->add_option("file", a->evaluate, "Labelled records (e.g. ../shared/corpora/failure-logs/dev.jsonl)")->required();
  AddEngineOptions(ev, a.get());
  ev->add_option("--ids", a->filter.only, "Score only these record ids (comma-separated)")->delimiter(',');
  ev->add_option("--except-ids", a->filter.except, "Leave these record ids out (comma-separated)")->delimiter(',');
  ev->callback([a, exit_code] { *exit_code = RunEvaluate(*a); });
  cmd->callback([a, exit_code, ev] {
    if (!ev->parsed()) *exit_code = RunDiagnose(*a);
  });
}

}  // namespace orrery::cli
