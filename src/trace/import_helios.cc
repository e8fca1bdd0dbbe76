// SenseTime Helios cluster_log.csv (+ optional cluster_gpu_number.csv).
// See docs/formats/importers.md#helios.
#include <algorithm>

#include "trace/import_internal.h"

namespace orrery::trace_internal {

namespace {

// Accepts the Helios/Acme outcome names (and every Orrery state name).
bool ParseOutcome(std::string_view s, JobState* out) { return !s.empty() && ParseJobState(Trim(s), out); }

// cluster_gpu_number.csv: "date,<vc>...,total", one row per day. Validated and ignored.
Status ValidateGpuNumber(LineReader& r, TraceBuilder& b, std::string_view header) {
  b.Warn(r.path() + ": cluster_gpu_number.csv (GPUs per VC per day) is cluster configuration, not jobs; "
                    "validated and ignored (see ReadHeliosVcGpus)");
  size_t n = CountFields(header, ',');
  return ForEachRow(r, b, ',', n, "date,<vc>...", [&](Row& row, uint64_t) {
    --b.report().rows_read;  // not job rows
    int64_t t, v;
    if (!row.DateTime(0, "date", &t)) return false;
    for (size_t i = 1; i < n; ++i)
      if (!row.Int(static_cast<int>(i), "gpus", 0, kMaxGpus, &v, true)) return false;
    return true;
  });
}

}  // namespace

namespace {

// submit/start/end/duration with their consistency rules; false (with the row error set)
// on a bad row.
bool ParseRunTimes(Row& row, int c_submit, int c_start, int c_end, int c_dur, Job* j, uint64_t* dur_mismatch) {
  int64_t submit, start, end, dur;
  if (!row.DateTime(c_submit, "submit_time", &submit) || !row.OptDateTime(c_start, "start_time", &start) ||
      !row.OptDateTime(c_end, "end_time", &end) ||
      !row.OptInt(c_dur, "duration", -kMaxSeconds, kMaxSeconds, -1, &dur, true))
    return false;
  if (c_dur >= 0 && !row.text(c_dur).empty() && dur < 0)
    return row.Fail(c_dur, "duration", "a non-negative duration", "negative duration");
  if (start != kNoTime && end != kNoTime && end < start)
    return row.Fail(c_end, "end_time", "a time not before start_time " + FormatDateTime(start), "end before start");
  if (start != kNoTime && start < submit)
    return row.Fail(c_start, "start_time", "a time not before submit_time " + FormatDateTime(submit),
                    "start before submit");
  if (dur < 0 && start != kNoTime && end != kNoTime) dur = end - start;
  if (dur >= 0 && start != kNoTime && end != kNoTime && dur != end - start) ++*dur_mismatch;
  j->submit = submit;
  j->start = start;
  j->end = end;
  j->duration = dur;
  return true;
}

}  // namespace

bool ParseHeliosLikeRow(Row& row, const HeliosLikeColumns& c, Job* j, uint64_t* dur_mismatch) {
  int64_t gpus, cpus, nodes;
  if (row.text(c.job_id).empty()) return row.Fail(c.job_id, "job_id", "a job id");
  if (!row.Int(c.gpus, "gpu_num", 0, kMaxGpus, &gpus, true) ||
      !row.Int(c.cpus, "cpu_num", 0, UINT32_MAX / 1000, &cpus, true) ||
      !row.Int(c.nodes, "node_num", 0, 65535, &nodes, true))
    return false;
  if (!ParseOutcome(row.text(c.state), &j->state))
    return row.Fail(c.state, "state", "one of COMPLETED, CANCELLED, FAILED, TIMEOUT, NODE_FAIL");
  if (!ParseRunTimes(row, c.submit, c.start, c.end, c.duration, j, dur_mismatch)) return false;
  j->gpus = static_cast<uint32_t>(gpus);
  j->cpu_milli = static_cast<uint32_t>(cpus * 1000);
  j->nodes = static_cast<uint16_t>(nodes);
  return true;
}

void WarnDurationMismatch(TraceBuilder& b, const std::string& file, uint64_t mismatch) {
  if (mismatch > 0)
    b.Warn(file + ": " + std::to_string(mismatch) + " rows have duration != end_time - start_time; kept the duration column");
}

Status ReadHelios(LineReader& r, TraceBuilder& b) {
  const std::string& file = r.path();
  const uint32_t fidx = b.current_file();
  std::string_view line;
  if (!StartAbsoluteWithIds(r, b, &line)) return Status::Ok();
  if (Trim(StripBom(line)).substr(0, 5) == "date,") return ValidateGpuNumber(r, b, line);
  static const HeaderSpec spec{"helios cluster_log",
                               {"job_id", "user", "vc", "gpu_num", "cpu_num", "node_num", "state", "submit_time",
                                "start_time", "end_time", "duration", "queue"},
                               {true, true, true, true, true, true, true, true, true, true, true, false},
                               ','};
  ORR_ASSIGN_OR_RETURN(auto c, MapHeader(spec, line, file));
  const HeliosLikeColumns hc{c[0], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10]};
  const std::string cols = JoinColumns(spec.columns, ',');
  uint64_t mismatch = 0;
  Status st = ForEachRow(r, b, ',', CountFields(line, ','), cols, [&](Row& row, uint64_t ln) {
    Job j;
    if (!ParseHeliosLikeRow(row, hc, &j, &mismatch)) return false;
    if (!b.Vc(row.text(c[2]), &j.vc)) return row.Fail(c[2], "vc", "at most 65535 distinct VCs", "too many VCs");
    j.user = b.User(row.text(c[1]));
    b.AddJob(j, row.text(c[0]), RowLoc{fidx, ln});
    return true;
  });
  WarnDurationMismatch(b, file, mismatch);
  return st;
}

Result<std::map<std::string, int>> ReadHeliosVcGpus(const std::string& path, const std::string& date) {
  int64_t want;
  if (!ParseTimestamp(date, &want) || date.size() != 10)
    return MakeError("ReadHeliosVcGpus: expected a date YYYY-MM-DD, got " + Quote(date));
  ORR_ASSIGN_OR_RETURN(auto r, LineReader::Open(path));
  std::string_view line;
  if (!NextNonBlank(*r, &line)) return MakeError(path + ": empty file, expected a cluster_gpu_number.csv header");
  std::vector<Field> hf, f;
  std::vector<std::string> hs, s;
  hs.reserve(4096);  // SplitLine keeps views into these strings
  s.reserve(4096);
  uint32_t bad;
  std::string header(StripBom(line));
  if (!SplitLine(header, ',', &hf, &hs, &bad) || hf.empty() || Trim(hf[0].text) != "date")
    return MakeError(path + ":1: not a cluster_gpu_number.csv header: expected 'date,<vc>...,total', got " +
                     Quote(header));
  while (r->Next(&line)) {
    if (IsBlank(line)) continue;
    if (!SplitLine(line, ',', &f, &s, &bad) || f.size() != hf.size())
      return MakeError(path + ":" + std::to_string(r->line_number()) + ": expected " + std::to_string(hf.size()) +
                       " fields, got " + Quote(line));
    Row row(path, r->line_number(), f);
    int64_t d;
    if (!row.DateTime(0, "date", &d)) return row.error();
    if (d != want) continue;
    std::map<std::string, int> out;
    for (size_t i = 1; i < f.size(); ++i) {
      std::string vc(Trim(hf[i].text));
      if (vc == "total") continue;
      int64_t v;
      if (!row.Int(static_cast<int>(i), vc.c_str(), 0, kMaxGpus, &v, true)) return row.error();
      out[vc] = static_cast<int>(v);
    }
    return out;
  }
  if (!r->error().empty()) return MakeError(r->error());
  return MakeError(path + ": no row for date " + date);
}

}  // namespace orrery::trace_internal

namespace orrery {
Result<std::map<std::string, int>> ReadHeliosVcGpus(const std::string& path, const std::string& date) {
  return trace_internal::ReadHeliosVcGpus(path, date);
}
}  // namespace orrery
