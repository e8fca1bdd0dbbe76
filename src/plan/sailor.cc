#include "plan/sailor.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/io.h"

namespace orrery::plan {

using nlohmann::json;

double BandwidthFit::Bps(double bytes) const {
  const double x = std::log2(std::max(bytes, 1.0) / 1e6);
  const double gbps = a * x * x + b * x + c;
  return std::clamp(gbps * 1e9, 1e6, max_Bps > 0 ? max_Bps : 1e15);
}

std::vector<int> SailorGpu::MicroBatches() const {
  std::set<int> s;
  for (const auto& [k, v] : times) s.insert(k.first);
  return {s.begin(), s.end()};
}

std::vector<int> SailorGpu::TpDegrees(int micro_batch) const {
  std::vector<int> out;
  for (const auto& [k, v] : times) {
    if (k.first == micro_batch) out.push_back(k.second);
  }
  std::sort(out.begin(), out.end());
  return out;
}

double SailorPrice(const std::string& gpu) {
  if (gpu == "A100-40") return 3.67;
  if (gpu == "V100-16") return 2.55;
  if (gpu == "GH-96") return 11.06;
  return 0;
}

namespace {

Result<json> ReadJson(const std::string& path) {
  ORR_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseJson(text, path);
}

// A non-negative integer key ("0", "12") of Sailor's JSON objects.
Result<int> KeyInt(const std::string& key, const std::string& where) {
  int v = 0;
  auto [p, ec] = std::from_chars(key.data(), key.data() + key.size(), v);
  if (ec != std::errc() || p != key.data() + key.size() || v < 0) {
    return MakeError(where + ": expected a non-negative integer key, got \"" + key + "\"");
  }
  return v;
}

bool Numbers(const json& v, size_t n) {
  if (!v.is_array() || v.size() != n) return false;
  return std::all_of(v.begin(), v.end(), [](const json& x) { return x.is_number(); });
}

Result<BandwidthFit> ParseFit(const json& v, const std::string& where) {
  if (!v.is_array() || v.size() != 2 || !Numbers(v[0], 3) || !v[1].is_number()) {
    return MakeError(where + ": expected [[a, b, c], max_bandwidth]");
  }
  return BandwidthFit{v[0][0].get<double>(), v[0][1].get<double>(), v[0][2].get<double>(), v[1].get<double>()};
}

Status LoadFits(const json& doc, const std::string& kind, const std::string& gpu, const std::string& path,
                std::map<int, BandwidthFit>* out) {
  if (!doc.contains(kind) || !doc[kind].contains(gpu)) return Status::Ok();
  for (auto it = doc[kind][gpu].begin(); it != doc[kind][gpu].end(); ++it) {
    ORR_ASSIGN_OR_RETURN(BandwidthFit f, ParseFit(it.value(), path + ": " + kind + "/" + gpu + "/" + it.key()));
    ORR_ASSIGN_OR_RETURN(int count, KeyInt(it.key(), path + ": " + kind + "/" + gpu));
    (*out)[count] = f;
  }
  return Status::Ok();
}

}  // namespace

static Result<SailorModel> LoadSailorModelUnchecked(const std::string& dir, const std::string& model) {
  const std::string info_path = dir + "/configs/llm_info.json";
  ORR_ASSIGN_OR_RETURN(json info, ReadJson(info_path));
  if (!info.contains(model)) return MakeError(info_path + ": no model '" + model + "'");
  SailorModel m;
  m.name = model;
  for (auto t = info[model].begin(); t != info[model].end(); ++t) {
    std::vector<LayerSize> layers(t.value().size());
    for (auto l = t.value().begin(); l != t.value().end(); ++l) {
      ORR_ASSIGN_OR_RETURN(int idx, KeyInt(l.key(), info_path + ": " + model + "/" + t.key()));
      if (idx >= static_cast<int>(layers.size()) || !l.value().is_object()) {
        return MakeError(info_path + ": " + model + "/" + t.key() + ": bad layer " + l.key());
      }
      layers[idx] = {l.value().value("params_floats", 0.0), l.value().value("act_output_floats", 0.0),
                     l.value().value("act_mem_floats", 0.0)};
    }
    ORR_ASSIGN_OR_RETURN(int tp, KeyInt(t.key(), info_path + ": " + model));
    m.sizes[tp] = std::move(layers);
  }
  for (const char* cfg : {"training_config_gpt_neo27.json", "training_config_opt_350.json"}) {
    Result<json> c = ReadJson(dir + "/configs/" + cfg);
    if (c.ok() && c->value("model", "") == model) {
      m.global_batch = c->value("global_batch_size", 0);
      m.seq = c->value("sequence_length", 0);
    }
  }
  return m;
}

static Result<SailorGpu> LoadSailorGpuUnchecked(const std::string& dir, const std::string& model, const std::string& gpu) {
  const std::string path = dir + "/profiles/" + model + "/" + gpu + "/profile.json";
  ORR_ASSIGN_OR_RETURN(json prof, ReadJson(path));
  SailorGpu g;
  g.name = gpu;
  for (auto mb = prof.begin(); mb != prof.end(); ++mb) {
    for (auto tp = mb.value().begin(); tp != mb.value().end(); ++tp) {
      std::vector<LayerCost> layers(tp.value().size());
      for (auto l = tp.value().begin(); l != tp.value().end(); ++l) {
        ORR_ASSIGN_OR_RETURN(int idx, KeyInt(l.key(), path));
        const json& v = l.value();
        if (idx >= static_cast<int>(layers.size()) || !Numbers(v, 3)) {
          return MakeError(path + ": micro-batch " + mb.key() + ", tp " + tp.key() + ", layer " + l.key() +
                           ": expected [forward_s, backward_s, update_s]");
        }
        layers[idx] = {v[0].get<double>(), v[1].get<double>(), v[2].get<double>()};
      }
      ORR_ASSIGN_OR_RETURN(int mbs, KeyInt(mb.key(), path));
      ORR_ASSIGN_OR_RETURN(int tpd, KeyInt(tp.key(), path));
      if (mbs == 0 || tpd == 0) return MakeError(path + ": micro-batch and TP keys must be positive");
      g.times[{mbs, tpd}] = std::move(layers);
    }
  }
  const std::string cluster = dir + "/configs/basic_cluster_config.json";
  ORR_ASSIGN_OR_RETURN(json cc, ReadJson(cluster));
  if (!cc.contains(gpu)) return MakeError(cluster + ": no GPU type '" + gpu + "'");
  g.gpus_per_node = cc[gpu].value("gpus_per_node", 4);
  g.memory_bytes = cc[gpu].value("mem_per_gpu", 0.0);
  const std::string net = dir + "/providers/network_coeffs_all_homo.json";
  ORR_ASSIGN_OR_RETURN(json nc, ReadJson(net));
  ORR_RETURN_IF_ERROR(LoadFits(nc, "intra", gpu, net, &g.intra));
  ORR_RETURN_IF_ERROR(LoadFits(nc, "inter", gpu, net, &g.inter));
  g.price_per_hour = SailorPrice(gpu);
  return g;
}

const BandwidthFit* ZoneNetwork::Fit(const std::string& from, const std::string& gpu, const std::string& to) const {
  auto it = fits.find({from, gpu, to});
  return it == fits.end() ? nullptr : &it->second;
}

double ZoneNetwork::DollarsPerGb(const std::string& from, const std::string& to) const {
  auto it = dollars_per_gb.find({from, to});
  return it == dollars_per_gb.end() ? 0.0 : it->second;
}

static Result<ZoneNetwork> LoadZoneNetworkUnchecked(const std::string& dir) {
  ZoneNetwork z;
  const std::string bw_path = dir + "/providers/multizone_bandwidths.json";
  ORR_ASSIGN_OR_RETURN(json bw, ReadJson(bw_path));
  for (auto from = bw.begin(); from != bw.end(); ++from) {
    for (auto gpu = from.value().begin(); gpu != from.value().end(); ++gpu) {
      if (!gpu.value().contains("1")) continue;
      for (auto to = gpu.value()["1"].begin(); to != gpu.value()["1"].end(); ++to) {
        const json& recv = to.value();
        if (!recv.contains(gpu.key()) || !recv[gpu.key()].contains("1")) continue;
        ORR_ASSIGN_OR_RETURN(BandwidthFit f, ParseFit(recv[gpu.key()]["1"], bw_path + ": " + from.key() + "/" + gpu.key()));
        z.fits[{from.key(), gpu.key(), to.key()}] = f;
      }
    }
  }
  const std::string cost_path = dir + "/providers/gcp/communication_cost.json";
  ORR_ASSIGN_OR_RETURN(json cost, ReadJson(cost_path));
  for (auto from = cost.begin(); from != cost.end(); ++from) {
    for (auto to = from.value().begin(); to != from.value().end(); ++to) {
      if (to.value().is_number()) z.dollars_per_gb[{from.key(), to.key()}] = to.value().get<double>();
    }
  }
  return z;
}

}  // namespace orrery::plan

namespace orrery::plan {

// Sailor's files as data: a value of the wrong JSON type is an error, never an exception.
Result<SailorModel> LoadSailorModel(const std::string& dir, const std::string& model) {
  return ReadJsonGuarded(dir + " (Sailor's profiles)", [&] { return LoadSailorModelUnchecked(dir, model); });
}

}  // namespace orrery::plan

namespace orrery::plan {

// Sailor's files as data: a value of the wrong JSON type is an error, never an exception.
Result<SailorGpu> LoadSailorGpu(const std::string& dir, const std::string& model, const std::string& gpu) {
  return ReadJsonGuarded(dir + " (Sailor's profiles)", [&] { return LoadSailorGpuUnchecked(dir, model, gpu); });
}

}  // namespace orrery::plan

namespace orrery::plan {

// Sailor's files as data: a value of the wrong JSON type is an error, never an exception.
Result<ZoneNetwork> LoadZoneNetwork(const std::string& dir) {
  return ReadJsonGuarded(dir + " (Sailor's profiles)", [&] { return LoadZoneNetworkUnchecked(dir); });
}

}  // namespace orrery::plan
