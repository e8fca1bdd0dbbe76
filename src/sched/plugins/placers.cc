#include "sched/plugins/placers.h"

#include <algorithm>

#include "base/rng.h"

namespace orrery {

namespace {
constexpr const char* kVcFull = "not enough free GPUs in the VC";
constexpr const char* kNoNode = "no single node has enough free GPUs";
constexpr const char* kNoIdle = "not enough wholly idle nodes for a multi-node job";
constexpr const char* kNoRemainder = "no node holds the remainder of a multi-node job";
constexpr const char* kNoGpuShare = "no GPU has enough free share for a fractional job";
constexpr const char* kNoCpuMem = "no node has enough free CPU/memory";

uint64_t NextRand(uint64_t& s) { return SplitMix64(s); }

// Per-node CPU and memory share of a job spread over `parts` equal slots.
uint32_t Share(uint32_t total, uint32_t part, uint32_t parts) {
  if (parts == 0) return total;
  return static_cast<uint32_t>((static_cast<uint64_t>(total) * part + parts - 1) / parts);
}
}  // namespace

uint32_t PickWholeGpus(const ClusterState& st, NodeId n, uint16_t count) {
  if (!st.tracks_gpus()) return 0;
  uint32_t mask = 0;
  uint16_t got = 0;
  for (int g = 0; g < st.total_gpus(n) && got < count; ++g) {
    if (st.gpu_free_milli(n, g) == 1000) {
      mask |= 1u << g;
      ++got;
    }
  }
  return mask;
}

std::optional<NodeDemand> NodeByNodeDemand(const JobRequest& job, uint16_t max_node_gpus) {
  if (job.gpus == 0 || job.is_fractional()) return std::nullopt;
  if (job.nodes > 1 && job.gpus % job.nodes == 0) return NodeDemand{job.nodes, job.gpus / job.nodes};
  if (job.gpus <= max_node_gpus) return NodeDemand{1, job.gpus};
  return std::nullopt;
}

bool QuickFit(const SchedJob& j, const ClusterState& st) {
  const JobRequest& job = *j.job;
  if (job.gpus == 0 || job.is_fractional()) return true;
  const VcId vc = j.vc;
  if (st.vc_free_gpus(vc) < job.gpus) return false;
  const uint16_t g = st.vc_max_node_gpus(vc);
  const std::optional<NodeDemand> d = NodeByNodeDemand(job, g);
  if (!d) return st.nodes_with_free(vc, g) >= job.gpus / g;  // PlaceMulti
  return d->per <= g && st.nodes_with_free(vc, static_cast<uint16_t>(d->per)) >= d->count;
}

Placer::Placer(PlaceStrategy s, uint64_t seed) : strategy_(s), rng_state_(seed ^ Fnv1a64("placer/random")) {}

std::string_view Placer::name() const {
  switch (strategy_) {
    case PlaceStrategy::kConsolidate: return "consolidate";
    case PlaceStrategy::kFirstFit: return "first-fit";
    case PlaceStrategy::kSpread: return "spread";
    case PlaceStrategy::kRandom: return "random";
  }
  return "?";
}

int64_t Placer::PickSingle(const SchedJob& j, const ClusterState& st, const NodeMask* allowed,
                           const NodeMask* blocked, uint16_t need, uint32_t cpu, uint32_t mem) {
  const VcId vc = j.vc;
  const auto& nodes = st.vc_nodes(vc);
  const uint16_t maxg = st.vc_max_node_gpus(vc);
  // No node has `need` free GPUs whatever the masks: nothing to scan (and no random draw,
  // as the scan would make none).
  if (need > maxg || st.nodes_with_free(vc, need) == 0) return -1;
  int64_t found = -1;
  auto fits = [&](size_t li) { return st.CpuMemFits(nodes[li], cpu, mem); };
  switch (strategy_) {
    case PlaceStrategy::kConsolidate:
      for (uint16_t k = need; k <= maxg && found < 0; ++k) {
        ForEachSet(st.bucket(vc, k), allowed, blocked, [&](size_t li) {
          if (!fits(li)) return false;
          found = static_cast<int64_t>(li);
          return true;
        });
      }
      return found;
    case PlaceStrategy::kSpread:
      for (int k = maxg; k >= need && found < 0; --k) {
        ForEachSet(st.bucket(vc, static_cast<uint16_t>(k)), allowed, blocked, [&](size_t li) {
          if (!fits(li)) return false;
          found = static_cast<int64_t>(li);
          return true;
        });
      }
      return found;
    case PlaceStrategy::kFirstFit: {
      // Lowest index over all buckets ≥ need: merge by scanning words in parallel.
      size_t words = st.bucket(vc, 0).words().size();
      for (size_t w = 0; w < words && found < 0; ++w) {
        uint64_t x = 0;
        for (uint16_t k = need; k <= maxg; ++k) x |= st.bucket(vc, k).words()[w];
        if (allowed) x &= allowed->words()[w];
        if (blocked) x &= ~blocked->words()[w];
        while (x) {
          size_t li = w * 64 + static_cast<size_t>(std::countr_zero(x));
          if (fits(li)) {
            found = static_cast<int64_t>(li);
            break;
          }
          x &= x - 1;
        }
      }
      return found;
    }
    case PlaceStrategy::kRandom: {
      // Reservoir sampling over feasible nodes: deterministic given the stream.
      uint64_t seen = 0;
      for (uint16_t k = need; k <= maxg; ++k) {
        ForEachSet(st.bucket(vc, k), allowed, blocked, [&](size_t li) {
          if (!fits(li)) return false;
          ++seen;
          if (NextRand(rng_state_) % seen == 0) found = static_cast<int64_t>(li);
          return false;
        });
      }
      return found;
    }
  }
  return -1;
}

PluginStatus Placer::PlaceFractional(const SchedJob& j, const ClusterState& st, const NodeMask* allowed,
                                     const NodeMask* blocked, Allocation* out) {
  const JobRequest& job = *j.job;
  const auto& nodes = st.vc_nodes(j.vc);
  int64_t best_node = -1;
  int best_gpu = -1;
  int best_free = -1;
  uint64_t seen = 0;
  for (size_t li = 0; li < nodes.size(); ++li) {
    if (allowed && !allowed->Test(li)) continue;
    if (blocked && blocked->Test(li)) continue;
    NodeId n = nodes[li];
    if (!st.CpuMemFits(n, job.cpu_milli, job.mem_mib)) continue;
    for (int g = 0; g < st.total_gpus(n); ++g) {
      int f = st.gpu_free_milli(n, g);
      if (f < job.gpu_milli) continue;
      bool take = false;
      switch (strategy_) {
        case PlaceStrategy::kConsolidate: take = best_free < 0 || f < best_free; break;
        case PlaceStrategy::kSpread: take = f > best_free; break;
        case PlaceStrategy::kFirstFit: take = best_free < 0; break;
        case PlaceStrategy::kRandom: take = (NextRand(rng_state_) % ++seen) == 0; break;
      }
      if (take) {
        best_node = static_cast<int64_t>(li);
        best_gpu = g;
        best_free = f;
      }
    }
  }
  if (best_node < 0) return PluginStatus::Unschedulable(kNoGpuShare);
  out->clear();
  out->push_back(Slot{nodes[best_node], 1, job.gpu_milli, 1u << best_gpu, job.cpu_milli, job.mem_mib});
  return PluginStatus::Ok();
}

PluginStatus Placer::PlaceCpuOnly(const SchedJob& j, const ClusterState& st, const NodeMask* allowed,
                                  const NodeMask* blocked, Allocation* out) {
  out->clear();
  const JobRequest& job = *j.job;
  if (!st.models_cpu_mem()) return PluginStatus::Ok();  // consumes nothing we model
  const auto& nodes = st.vc_nodes(j.vc);
  for (size_t li = 0; li < nodes.size(); ++li) {
    if (allowed && !allowed->Test(li)) continue;
    if (blocked && blocked->Test(li)) continue;
    if (st.CpuMemFits(nodes[li], job.cpu_milli, job.mem_mib)) {
      out->push_back(Slot{nodes[li], 0, 1000, 0, job.cpu_milli, job.mem_mib});
      return PluginStatus::Ok();
    }
  }
  return PluginStatus::Unschedulable(kNoCpuMem);
}

// Explicit node count: `nodes` distinct nodes with gpus/nodes GPUs each, in the placer's node order.
PluginStatus Placer::PlaceNodes(const SchedJob& j, const ClusterState& st, const NodeMask* allowed,
                                const NodeMask* blocked, Allocation* out) {
  const JobRequest& job = *j.job;
  const uint32_t n = job.nodes;
  const uint16_t per = static_cast<uint16_t>(job.gpus / n);
  const auto& nodes = st.vc_nodes(j.vc);
  const uint16_t maxg = st.vc_max_node_gpus(j.vc);
  out->clear();
  // Fewer than n nodes with `per` free GPUs, before the masks and CPU/memory: the scan below
  // would take them all and fail.
  if (st.nodes_with_free(j.vc, per) < n) return PluginStatus::Unschedulable(kNoNode);
  uint32_t cpu = Share(job.cpu_milli, 1, n), mem = Share(job.mem_mib, 1, n);
  auto take = [&](size_t li) {
    NodeId id = nodes[li];
    if (!st.CpuMemFits(id, cpu, mem)) return false;
    out->push_back(Slot{id, per, 1000, PickWholeGpus(st, id, per), cpu, mem});
    return out->size() == n;
  };
  bool done = false;
  if (strategy_ == PlaceStrategy::kConsolidate) {
    for (uint16_t k = per; k <= maxg && !done; ++k) done = ForEachSet(st.bucket(j.vc, k), allowed, blocked, take);
  } else {
    for (int k = maxg; k >= per && !done; --k)
      done = ForEachSet(st.bucket(j.vc, static_cast<uint16_t>(k)), allowed, blocked, take);
  }
  if (!done) {
    out->clear();
    return PluginStatus::Unschedulable(kNoNode);
  }
  return PluginStatus::Ok();
}

PluginStatus Placer::PlaceMulti(const SchedJob& j, const ClusterState& st, const NodeMask* allowed,
                                const NodeMask* blocked, Allocation* out) {
  const JobRequest& job = *j.job;
  const VcId vc = j.vc;
  const auto& nodes = st.vc_nodes(vc);
  const uint16_t g = st.vc_max_node_gpus(vc);
  const uint32_t full = job.gpus / g;
  const uint16_t rem = static_cast<uint16_t>(job.gpus % g);
  const uint32_t parts = full + (rem ? 1 : 0);
  out->clear();
  // Fewer idle nodes than whole nodes needed fails below whatever the masks; random would
  // still draw its shuffle first, so only the deterministic strategies stop here.
  if (strategy_ != PlaceStrategy::kRandom && st.nodes_with_free(vc, g) < full)
    return PluginStatus::Unschedulable(kNoIdle);
  // Idle nodes are those in the top bucket (free == G). Nodes are considered in descending
  // free order, ties by index; random picks uniformly among idle nodes.
  std::vector<size_t>& idle = scratch_idle();
  idle.clear();
  // Deterministic strategies need only the first full + 1 idle nodes (the extra one may
  // take the remainder); random samples among all of them.
  const size_t want = (strategy_ == PlaceStrategy::kRandom || st.models_cpu_mem()) ? SIZE_MAX : full + 1;
  ForEachSet(st.bucket(vc, g), allowed, blocked, [&](size_t li) {
    if (st.total_gpus(nodes[li]) == g) idle.push_back(li);
    return idle.size() >= want;
  });
  if (strategy_ == PlaceStrategy::kRandom) {
    for (size_t i = idle.size(); i > 1; --i) std::swap(idle[i - 1], idle[NextRand(rng_state_) % i]);
  }
  size_t used = 0;
  for (size_t li : idle) {
    if (out->size() == full) break;
    uint32_t cpu = Share(job.cpu_milli, g, job.gpus), mem = Share(job.mem_mib, g, job.gpus);
    if (!st.CpuMemFits(nodes[li], cpu, mem)) continue;
    out->push_back(Slot{nodes[li], g, 1000, PickWholeGpus(st, nodes[li], g), cpu, mem});
    ++used;
  }
  (void)parts;
  if (out->size() < full) {
    out->clear();
    return PluginStatus::Unschedulable(kNoIdle);
  }
  if (rem == 0) return PluginStatus::Ok();
  // Remainder: the next node in descending-free order (Helios checks only that one).
  uint32_t cpu = Share(job.cpu_milli, rem, job.gpus), mem = Share(job.mem_mib, rem, job.gpus);
  int64_t pick = -1;
  if (used < idle.size()) {
    // More idle nodes remain: the next one in order.
    for (size_t i = used; i < idle.size(); ++i) {
      bool taken = false;
      for (const Slot& s : *out) taken |= (s.node == nodes[idle[i]]);
      if (!taken && st.CpuMemFits(nodes[idle[i]], cpu, mem)) {
        pick = static_cast<int64_t>(idle[i]);
        break;
      }
    }
  }
  if (pick < 0) {
    for (int k = g - 1; k >= 1 && pick < 0; --k) {
      ForEachSet(st.bucket(vc, static_cast<uint16_t>(k)), allowed, blocked, [&](size_t li) {
        pick = static_cast<int64_t>(li);  // first node of the highest non-empty bucket
        return true;
      });
      if (pick >= 0 && (k < rem || !st.CpuMemFits(nodes[pick], cpu, mem))) {
        out->clear();
        return PluginStatus::Unschedulable(kNoRemainder);
      }
    }
  }
  if (pick < 0) {
    out->clear();
    return PluginStatus::Unschedulable(kNoRemainder);
  }
  out->push_back(Slot{nodes[pick], rem, 1000, PickWholeGpus(st, nodes[pick], rem), cpu, mem});
  return PluginStatus::Ok();
}

PluginStatus Placer::Place(const SchedJob& j, const ClusterState& st, const NodeMask* blocked, Allocation* out) {
  const JobRequest& job = *j.job;
  const NodeMask* allowed = st.TypeFilter(j.vc, j.types);
  if (job.gpus == 0) return PlaceCpuOnly(j, st, allowed, blocked, out);
  if (job.is_fractional()) return PlaceFractional(j, st, allowed, blocked, out);
  if (st.vc_free_gpus(j.vc) < job.gpus) return PluginStatus::Unschedulable(kVcFull);
  const std::optional<NodeDemand> d = NodeByNodeDemand(job, st.vc_max_node_gpus(j.vc));
  if (d && d->count > 1) return PlaceNodes(j, st, allowed, blocked, out);
  if (d) {
    int64_t li = PickSingle(j, st, allowed, blocked, static_cast<uint16_t>(job.gpus), job.cpu_milli, job.mem_mib);
    if (li < 0) return PluginStatus::Unschedulable(kNoNode);
    NodeId n = st.vc_nodes(j.vc)[li];
    out->clear();
    out->push_back(Slot{n, static_cast<uint16_t>(job.gpus), 1000, PickWholeGpus(st, n, static_cast<uint16_t>(job.gpus)),
                        job.cpu_milli, job.mem_mib});
    return PluginStatus::Ok();
  }
  return PlaceMulti(j, st, allowed, blocked, out);
}

Result<std::unique_ptr<Placer>> MakePlacer(const std::string& name, uint64_t seed) {
  PlaceStrategy s;
  if (name == "consolidate") s = PlaceStrategy::kConsolidate;
  else if (name == "first-fit") s = PlaceStrategy::kFirstFit;
  else if (name == "spread") s = PlaceStrategy::kSpread;
  else if (name == "random") s = PlaceStrategy::kRandom;
  else return MakeError("unknown placer '" + name + "' (expected consolidate, first-fit, spread or random)");
  return std::make_unique<Placer>(s, seed);
}

}  // namespace orrery
