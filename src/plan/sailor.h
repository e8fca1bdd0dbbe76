// Readers for Sailor's published profiles (../shared/sailor-profiles, eth-easl/sailor cf2c8e3):
// per-layer forward/backward/update times per (micro-batch, TP) on a GPU type, per-layer
// parameter and activation counts, the fitted network bandwidth polynomials, GPUs per node and
// memory per GPU. They feed the plan search (search.h), which works at layer granularity.
#pragma once

#include <array>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/result.h"

namespace orrery::plan {

struct LayerCost {
  double fwd_s = 0, bwd_s = 0, update_s = 0;
};

struct LayerSize {
  double params = 0;       // floats on one GPU at this TP degree
  double act_output = 0;   // floats sent to the next stage per sequence
  double act_mem = 0;      // floats kept for backward per sequence
};

// bandwidth(bytes) = min(max_Bps, 1e9 · poly(log2(bytes / 1e6))) with poly = a·x² + b·x + c
// (numpy.polyfit order), Sailor's fit of NCCL measurements.
struct BandwidthFit {
  double a = 0, b = 0, c = 0, max_Bps = 0;
  double Bps(double bytes) const;
};

struct SailorGpu {
  std::string name;
  int gpus_per_node = 4;
  double memory_bytes = 0;
  double price_per_hour = 0;
  // times[{micro_batch, tp}] = per-layer costs (layer 0 = embedding, last = head)
  std::map<std::pair<int, int>, std::vector<LayerCost>> times;
  std::map<int, BandwidthFit> intra;  // by GPU count inside one node
  std::map<int, BandwidthFit> inter;  // by GPUs per node, between nodes
  std::vector<int> MicroBatches() const;
  std::vector<int> TpDegrees(int micro_batch) const;
};

struct SailorModel {
  std::string name;
  int global_batch = 0;
  int seq = 0;
  std::map<int, std::vector<LayerSize>> sizes;  // by TP degree
  int Layers() const { return sizes.empty() ? 0 : static_cast<int>(sizes.begin()->second.size()); }
};

// Between zones (geo-distributed pools): Sailor's fits of point-to-point bandwidth from a zone's
// GPU type to another zone (providers/multizone_bandwidths.json, one GPU each side) and GCP's
// $/GB of traffic (providers/gcp/communication_cost.json).
struct ZoneNetwork {
  std::map<std::tuple<std::string, std::string, std::string>, BandwidthFit> fits;  // (from, gpu, to)
  std::map<std::pair<std::string, std::string>, double> dollars_per_gb;
  const BandwidthFit* Fit(const std::string& from, const std::string& gpu, const std::string& to) const;
  double DollarsPerGb(const std::string& from, const std::string& to) const;
};
Result<ZoneNetwork> LoadZoneNetwork(const std::string& sailor_dir);

// Prices in $/GPU-hour from Sailor's paper (GCP on-demand, ../shared/specs/sailor.md §1):
// A100-40 3.67, V100-16 2.55, GH-96 11.06; others are not published there (0 = unknown).
double SailorPrice(const std::string& gpu);

Result<SailorModel> LoadSailorModel(const std::string& sailor_dir, const std::string& model);
Result<SailorGpu> LoadSailorGpu(const std::string& sailor_dir, const std::string& model, const std::string& gpu);

}  // namespace orrery::plan
