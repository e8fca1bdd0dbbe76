// libFuzzer target: the validation of an LLM's answer about a launch config, on arbitrary
// bytes. The first byte picks the located schema the answer is checked against (none, a
// partial shell script, a DeepSpeed JSON), so the cross-checks run against located fields
// too. Properties: no crash, no hang; a valid answer merges without overriding a located
// field, and the merged schema always serializes.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "semantic/inspect.h"
#include "semantic/llm_schema.h"

namespace {

const orrery::semantic::LaunchSchema& Located(uint8_t pick) {
  using orrery::semantic::InspectText;
  static const orrery::semantic::LaunchSchema kSchemas[] = {
      InspectText("none.txt", ""),
      InspectText("job.sh", "#SBATCH --nodes=2\n#SBATCH --gres=gpu:8\ntorchrun --nproc_per_node=8 train.py\n"),
      InspectText("ds.json", "{\"train_micro_batch_size_per_gpu\": 4, \"train_batch_size\": 512, "
                             "\"zero_optimization\": {\"stage\": 2}}"),
  };
  return kSchemas[pick % 3];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const orrery::semantic::LaunchSchema& located = Located(data[0]);
  const std::string answer(reinterpret_cast<const char*>(data + 1), size - 1);
  auto fields = orrery::semantic::ParseLlmSchema(answer, located);
  if (!fields.ok()) return 0;
  orrery::semantic::LaunchSchema merged = located;
  orrery::semantic::MergeLlmFields(&merged, *fields, "fuzz");
  for (size_t i = 0; i < merged.fields.size(); ++i)
    if (located.fields[i] && !(merged.fields[i] && merged.fields[i]->provenance == located.fields[i]->provenance &&
                               merged.fields[i]->origin.line == located.fields[i]->origin.line))
      std::abort();  // a located field was overridden
  (void)orrery::semantic::ToJson(merged).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  return 0;
}
