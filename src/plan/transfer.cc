#include "plan/transfer.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "plan/sailor.h"

namespace orrery::plan {
namespace {

constexpr const char* kModel = "GPT-Neo-2.7";
constexpr const char* kReference = "GH-96";  // Sailor's H100/H200-class GPU

// Median forward + backward of one transformer block (layers 1 .. n−2; 0 is the embedding,
// n−1 the head): robust to a profile that lists fewer blocks (Sailor's GH-96 GPT-Neo-2.7
// profile has 26 layers of the model's 34).
Result<double> BlockSeconds(const SailorGpu& g) {
  auto it = g.times.find({1, 1});
  if (it == g.times.end() || it->second.size() < 3)
    return MakeError("Sailor profile of " + g.name + " has no micro-batch 1, TP 1 block times");
  std::vector<double> t;
  for (size_t i = 1; i + 1 < it->second.size(); ++i) t.push_back(it->second[i].fwd_s + it->second[i].bwd_s);
  std::sort(t.begin(), t.end());
  return t.size() % 2 ? t[t.size() / 2] : (t[t.size() / 2 - 1] + t[t.size() / 2]) / 2;
}

// NVLink bandwidth per GPU (datasheets, GB/s both directions): H100/H200 NVLink 4 900,
// A100 NVLink 3 600, V100 SXM2 NVLink 2 300. Sailor's intra-node fits are not used: its GH-96
// nodes measure 124 GB/s for 2 GPUs, below its A100's 216, which is not an NVLink ratio.
double NvlinkGBps(const std::string& gpu) {
  if (gpu.rfind("A100", 0) == 0) return 600;
  if (gpu.rfind("V100", 0) == 0) return 300;
  return 900;
}

}  // namespace

bool TransferableGpu(const std::string& sailor_name) {
  return sailor_name == "A100-40" || sailor_name == "A100-80" || sailor_name == "V100-16";
}

Result<GpuProfile> TransferProfile(const GpuProfile& base, const std::string& target, const std::string& sailor_dir) {
  if (!TransferableGpu(target)) return MakeError("no Sailor profile to transfer a GPU profile to '" + target + "'");
  ORR_ASSIGN_OR_RETURN(SailorGpu ref, LoadSailorGpu(sailor_dir, kModel, kReference));
  ORR_ASSIGN_OR_RETURN(SailorGpu to, LoadSailorGpu(sailor_dir, kModel, target));
  ORR_ASSIGN_OR_RETURN(double t_ref, BlockSeconds(ref));
  ORR_ASSIGN_OR_RETURN(double t_to, BlockSeconds(to));
  if (!(t_ref > 0 && t_to > 0)) return MakeError("Sailor profiles of " + target + " or GH-96 have zero layer times");
  const double r = t_to / t_ref;
  GpuProfile p = base;
  p.gpu = target;
  p.source = fmt::format("{} transferred to {}: device times × {:.3f} (Sailor {} median block fwd+bwd, mb 1, tp 1, {} / {})",
                         base.gpu, target, r, kModel, target, kReference);
  p.memory_bytes = to.memory_bytes > 0 ? to.memory_bytes : base.memory_bytes;
  p.gpus_per_node = to.gpus_per_node;
  p.peak_bf16_tflops = base.peak_bf16_tflops / r;
  p.membw_Bps = base.membw_Bps / r;
  for (GemmPoint& g : p.gemm) g.t_s *= r;
  for (SdpaPoint& s : p.sdpa) s.t_fwd_s *= r, s.t_fwdbwd_s *= r;
  p.layers.clear();  // per-layer tables are the base's own measurements
  const double link = NvlinkGBps(base.gpu) / NvlinkGBps(target);
  for (CollectivePoint& c : p.collectives) c.t_s *= link;
  return p;
}

}  // namespace orrery::plan
