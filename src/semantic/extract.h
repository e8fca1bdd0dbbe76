// From a Document (what a file sets) to a LaunchSchema (what the job will do): the key
// table that maps each framework's keys and flags to schema fields, the choice among
// competing sources, the framework's identification and the derived values
// (docs/design/semantic.md).
#pragma once

#include <optional>
#include <string_view>

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
// The framework a name stands for (exactly a FrameworkName other than kUnknown's), or nullopt.
std::optional<Framework> FrameworkFromName(std::string_view name);

// Scores each framework on the document's programs, keys and format; kUnknown when
// nothing points anywhere.
Framework DetectFramework(const Document& doc);

// Paths of config files the document names (--deepspeed ds.json, --config_file x.yaml,
// CONFIG_FILE=...), as written.
std::vector<std::string> ReferencedFiles(const Document& doc);

LaunchSchema Extract(const Document& doc);

// The model's size for duration models (docs/formats/inspect.md, "Parameter counts"): the
// model table for a known name, else 12·L·h² + V·h from the schema's layers and width (V the
// file's vocabulary, else GPT-2's 50257), else the size the schema states.
std::optional<ParamsEstimate> EstimateParamsOf(const LaunchSchema& s, std::optional<double> vocab);

}  // namespace orrery::semantic
