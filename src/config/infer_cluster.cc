#include "config/infer_cluster.h"

#include <algorithm>
#include <limits>

#include "base/io.h"
#include "base/parse.h"
#include "config/cluster_config.h"

namespace orrery {
namespace {

constexpr uint64_t kDefaultProcsPerNode = 8;

// "MaxProcs: 128" -> 128 in *out when `comment` (without ';') starts with `key`.
Status HeaderValue(std::string_view comment, std::string_view key, const std::string& where, uint64_t* out) {
  if (comment.rfind(key, 0) != 0 || comment.size() <= key.size() || comment[key.size()] != ':') return Status::Ok();
  std::string_view v = Trim(comment.substr(key.size() + 1));
  int64_t n = 0;
  if (!ParseI64(v, &n) || n <= 0 || n > std::numeric_limits<int32_t>::max())
    return MakeError(where + ": header '" + std::string(key) + "': expected a positive integer, got \"" +
                     std::string(v) + "\"");
  *out = static_cast<uint64_t>(n);
  return Status::Ok();
}

Result<SwfMachine> ReadHeader(LineReader* r) {
  const std::string& path = r->path();
  SwfMachine m;
  std::string_view line;
  while (r->Next(&line)) {
    std::string_view t = Trim(line);
    if (t.empty()) continue;
    if (t[0] != ';') break;  // first job line: the header is over
    std::string_view c = Trim(t.substr(1));
    const std::string where = path + ":" + std::to_string(r->line_number());
    ORR_RETURN_IF_ERROR(HeaderValue(c, "MaxProcs", where, &m.max_procs));
    ORR_RETURN_IF_ERROR(HeaderValue(c, "MaxNodes", where, &m.max_nodes));
  }
  if (!r->error().empty()) return MakeError(r->error());
  return m;
}

}  // namespace

Result<SwfMachine> ReadSwfMachine(const std::string& path) {
  ORR_ASSIGN_OR_RETURN(auto r, LineReader::Open(path));
  return ReadHeader(r.get());
}

Result<SwfMachine> ParseSwfMachine(std::string_view text, const std::string& name) {
  auto r = LineReader::FromString(text, name);
  return ReadHeader(r.get());
}

Result<Cluster> SwfCluster(const SwfMachine& m, const std::string& path, uint64_t max_nodes) {
  if (m.max_procs == 0)
    return MakeError(path + ": the SWF header has no MaxProcs, so no cluster can be inferred; pass --cluster FILE.toml");
  const uint64_t nodes_hint = m.max_nodes > 0 ? std::min(m.max_nodes, m.max_procs) : 0;
  const uint64_t per_node =
      std::min<uint64_t>(nodes_hint > 0 ? m.max_procs / nodes_hint : kDefaultProcsPerNode, UINT16_MAX);
  if ((m.max_procs + per_node - 1) / per_node > max_nodes)
    return MakeError(path + ": the SWF header's MaxProcs " + std::to_string(m.max_procs) + " / " +
                     std::to_string(per_node) + " per node: expected at most " + std::to_string(max_nodes) +
                     " nodes; pass --cluster FILE.toml");
  Cluster c;
  c.name = "swf-header";
  c.single_pool = true;
  VirtualCluster vc;
  vc.id = VcId(0);
  vc.name = "default";
  const uint64_t count = (m.max_procs + per_node - 1) / per_node;
  c.nodes.reserve(count);
  vc.nodes.reserve(count);
  for (uint64_t left = m.max_procs; left > 0;) {
    Node n;
    n.id = NodeId(static_cast<uint32_t>(c.nodes.size()));
    n.vc = vc.id;
    n.gpus = static_cast<uint16_t>(std::min(left, per_node));
    n.name = "node-" + std::to_string(c.nodes.size());
    left -= n.gpus;
    vc.nodes.push_back(n.id);
    vc.gpus += n.gpus;
    c.nodes.push_back(std::move(n));
  }
  c.vcs.push_back(std::move(vc));
  return c;
}

}  // namespace orrery
