// The launch schema: what a training job's launch script or config says it will do
// (docs/formats/inspect.md). One LaunchSchema per inspected file; every field is either
// unknown or a value with where it came from (file:line:col), how it was read, and a
// confidence in [0, 1].
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace orrery::semantic {

// The fields, in the order of the corpus labels (shared/corpora/launch-configs/README.md).
enum class FieldId : uint8_t {
  kFramework,
  kModelName,
  kParamsBillion,
  kNumLayers,
  kHiddenSize,
  kNumHeads,
  kSeqLen,
  kGlobalBatch,
  kMicroBatch,
  kTrainSteps,
  kEpochs,
  kTp,
  kPp,
  kDp,
  kZeroStage,
  kNodes,
  kGpusPerNode,
  kTimeLimit,
  kCheckpointIntervalSteps,
};
inline constexpr size_t kNumFields = 19;

// The JSON key of a field ("framework", "model_name", ...), exactly the label name.
std::string_view FieldName(FieldId f);
bool ParseFieldName(std::string_view name, FieldId* out);
// Whether a field holds text (framework, model_name, time_limit) or a number.
bool IsTextField(FieldId f);
inline FieldId FieldAt(size_t i) { return static_cast<FieldId>(i); }

// A field value: a number (integers are exact in a double up to 2^53) or text.
using Value = std::variant<double, std::string>;
std::string FormatValue(const Value& v);  // 12, 0.124, "6-00:00:00" (text unquoted)

// Where a value was read: a file position, and the key or flag it was read from.
struct Origin {
  std::string file;
  uint32_t line = 0;  // 1-based; 0 = the file as a whole (e.g. its name)
  uint32_t col = 0;
  std::string key;    // "--num-layers", "training.seq_len", "#SBATCH --nodes", "file name"
};

// How a value was obtained; ordered by trust (the first is the most direct).
enum class Provenance : uint8_t {
  kWritten,     // a key or flag of the file sets it
  kVariable,    // a shell variable whose name says what it is (NNODES=4)
  kDerived,     // arithmetic over other fields (dp = GPUs / (TP x PP))
  kReferenced,  // the name of a referenced file (ds_z3_config.json -> ZeRO 3)
  kComment,     // a comment or a command line quoted in a comment
  kFileName,    // the inspected file's own name
  kLlm,         // the LLM backend's answer about a file the readers could not read (llm_schema.h)
};
std::string_view ProvenanceName(Provenance p);

struct FieldValue {
  Value value;
  Origin origin;
  Provenance provenance = Provenance::kWritten;
  double confidence = 0;
  std::string note;  // the arithmetic of a derived value, or why a rule applied
};

// A problem found while reading: the file's position and what was wrong. Never fatal.
struct Warning {
  std::string file;
  uint32_t line = 0;
  uint32_t col = 0;
  std::string message;
};
std::string FormatWarning(const Warning& w);  // "file:line:col: message"

// The model's architecture as the model table knows it, or as computed from the
// schema's layers × hidden (docs/formats/inspect.md, "Parameter counts").
struct ParamsEstimate {
  double billions = 0;
  std::string method;  // "table: llama-3-8b" or "formula: 12·L·h² + V·h, L=24, h=2048, V=50257"
};

struct LaunchSchema {
  std::string file;
  std::array<std::optional<FieldValue>, kNumFields> fields;
  std::optional<ParamsEstimate> params_estimate;  // for duration models; not a label field
  std::vector<std::string> referenced_files;      // config files the script names
  std::vector<Warning> warnings;

  const std::optional<FieldValue>& get(FieldId f) const { return fields[static_cast<size_t>(f)]; }
  std::optional<FieldValue>& get(FieldId f) { return fields[static_cast<size_t>(f)]; }
  std::optional<double> number(FieldId f) const;
  std::optional<std::string> text(FieldId f) const;
  // Total GPUs launched (nodes × GPUs per node), when both are known.
  std::optional<double> gpus() const;
};

}  // namespace orrery::semantic
