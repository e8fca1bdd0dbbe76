// Acme (Shanghai AI Lab) trace_seren.csv / trace_kalos.csv.
// See docs/formats/importers.md#acme.
#include <algorithm>
#include <cmath>

#include "trace/import_internal.h"

namespace orrery::trace_internal {

bool ParseRunTimes(Row& row, int c_submit, int c_start, int c_end, int c_dur, Job* j, uint64_t* dur_mismatch);

Status ReadAcme(LineReader& r, TraceBuilder& b) {
  const std::string& file = r.path();
  const uint32_t fidx = b.current_file();
  b.set_time_base(TraceBuilder::TimeBase::kAbsolute);
  b.set_has_ids(true);
  std::string_view line;
  if (!NextNonBlank(r, &line)) return Status::Ok();
  static const HeaderSpec spec{"acme",
                               {"job_id", "user", "node_num", "gpu_num", "cpu_num", "type", "state", "submit_time",
                                "start_time", "end_time", "duration", "queue", "gpu_time", "mem_per_pod_GB"},
                               {true, true, true, true, true, true, true, true, true, true, true, false, false, false},
                               ','};
  ORR_ASSIGN_OR_RETURN(auto c, MapHeader(spec, line, file));
  const std::string cols = JoinColumns(spec.columns, ',');
  uint64_t mismatch = 0;
  Status st = ForEachRow(r, b, ',', CountFields(line, ','), cols, [&](Row& row, uint64_t ln) {
    Job j;
    int64_t gpus, cpus, nodes;
    if (row.text(c[0]).empty()) return row.Fail(c[0], "job_id", "a job id");
    if (!row.Int(c[3], "gpu_num", 0, kMaxGpus, &gpus, true) ||
        !row.Int(c[4], "cpu_num", 0, UINT32_MAX / 1000, &cpus, true) ||
        !row.Int(c[2], "node_num", 0, 65535, &nodes, true))
      return false;
    if (row.text(c[6]).empty() || !ParseJobState(Trim(row.text(c[6])), &j.state))
      return row.Fail(c[6], "state", "one of COMPLETED, CANCELLED, FAILED, TIMEOUT, NODE_FAIL");
    if (!ParseRunTimes(row, c[7], c[8], c[9], c[10], &j, &mismatch)) return false;
    if (c[13] >= 0 && !row.text(c[13]).empty()) {
      double gb;
      if (!ParseF64(row.text(c[13]), &gb) || gb < 0 || gb * 1024.0 * std::max<int64_t>(nodes, 1) > UINT32_MAX)
        return row.Fail(c[13], "mem_per_pod_GB", "a non-negative number of GB");
      int64_t mib = std::llround(gb * 1024.0) * std::max<int64_t>(nodes, 1);
      if (mib > UINT32_MAX) return row.Fail(c[13], "mem_per_pod_GB", "a non-negative number of GB");
      j.mem_mib = static_cast<uint32_t>(mib);
    }
    j.user = b.User(row.text(c[1]));
    j.name = b.Name(row.text(c[5]));  // job type (Pretrain/SFT/Eval/MLLM/Debug/Other): Acme has no job name
    j.gpus = static_cast<uint32_t>(gpus);
    j.cpu_milli = static_cast<uint32_t>(cpus * 1000);
    j.nodes = static_cast<uint16_t>(nodes);
    b.AddJob(j, row.text(c[0]), RowLoc{fidx, ln});
    return true;
  });
  if (mismatch > 0)
    b.Warn(file + ": " + std::to_string(mismatch) + " rows have duration != end_time - start_time; kept the duration column");
  return st;
}

}  // namespace orrery::trace_internal
