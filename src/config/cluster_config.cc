#include "config/cluster_config.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>
#include <string_view>
#include <unordered_map>


#include "base/io.h"
#include "base/parse.h"
#include "config/toml_util.h"

namespace orrery {

const PowerModel& ClusterSpec::node_power(NodeId n) const {
  static const PowerModel kNone;
  for (const auto& g : groups)
    if (n.value() >= g.first_node && n.value() - g.first_node < g.count) return g.power;
  return kNone;
}

PowerModel DefaultPowerModel(const std::string& gpu_type, uint32_t gpus) {
  // Engineering estimates for DGX-class 8-GPU servers (see docs/formats/cluster.md):
  // idle = host + 8 idle GPUs; busy_watts_per_gpu = GPU board power under training load
  // minus its idle power.
  PowerModel p;
  if (gpus != 8) return p;
  if (gpu_type == "V100") {
    p.idle_watts = 800;
    p.busy_watts_per_gpu = 260;
  } else if (gpu_type == "A100") {
    p.idle_watts = 1500;
    p.busy_watts_per_gpu = 350;
  } else if (gpu_type == "H100") {
    p.idle_watts = 2000;
    p.busy_watts_per_gpu = 630;
  } else {
    return p;
  }
  p.source = "default:" + gpu_type;
  return p;
}

namespace {

using TV = toml_util::Value;
using Ctx = toml_util::Locator;
using toml_util::CheckKeys;
using toml_util::Find;
using toml_util::Got;

// Keys accepted in each table.
const std::vector<std::string> kRootKeys = {"name",       "single_pool", "defaults",     "vc",
                                            "node_group", "topology",    "start_latency"};
const std::vector<std::string> kDefaultsKeys = {"gpus_per_node", "gpu_type", "cpu_milli",
                                                "mem_mib", "idle_watts", "busy_watts_per_gpu"};
const std::vector<std::string> kVcKeys = {"name",    "nodes",      "gpus_per_node",     "gpu_type",
                                          "cpu_milli", "mem_mib", "idle_watts", "busy_watts_per_gpu",
                                          "rack",      "nodes_per_rack"};
const std::vector<std::string> kGroupKeys = {"count",   "gpus",        "gpu_type",   "cpu_milli",         "mem_mib",
                                             "vc",      "name_prefix", "idle_watts", "busy_watts_per_gpu",
                                             "rack",    "nodes_per_rack"};
// [topology]: per-GPU bandwidth (GB/s) and latency (µs) of each link class (model/cluster.h).
const char* const kLinkKeys[kNumLinkClasses][2] = {{"nvlink_gbps", "nvlink_latency_us"},
                                                   {"intra_rack_gbps", "intra_rack_latency_us"},
                                                   {"inter_rack_gbps", "inter_rack_latency_us"}};
const std::vector<std::string> kTopologyKeys = {"nvlink_gbps",     "nvlink_latency_us",     "intra_rack_gbps",
                                                "intra_rack_latency_us", "inter_rack_gbps", "inter_rack_latency_us"};
// [start_latency]: the scheduling system's delay from submission to the first chance of a start.
const std::vector<std::string> kStartLatencyKeys = {"min_s", "median_s", "sigma"};
constexpr double kMaxStartLatencyS = 86400;  // a day: anything longer is not a start latency
constexpr double kMaxStartLatencySigma = 3;
const std::string kLatencySeconds = "a number of seconds in [0, 86400]";  // kMaxStartLatencyS
const std::string kLatencySigma = "a log-sd in [0, 3]";                    // kMaxStartLatencySigma

constexpr const char* kPoolVcName = "default";

std::string KeyIn(const std::string& key, const std::string& where) { return "key '" + key + "' in " + where; }

Result<std::optional<int64_t>> IntIn(const Ctx& c, const TV& tbl, const std::string& key, const std::string& where,
                                      int64_t min, int64_t max) {
  return toml_util::GetInt(c, tbl, key, KeyIn(key, where), min, max);
}

Result<std::optional<double>> GetNumber(const Ctx& c, const TV& tbl, const std::string& key, const std::string& where,
                                        const std::string& expected) {
  const TV* v = Find(tbl, key);
  if (!v) return std::optional<double>();
  double x;
  if (v->is_integer())
    x = static_cast<double>(v->as_integer());
  else if (v->is_floating())
    x = v->as_floating();
  else
    return c.At(*v, KeyIn(key, where) + ": expected " + expected + ", got " + Got(*v));
  if (!std::isfinite(x) || x < 0 || x >= 1e9)
    return c.At(*v, KeyIn(key, where) + ": expected " + expected + ", got " + Got(*v));
  return std::optional<double>(x);
}

Result<std::optional<double>> GetWatts(const Ctx& c, const TV& tbl, const std::string& key, const std::string& where) {
  return GetNumber(c, tbl, key, where, "a non-negative number of watts below 1e9");
}

Result<std::optional<std::string>> NameIn(const Ctx& c, const TV& tbl, const std::string& key,
                                             const std::string& where) {
  return toml_util::GetName(c, tbl, key, KeyIn(key, where));
}

// The optional node-shape keys shared by [defaults], [[vc]] and [[node_group]].
struct Shape {
  std::optional<int64_t> gpus, cpu_milli, mem_mib;
  std::optional<std::string> gpu_type;
  std::optional<double> idle_watts, busy_watts_per_gpu;
};

Status ReadShape(const Ctx& c, const TV& tbl, const std::string& where, const char* gpus_key, Shape* s) {
  {
    ORR_ASSIGN_OR_RETURN(auto g, IntIn(c, tbl, gpus_key, where, 0, 65535));
    if (g) s->gpus = g;
  }
  {
    ORR_ASSIGN_OR_RETURN(auto t, NameIn(c, tbl, "gpu_type", where));
    if (t) s->gpu_type = t;
  }
  {
    ORR_ASSIGN_OR_RETURN(auto x, IntIn(c, tbl, "cpu_milli", where, 0, UINT32_MAX));
    if (x) s->cpu_milli = x;
  }
  {
    ORR_ASSIGN_OR_RETURN(auto x, IntIn(c, tbl, "mem_mib", where, 0, UINT32_MAX));
    if (x) s->mem_mib = x;
  }
  {
    ORR_ASSIGN_OR_RETURN(auto x, GetWatts(c, tbl, "idle_watts", where));
    if (x) s->idle_watts = x;
  }
  {
    ORR_ASSIGN_OR_RETURN(auto x, GetWatts(c, tbl, "busy_watts_per_gpu", where));
    if (x) s->busy_watts_per_gpu = x;
  }
  return Status::Ok();
}

Shape Merge(const Shape& d, const Shape& s) {
  Shape m = s;
  if (!m.gpus) m.gpus = d.gpus;
  if (!m.gpu_type) m.gpu_type = d.gpu_type;
  if (!m.cpu_milli) m.cpu_milli = d.cpu_milli;
  if (!m.mem_mib) m.mem_mib = d.mem_mib;
  if (!m.idle_watts) m.idle_watts = d.idle_watts;
  if (!m.busy_watts_per_gpu) m.busy_watts_per_gpu = d.busy_watts_per_gpu;
  return m;
}

// A group before node ids are assigned.
struct PendingGroup {
  NodeGroupSpec spec;
  std::string name_prefix;  // empty: "<vc>-<index in vc>"
  size_t vc_index = 0;
  std::string rack;            // all its nodes in this rack (empty: see nodes_per_rack)
  uint32_t nodes_per_rack = 0; // > 0: its nodes fill racks "<vc>-rack<k>" of this many
};

// The optional rack keys of a [[vc]] or [[node_group]] table.
Status ReadRack(const Ctx& c, const TV& t, const std::string& where, PendingGroup* pg) {
  ORR_ASSIGN_OR_RETURN(auto rack, NameIn(c, t, "rack", where));
  ORR_ASSIGN_OR_RETURN(auto per, IntIn(c, t, "nodes_per_rack", where, 1, kMaxConfigNodes));
  if (rack && per)
    return c.At(*Find(t, "nodes_per_rack"), where + ": expected either 'rack' or 'nodes_per_rack', got both");
  if (rack) pg->rack = *rack;
  if (per) pg->nodes_per_rack = static_cast<uint32_t>(*per);
  return Status::Ok();
}

Status ReadTopology(const Ctx& c, const TV& root, Topology* topo) {
  const TV* t = Find(root, "topology");
  if (!t) return Status::Ok();
  if (!t->is_table()) return c.AtKey(*t, "topology", "key 'topology': expected a table ([topology]), got " + Got(*t));
  ORR_RETURN_IF_ERROR(CheckKeys(c, *t, "[topology]", kTopologyKeys));
  for (int k = 0; k < kNumLinkClasses; ++k) {
    ORR_ASSIGN_OR_RETURN(auto gbps, GetNumber(c, *t, kLinkKeys[k][0], "[topology]", "a non-negative number of GB/s below 1e9"));
    ORR_ASSIGN_OR_RETURN(auto lat, GetNumber(c, *t, kLinkKeys[k][1], "[topology]", "a non-negative number of µs below 1e9"));
    if (gbps) topo->links[k].gbps = *gbps;
    if (lat) topo->links[k].latency_us = *lat;
  }
  topo->declared = true;
  return Status::Ok();
}

// [start_latency] (model/cluster.h StartLatency): median_s is required, min_s <= median_s.
Status ReadStartLatency(const Ctx& c, const TV& root, StartLatency* out) {
  const TV* t = Find(root, "start_latency");
  if (!t) return Status::Ok();
  const std::string where = "[start_latency]";
  if (!t->is_table()) return c.AtKey(*t, "start_latency", "key 'start_latency': expected a table (" + where + "), got " + Got(*t));
  ORR_RETURN_IF_ERROR(CheckKeys(c, *t, where, kStartLatencyKeys));
  const std::string& secs = kLatencySeconds;
  ORR_ASSIGN_OR_RETURN(auto median, GetNumber(c, *t, "median_s", where, secs));
  ORR_ASSIGN_OR_RETURN(auto min, GetNumber(c, *t, "min_s", where, secs));
  ORR_ASSIGN_OR_RETURN(auto sigma, GetNumber(c, *t, "sigma", where, kLatencySigma));
  if (!median) return c.At(*t, where + ": missing required key 'median_s' (" + secs + ")");
  if (*median > kMaxStartLatencyS)
    return c.At(*Find(*t, "median_s"), KeyIn("median_s", where) + ": expected " + secs + ", got " + Got(*Find(*t, "median_s")));
  if (min && *min > *median)
    return c.At(*Find(*t, "min_s"), KeyIn("min_s", where) + ": expected at most median_s (" + Got(*Find(*t, "median_s")) +
                                        "), got " + Got(*Find(*t, "min_s")));
  if (sigma && *sigma > kMaxStartLatencySigma)
    return c.At(*Find(*t, "sigma"), KeyIn("sigma", where) + ": expected " + kLatencySigma + ", got " + Got(*Find(*t, "sigma")));
  out->median_s = *median;
  out->min_s = min.value_or(0);
  out->sigma = sigma.value_or(0);
  return Status::Ok();
}

// The rack index of the i-th node of group pg (interned into topo->racks; 0 = "default").
uint16_t RackOf(const PendingGroup& pg, const std::string& vc_name, uint32_t i, Topology* topo) {
  std::string name = !pg.rack.empty()        ? pg.rack
                     : pg.nodes_per_rack > 0 ? vc_name + "-rack" + std::to_string(i / pg.nodes_per_rack)
                                             : std::string();
  if (name.empty()) return 0;
  topo->declared = true;
  for (size_t r = 0; r < topo->racks.size(); ++r)
    if (topo->racks[r] == name) return static_cast<uint16_t>(r);
  topo->racks.push_back(std::move(name));
  return static_cast<uint16_t>(topo->racks.size() - 1);
}

Result<const toml::array*> GetTableArray(const Ctx& c, const TV& root, const std::string& key) {
  const TV* v = Find(root, key);
  if (!v) return static_cast<const toml::array*>(nullptr);
  bool ok = v->is_array();
  if (ok)
    for (const auto& e : v->as_array()) ok = ok && e.is_table();
  if (!ok)
    return c.AtKey(*v, key, "key '" + key + "': expected an array of tables ([[" + key + "]]), got " + Got(*v));
  return &v->as_array();
}

Status FinishGroup(const Ctx& c, const TV& tbl, const std::string& where, const char* gpus_key, const Shape& merged,
                   NodeGroupSpec* g) {
  if (!merged.gpus)
    return c.At(tbl, where + " has no GPU count: expected key '" + gpus_key + "' here" +
                         (std::string(gpus_key) == "gpus" ? " or 'gpus_per_node' in [defaults]" : " or in [defaults]") +
                         ", found neither");
  g->gpus = static_cast<uint16_t>(*merged.gpus);
  g->gpu_type = merged.gpu_type.value_or("");
  g->cpu_milli = static_cast<uint32_t>(merged.cpu_milli.value_or(0));
  g->mem_mib = static_cast<uint32_t>(merged.mem_mib.value_or(0));
  if (merged.idle_watts.has_value() != merged.busy_watts_per_gpu.has_value()) {
    const char* given = merged.idle_watts ? "idle_watts" : "busy_watts_per_gpu";
    const char* missing = merged.idle_watts ? "busy_watts_per_gpu" : "idle_watts";
    return c.At(tbl, where + ": expected both idle_watts and busy_watts_per_gpu (here or in [defaults]), got only " +
                         std::string(given) + " (missing " + missing + ")");
  }
  if (merged.idle_watts) {
    g->power.idle_watts = *merged.idle_watts;
    g->power.busy_watts_per_gpu = *merged.busy_watts_per_gpu;
    g->power.source = "config";
  } else {
    g->power = DefaultPowerModel(g->gpu_type, g->gpus);
  }
  g->decl_line = tbl.location().line();
  return Status::Ok();
}

// Builds the Cluster from groups (assigns dense node ids in VC order).
Result<ClusterSpec> Build(const Ctx& c, const TV& root, std::string name, bool single_pool,
                          const std::vector<std::string>& vc_names, std::vector<PendingGroup> groups) {
  ClusterSpec out;
  Cluster& cl = out.cluster;
  cl.name = std::move(name);
  cl.single_pool = single_pool;
  std::stable_sort(groups.begin(), groups.end(),
                   [](const PendingGroup& a, const PendingGroup& b) { return a.vc_index < b.vc_index; });
  uint64_t total = 0;
  for (const auto& g : groups) total += g.spec.count;
  if (total == 0) return c.At(root, "cluster '" + cl.name + "' has no nodes: expected [[vc]] or [[node_group]] tables");
  cl.nodes.reserve(total);
  cl.vcs.resize(vc_names.size());
  for (size_t i = 0; i < vc_names.size(); ++i) {
    cl.vcs[i].id = VcId(static_cast<uint16_t>(i));
    cl.vcs[i].name = vc_names[i];
  }
  std::vector<uint32_t> per_vc(vc_names.size(), 0);
  for (auto& pg : groups) {
    auto& g = pg.spec;
    g.first_node = static_cast<uint32_t>(cl.nodes.size());
    GpuTypeId type;
    if (!g.gpu_type.empty()) {
      if (cl.gpu_types.Find(g.gpu_type) == UINT32_MAX && cl.gpu_types.size() >= kMaxGpuTypes)
        return MakeError(c.Pos(g.decl_line, 1) + ": too many GPU types: expected at most " +
                         std::to_string(kMaxGpuTypes) + ", got another one, " + Quote(g.gpu_type));
      type = GpuTypeId(static_cast<uint8_t>(cl.gpu_types.Intern(g.gpu_type)));
    }
    auto& vc = cl.vcs[pg.vc_index];
    for (uint32_t i = 0; i < g.count; ++i) {
      Node n;
      n.id = NodeId(static_cast<uint32_t>(cl.nodes.size()));
      n.vc = vc.id;
      n.gpu_type = type;
      n.gpus = g.gpus;
      n.cpu_milli = g.cpu_milli;
      n.mem_mib = g.mem_mib;
      n.rack = RackOf(pg, vc.name, i, &cl.topology);
      n.name = pg.name_prefix.empty() ? vc.name + "-" + std::to_string(per_vc[pg.vc_index])
                                      : pg.name_prefix + std::to_string(i);
      ++per_vc[pg.vc_index];
      vc.nodes.push_back(n.id);
      vc.gpus += n.gpus;
      cl.nodes.push_back(std::move(n));
    }
    out.groups.push_back(std::move(g));
  }
  return out;
}

Result<ClusterSpec> ParseImpl(const std::string& text, const std::string& file, uint64_t max_nodes) {
  Ctx c{file};
  ORR_ASSIGN_OR_RETURN(TV root, toml_util::Parse(c, text));
  const std::string top = "the top-level table";
  ORR_RETURN_IF_ERROR(CheckKeys(c, root, top, kRootKeys));

  ORR_ASSIGN_OR_RETURN(auto name, NameIn(c, root, "name", top));
  if (!name) return MakeError(c.Pos(1, 1) + ": missing required key 'name' in the top-level table (a non-empty string)");

  ORR_ASSIGN_OR_RETURN(auto pool, toml_util::GetBool(c, root, "single_pool", KeyIn("single_pool", top)));
  const bool single_pool = pool.value_or(false);

  Shape defaults;
  if (const TV* d = Find(root, "defaults")) {
    if (!d->is_table())
      return c.AtKey(*d, "defaults", "key 'defaults': expected a table ([defaults]), got " + Got(*d));
    ORR_RETURN_IF_ERROR(CheckKeys(c, *d, "[defaults]", kDefaultsKeys));
    ORR_RETURN_IF_ERROR(ReadShape(c, *d, "[defaults]", "gpus_per_node", &defaults));
  }

  std::vector<std::string> vc_names;
  std::unordered_map<std::string, std::pair<size_t, uint32_t>> vc_index;  // name -> (index, line)
  std::vector<PendingGroup> groups;
  uint64_t total_nodes = 0;
  auto add_nodes = [&](const TV& v, const std::string& key, const std::string& where, int64_t n) -> Status {
    total_nodes += static_cast<uint64_t>(n);
    if (total_nodes > max_nodes)
      return c.At(v, KeyIn(key, where) + ": expected at most " + std::to_string(max_nodes) +
                         " nodes in the cluster, got " + std::to_string(total_nodes) + " so far");
    return Status::Ok();
  };
  auto new_vc = [&](const std::string& vname, uint32_t line) -> size_t {
    vc_index.emplace(vname, std::make_pair(vc_names.size(), line));
    vc_names.push_back(vname);
    return vc_names.size() - 1;
  };

  ORR_ASSIGN_OR_RETURN(const toml::array* vcs, GetTableArray(c, root, "vc"));
  ORR_ASSIGN_OR_RETURN(const toml::array* ngs, GetTableArray(c, root, "node_group"));
  if (single_pool && vcs && !vcs->empty())
    return c.At(vcs->front(), "[[vc]] tables are not allowed when single_pool = true (all nodes form one pool "
                              "'default'): expected [[node_group]] tables without 'vc', got [[vc]]");
  if (single_pool) new_vc(kPoolVcName, 0);

  if (vcs) {
    for (size_t i = 0; i < vcs->size(); ++i) {
      const TV& t = (*vcs)[i];
      std::string where = "[[vc]] #" + std::to_string(i + 1);
      ORR_RETURN_IF_ERROR(CheckKeys(c, t, where, kVcKeys));
      ORR_ASSIGN_OR_RETURN(auto vname, NameIn(c, t, "name", where));
      if (!vname) return c.At(t, where + " is missing required key 'name' (a non-empty string)");
      where += " '" + *vname + "'";
      ORR_ASSIGN_OR_RETURN(auto nodes, IntIn(c, t, "nodes", where, 1, kMaxConfigNodes));
      if (!nodes) return c.At(t, where + " is missing required key 'nodes' (a positive integer)");
      ORR_RETURN_IF_ERROR(add_nodes(*Find(t, "nodes"), "nodes", where, *nodes));
      auto it = vc_index.find(*vname);
      if (it != vc_index.end())
        return c.At(*Find(t, "name"), KeyIn("name", where) + ": expected a unique VC name, got " + Quote(*vname) +
                                          " again (first declared at line " + std::to_string(it->second.second) + ")");
      if (vc_names.size() >= VcId::kInvalid)
        return c.At(t, where + ": expected at most " + std::to_string(VcId::kInvalid - 1) + " VCs, got more");
      Shape s;
      ORR_RETURN_IF_ERROR(ReadShape(c, t, where, "gpus_per_node", &s));
      PendingGroup pg;
      pg.vc_index = new_vc(*vname, t.location().line());
      pg.spec.vc = *vname;
      pg.spec.count = static_cast<uint32_t>(*nodes);
      ORR_RETURN_IF_ERROR(FinishGroup(c, t, where, "gpus_per_node", Merge(defaults, s), &pg.spec));
      ORR_RETURN_IF_ERROR(ReadRack(c, t, where, &pg));
      groups.push_back(std::move(pg));
    }
  }
  if (ngs) {
    for (size_t i = 0; i < ngs->size(); ++i) {
      const TV& t = (*ngs)[i];
      std::string where = "[[node_group]] #" + std::to_string(i + 1);
      ORR_RETURN_IF_ERROR(CheckKeys(c, t, where, kGroupKeys));
      ORR_ASSIGN_OR_RETURN(auto count, IntIn(c, t, "count", where, 1, kMaxConfigNodes));
      if (!count) return c.At(t, where + " is missing required key 'count' (a positive integer)");
      ORR_RETURN_IF_ERROR(add_nodes(*Find(t, "count"), "count", where, *count));
      ORR_ASSIGN_OR_RETURN(auto vname, NameIn(c, t, "vc", where));
      PendingGroup pg;
      if (single_pool) {
        if (vname)
          return c.AtKey(*Find(t, "vc"), "vc",
                         KeyIn("vc", where) + ": expected no 'vc' when single_pool = true (all nodes form one pool), "
                                              "got " + Quote(*vname));
        pg.vc_index = 0;
        pg.spec.vc = kPoolVcName;
      } else {
        if (!vname)
          return c.At(t, where + " is missing required key 'vc' (the owning VC's name; or set single_pool = true)");
        auto it = vc_index.find(*vname);
        if (it == vc_index.end()) {
          if (vc_names.size() >= VcId::kInvalid)
            return c.At(t, where + ": expected at most " + std::to_string(VcId::kInvalid - 1) + " VCs, got more");
          pg.vc_index = new_vc(*vname, t.location().line());
        } else {
          pg.vc_index = it->second.first;
        }
        pg.spec.vc = *vname;
      }
      ORR_ASSIGN_OR_RETURN(auto prefix, NameIn(c, t, "name_prefix", where));
      if (prefix) pg.name_prefix = *prefix;
      Shape s;
      ORR_RETURN_IF_ERROR(ReadShape(c, t, where, "gpus", &s));
      pg.spec.count = static_cast<uint32_t>(*count);
      ORR_RETURN_IF_ERROR(FinishGroup(c, t, where, "gpus", Merge(defaults, s), &pg.spec));
      ORR_RETURN_IF_ERROR(ReadRack(c, t, where, &pg));
      groups.push_back(std::move(pg));
    }
  }
  ORR_ASSIGN_OR_RETURN(ClusterSpec spec, Build(c, root, *name, single_pool, vc_names, std::move(groups)));
  ORR_RETURN_IF_ERROR(ReadTopology(c, root, &spec.cluster.topology));
  ORR_RETURN_IF_ERROR(ReadStartLatency(c, root, &spec.cluster.start_latency));
  return spec;
}

}  // namespace

Result<ClusterSpec> ParseClusterSpecString(const std::string& text, const std::string& name, uint64_t max_nodes) {
  return ParseImpl(text, name, max_nodes);
}

Result<ClusterSpec> LoadClusterSpec(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return text.error().With("while loading cluster config");
  return ParseImpl(*text, path, kMaxConfigNodes);
}

Result<Cluster> ParseClusterConfigString(const std::string& text, const std::string& name, uint64_t max_nodes) {
  ORR_ASSIGN_OR_RETURN(ClusterSpec spec, ParseClusterSpecString(text, name, max_nodes));
  return std::move(spec.cluster);
}

Result<Cluster> LoadClusterConfig(const std::string& path) {
  ORR_ASSIGN_OR_RETURN(ClusterSpec spec, LoadClusterSpec(path));
  return std::move(spec.cluster);
}

}  // namespace orrery
