// From a Document (what a file sets) to a LaunchSchema (what the job will do): the key
// table that maps each framework's keys and flags to schema fields, the choice among
// competing sources, the framework's identification and the derived values
// (docs/design/semantic.md).
#pragma once

#include "semantic/document.h"
#include "semantic/schema.h"

namespace orrery::semantic {

// The training framework, as the schema names it.
enum class Framework : uint8_t {
  kUnknown,
  kMegatronLM,
  kMegatronDeepSpeed,
  kDeepSpeed,
  kTorchtitan,
  kLlamaFactory,
  kAxolotl,
  kHfTransformers,
  kHfTrl,
  kNeMo,
  kNanoGPT,
  kVerl,
  kOpenRLHF,
};
std::string_view FrameworkName(Framework f);  // "Megatron-LM", "Hugging Face TRL", ...

// Scores each framework on the document's programs, keys and format; kUnknown when
// nothing points anywhere.
Framework DetectFramework(const Document& doc);

// Paths of config files the document names (--deepspeed ds.json, --config_file x.yaml,
// CONFIG_FILE=...), as written.
std::vector<std::string> ReferencedFiles(const Document& doc);

LaunchSchema Extract(const Document& doc);

}  // namespace orrery::semantic
