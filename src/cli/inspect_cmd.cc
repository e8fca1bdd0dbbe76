// `orrery inspect FILE... [--json] [--llm-config FILE]`: the scheduling advisor's reader.
// Reads launch scripts and configs and prints what each job will do (docs/formats/inspect.md);
// with --llm-config, a config the readers cannot read well is completed by that endpoint
// (semantic/llm_schema.h; one question per distinct config, answers cached).
// `orrery inspect evaluate FILE.jsonl [--per-record]`: its field-by-field accuracy on a
// labelled corpus (shared/corpora/launch-configs schema; docs/validation/signals.md).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "base/json_text.h"
#include "base/io.h"
#include "cli/commands.h"
#include "llm/client.h"
#include "semantic/evaluate.h"
#include "semantic/inspect.h"
#include "semantic/llm_schema.h"

namespace orrery::cli {
namespace {

struct InspectArgs {
  std::vector<std::string> files;
  bool json = false;
  std::string llm_config;
};

// The LLM backend when --llm-config names one (client, cache, filler), else empty.
struct InspectLlm {
  std::unique_ptr<llm::HttpChatClient> client;
  std::unique_ptr<llm::LlmCache> cache;
  std::unique_ptr<semantic::LlmSchemaFiller> filler;
};

Result<InspectLlm> OpenLlm(const std::string& path) {
  InspectLlm b;
  if (path.empty()) return b;
  ORR_ASSIGN_OR_RETURN(llm::LlmConfig cfg, llm::LoadLlmConfig(path));
  std::string warning;
  b.cache = llm::OpenLlmCache(cfg, &warning);
  if (!warning.empty()) std::fprintf(stderr, "orrery inspect: warning: %s\n", warning.c_str());
  b.client = std::make_unique<llm::HttpChatClient>(cfg);
  b.filler = std::make_unique<semantic::LlmSchemaFiller>(b.client.get(), b.cache.get(), cfg.model, cfg.max_context_bytes);
  return b;
}

struct EvaluateArgs {
  std::string corpus;
  bool per_record = false;
};

int RunInspect(const InspectArgs& a) {
  auto llm = OpenLlm(a.llm_config);
  if (!llm.ok()) {
    std::fprintf(stderr, "orrery inspect: %s\n", llm.error().message.c_str());
    return llm.error().exit_code;
  }
  std::vector<semantic::InputFile> inputs;
  int rc = kExitOk;
  for (const std::string& f : a.files) {
    auto text = ReadFile(f);
    if (!text) {
      std::fprintf(stderr, "orrery inspect: %s\n", text.error().message.c_str());
      rc = kExitBadInput;
      continue;
    }
    inputs.push_back(semantic::InputFile{f, std::move(*text)});
  }
  size_t known = 0;
  for (const semantic::LaunchSchema& s : semantic::InspectFiles(inputs, llm->filler.get())) {
    for (const auto& fv : s.fields) known += fv.has_value();
    for (const semantic::Warning& w : s.warnings) std::fprintf(stderr, "warning: %s\n", semantic::FormatWarning(w).c_str());
    if (a.json) {
      std::printf("%s\n", DumpJson(semantic::ToJson(s)).c_str());
    } else {
      std::printf("%s", semantic::ToText(s).c_str());
    }
  }
  if (llm->filler)
    std::fprintf(stderr, "orrery inspect: llm: %llu question(s), %llu cache hit(s)\n",
                 static_cast<unsigned long long>(llm->filler->calls()), static_cast<unsigned long long>(llm->filler->cache_hits()));
  if (known == 0 && !inputs.empty()) {
    std::fprintf(stderr, "orrery inspect: nothing recognised in %zu file(s): no framework, model, batch or resource setting\n",
                 inputs.size());
    return kExitBadInput;
  }
  return rc;
}

int RunEvaluate(const EvaluateArgs& a) {
  auto text = ReadFile(a.corpus);
  if (!text) {
    std::fprintf(stderr, "orrery inspect evaluate: %s\n", text.error().message.c_str());
    return text.error().exit_code;
  }
  auto records = semantic::ParseLabelledCorpus(*text, a.corpus);
  if (!records) {
    std::fprintf(stderr, "orrery inspect evaluate: %s\n", records.error().message.c_str());
    return records.error().exit_code;
  }
  semantic::CorpusAccuracy acc = semantic::EvaluateCorpus(*records);
  std::printf("%s", semantic::FormatAccuracy(acc, a.per_record).c_str());
  if (acc.evaluated == 0) {
    std::fprintf(stderr, "orrery inspect evaluate: no record stores its text: nothing was evaluated\n");
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace

void RegisterInspect(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<InspectArgs>();
  auto* cmd = app.add_subcommand("inspect", "Read launch scripts and configs: framework, model, batches, parallelism, resources");
  SetExamples(cmd, {"./build/orrery inspect tests/fixtures/inspect/megatron_ds_llama.sh",
                    "./build/orrery inspect --json tests/fixtures/inspect/run_qwen2-7b.sh"});
  cmd->add_option("files", args->files, "launch scripts and configs (shell, #SBATCH, JSON, YAML, TOML, Python, Markdown)");
  cmd->add_flag("--json", args->json, "one JSON object per file (the corpus label keys plus 'sources')");
  cmd->add_option("--llm-config", args->llm_config,
                  "TOML file with an [llm] table: ask that endpoint about configs the readers cannot read well");
  auto eargs = std::make_shared<EvaluateArgs>();
  auto* ev = cmd->add_subcommand("evaluate", "Field-by-field accuracy on a labelled corpus (launch-configs JSONL)");
  SetExamples(ev, {"./build/orrery inspect evaluate ../shared/corpora/launch-configs/dev.jsonl"});
  ev->add_option("corpus", eargs->corpus, "labelled JSONL (id, source, kind, text, labels)")->required();
  ev->add_flag("--per-record", eargs->per_record, "list each record's mismatches");
  ev->callback([eargs, exit_code] { *exit_code = RunEvaluate(*eargs); });
  cmd->callback([cmd, ev, args, exit_code] {
    if (ev->parsed()) return;
    if (args->files.empty()) {
      std::fprintf(stderr, "orrery inspect: expected at least one FILE (or 'evaluate CORPUS.jsonl')\n");
      *exit_code = kExitBadInput;
      return;
    }
    *exit_code = RunInspect(*args);
  });
}

}  // namespace orrery::cli
