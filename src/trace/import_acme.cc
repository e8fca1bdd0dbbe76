// Acme (Shanghai AI Lab) trace_seren.csv / trace_kalos.csv.
// See docs/formats/importers.md#acme.
#include <algorithm>
#include <cmath>

#include "trace/import_internal.h"

namespace orrery::trace_internal {

Status ReadAcme(LineReader& r, TraceBuilder& b) {
  const std::string& file = r.path();
  const uint32_t fidx = b.current_file();
  std::string_view line;
  if (!StartAbsoluteWithIds(r, b, &line)) return Status::Ok();
  static const HeaderSpec spec{"acme",
                               {"job_id", "user", "node_num", "gpu_num", "cpu_num", "type", "state", "submit_time",
                                "start_time", "end_time", "duration", "queue", "gpu_time", "mem_per_pod_GB"},
                               {true, true, true, true, true, true, true, true, true, true, true, false, false, false},
                               ','};
  ORR_ASSIGN_OR_RETURN(auto c, MapHeader(spec, line, file));
  const HeliosLikeColumns hc{c[0], c[3], c[4], c[2], c[6], c[7], c[8], c[9], c[10]};
  const std::string cols = JoinColumns(spec.columns, ',');
  uint64_t mismatch = 0;
  Status st = ForEachRow(r, b, ',', CountFields(line, ','), cols, [&](Row& row, uint64_t ln) {
    Job j;
    if (!ParseHeliosLikeRow(row, hc, &j, &mismatch)) return false;
    if (c[13] >= 0 && !row.text(c[13]).empty()) {
      const int64_t pods = std::max<int64_t>(j.nodes, 1);
      double gb;
      if (!ParseF64(row.text(c[13]), &gb) || gb < 0 || gb * 1024.0 * pods > UINT32_MAX)
        return row.Fail(c[13], "mem_per_pod_GB", "a non-negative number of GB");
      int64_t mib = std::llround(gb * 1024.0) * pods;
      if (mib > UINT32_MAX) return row.Fail(c[13], "mem_per_pod_GB", "a non-negative number of GB");
      j.mem_mib = static_cast<uint32_t>(mib);
    }
    j.user = b.User(row.text(c[1]));
    j.name = b.Name(row.text(c[5]));  // job type (Pretrain/SFT/Eval/MLLM/Debug/Other): Acme has no job name
    j.kind = AcmeJobKind(row.text(c[5]));
    b.AddJob(j, row.text(c[0]), RowLoc{fidx, ln});
    return true;
  });
  WarnDurationMismatch(b, file, mismatch);
  return st;
}

}  // namespace orrery::trace_internal
