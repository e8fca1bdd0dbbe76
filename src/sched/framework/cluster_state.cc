#include "sched/framework/cluster_state.h"

#include <algorithm>

#include "base/result.h"

namespace orrery {

Status CheckGpuTracking(const Cluster& cluster) {
  for (const Node& nd : cluster.nodes)
    if (nd.gpus > kMaxTrackedNodeGpus)
      return MakeError("node '" + nd.name + "' has " + std::to_string(nd.gpus) +
                       " GPUs: fractional GPU jobs are accounted GPU by GPU, on nodes of at most " +
                       std::to_string(kMaxTrackedNodeGpus) + " GPUs");
  return Status::Ok();
}

ClusterState::ClusterState(const Cluster& cluster, bool track_gpus, bool model_cpu_mem)
    : cluster_(&cluster), track_gpus_(track_gpus), model_cpu_mem_(model_cpu_mem) {
  size_t n = cluster.nodes.size();
  free_.resize(n);
  total_.resize(n);
  cpu_free_.resize(n);
  mem_free_.resize(n);
  cpu_total_.resize(n);
  mem_total_.resize(n);
  gpu_base_.resize(n);
  local_.resize(n);
  uint32_t base = 0;
  for (size_t i = 0; i < n; ++i) {
    const Node& nd = cluster.nodes[i];
    ORR_CHECK(!track_gpus_ || nd.gpus <= kMaxTrackedNodeGpus);
    free_[i] = total_[i] = nd.gpus;
    cpu_free_[i] = cpu_total_[i] = nd.cpu_milli;
    mem_free_[i] = mem_total_[i] = nd.mem_mib;
    gpu_base_[i] = base;
    base += nd.gpus;
    total_all_ += nd.gpus;
  }
  if (track_gpus_) milli_.assign(base, 1000);
  size_t ntypes = cluster.gpu_types.size();
  vcs_.resize(cluster.vcs.size());
  for (size_t v = 0; v < cluster.vcs.size(); ++v) {
    VcIndex& vi = vcs_[v];
    vi.nodes = cluster.vcs[v].nodes;
    for (NodeId id : vi.nodes) vi.max_node_gpus = std::max(vi.max_node_gpus, total_[id.v]);
    vi.buckets.assign(vi.max_node_gpus + 1, NodeMask(vi.nodes.size()));
    vi.bucket_nodes.assign(vi.max_node_gpus + 1, 0);
    vi.type_masks.assign(ntypes, NodeMask(vi.nodes.size()));
    for (size_t li = 0; li < vi.nodes.size(); ++li) {
      NodeId id = vi.nodes[li];
      local_[id.v] = LocalPos{static_cast<uint32_t>(li), static_cast<uint16_t>(v)};
      vi.buckets[free_[id.v]].Set(li);
      ++vi.bucket_nodes[free_[id.v]];
      vi.free_gpus += free_[id.v];
      vi.total_gpus += total_[id.v];
      const Node& nd = cluster.nodes[id.v];
      if (nd.gpu_type.valid()) vi.type_masks[nd.gpu_type.v].Set(li);
    }
  }
}

const NodeMask* ClusterState::TypeFilter(VcId vc, GpuTypeMask mask) const {
  if (mask == 0) return nullptr;
  const VcIndex& vi = vcs_[vc.v];
  // Single-type masks (the common case) need no allocation.
  if (std::has_single_bit(mask) && std::countr_zero(mask) < static_cast<int>(vi.type_masks.size()))
    return &vi.type_masks[std::countr_zero(mask)];
  // Other masks: the union (empty for types this cluster lacks), cached per (VC, mask) in
  // this instance; entries are heap-allocated so returned pointers stay valid (and shared by
  // a copy of the state: they depend only on the nodes).
  for (const auto& e : type_cache_)
    if (e.vc == vc.v && e.mask == mask) return e.nodes.get();
  auto u = std::make_shared<NodeMask>(vi.nodes.size());
  for (size_t t = 0; t < vi.type_masks.size(); ++t) {
    if (!(mask & (1u << t))) continue;
    for (size_t w = 0; w < u->words().size(); ++w) u->words()[w] |= vi.type_masks[t].words()[w];
  }
  type_cache_.push_back(TypeCacheEntry{vc.v, mask, std::move(u)});
  return type_cache_.back().nodes.get();
}

void ClusterState::Move(NodeId n, uint16_t from, uint16_t to) {
  if (from == to || drained(n)) return;  // a drained node stays in bucket 0
  const LocalPos pos = local_[n.v];
  VcIndex& vi = vcs_[pos.vc];
  const uint32_t li = pos.index;
  vi.buckets[from].Clear(li);
  vi.buckets[to].Set(li);
  --vi.bucket_nodes[from];
  ++vi.bucket_nodes[to];
  vi.free_gpus = vi.free_gpus - from + to;
}

void ClusterState::Apply(const Allocation& a) {
  for (const Slot& s : a) {
    uint32_t n = s.node.v;
    uint16_t before = free_[n];
    if (track_gpus_) {
      uint32_t m = s.gpu_mask;
      uint16_t newly_partial = 0;
      while (m) {
        int g = std::countr_zero(m);
        m &= m - 1;
        uint16_t& f = milli_[gpu_base_[n] + g];
        ORR_CHECK(f >= s.milli);
        if (f == 1000) ++newly_partial;
        f = static_cast<uint16_t>(f - s.milli);
      }
      ORR_CHECK(free_[n] >= newly_partial);
      free_[n] = static_cast<uint16_t>(free_[n] - newly_partial);
    } else {
      ORR_CHECK(free_[n] >= s.gpus);
      free_[n] = static_cast<uint16_t>(free_[n] - s.gpus);
    }
    if (model_cpu_mem_) {
      cpu_free_[n] -= std::min(cpu_free_[n], s.cpu_milli);
      mem_free_[n] -= std::min(mem_free_[n], s.mem_mib);
    }
    busy_milli_ += static_cast<uint64_t>(s.gpus) * s.milli;
    Move(s.node, before, free_[n]);
  }
}

void ClusterState::Release(const Allocation& a) {
  for (const Slot& s : a) {
    uint32_t n = s.node.v;
    uint16_t before = free_[n];
    if (track_gpus_) {
      uint32_t m = s.gpu_mask;
      while (m) {
        int g = std::countr_zero(m);
        m &= m - 1;
        uint16_t& f = milli_[gpu_base_[n] + g];
        f = static_cast<uint16_t>(f + s.milli);
        ORR_CHECK(f <= 1000);
        if (f == 1000) ++free_[n];
      }
    } else {
      free_[n] = static_cast<uint16_t>(free_[n] + s.gpus);
    }
    ORR_CHECK(free_[n] <= total_[n]);
    if (model_cpu_mem_) {
      cpu_free_[n] = std::min(cpu_total_[n], cpu_free_[n] + s.cpu_milli);
      mem_free_[n] = std::min(mem_total_[n], mem_free_[n] + s.mem_mib);
    }
    busy_milli_ -= static_cast<uint64_t>(s.gpus) * s.milli;
    Move(s.node, before, free_[n]);
  }
}

void ClusterState::SetDrained(NodeId n, bool on) {
  if (drained(n) == on) return;
  if (drained_.empty()) drained_.assign(free_.size(), 0);
  uint32_t& count = vcs_[cluster_->nodes[n.v].vc.v].drained_nodes;
  count = on ? count + 1 : count - 1;
  if (on) {
    Move(n, free_[n.v], 0);
    drained_[n.v] = 1;
  } else {
    drained_[n.v] = 0;
    Move(n, 0, free_[n.v]);
  }
}

void ClusterState::SetPowered(NodeId id, bool on) {
  const uint32_t n = id.v;
  if (unpowered_.empty()) {
    if (on) return;
    unpowered_.assign(free_.size(), 0);
  }
  if (on == !unpowered_[n]) return;
  if (!on) {
    ORR_CHECK(idle(id));  // only an idle node can be powered down
    if (track_gpus_)
      for (uint32_t g = 0; g < total_[n]; ++g) {
        ORR_CHECK(milli_[gpu_base_[n] + g] == 1000);
        milli_[gpu_base_[n] + g] = 0;
      }
    free_[n] = 0;
    cpu_free_[n] = 0;
    mem_free_[n] = 0;
    Move(id, total_[n], 0);
    unpowered_[n] = 1;
    ++unpowered_count_;
  } else {
    if (track_gpus_)
      for (uint32_t g = 0; g < total_[n]; ++g) milli_[gpu_base_[n] + g] = 1000;
    free_[n] = total_[n];
    cpu_free_[n] = cpu_total_[n];
    mem_free_[n] = mem_total_[n];
    Move(id, 0, total_[n]);
    unpowered_[n] = 0;
    --unpowered_count_;
  }
}

}  // namespace orrery
