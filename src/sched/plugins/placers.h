// Placement plugins (filter + score in one pass over the bucket index).
//
//  consolidate  Helios' rules: VC free < demand → fail; demand ≤ node size: best fit
//               (fewest free GPUs that still fit, lowest index); larger: ⌊d/G⌋ wholly
//               idle nodes + the next node in descending-free order for the remainder.
//  first-fit    lowest-index node that fits; larger jobs: lowest-index idle nodes.
//  spread       node with the most free GPUs (worst fit); larger jobs as consolidate.
//  random       uniformly random feasible node (seeded stream "placer/random").
// All placers honour: GPU-type constraints, CPU/memory where modelled, a blocked-node
// mask (reservations), an explicit node count (gpus split evenly), fractional GPUs
// (gpus == 1, milli < 1000: one GPU with enough free share; best fit for consolidate).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "sched/framework/api/plugin.h"

namespace orrery {

enum class PlaceStrategy { kConsolidate, kFirstFit, kSpread, kRandom };

class Placer final : public PlacePlugin {
 public:
  Placer(PlaceStrategy s, uint64_t seed);
  std::string_view name() const override;
  PluginStatus Place(const SchedJob& j, const ClusterState& state, const NodeMask* blocked, Allocation* out) override;
  bool pure() const override { return strategy_ != PlaceStrategy::kRandom; }  // random draws from its stream
  std::unique_ptr<PlacePlugin> Clone(PluginCopies&) const override { return std::make_unique<Placer>(*this); }

 private:
  // Returns local index of the chosen node for a single-node request of `need` whole GPUs, or -1.
  int64_t PickSingle(const SchedJob& j, const ClusterState& st, const NodeMask* allowed, const NodeMask* blocked,
                     uint16_t need, uint32_t cpu, uint32_t mem);
  PluginStatus PlaceFractional(const SchedJob& j, const ClusterState& st, const NodeMask* allowed,
                               const NodeMask* blocked, Allocation* out);
  PluginStatus PlaceCpuOnly(const SchedJob& j, const ClusterState& st, const NodeMask* allowed,
                            const NodeMask* blocked, Allocation* out);
  PluginStatus PlaceMulti(const SchedJob& j, const ClusterState& st, const NodeMask* allowed, const NodeMask* blocked,
                          Allocation* out);
  PluginStatus PlaceNodes(const SchedJob& j, const ClusterState& st, const NodeMask* allowed,
                          const NodeMask* blocked, Allocation* out);
  std::vector<size_t>& scratch_idle() { return idle_; }
  PlaceStrategy strategy_;
  uint64_t rng_state_;
  std::vector<size_t> idle_;
};

Result<std::unique_ptr<Placer>> MakePlacer(const std::string& name, uint64_t seed);

// A whole-GPU request that Placer::Place places node by node: `count` nodes with `per` wholly
// free GPUs each (PlaceNodes: `nodes` > 1 dividing `gpus`; PickSingle: one node, gpus ≤ the
// VC's largest node). nullopt for CPU-only and fractional requests and for what PlaceMulti
// places (more GPUs than a node, no node count dividing them). The one home of that dispatch.
struct NodeDemand {
  uint32_t count = 1;
  uint32_t per = 0;  // may exceed max_node_gpus (such a request fits nowhere)
};
std::optional<NodeDemand> NodeByNodeDemand(const JobRequest& job, uint16_t max_node_gpus);

// Cheap necessary condition for `j` to fit the VC's free GPUs now (bucket counts only,
// ignoring types, CPU/memory and blocked nodes): false means Place would fail.
bool QuickFit(const SchedJob& j, const ClusterState& st);

// Lowest-index wholly free GPUs of node n (bit mask), when the state tracks GPUs; else 0.
uint32_t PickWholeGpus(const ClusterState& st, NodeId n, uint16_t count);

}  // namespace orrery
