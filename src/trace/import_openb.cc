// Alibaba cluster-trace-gpu-v2023 ("openb") pod lists.
// See docs/formats/importers.md#openb.
#include "trace/import_internal.h"

namespace orrery::trace_internal {

Status ReadOpenb(LineReader& r, TraceBuilder& b) {
  const std::string& file = r.path();
  const uint32_t fidx = b.current_file();
  b.set_time_base(TraceBuilder::TimeBase::kRelative);  // integer seconds from the trace start; epoch unknown
  b.set_has_ids(true);
  std::string_view line;
  if (!NextNonBlank(r, &line)) return Status::Ok();
  static const HeaderSpec spec{"openb pod list",
                               {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos",
                                "pod_phase", "creation_time", "deletion_time", "scheduled_time"},
                               {true, true, true, true, true, false, false, true, true, true, true},
                               ','};
  std::string_view h = Trim(StripBom(line));
  if (h.substr(0, 3) == "sn," && h.find("model") != std::string_view::npos)
    return MakeError(file + ":1: this is an openb node list (sn,cpu_milli,memory_mib,gpu,model), a cluster "
                            "config, not a pod list; use it as the cluster configuration");
  if (h.find("creation_time") == std::string_view::npos && h.find("num_gpu") != std::string_view::npos &&
      h.find("gpu_milli") != std::string_view::npos)
    return MakeError(file + ":1: this openb pod list has no time columns (" + std::string(h) +
                     "; e.g. the multigpuXX variants): it can only drive static packing/fragmentation "
                     "experiments, not a time-driven trace import (expected header '" +
                     JoinColumns(spec.columns, ',') + "')");
  ORR_ASSIGN_OR_RETURN(auto c, MapHeader(spec, line, file));
  const std::string cols = JoinColumns(spec.columns, ',');
  return ForEachRow(r, b, ',', CountFields(line, ','), cols, [&](Row& row, uint64_t ln) {
    Job j;
    int64_t cpu, mem, gpus, milli, created, deleted, sched;
    if (!row.Int(c[1], "cpu_milli", 0, UINT32_MAX, &cpu) || !row.Int(c[2], "memory_mib", 0, UINT32_MAX, &mem) ||
        !row.Int(c[3], "num_gpu", 0, kMaxGpus, &gpus) || !row.Int(c[4], "gpu_milli", 0, 1000, &milli) ||
        !row.Int(c[8], "creation_time", -kMaxSeconds, kMaxSeconds, &created) ||
        !row.OptInt(c[9], "deletion_time", -kMaxSeconds, kMaxSeconds, kNoTime, &deleted) ||
        !row.OptInt(c[10], "scheduled_time", -kMaxSeconds, kMaxSeconds, kNoTime, &sched))
      return false;
    if (gpus == 1 && milli == 0) return row.Fail(c[4], "gpu_milli", "1..1000 for a one-GPU pod");
    if (c[5] >= 0 && !b.GpuTypes(row.text(c[5]), &j.gpu_types))
      return row.Fail(c[5], "gpu_spec", "at most 32 distinct GPU models", "too many GPU models");
    std::string_view phase = row.text(c[7]);
    if (phase == "Succeeded") j.state = JobState::kCompleted;
    else if (phase == "Failed") j.state = JobState::kFailed;
    else if (phase == "Running") j.state = JobState::kRunning;
    else if (phase == "Pending") j.state = JobState::kPending;
    else return row.Fail(c[7], "pod_phase", "one of Succeeded, Failed, Running, Pending");
    if (sched == kNoTime && j.state != JobState::kPending)
      return row.Fail(c[10], "scheduled_time", "a time (pod_phase is " + std::string(phase) + ")", "scheduled_time missing");
    if (sched != kNoTime && j.state == JobState::kPending)
      return row.Fail(c[10], "scheduled_time", "empty (pod_phase is Pending)", "Pending pod with scheduled_time");
    if (sched != kNoTime && sched < created)
      return row.Fail(c[10], "scheduled_time", "a time not before creation_time " + std::to_string(created),
                      "start before submit");
    if (sched != kNoTime && deleted != kNoTime && deleted < sched)
      return row.Fail(c[9], "deletion_time", "a time not before scheduled_time " + std::to_string(sched),
                      "end before start");
    j.submit = created;
    j.start = sched;
    j.end = deleted;
    j.duration = (sched != kNoTime && deleted != kNoTime) ? deleted - sched : -1;
    j.gpus = static_cast<uint32_t>(gpus);
    j.gpu_milli = (gpus == 1) ? static_cast<uint16_t>(milli) : 1000;
    j.cpu_milli = static_cast<uint32_t>(cpu);
    j.mem_mib = static_cast<uint32_t>(mem);
    if (row.text(c[0]).empty()) return row.Fail(c[0], "name", "a pod name");
    b.AddJob(j, row.text(c[0]), RowLoc{fidx, ln});
    return true;
  });
}

}  // namespace orrery::trace_internal
