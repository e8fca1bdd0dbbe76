// `orrery inspect FILE... [--json]`: the scheduling advisor's reader. Reads launch scripts
// and configs and prints what each job will do (docs/formats/inspect.md).
// `orrery inspect evaluate FILE.jsonl [--per-record]`: its field-by-field accuracy on a
// labelled corpus (shared/corpora/launch-configs schema; docs/validation.md).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "base/io.h"
#include "cli/commands.h"
#include "semantic/evaluate.h"
#include "semantic/inspect.h"

namespace orrery::cli {
namespace {

struct InspectArgs {
  std::vector<std::string> files;
  bool json = false;
};

struct EvaluateArgs {
  std::string corpus;
  bool per_record = false;
};

int RunInspect(const InspectArgs& a) {
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
  for (const semantic::LaunchSchema& s : semantic::InspectFiles(inputs)) {
    for (const auto& fv : s.fields) known += fv.has_value();
    for (const semantic::Warning& w : s.warnings) std::fprintf(stderr, "warning: %s\n", semantic::FormatWarning(w).c_str());
    if (a.json) {
      std::printf("%s\n", semantic::ToJson(s).dump().c_str());
    } else {
      std::printf("%s", semantic::ToText(s).c_str());
    }
  }
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
  cmd->add_option("files", args->files, "launch scripts and configs (shell, #SBATCH, JSON, YAML, TOML, Python, Markdown)");
  cmd->add_flag("--json", args->json, "one JSON object per file (the corpus label keys plus 'sources')");
  auto eargs = std::make_shared<EvaluateArgs>();
  auto* ev = cmd->add_subcommand("evaluate", "Field-by-field accuracy on a labelled corpus (launch-configs JSONL)");
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
