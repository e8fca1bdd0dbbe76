#include "plan/lins.h"

#include <algorithm>
#include <cmath>

namespace orrery::plan {

std::string_view SchemeName(ZeroScheme s) {
  switch (s) {
    case ZeroScheme::kZero1: return "ZeRO-1";
    case ZeroScheme::kZero3: return "ZeRO-3";
    case ZeroScheme::kMics: return "MiCS";
    case ZeroScheme::kLins: return "Lins";
  }
  return "?";
}

double IbFabric::Time(Collective op, double bytes, int s0, int s1) const {
  const int p = s0 * s1;
  if (p <= 1 || bytes <= 0) return 0;
  const bool inter = s1 > 1;
  const double busbw = inter ? inter_busbw : intra_busbw;
  double factor = 1.0, latency = intra_latency;
  switch (op) {
    case Collective::kAllReduce:
      factor = 2.0 * (p - 1) / p;
      latency = inter ? tree_level_latency * std::ceil(std::log2(double(p))) : intra_latency;
      break;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll:
    case Collective::kBroadcast:
      factor = double(p - 1) / p;
      latency = inter ? ring_step_latency * (p - 1) : intra_latency;
      break;
    case Collective::kSendRecv:
      latency = intra_latency;
      break;
  }
  return latency + bytes * factor / busbw;
}

namespace {

constexpr int kModulesPerLayer = 7;  // LLaMA: q, k, v, o, gate, up, down

struct Mesh {
  int s0 = 1, s1 = 1;
  int Size() const { return s0 * s1; }
};

// Lins' per-step communication (its §2.2), for factors given as (GPUs per node × nodes), with
// what each part can hide behind. M micro-batches per GPU, U the gradient bucket.
struct Comm {
  double hidden_behind_compute = 0;  // prefetched / bucketed collectives
  double exposed = 0;                // on the critical path
};

Comm LinsComm(double phi, int layers, int m, Mesh p, Mesh g, Mesh os, Mesh dp, const IbFabric& f) {
  Comm c;
  const double module = 2.0 * phi / (layers * kModulesPerLayer);  // bf16 bytes of one module
  const double U = 5e8;
  if (p.Size() > 1) {
    const double per_module = 2 * f.Time(Collective::kAllGather, module, p.s0, p.s1) +
                              f.Time(Collective::kReduceScatter, module, p.s0, p.s1);
    c.hidden_behind_compute += m * layers * kModulesPerLayer * per_module;
    c.exposed += m * layers * kModulesPerLayer * 2 * f.module_hook_s;
  }
  if (g.Size() > p.Size()) {
    const Mesh rg{g.s0 / p.s0, g.s1 / p.s1};
    c.hidden_behind_compute += (m - 1) * (2 * phi / (U * p.Size())) * f.Time(Collective::kAllReduce, U, rg.s0, rg.s1);
  }
  const Mesh r{dp.s0 / p.s0, dp.s1 / p.s1};
  if (r.Size() > 1) {
    // gradients of the last micro-batch: bucketed all-reduce overlapped with its backward
    c.hidden_behind_compute += (2 * phi / (U * p.Size())) * f.Time(Collective::kAllReduce, U, r.s0, r.s1);
  }
  if (os.Size() > p.Size()) {
    const Mesh b{os.s0 / p.s0, os.s1 / p.s1};
    // updated parameters broadcast from their owners, overlapped with the next forward
    c.hidden_behind_compute += f.Time(Collective::kBroadcast, 2 * phi / p.Size(), b.s0, b.s1);
  }
  return c;
}

// DeepSpeed ZeRO-1: gradients reduce-scattered over all ranks at the boundary (bucketed, partly
// overlapped with the last backward), updated parameters all-gathered after the step.
Comm Zero1Comm(double phi, Mesh dp, const IbFabric& f) {
  Comm c;
  c.hidden_behind_compute = f.Time(Collective::kReduceScatter, 2 * phi, dp.s0, dp.s1);
  c.exposed = f.Time(Collective::kAllGather, 2 * phi, dp.s0, dp.s1);
  return c;
}

double Memory(double phi, Mesh p, Mesh g, Mesh os, double activations) {
  return 2 * phi / p.Size() + 2 * phi / g.Size() + 12 * phi / os.Size() + activations;
}

std::vector<int> Divisors(int n) {
  std::vector<int> d;
  for (int i = 1; i <= n; ++i) {
    if (n % i == 0) d.push_back(i);
  }
  return d;
}

struct LinsChoice {
  Mesh p, g, os;
  Comm comm;
  bool found = false;
};

// Brute force over Lins' constraints: s_p <= s_g <= s_os per level, divisibility, a node filled
// before nodes are spanned, s_g in {s_p, s_os}, memory; minimise the communication on the
// critical path given the compute it can hide behind.
LinsChoice ChooseLins(double phi, int layers, int m, Mesh dp, double compute, double act, double memory,
                      const IbFabric& f) {
  LinsChoice best;
  double best_cost = 0;
  auto levels = [&](Mesh lo) {
    std::vector<Mesh> out;
    for (int s0 : Divisors(dp.s0)) {
      for (int s1 : Divisors(dp.s1)) {
        if (s0 < lo.s0 || s1 < lo.s1 || (s1 > 1 && s0 != dp.s0)) continue;
        out.push_back({s0, s1});
      }
    }
    return out;
  };
  for (Mesh p : levels({1, 1})) {
    for (Mesh os : levels(p)) {
      for (Mesh g : {p, os}) {
        if (Memory(phi, p, g, os, act) > memory) continue;
        const Comm c = LinsComm(phi, layers, m, p, g, os, dp, f);
        // critical-path communication first, then the volume (ties: less traffic, less slowdown)
        const double cost = std::max(0.0, c.hidden_behind_compute - f.overlap * compute) + c.exposed +
                            f.overlap_slowdown * c.hidden_behind_compute;
        if (!best.found || cost < best_cost - 1e-12) best = {p, g, os, c, true}, best_cost = cost;
      }
    }
  }
  return best;
}

}  // namespace

ScalePoint LinsStep(const GptModel& model, int64_t seq, double global_tokens, int gpus, ZeroScheme scheme,
                    const IbFabric& f, double gpu_memory) {
  ScalePoint pt;
  pt.gpus = gpus;
  pt.scheme = scheme;
  const double phi = model.TotalParams();
  const int m = std::max(1, static_cast<int>(std::llround(global_tokens / (double(seq) * gpus))));
  const double flops = model.ModelFlops(seq, 1);
  pt.compute_s = m * flops / (f.peak_flops * f.compute_efficiency);
  const Mesh dp{std::min(gpus, f.gpus_per_node), std::max(1, gpus / f.gpus_per_node)};
  const double act = 34.0 * seq * model.hidden * model.layers;  // Korthikanti, bf16, no recompute
  Comm c;
  switch (scheme) {
    case ZeroScheme::kZero1:
      c = Zero1Comm(phi, dp, f);
      pt.shard = {1, 1, dp.Size()};
      break;
    case ZeroScheme::kZero3:
      c = LinsComm(phi, model.layers, m, dp, dp, dp, dp, f);
      pt.shard = {dp.Size(), dp.Size(), dp.Size()};
      break;
    case ZeroScheme::kMics: {
      const Mesh node{dp.s0, 1};
      c = LinsComm(phi, model.layers, m, node, node, node, dp, f);
      pt.shard = {node.Size(), node.Size(), node.Size()};
      break;
    }
    case ZeroScheme::kLins: {
      const LinsChoice ch = ChooseLins(phi, model.layers, m, dp, pt.compute_s, act, gpu_memory, f);
      c = ch.comm;
      pt.shard = {ch.p.Size(), ch.g.Size(), ch.os.Size()};
      break;
    }
  }
  // Collectives prefetched or bucketed hide behind the compute (overlap share); the rest is exposed.
  pt.exposed_comm_s = std::max(0.0, c.hidden_behind_compute - f.overlap * pt.compute_s) + c.exposed +
                      f.overlap_slowdown * std::min(c.hidden_behind_compute, f.overlap * pt.compute_s);
  pt.step_s = pt.compute_s + pt.exposed_comm_s;
  pt.mfu = m * flops / (pt.step_s * f.peak_flops);
  return pt;
}

}  // namespace orrery::plan
