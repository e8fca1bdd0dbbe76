// Philly job CSV (Pollux artifact): timestamp,duration,num_gpus,gpu_time,cluster.
// See docs/formats/importers.md#philly.
#include "trace/import_internal.h"

namespace orrery::trace_internal {

namespace {
// philly_vc.csv ("vc,node num") is a cluster config: validated, then ignored for jobs.
Status ReadPhillyVc(LineReader& r, TraceBuilder& b) {
  b.Warn(r.path() + ": this is philly_vc.csv, a cluster config (VC -> node count, 8 GPUs per node), not a job "
                    "list; ignored for jobs (use it for the cluster configuration)");
  return ForEachRow(r, b, ',', 2, "vc,node num", [&](Row& row, uint64_t) {
    --b.report().rows_read;  // not job rows
    int64_t v;
    return row.Int(1, "node num", 0, 1'000'000, &v);
  });
}
}  // namespace

Status ReadPhilly(LineReader& r, TraceBuilder& b) {
  const std::string& file = r.path();
  const uint32_t fidx = b.current_file();
  b.set_time_base(TraceBuilder::TimeBase::kAbsolute);
  std::string_view line;
  if (!NextNonBlank(r, &line)) return Status::Ok();  // empty input: Finish() reports "no jobs"
  std::string_view h = Trim(StripBom(line));
  if (h.substr(0, 3) == "vc," && h.find("node num") != std::string_view::npos) return ReadPhillyVc(r, b);
  static const HeaderSpec spec{"philly", {"timestamp", "duration", "num_gpus", "gpu_time", "cluster"},
                               {true, true, true, true, true}, ','};
  ORR_ASSIGN_OR_RETURN(auto col, MapHeader(spec, line, file));
  const int c_ts = col[0], c_dur = col[1], c_gpus = col[2], c_gt = col[3], c_vc = col[4];
  const std::string cols = JoinColumns(spec.columns, ',');
  const size_t ncols = CountFields(line, ',');
  auto add = [&](int64_t ts, int64_t dur, int64_t gpus, VcId vc, uint64_t ln) {
    Job j;
    j.submit = ts;
    j.duration = dur;
    j.gpus = static_cast<uint32_t>(gpus);
    j.vc = vc;
    b.AddJob(j, {}, RowLoc{fidx, ln});
  };
  // Rows of the documented five columns in their order are read in one pass, each field on
  // its plain form (Row::FastInt); any other row, or any check that fails, goes to the
  // general path below, which re-reads it and produces the exact error.
  const bool standard = ncols == 5 && c_ts == 0 && c_dur == 1 && c_gpus == 2 && c_gt == 3 && c_vc == 4;
  auto fast = [&](std::string_view line, uint64_t ln) {
    std::string_view f[5];
    int64_t ts = 0, dur = 0, gpus = 0, gt = 0;
    VcId vc;
    if (!standard || !SplitPlain(line, ',', f) || !ParseTimestamp(f[0], &ts) || !Row::FastInt(f[1], true, &dur) ||
        dur < 0 || dur > kMaxSeconds || !Row::FastInt(f[2], true, &gpus) || gpus < 0 || gpus > kMaxGpus ||
        !Row::FastInt(f[3], true, &gt) || gt < 0 || gt != dur * gpus)
      return false;
    if (!b.Vc(f[4], &vc)) return false;  // interning is idempotent: the general path redoes it
    add(ts, dur, gpus, vc, ln);
    return true;
  };
  return ForEachRowFast(r, b, ',', ncols, cols, fast, [&](Row& row, uint64_t ln) {
    int64_t ts = 0, dur = 0, gpus = 0, gt = 0;
    VcId vc;
    bool ok = row.DateTime(c_ts, "timestamp", &ts) &&
              row.Int(c_dur, "duration", -kMaxSeconds, kMaxSeconds, &dur, true) &&
              (dur >= 0 || row.Fail(c_dur, "duration", "a non-negative duration", "negative duration")) &&
              row.Int(c_gpus, "num_gpus", 0, kMaxGpus, &gpus, true) &&
              row.Int(c_gt, "gpu_time", 0, INT64_MAX, &gt, true);
    if (ok && gt != dur * gpus)
      ok = row.Fail(c_gt, "gpu_time", "duration * num_gpus = " + std::to_string(dur * gpus),
                    "gpu_time != duration * num_gpus");
    if (ok && !b.Vc(row.text(c_vc), &vc)) ok = row.Fail(c_vc, "cluster", "at most 65535 distinct VCs", "too many VCs");
    if (!ok) return false;
    add(ts, dur, gpus, vc, ln);
    return true;
  });
}

}  // namespace orrery::trace_internal
