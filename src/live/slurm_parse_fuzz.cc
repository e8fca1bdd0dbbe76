// libFuzzer target: the parsers of Slurm's command-line output (squeue, sinfo, hostlists,
// GRES strings, times, time limits, duration hints, `scontrol show job` files, recovery's
// comment keys, the #ORRERY shape opt-in line of a batch script) must return a value or an error for
// every input, never crash, hang or allocate without bound. The first byte picks the
// parser; seeds: tests/fixtures/fuzz/slurm_parse_fuzz (scripts/test.sh).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "live/flex_shape.h"
#include "live/recovery.h"
#include "live/slurm_client.h"

using namespace orrery::live;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 8) {
    case 0: {
      auto r = ParseSqueue(text);
      if (r.ok()) {
        for (const SlurmJob& j : *r)
          if (j.id == 0) __builtin_trap();  // job ids are positive
      } else if (r.error().message.rfind("squeue output line ", 0) != 0) {
        __builtin_trap();  // every error names its line
      }
      break;
    }
    case 1: {
      auto r = ParseSinfo(text);
      if (r.ok()) {
        for (const SlurmNode& n : *r)
          if (n.name.empty()) __builtin_trap();
      } else if (r.error().message.rfind("sinfo output line ", 0) != 0) {
        __builtin_trap();
      }
      break;
    }
    case 2: {
      auto r = ExpandHostlist(text);
      if (r.ok() && r->size() > kMaxHostlistNames) __builtin_trap();
      break;
    }
    case 3:
      (void)ParseGpuCount(text);
      break;
    case 4:
      (void)ParseSlurmTime(text);
      (void)ParseTimeLimit(text);
      break;
    case 5: {
      auto r = ParseJobFiles(text);
      if (r.ok() && r->stdout_path.size() > text.size() + r->workdir.size() + 1) __builtin_trap();  // from the input only
      break;
    }
    case 7: {
      auto r = ParseFlexLine(text, "job.sh");
      if (r.ok() && r->has_value() && ((*r)->min_gpus == 0 || (*r)->min_gpus > (*r)->max_gpus)) __builtin_trap();
      if (!r.ok() && r.error().message.rfind("job.sh:", 0) != 0) __builtin_trap();  // every error is located
      break;
    }
    default: {
      (void)DurationHint(text);
      // Recovery's readers of the restart contract's comment keys.
      if (HeartbeatPath(text, 4294967295u).size() > 5 * text.size()) __builtin_trap();  // "%j" -> 10 digits
      (void)HangAfter(text);
      break;
    }
  }
  return 0;
}
