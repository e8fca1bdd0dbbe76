// The scheduling advisor's reader (`orrery inspect`): launch files in, launch schemas
// out, as text or JSON (docs/formats/inspect.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "semantic/schema.h"

namespace orrery::semantic {

struct InputFile {
  std::string name;  // path as given (cited in sources and warnings)
  std::string text;
};

// One file on its own.
LaunchSchema InspectText(std::string_view name, std::string_view text);

class LlmSchemaFiller;

// Several files: each gets its schema; a file that references another of the inputs
// (`--deepspeed ds_config.json`, `deepspeed: examples/ds_z3.json`: matched by path suffix)
// has that file's settings merged in after its own (its own win). With `llm`, a schema the
// readers could not read well is completed by the LLM backend (llm_schema.h).
std::vector<LaunchSchema> InspectFiles(const std::vector<InputFile>& files, LlmSchemaFiller* llm = nullptr);

// {"framework": ..., ..., "checkpoint_interval_steps": ..., "sources": {...}}: the label
// keys in label order (null when unknown), then `sources`: per known field its file, line,
// col, key, provenance, confidence and note; plus "_file", "_params_estimate" and "_warnings".
nlohmann::ordered_json ToJson(const LaunchSchema& s);

// The human-readable listing: one line per field with value, source and confidence.
std::string ToText(const LaunchSchema& s);

}  // namespace orrery::semantic
