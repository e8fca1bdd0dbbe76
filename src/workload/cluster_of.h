// The cluster a workload preset describes: its VCs of whole nodes (gpus_per_node GPUs
// each, a VC's last node holding the remainder), one pool when the preset has one VC.
// `orrery simulate --generate PRESET` runs on it when no --cluster is given.
#pragma once

#include "model/cluster.h"
#include "workload/spec.h"

namespace orrery::workload {

// Node ids dense in VC order, nodes named <vc>-<k>; untyped GPUs.
Cluster ClusterOf(const WorkloadSpec& spec);

}  // namespace orrery::workload
