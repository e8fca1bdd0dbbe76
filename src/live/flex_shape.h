// The live opt-in to shaping (docs/formats/flex-shape.md): a batch script that takes its world
// size from Slurm's environment (SLURM_JOB_NUM_NODES, SLURM_GPUS_ON_NODE, as torchrun / srun
// launchers do) declares it with one line
//
//   #ORRERY shape=flex gpus=8-16 model=gpt:layers=24,hidden=2048,heads=16,vocab=50257 seq=2048 global_batch=512
//
// and the daemon, under a policy with shape=goodput, may then run it on any power-of-two GPU
// count in [8, 16] the planner chooses: it updates the held job's request (NumNodes,
// TresPerNode, ReqNodeList) before releasing it. Jobs without the line keep their request.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "base/result.h"
#include "model/work.h"

namespace orrery::live {

struct FlexSpec {
  uint32_t min_gpus = 0, max_gpus = 0;  // powers of two, min ≤ max
  TrainModel model;                     // what the planner times (model/work.h)
};

// The script's `#ORRERY` line (the first line whose first word is "#ORRERY"), or nullopt when
// it has none. `where` names the script in errors ("job 12's batch script"); an error reads
// "WHERE:LINE:COL: key 'gpus': expected ..., got \"...\"". A second #ORRERY line is an error.
Result<std::optional<FlexSpec>> ParseFlexLine(std::string_view script, std::string_view where);

}  // namespace orrery::live
