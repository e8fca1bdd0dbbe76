// A launch file reduced to what the extractor needs, whatever its format: the settings it
// makes (key = value, each located), the programs it runs, its comments and the files it
// names. Readers (readers.cc) build it from shell, JSON, YAML, TOML, Python and Markdown.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "semantic/located_text.h"
#include "semantic/schema.h"

namespace orrery::semantic {

enum class Format : uint8_t { kShell, kJson, kYaml, kToml, kPython, kMarkdown };
std::string_view FormatName(Format f);

// Picks the reader: by extension (.sh .bash .slurm .sbatch .json .yaml .yml .toml .py .md),
// otherwise by content (a '{' first, '#!', '[section]' lines, 'key: value' lines).
Format DetectFormat(std::string_view file_name, std::string_view text);

// Where a setting came from.
enum class SettingKind : uint8_t {
  kFlag,       // a command-line option (--num-layers 24, key=value overrides)
  kConfigKey,  // a key of a JSON/YAML/TOML/Python config (dotted path for nested keys)
  kVariable,   // a shell variable assignment (NNODES=4)
  kSbatch,     // a #SBATCH directive (key prefixed "sbatch.")
  kComment,    // an option of a command quoted in a comment
};

struct Setting {
  std::string key;      // normalized: lower case, '-' -> '_', no leading dashes
  std::string raw_key;  // as written, for citations ("--num-layers", "training.seq_len")
  std::string value;    // scalar text; "true" for a bare flag
  Loc loc;              // where the value was written
  SettingKind kind = SettingKind::kConfigKey;
  bool unresolved = false;  // the value used something unknown before the run
  uint16_t file = 0;        // index into Document::files (a merged referenced file is > 0)
};

struct Document {
  std::string file;
  std::vector<std::string> files;  // files[0] == file; referenced files merged in follow
  Format format = Format::kShell;
  std::vector<Setting> settings;      // in text order
  std::vector<std::string> programs;  // launched programs and modules (torchrun, pretrain_gpt.py, verl.trainer.main_ppo)
  struct Note {
    std::string text;
    Loc loc;
  };
  std::vector<Note> comments;     // full-line comments (inline comments describe a value, not the job)
  std::vector<Warning> warnings;
};

// Appends `other`'s settings (a file `doc` references) after doc's own.
void MergeReferenced(Document* doc, const Document& other);

// Normalizes a key as Setting::key does.
std::string NormalizeKey(std::string_view key);

// Reads `text` (the contents of `file_name`) in `format`. Never fails: a broken file gives
// what could be read plus located warnings.
Document ReadDocument(std::string_view file_name, std::string_view text, Format format);

}  // namespace orrery::semantic
