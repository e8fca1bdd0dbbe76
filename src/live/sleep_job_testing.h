// Test support (header only, not in the library): the sleep job the FakeSlurm daemon tests
// submit to partition "gpu", `gpus` GPUs over `nodes` nodes, running and hinted `d` seconds.
#pragma once

#include <cstdint>

#include "base/time.h"
#include "live/slurm_client.h"

namespace orrery::live {

inline SubmitSpec SleepJob(uint32_t gpus, Duration d, uint32_t nodes = 1) {
  SubmitSpec s;
  s.partition = "gpu";
  s.gpus_per_node = gpus / nodes;
  s.nodes = nodes;
  s.sleep_s = d;
  s.duration_hint = d;
  return s;
}

}  // namespace orrery::live
