// Free resources of a cluster, indexed for fast placement. This is the snapshot
// every placement plugin reads; the scheduler applies Allocations to it ("assume")
// and the driver confirms them. Same type in the simulator and the live daemon.
//
// Indexing: for each VC, nodes are numbered locally 0..n-1 (ascending NodeId) and
// kept in buckets by their number of wholly free GPUs, one bitset per count, so a
// best-fit lookup costs O(buckets × n/64) word operations, never a scan of jobs.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <vector>

#include "base/ids.h"
#include "base/result.h"
#include "model/cluster.h"
#include "model/job.h"

namespace orrery {

// Bitset over the VC-local node indices of one VC.
class NodeMask {
 public:
  NodeMask() = default;
  explicit NodeMask(size_t n) : words_((n + 63) / 64, 0), n_(n) {}
  void Set(size_t i) { words_[i >> 6] |= (1ULL << (i & 63)); }
  void Clear(size_t i) { words_[i >> 6] &= ~(1ULL << (i & 63)); }
  bool Test(size_t i) const { return (words_[i >> 6] >> (i & 63)) & 1; }
  void Reset() { std::fill(words_.begin(), words_.end(), 0); }
  bool Any() const {
    for (uint64_t w : words_)
      if (w) return true;
    return false;
  }
  uint64_t Count() const {
    uint64_t c = 0;
    for (uint64_t w : words_) c += static_cast<uint64_t>(std::popcount(w));
    return c;
  }
  size_t size() const { return n_; }
  const std::vector<uint64_t>& words() const { return words_; }
  std::vector<uint64_t>& words() { return words_; }

 private:
  std::vector<uint64_t> words_;
  size_t n_ = 0;
};

// One node's share of an allocation.
struct Slot {
  NodeId node;
  uint16_t gpus = 0;        // GPUs on this node
  uint16_t milli = 1000;    // share of each GPU (1000 = whole)
  uint32_t gpu_mask = 0;    // which GPUs (bit i = GPU i of the node); 0 when GPUs are not tracked
  uint32_t cpu_milli = 0;
  uint32_t mem_mib = 0;
};
// The slots of one job. Most jobs use one or two nodes, so up to two slots live inline
// and need no heap allocation (the simulator starts millions of jobs).
class Allocation {
 public:
  Allocation() = default;
  Allocation(std::initializer_list<Slot> init) {
    for (const Slot& s : init) push_back(s);
  }
  Allocation(const Allocation& o) { *this = o; }
  Allocation(Allocation&& o) noexcept { *this = std::move(o); }
  Allocation& operator=(const Allocation& o) {
    if (this == &o) return *this;
    clear();
    for (const Slot& s : o) push_back(s);
    return *this;
  }
  Allocation& operator=(Allocation&& o) noexcept {
    if (this == &o) return *this;
    heap_ = std::move(o.heap_);
    size_ = o.size_;
    for (size_t i = 0; i < kInline && i < size_; ++i) inline_[i] = o.inline_[i];
    o.size_ = 0;
    o.heap_.clear();
    return *this;
  }
  void push_back(const Slot& s) {
    if (size_ < kInline) {
      inline_[size_] = s;
    } else {
      if (size_ == kInline) heap_.assign(inline_, inline_ + kInline);
      heap_.push_back(s);
    }
    ++size_;
  }
  void clear() {
    size_ = 0;
    heap_.clear();
  }
  void shrink_to_fit() { heap_.shrink_to_fit(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const Slot* begin() const { return size_ > kInline ? heap_.data() : inline_; }
  const Slot* end() const { return begin() + size_; }
  Slot* begin() { return size_ > kInline ? heap_.data() : inline_; }
  Slot* end() { return begin() + size_; }
  const Slot& operator[](size_t i) const { return begin()[i]; }
  Slot& operator[](size_t i) { return begin()[i]; }

 private:
  static constexpr size_t kInline = 2;
  Slot inline_[kInline];
  std::vector<Slot> heap_;  // all slots once there are more than kInline
  uint32_t size_ = 0;
};

// Per-GPU accounting (fractional jobs) names a slot's GPUs by Slot::gpu_mask: nodes of at most
// this many GPUs. Counting whole GPUs only (every other run) has no such limit.
inline constexpr int kMaxTrackedNodeGpus = std::numeric_limits<decltype(Slot::gpu_mask)>::digits;
// Whether every node of `cluster` can be accounted GPU by GPU; the error names the first one
// that cannot. Drivers that track GPUs check this before building a ClusterState.
Status CheckGpuTracking(const Cluster& cluster);

class ClusterState {
 public:
  // track_gpus: keep per-GPU free shares (needed for fractional jobs; CheckGpuTracking must
  // pass); otherwise only counts. model_cpu_mem: check and account CPU and memory where
  // nodes declare them.
  ClusterState(const Cluster& cluster, bool track_gpus, bool model_cpu_mem);

  const Cluster& cluster() const { return *cluster_; }
  size_t num_vcs() const { return vcs_.size(); }

  // --- node queries
  uint16_t free_gpus(NodeId n) const { return free_[n.v]; }     // wholly free GPUs
  uint16_t total_gpus(NodeId n) const { return total_[n.v]; }
  uint32_t free_cpu(NodeId n) const { return cpu_free_[n.v]; }
  uint32_t free_mem(NodeId n) const { return mem_free_[n.v]; }
  uint16_t gpu_free_milli(NodeId n, int gpu) const { return milli_[gpu_base_[n.v] + gpu]; }
  bool tracks_gpus() const { return track_gpus_; }
  bool models_cpu_mem() const { return model_cpu_mem_; }
  // True when `job` fits node n's CPU and memory (always true when not modelled).
  bool CpuMemFits(NodeId n, uint32_t cpu_milli, uint32_t mem_mib) const {
    if (!model_cpu_mem_) return true;
    return (cpu_total_[n.v] == 0 || cpu_free_[n.v] >= cpu_milli) && (mem_total_[n.v] == 0 || mem_free_[n.v] >= mem_mib);
  }

  // --- VC queries
  const std::vector<NodeId>& vc_nodes(VcId vc) const { return vcs_[vc.v].nodes; }
  uint64_t vc_free_gpus(VcId vc) const { return vcs_[vc.v].free_gpus; }
  uint64_t vc_total_gpus(VcId vc) const { return vcs_[vc.v].total_gpus; }
  uint16_t vc_max_node_gpus(VcId vc) const { return vcs_[vc.v].max_node_gpus; }
  // Bitset (VC-local indices) of nodes with exactly k wholly free GPUs.
  const NodeMask& bucket(VcId vc, uint16_t k) const { return vcs_[vc.v].buckets[k]; }
  // Nodes of `vc` with at least k wholly free GPUs (k ≥ 1): the buckets' counts, kept by
  // Move, so a placement that cannot find enough nodes fails without scanning a bitset.
  uint64_t nodes_with_free(VcId vc, uint16_t k) const {
    const VcIndex& vi = vcs_[vc.v];
    uint64_t n = 0;
    for (size_t b = k; b < vi.bucket_nodes.size(); ++b) n += vi.bucket_nodes[b];
    return n;
  }
  // Bitset of nodes accepting a GPU-type mask (cluster type ids); nullptr = all nodes.
  const NodeMask* TypeFilter(VcId vc, GpuTypeMask mask) const;
  uint32_t local_index(NodeId n) const { return local_[n.v].index; }

  uint64_t busy_gpu_milli() const { return busy_milli_; }  // allocated milli-GPUs, cluster-wide
  uint64_t total_gpus_all() const { return total_all_; }

  // --- mutation
  void Apply(const Allocation& a);
  void Release(const Allocation& a);

  // --- power states (energy saving). A node that is not powered (off or booting) offers
  // nothing to placement: it holds no free GPU, CPU or memory (it sits in bucket 0, like a
  // full node) and its VC's free GPUs exclude it; its totals (admission) are unchanged.
  // Only an idle node may be powered down. Costs nothing until the first power-down.
  bool powered(NodeId n) const { return unpowered_.empty() || !unpowered_[n.v]; }
  // Nothing allocated on n: every GPU whole and free, CPU and memory untouched.
  bool idle(NodeId n) const {
    return free_[n.v] == total_[n.v] && cpu_free_[n.v] == cpu_total_[n.v] && mem_free_[n.v] == mem_total_[n.v];
  }
  uint64_t unpowered_count() const { return unpowered_count_; }
  void SetPowered(NodeId n, bool on);
  // --- drain (a cordoned node): a drained node keeps its running allocations, which
  // release normally, but offers nothing to placement: it sits in bucket 0 and its VC's free
  // GPUs exclude it (free_gpus(n) still tells its true free GPUs). Slurm's DRAIN. Not combined
  // with power states. Costs nothing until the first drain.
  bool drained(NodeId n) const { return !drained_.empty() && drained_[n.v]; }
  uint32_t vc_drained_nodes(VcId vc) const { return vcs_[vc.v].drained_nodes; }
  void SetDrained(NodeId n, bool on);

 private:
  struct VcIndex {
    std::vector<NodeId> nodes;
    std::vector<NodeMask> buckets;  // [0..max_node_gpus]
    std::vector<uint32_t> bucket_nodes;  // [k]: buckets[k].Count()
    std::vector<NodeMask> type_masks;  // per cluster GPU type id
    uint64_t free_gpus = 0, total_gpus = 0;
    uint16_t max_node_gpus = 0;
    uint32_t drained_nodes = 0;
  };
  void Move(NodeId n, uint16_t from, uint16_t to);

  struct TypeCacheEntry {
    uint16_t vc;
    GpuTypeMask mask;
    std::shared_ptr<const NodeMask> nodes;
  };
  mutable std::vector<TypeCacheEntry> type_cache_;
  const Cluster* cluster_;
  bool track_gpus_, model_cpu_mem_;
  std::vector<uint16_t> free_, total_;
  std::vector<uint32_t> cpu_free_, mem_free_, cpu_total_, mem_total_;
  std::vector<uint32_t> gpu_base_;  // offset of node's GPUs in milli_
  std::vector<uint16_t> milli_;     // free milli per GPU (track_gpus_ only)
  // Per node: its index among its VC's nodes and its VC, side by side (Move, on every Apply
  // and Release, reads both; the Node records are 7× larger).
  struct LocalPos {
    uint32_t index = 0;
    uint16_t vc = 0;
  };
  std::vector<LocalPos> local_;
  std::vector<VcIndex> vcs_;
  uint64_t busy_milli_ = 0, total_all_ = 0;
  std::vector<uint8_t> unpowered_;  // per node, 1 = off or booting (empty until first use)
  std::vector<uint8_t> drained_;    // per node, 1 = drained (empty until first use)
  uint64_t unpowered_count_ = 0;
};

// Iterates set bits of (a & ~b) in ascending order; b may be null.
template <class F>
inline bool ForEachSet(const NodeMask& a, const NodeMask* allowed, const NodeMask* blocked, F&& f) {
  const auto& w = a.words();
  for (size_t i = 0; i < w.size(); ++i) {
    uint64_t x = w[i];
    if (allowed) x &= allowed->words()[i];
    if (blocked) x &= ~blocked->words()[i];
    while (x) {
      int b = std::countr_zero(x);
      if (f(i * 64 + b)) return true;  // stop
      x &= x - 1;
    }
  }
  return false;
}

}  // namespace orrery
