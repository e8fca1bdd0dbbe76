// The believed future of one VC's GPUs, node by node (Slurm's backfill keeps the same
// picture as a time-ordered node-space map): for every node and every k = 1..G, the
// earliest believed end (est_end) by which the node has k wholly free GPUs, and a min-tree
// over the nodes for each k. EASY's reservation asks it when the head of the queue first
// fits -- the earliest time at which `count` nodes each have `per` free GPUs -- in
// O(count log n), instead of releasing the running jobs one by one in est_end order and
// trying the placement after each.
//
// The answer equals that walk's exactly where a node's free GPUs after a release are its
// free GPUs now plus the released slots' GPUs: every running slot holds whole GPUs (the
// Scheduler counts the others, partial()) and nodes are neither drained nor powered down
// (the Scheduler checks those before handing the profile out).
//
// Leaves are refreshed lazily: Add/Remove mark a node, Earliest recomputes the marked nodes
// from their entries and the node's free GPUs in the ClusterState passed in (which must be
// the real state, with no tentative release pending).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "base/time.h"
#include "sched/framework/cluster_state.h"

namespace orrery {

class ReleaseProfile {
 public:
  // One running job's share of a node: its GPUs there come back at `end`.
  struct Entry {
    Time end;
    uint32_t slot;  // the scheduler's job slot
    uint16_t gpus;  // whole GPUs (0 for a slot that holds none, or not whole GPUs)
  };
  // What Earliest found.
  enum class FitKind : uint8_t {
    kAt,     // first fits once every job believed to end by `at` has ended
    kNever,  // does not fit even with every running job ended
    kNow,    // fits with nothing released (the caller asked about a job that fits now)
  };
  struct Fit {
    FitKind kind = FitKind::kNever;
    Time at = 0;  // kAt only
  };

  // Sizes the profile for a VC of `nodes` nodes with at most `max_gpus` GPUs per node. Keeps
  // the entries of nodes 0..nodes-1 (a grown VC appends nodes) and marks every node.
  void Reset(size_t nodes, uint16_t max_gpus);
  // A running job's slot on local node `local`: `whole` = it holds `gpus` whole GPUs.
  void Add(uint32_t local, Time end, uint32_t slot, uint16_t gpus, bool whole);
  void Remove(uint32_t local, uint32_t slot, uint16_t gpus, bool whole);
  // Slots that hold GPUs but not whole ones (fractional, shared): while any runs, the
  // profile's arithmetic does not describe the cluster.
  uint64_t partial() const { return partial_; }
  // Every node is recomputed at the next query (after a change the entries do not show:
  // a drain or a power change of a node).
  void MarkAllDirty();
  const std::vector<Entry>& entries(uint32_t local) const { return entries_[local]; }

  // The earliest believed end by which `count` nodes of the VC (local indices into
  // st.vc_nodes(vc)) each have at least `per` (1..G) wholly free GPUs, and those nodes
  // (every node reaching `per` by then, ascending local index) in *nodes (kAt only).
  Fit Earliest(const ClusterState& st, VcId vc, uint16_t per, uint32_t count, std::vector<uint32_t>* nodes);

 private:
  static constexpr Time kFreeNow = std::numeric_limits<Time>::min();
  static constexpr Time kNoEnd = std::numeric_limits<Time>::max();
  void Mark(uint32_t local);
  void Flush(const ClusterState& st, VcId vc);
  void RefreshLeaf(uint32_t local, uint16_t free_now);
  void Pull(size_t node);  // a tree node's row = the min of its children's rows
  Time* Row(size_t node) { return &tree_[node * g_]; }
  Time KthSmallest(uint16_t per, uint32_t count);
  void Collect(size_t node, uint16_t per, Time at, std::vector<uint32_t>* nodes) const;

  size_t n_ = 0, leaves_ = 1;  // nodes; leaves of the tree (power of two ≥ n_)
  uint16_t g_ = 1;             // row width: GPUs per node (largest)
  // tree_[i * g_ + k - 1]: node i's (heap order, root 1) earliest end with k free GPUs.
  std::vector<Time> tree_;
  std::vector<std::vector<Entry>> entries_;
  std::vector<uint32_t> dirty_;
  std::vector<uint8_t> is_dirty_;
  uint64_t partial_ = 0;
  std::vector<Entry> sorted_;                  // scratch of RefreshLeaf
  std::vector<std::pair<Time, size_t>> heap_;  // scratch of KthSmallest
};

}  // namespace orrery
