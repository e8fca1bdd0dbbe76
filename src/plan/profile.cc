#include "plan/profile.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/io.h"
#include "plan/json_fields.h"

namespace orrery::plan {

using nlohmann::json;

// ---------------------------------------------------------------- interpolation

namespace {

constexpr int kNeighbours = 3;

struct Weighted {
  double dist2;
  double log_value;
};

// Inverse-distance weighting of log(value) over the `kNeighbours` nearest points; an exact
// match returns its value.
double IdwLog(std::vector<Weighted> pts) {
  ORR_CHECK(!pts.empty());
  const size_t k = std::min<size_t>(kNeighbours, pts.size());
  std::partial_sort(pts.begin(), pts.begin() + k, pts.end(),
                    [](const Weighted& a, const Weighted& b) { return a.dist2 < b.dist2; });
  if (pts[0].dist2 < 1e-12) return std::exp(pts[0].log_value);
  double wsum = 0, vsum = 0;
  for (size_t i = 0; i < k; ++i) {
    const double w = 1.0 / pts[i].dist2;
    wsum += w;
    vsum += w * pts[i].log_value;
  }
  return std::exp(vsum / wsum);
}

double Sq(double x) { return x * x; }

}  // namespace

double GemmTime(const GpuProfile& p, GemmOp op, double m, double k, double n) {
  const double flops = 2.0 * m * k * n;
  if (flops <= 0) return 0;
  std::vector<Weighted> pts;
  for (int pass = 0; pass < 2 && pts.empty(); ++pass) {
    for (const GemmPoint& g : p.gemm) {
      if (pass == 0 && g.op != op) continue;
      const double d2 = Sq(std::log(m / g.m)) + Sq(std::log(k / g.k)) + Sq(std::log(n / g.n));
      pts.push_back({d2, std::log(2.0 * g.m * g.k * g.n / g.t_s)});
    }
  }
  const double rate = pts.empty() ? p.peak_bf16_tflops * 0.6e12 : IdwLog(pts);
  return std::max(flops / rate, p.constants.kernel_min_s);
}

double SdpaTime(const GpuProfile& p, double b, double heads, double s, double head_dim, bool backward) {
  // Formula FLOPs 4·b·s²·h forward (no causal halving), twice that backward.
  const double fwd_flops = 4.0 * b * s * s * heads * head_dim;
  if (fwd_flops <= 0) return 0;
  std::vector<Weighted> pts;
  for (const SdpaPoint& a : p.sdpa) {
    const double t = backward ? a.t_fwdbwd_s - a.t_fwd_s : a.t_fwd_s;
    if (t <= 0) continue;
    const double f = 4.0 * a.b * a.s * a.s * a.heads * a.head_dim * (backward ? 2.0 : 1.0);
    const double d2 = Sq(std::log(b * heads / (a.b * a.heads))) + Sq(std::log(s / a.s)) +
                      Sq(std::log(head_dim / a.head_dim));
    pts.push_back({d2, std::log(f / t)});
  }
  const double flops = fwd_flops * (backward ? 2.0 : 1.0);
  const double rate = pts.empty() ? p.peak_bf16_tflops * 0.4e12 : IdwLog(pts);
  return std::max(flops / rate, p.constants.kernel_min_s);
}

namespace {

// nccl-tests bus-bandwidth factor: time = bytes · factor / busbw.
double BusFactor(Collective op, int world) {
  const double w = world;
  switch (op) {
    case Collective::kAllReduce: return 2.0 * (w - 1) / w;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll: return (w - 1) / w;
    case Collective::kSendRecv:
    case Collective::kBroadcast: return 1.0;
  }
  return 1.0;
}

// Piecewise-linear log(time) over log(bytes); flat (latency-bound) below the smallest size,
// linear in size (bandwidth-bound) above the largest.
double InterpolateLogLog(const std::vector<const CollectivePoint*>& pts, double bytes) {
  if (bytes <= pts.front()->bytes) return pts.front()->t_s;
  if (bytes >= pts.back()->bytes) return pts.back()->t_s * bytes / pts.back()->bytes;
  for (size_t i = 1; i < pts.size(); ++i) {
    if (bytes <= pts[i]->bytes) {
      const double x0 = std::log(pts[i - 1]->bytes), x1 = std::log(pts[i]->bytes);
      const double y0 = std::log(pts[i - 1]->t_s), y1 = std::log(pts[i]->t_s);
      return std::exp(y0 + (y1 - y0) * (std::log(bytes) - x0) / (x1 - x0));
    }
  }
  return pts.back()->t_s;
}

std::vector<const CollectivePoint*> Series(const GpuProfile& p, Collective op, DType dtype, int world, int nodes) {
  std::vector<const CollectivePoint*> out;
  for (const CollectivePoint& c : p.collectives) {
    if (c.op == op && c.dtype == dtype && c.world == world && c.nodes == nodes) out.push_back(&c);
  }
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->bytes < b->bytes; });
  return out;
}

}  // namespace

double CollectiveTime(const GpuProfile& p, Collective op, DType dtype, double bytes, int world, int nodes) {
  if (world <= 1 || bytes <= 0) return 0;
  auto exact = Series(p, op, dtype, world, nodes);
  if (exact.empty()) exact = Series(p, op, dtype == DType::kBf16 ? DType::kFp32 : DType::kBf16, world, nodes);
  if (!exact.empty()) return InterpolateLogLog(exact, bytes);
  // Nearest measured group of the same op (prefer the same node span), via bus bandwidth at
  // the same per-rank message size.
  const CollectivePoint* best = nullptr;
  double best_d = std::numeric_limits<double>::max();
  for (const CollectivePoint& c : p.collectives) {
    const bool same_op = c.op == op || (op == Collective::kAllToAll && c.op == Collective::kAllGather) ||
                         (op == Collective::kBroadcast && c.op == Collective::kAllGather) ||
                         (op == Collective::kSendRecv && c.op == Collective::kAllGather);
    if (!same_op) continue;
    const double d = std::abs(std::log(double(c.world) / world)) + 4.0 * std::abs(std::log(double(c.nodes) / nodes));
    if (d < best_d) best_d = d, best = &c;
  }
  if (best == nullptr) {
    // No table at all: 100 µs + bytes at 100 GB/s bus bandwidth (documented fallback).
    return 100e-6 + bytes * BusFactor(op, world) / 100e9;
  }
  const auto series = Series(p, best->op, best->dtype, best->world, best->nodes);
  const double per_rank = bytes / world;
  const double ref_bytes = per_rank * best->world;
  const double t_ref = InterpolateLogLog(series, ref_bytes);
  const double busbw = ref_bytes * BusFactor(best->op, best->world) / t_ref;
  return bytes * BusFactor(op, world) / busbw;
}

std::string_view CollectiveName(Collective c) {
  switch (c) {
    case Collective::kAllReduce: return "all_reduce";
    case Collective::kAllGather: return "all_gather";
    case Collective::kReduceScatter: return "reduce_scatter";
    case Collective::kAllToAll: return "all_to_all";
    case Collective::kSendRecv: return "send_recv";
    case Collective::kBroadcast: return "broadcast";
  }
  return "?";
}

Result<Collective> ParseCollective(std::string_view s) {
  for (Collective c : {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter,
                       Collective::kAllToAll, Collective::kSendRecv, Collective::kBroadcast}) {
    if (s == CollectiveName(c)) return c;
  }
  return MakeError("expected all_reduce, all_gather, reduce_scatter, all_to_all, send_recv or broadcast, got \"" +
                   std::string(s) + "\"");
}

// ---------------------------------------------------------------- profile file

namespace {


Result<GemmOp> ParseGemmOp(const std::string& s, const Where& w) {
  if (s == "fwd") return GemmOp::kFwd;
  if (s == "wgrad") return GemmOp::kWgrad;
  if (s == "dgrad") return GemmOp::kDgrad;
  return w.Fail("field 'op': expected fwd, wgrad or dgrad, got \"" + s + "\"");
}

Result<GemmPoint> ParseGemm(const json& j, const Where& w) {
  ORR_RETURN_IF_ERROR(OnlyKeys(j, {"op", "m", "k", "n", "t_s"}, w));
  GemmPoint g;
  ORR_ASSIGN_OR_RETURN(std::string op, String(j, "op", w));
  ORR_ASSIGN_OR_RETURN(g.op, ParseGemmOp(op, w));
  ORR_ASSIGN_OR_RETURN(g.m, Number(j, "m", w, true));
  ORR_ASSIGN_OR_RETURN(g.k, Number(j, "k", w, true));
  ORR_ASSIGN_OR_RETURN(g.n, Number(j, "n", w, true));
  ORR_ASSIGN_OR_RETURN(g.t_s, Number(j, "t_s", w, true));
  return g;
}

Result<SdpaPoint> ParseSdpa(const json& j, const Where& w) {
  ORR_RETURN_IF_ERROR(OnlyKeys(j, {"b", "heads", "s", "head_dim", "t_fwd_s", "t_fwdbwd_s"}, w));
  SdpaPoint a;
  ORR_ASSIGN_OR_RETURN(a.b, Number(j, "b", w, true));
  ORR_ASSIGN_OR_RETURN(a.heads, Number(j, "heads", w, true));
  ORR_ASSIGN_OR_RETURN(a.s, Number(j, "s", w, true));
  ORR_ASSIGN_OR_RETURN(a.head_dim, Number(j, "head_dim", w, true));
  ORR_ASSIGN_OR_RETURN(a.t_fwd_s, Number(j, "t_fwd_s", w, true));
  ORR_ASSIGN_OR_RETURN(a.t_fwdbwd_s, Number(j, "t_fwdbwd_s", w, true));
  if (a.t_fwdbwd_s < a.t_fwd_s) return w.Fail("t_fwdbwd_s must be >= t_fwd_s");
  return a;
}

Result<DType> ParseDType(const std::string& s, const Where& w) {
  if (s == "bf16" || s == "bfloat16") return DType::kBf16;
  if (s == "fp32" || s == "float32") return DType::kFp32;
  return w.Fail("field 'dtype': expected bf16 or fp32, got \"" + s + "\"");
}

Result<CollectivePoint> ParseCollectivePoint(const json& j, const Where& w) {
  ORR_RETURN_IF_ERROR(OnlyKeys(j, {"op", "dtype", "world", "nodes", "bytes", "t_s"}, w));
  CollectivePoint c;
  ORR_ASSIGN_OR_RETURN(std::string op, String(j, "op", w));
  Result<Collective> parsed = ParseCollective(op);
  if (!parsed.ok()) return w.Fail("field 'op': " + parsed.error().message);
  c.op = *parsed;
  ORR_ASSIGN_OR_RETURN(std::string dt, String(j, "dtype", w));
  ORR_ASSIGN_OR_RETURN(c.dtype, ParseDType(dt, w));
  ORR_ASSIGN_OR_RETURN(c.world, Integer(j, "world", w, 2));
  ORR_ASSIGN_OR_RETURN(c.nodes, Integer(j, "nodes", w, 1));
  ORR_ASSIGN_OR_RETURN(c.bytes, Number(j, "bytes", w, true));
  ORR_ASSIGN_OR_RETURN(c.t_s, Number(j, "t_s", w, true));
  return c;
}

Result<LayerTimePoint> ParseLayer(const json& j, const Where& w) {
  ORR_RETURN_IF_ERROR(OnlyKeys(j, {"micro_batch", "tp", "layer", "fwd_s", "bwd_s", "update_s"}, w));
  LayerTimePoint l;
  ORR_ASSIGN_OR_RETURN(l.micro_batch, Integer(j, "micro_batch", w, 1));
  ORR_ASSIGN_OR_RETURN(l.tp, Integer(j, "tp", w, 1));
  ORR_ASSIGN_OR_RETURN(l.layer, Integer(j, "layer", w, 0));
  ORR_ASSIGN_OR_RETURN(l.fwd_s, Number(j, "fwd_s", w, false));
  ORR_ASSIGN_OR_RETURN(l.bwd_s, Number(j, "bwd_s", w, false));
  ORR_ASSIGN_OR_RETURN(l.update_s, Number(j, "update_s", w, false));
  return l;
}

template <class T, class F>
Status ParseArray(const json& doc, std::string_view key, const Where& w, F parse, std::vector<T>* out) {
  auto it = doc.find(std::string(key));
  if (it == doc.end()) return Status::Ok();
  const Where wa = w.Child(key);
  if (!it->is_array()) return wa.Fail("expected an array, got " + Shown(*it));
  for (size_t i = 0; i < it->size(); ++i) {
    ORR_ASSIGN_OR_RETURN(T v, parse((*it)[i], wa.Child(i)));
    out->push_back(v);
  }
  return Status::Ok();
}

Status ParseConstants(const json& doc, const Where& w, ModelConstants* c) {
  auto it = doc.find("constants");
  if (it == doc.end()) return Status::Ok();
  const Where wc = w.Child("constants");
  struct Slot {
    std::string_view key;
    double* value;
  };
  const Slot slots[] = {{"host_op_s", &c->host_op_s},
                        {"host_ckpt_block_s", &c->host_ckpt_block_s},
                        {"mem_efficiency", &c->mem_efficiency},
                        {"kernel_min_s", &c->kernel_min_s},
                        {"alloc_const_bytes", &c->alloc_const_bytes},
                        {"loss_bwd_bytes_per_logit", &c->loss_bwd_bytes_per_logit},
                        {"loss_fwd_bytes_per_logit", &c->loss_fwd_bytes_per_logit},
                        {"fsdp_unit_host_s", &c->fsdp_unit_host_s},
                        {"dtensor_op_factor", &c->dtensor_op_factor},
                        {"comm_compute_slowdown", &c->comm_compute_slowdown}};
  if (!it->is_object()) return wc.Fail("expected an object, got " + Shown(*it));
  for (auto kv = it->begin(); kv != it->end(); ++kv) {
    auto slot = std::find_if(std::begin(slots), std::end(slots), [&](const Slot& s) { return s.key == kv.key(); });
    if (slot == std::end(slots)) return wc.Fail("unknown constant '" + kv.key() + "'");
    ORR_ASSIGN_OR_RETURN(*slot->value, Number(*it, kv.key(), wc, false));
  }
  return Status::Ok();
}

}  // namespace

Result<GpuProfile> ParseProfileJson(std::string_view text, std::string_view file) {
  ORR_ASSIGN_OR_RETURN(json doc, ParseJson(text, std::string(file)));
  const Where w{file, ""};
  ORR_RETURN_IF_ERROR(OnlyKeys(doc, {"format", "version", "gpu", "source", "memory_gib", "peak_bf16_tflops",
                                     "membw_GBps", "gpus_per_node", "gemm", "sdpa", "collectives", "layers",
                                     "constants", "provenance"},
                               w));
  ORR_ASSIGN_OR_RETURN(std::string format, String(doc, "format", w));
  if (format != "orrery-gpu-profile") return w.Child("format").Fail("expected \"orrery-gpu-profile\", got \"" + format + "\"");
  ORR_ASSIGN_OR_RETURN(int version, Integer(doc, "version", w, 1));
  if (version != 1) return w.Child("version").Fail(fmt::format("unsupported version {} (this build reads 1)", version));
  GpuProfile p;
  ORR_ASSIGN_OR_RETURN(p.gpu, String(doc, "gpu", w));
  if (doc.contains("source")) { ORR_ASSIGN_OR_RETURN(p.source, String(doc, "source", w)); }
  ORR_ASSIGN_OR_RETURN(double mem_gib, Number(doc, "memory_gib", w, true));
  p.memory_bytes = mem_gib * double(1ull << 30);
  ORR_ASSIGN_OR_RETURN(p.peak_bf16_tflops, Number(doc, "peak_bf16_tflops", w, true));
  ORR_ASSIGN_OR_RETURN(double bw, Number(doc, "membw_GBps", w, true));
  p.membw_Bps = bw * 1e9;
  if (doc.contains("gpus_per_node")) { ORR_ASSIGN_OR_RETURN(p.gpus_per_node, Integer(doc, "gpus_per_node", w, 1)); }
  ORR_RETURN_IF_ERROR(ParseArray<GemmPoint>(doc, "gemm", w, ParseGemm, &p.gemm));
  ORR_RETURN_IF_ERROR(ParseArray<SdpaPoint>(doc, "sdpa", w, ParseSdpa, &p.sdpa));
  ORR_RETURN_IF_ERROR(ParseArray<CollectivePoint>(doc, "collectives", w, ParseCollectivePoint, &p.collectives));
  ORR_RETURN_IF_ERROR(ParseArray<LayerTimePoint>(doc, "layers", w, ParseLayer, &p.layers));
  ORR_RETURN_IF_ERROR(ParseConstants(doc, w, &p.constants));
  if (p.gemm.empty() && p.layers.empty()) return w.Fail("a profile needs 'gemm' rows or per-layer 'layers' rows");
  p.source = p.source.empty() ? std::string(file) : p.source;
  return p;
}

Result<GpuProfile> LoadProfile(const std::string& path) {
  ORR_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseProfileJson(text, path);
}

namespace {

std::string_view GemmOpName(GemmOp op) {
  switch (op) {
    case GemmOp::kFwd: return "fwd";
    case GemmOp::kWgrad: return "wgrad";
    case GemmOp::kDgrad: return "dgrad";
  }
  return "?";
}

// Median of the values measured for one key (the micro files hold one row per rank / call).
template <class Key>
class MedianTable {
 public:
  void Add(const Key& k, double v) { rows_[k].push_back(v); }
  template <class F>
  void ForEach(F f) const {
    for (const auto& [k, vs] : rows_) {
      std::vector<double> s = vs;
      std::sort(s.begin(), s.end());
      f(k, s.size() % 2 ? s[s.size() / 2] : 0.5 * (s[s.size() / 2 - 1] + s[s.size() / 2]));
    }
  }

 private:
  std::map<Key, std::vector<double>> rows_;
};

struct MicroRows {
  MedianTable<std::tuple<int, double, double, double>> gemm;
  MedianTable<std::tuple<double, double, double, double, int>> sdpa;  // last: 0 fwd, 1 fwdbwd
  MedianTable<std::tuple<int, int, int, double>> nccl;                // op, dtype, world, bytes
  std::vector<double> membw;
};

Status AddMicroRow(const json& r, const Where& w, MicroRows* rows) {
  if (r.value("status", "ok") != "ok") return Status::Ok();
  const std::string kind = r.value("kind", "");
  if (kind == "gemm") {
    const std::string op = r.value("op", "");
    const int o = op == "wgrad_mm" ? 1 : op == "dgrad_mm" ? 2 : 0;
    ORR_ASSIGN_OR_RETURN(double m, Number(r, "M", w, true));
    ORR_ASSIGN_OR_RETURN(double k, Number(r, "K", w, true));
    ORR_ASSIGN_OR_RETURN(double n, Number(r, "N", w, true));
    ORR_ASSIGN_OR_RETURN(double t, Number(r, "t_s", w, true));
    rows->gemm.Add({o, m, k, n}, t);
  } else if (kind == "sdpa") {
    ORR_ASSIGN_OR_RETURN(double b, Number(r, "b", w, true));
    ORR_ASSIGN_OR_RETURN(double nh, Number(r, "heads", w, true));
    ORR_ASSIGN_OR_RETURN(double s, Number(r, "s", w, true));
    ORR_ASSIGN_OR_RETURN(double hd, Number(r, "head_dim", w, true));
    ORR_ASSIGN_OR_RETURN(double tf, Number(r, "t_fwd_s", w, true));
    ORR_ASSIGN_OR_RETURN(double tfb, Number(r, "t_fwdbwd_s", w, true));
    rows->sdpa.Add({b, nh, s, hd, 0}, tf);
    rows->sdpa.Add({b, nh, s, hd, 1}, tfb);
  } else if (kind == "membw") {
    ORR_ASSIGN_OR_RETURN(double bw, Number(r, "GBps", w, true));
    rows->membw.push_back(bw * 1e9);
  } else if (kind == "nccl") {
    ORR_ASSIGN_OR_RETURN(std::string op, String(r, "op", w));
    Result<Collective> c = ParseCollective(op);
    if (!c.ok()) return w.Fail("field 'op': " + c.error().message);
    ORR_ASSIGN_OR_RETURN(std::string dt, String(r, "dtype", w));
    ORR_ASSIGN_OR_RETURN(DType d, ParseDType(dt, w));
    ORR_ASSIGN_OR_RETURN(int world, Integer(r, "world", w, 2));
    ORR_ASSIGN_OR_RETURN(double bytes, Number(r, "bytes", w, true));
    ORR_ASSIGN_OR_RETURN(double t, Number(r, "t_s", w, true));
    rows->nccl.Add({static_cast<int>(*c), static_cast<int>(d), world, bytes}, t);
  }
  return Status::Ok();
}

void FillFromMicro(const MicroRows& rows, GpuProfile* p) {
  rows.gemm.ForEach([&](const auto& k, double t) {
    p->gemm.push_back({static_cast<GemmOp>(std::get<0>(k)), std::get<1>(k), std::get<2>(k), std::get<3>(k), t});
  });
  std::map<std::tuple<double, double, double, double>, SdpaPoint> sdpa;
  rows.sdpa.ForEach([&](const auto& k, double t) {
    SdpaPoint& a = sdpa[{std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k)}];
    a.b = std::get<0>(k), a.heads = std::get<1>(k), a.s = std::get<2>(k), a.head_dim = std::get<3>(k);
    (std::get<4>(k) == 0 ? a.t_fwd_s : a.t_fwdbwd_s) = t;
  });
  for (const auto& [k, a] : sdpa) p->sdpa.push_back(a);
  rows.nccl.ForEach([&](const auto& k, double t) {
    p->collectives.push_back({static_cast<Collective>(std::get<0>(k)), static_cast<DType>(std::get<1>(k)),
                              std::get<2>(k), 1, std::get<3>(k), t});
  });
  std::vector<double> bw = rows.membw;
  std::sort(bw.begin(), bw.end());
  p->membw_Bps = bw.empty() ? 4.27e12 : bw.back();
}

}  // namespace

Result<GpuProfile> LoadH200Micro(const std::string& micro_dir) {
  MicroRows rows;
  int files = 0;
  for (const char* name : {"call1.jsonl", "call2.jsonl"}) {
    const std::string path = micro_dir + "/" + name;
    if (!std::filesystem::exists(path)) continue;
    ++files;
    ORR_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
    std::istringstream in(text);
    std::string line;
    for (int lineno = 1; std::getline(in, line); ++lineno) {
      if (line.empty()) continue;
      auto parsed = ParseJsonTextAs<json>(line);
      const std::string at = path + ":" + std::to_string(lineno);
      const Where w{at, ""};
      if (!std::holds_alternative<json>(parsed) || !std::get<json>(parsed).is_object())
        return w.Fail("expected one JSON object per line");
      const json& r = std::get<json>(parsed);
      // A wrong JSON type (e.g. a "status" that is not a string) is an error of this row.
      ORR_RETURN_IF_ERROR(ReadJsonGuarded(at, [&] { return AddMicroRow(r, w, &rows); }));
    }
  }
  if (files == 0) return MakeError(micro_dir + ": no call1.jsonl or call2.jsonl (the H200 micro-profiles)");
  GpuProfile p;
  p.gpu = "H200";
  p.source = micro_dir;
  p.memory_bytes = 143771.0 * (1 << 20);  // nvidia-smi memory.total of the measured GPUs
  p.peak_bf16_tflops = 989.4;
  p.gpus_per_node = 8;
  FillFromMicro(rows, &p);
  return p;
}

std::string ProfileToJson(const GpuProfile& p) {
  json doc = {{"format", "orrery-gpu-profile"}, {"version", 1},
              {"gpu", p.gpu}, {"source", p.source},
              {"memory_gib", p.memory_bytes / double(1ull << 30)}, {"peak_bf16_tflops", p.peak_bf16_tflops},
              {"membw_GBps", p.membw_Bps / 1e9}, {"gpus_per_node", p.gpus_per_node}};
  json gemm = json::array(), sdpa = json::array(), coll = json::array(), layers = json::array();
  for (const GemmPoint& g : p.gemm) {
    gemm.push_back({{"op", GemmOpName(g.op)}, {"m", g.m}, {"k", g.k}, {"n", g.n}, {"t_s", g.t_s}});
  }
  for (const SdpaPoint& a : p.sdpa) {
    sdpa.push_back({{"b", a.b}, {"heads", a.heads}, {"s", a.s}, {"head_dim", a.head_dim},
                    {"t_fwd_s", a.t_fwd_s}, {"t_fwdbwd_s", a.t_fwdbwd_s}});
  }
  for (const CollectivePoint& c : p.collectives) {
    coll.push_back({{"op", CollectiveName(c.op)}, {"dtype", c.dtype == DType::kBf16 ? "bf16" : "fp32"},
                    {"world", c.world}, {"nodes", c.nodes}, {"bytes", c.bytes}, {"t_s", c.t_s}});
  }
  for (const LayerTimePoint& l : p.layers) {
    layers.push_back({{"micro_batch", l.micro_batch}, {"tp", l.tp}, {"layer", l.layer}, {"fwd_s", l.fwd_s},
                      {"bwd_s", l.bwd_s}, {"update_s", l.update_s}});
  }
  const ModelConstants& k = p.constants;
  doc["constants"] = {{"host_op_s", k.host_op_s}, {"host_ckpt_block_s", k.host_ckpt_block_s},
                      {"mem_efficiency", k.mem_efficiency}, {"kernel_min_s", k.kernel_min_s},
                      {"alloc_const_bytes", k.alloc_const_bytes},
                      {"loss_bwd_bytes_per_logit", k.loss_bwd_bytes_per_logit},
                      {"loss_fwd_bytes_per_logit", k.loss_fwd_bytes_per_logit},
                      {"fsdp_unit_host_s", k.fsdp_unit_host_s}, {"dtensor_op_factor", k.dtensor_op_factor},
                      {"comm_compute_slowdown", k.comm_compute_slowdown}};
  doc["gemm"] = gemm;
  doc["sdpa"] = sdpa;
  doc["collectives"] = coll;
  doc["layers"] = layers;
  return DumpJson(doc, 1) + "\n";
}

}  // namespace orrery::plan
