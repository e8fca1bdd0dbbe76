// Alibaba openb node list CSV (cluster-trace-gpu-v2023): sn,cpu_milli,memory_mib,gpu,model.
#include <limits>
#include <unordered_set>

#include "base/io.h"
#include "base/parse.h"
#include "config/cluster_config.h"

namespace orrery {

namespace {
constexpr const char* kColumns[] = {"sn", "cpu_milli", "memory_mib", "gpu", "model"};
constexpr size_t kNumColumns = 5;

Status ParseUint(const SourcePos& pos, const Field& f, const char* name, uint64_t max, uint64_t* out) {
  int64_t v = 0;
  std::string_view t = Trim(f.text);
  if (!ParseI64(t, &v) || v < 0)
    return FieldError(pos, name, "a non-negative integer", f.text);
  if (static_cast<uint64_t>(v) > max)
    return FieldError(pos, name, "an integer no greater than " + std::to_string(max), f.text);
  *out = static_cast<uint64_t>(v);
  return Status::Ok();
}
}  // namespace

Result<Cluster> LoadOpenbNodeList(const std::string& path) {
  ORR_ASSIGN_OR_RETURN(auto reader, LineReader::Open(path));
  Cluster cl;
  cl.name = path;
  {
    size_t slash = path.find_last_of('/');
    std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    for (const char* ext : {".gz", ".csv"})
      if (base.size() > std::string_view(ext).size() && base.ends_with(ext))
        base.resize(base.size() - std::string_view(ext).size());
    cl.name = base;
  }
  cl.single_pool = true;
  VirtualCluster pool;
  pool.id = VcId(0);
  pool.name = "default";

  std::vector<Field> fields;
  std::vector<std::string> scratch;
  std::unordered_set<std::string> names;
  std::string_view line;
  bool header = true;
  while (reader->Next(&line)) {
    SourcePos pos{path, reader->line_number(), 1};
    if (Trim(line).empty()) continue;
    uint32_t bad_col = 0;
    if (!SplitLine(line, ',', &fields, &scratch, &bad_col)) {
      pos.col = bad_col;
      return MakeError(FormatPos(pos) + ": unterminated quoted field");
    }
    if (header) {
      header = false;
      bool ok = fields.size() == kNumColumns;
      for (size_t i = 0; ok && i < kNumColumns; ++i) ok = Trim(fields[i].text) == kColumns[i];
      if (!ok)
        return MakeError(FormatPos(pos) + ": expected the header \"sn,cpu_milli,memory_mib,gpu,model\", got " +
                         Quote(line));
      continue;
    }
    if (fields.size() != kNumColumns)
      return MakeError(FormatPos(pos) + ": expected 5 fields (sn,cpu_milli,memory_mib,gpu,model), got " +
                       std::to_string(fields.size()));
    Node n;
    pos.col = fields[0].col;
    std::string_view sn = Trim(fields[0].text);
    if (sn.empty()) return FieldError(pos, "sn", "a non-empty node name", fields[0].text);
    if (!names.emplace(sn).second) return FieldError(pos, "sn", "a unique node name", fields[0].text);
    uint64_t cpu = 0, mem = 0, gpus = 0;
    pos.col = fields[1].col;
    ORR_RETURN_IF_ERROR(ParseUint(pos, fields[1], "cpu_milli", std::numeric_limits<uint32_t>::max(), &cpu));
    pos.col = fields[2].col;
    ORR_RETURN_IF_ERROR(ParseUint(pos, fields[2], "memory_mib", std::numeric_limits<uint32_t>::max(), &mem));
    pos.col = fields[3].col;
    ORR_RETURN_IF_ERROR(ParseUint(pos, fields[3], "gpu", 65535, &gpus));
    std::string_view model = Trim(fields[4].text);
    if (!model.empty()) {
      if (cl.gpu_types.Find(model) == UINT32_MAX && cl.gpu_types.size() >= kMaxGpuTypes) {
        pos.col = fields[4].col;
        return FieldError(pos, "model", "at most " + std::to_string(kMaxGpuTypes) + " distinct GPU models",
                          fields[4].text);
      }
      n.gpu_type = GpuTypeId(static_cast<uint8_t>(cl.gpu_types.Intern(model)));
    }
    if (cl.nodes.size() >= kMaxConfigNodes)
      return MakeError(FormatPos(pos) + ": expected at most " + std::to_string(kMaxConfigNodes) + " nodes");
    n.id = NodeId(static_cast<uint32_t>(cl.nodes.size()));
    n.vc = pool.id;
    n.gpus = static_cast<uint16_t>(gpus);
    n.cpu_milli = static_cast<uint32_t>(cpu);
    n.mem_mib = static_cast<uint32_t>(mem);
    n.name = std::string(sn);
    pool.nodes.push_back(n.id);
    pool.gpus += n.gpus;
    cl.nodes.push_back(std::move(n));
  }
  if (!reader->error().empty()) return MakeError(reader->error());
  if (header) return MakeError(path + ":1:1: expected the header \"sn,cpu_milli,memory_mib,gpu,model\", got an empty file");
  if (cl.nodes.empty()) return MakeError(path + ":2:1: expected at least one node row, got none");
  cl.vcs.push_back(std::move(pool));
  return cl;
}

}  // namespace orrery
