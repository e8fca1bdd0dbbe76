// Standard Workload Format (Parallel Workloads Archive), plain or .gz.
// See docs/formats/importers.md#swf.
#include <charconv>
#include <map>

#include "trace/import_internal.h"

namespace orrery::trace_internal {

namespace {
constexpr const char* kSwfFields[18] = {"job_number",      "submit_time",   "wait_time",        "run_time",
                                        "allocated_procs", "avg_cpu_time",  "used_memory",      "requested_procs",
                                        "requested_time",  "requested_memory", "status",        "user_id",
                                        "group_id",        "executable",    "queue",            "partition",
                                        "preceding_job",   "think_time"};
void AppendNum(std::string* s, char prefix, int64_t v) {
  char buf[24];
  buf[0] = prefix;
  auto r = std::to_chars(buf + 1, buf + sizeof buf, v);
  s->assign(buf, r.ptr);
}

// A ';' comment line of the header: UnixStartTime sets the time base, "Partition: ID NAME"
// names a partition number; other comments are ignored.
Status ReadHeaderComment(std::string_view t, const LineReader& r, std::optional<int64_t>* ust,
                         std::map<int64_t, std::string>* partitions) {
  std::string_view c = Trim(t.substr(1));
  if (c.rfind("UnixStartTime:", 0) == 0) {
    int64_t v;
    if (!ParseI64(Trim(c.substr(14)), &v) || v < 0 || v > kMaxSeconds)
      return MakeError(r.path() + ":" + std::to_string(r.line_number()) +
                       ": header 'UnixStartTime': expected seconds since 1970, got " + Quote(c.substr(14)));
    *ust = v;
  } else if (c.rfind("Partition:", 0) == 0) {
    std::vector<Field> pf;
    SplitWhitespace(c.substr(10), &pf);
    int64_t id;
    if (pf.size() >= 2 && ParseI64(pf[0].text, &id)) (*partitions)[id] = std::string(pf[1].text);
  }
  return Status::Ok();
}

// At the end of the header: the time base, absolute (UnixStartTime) or relative; all inputs
// must agree.
Status BeginData(TraceBuilder& b, const std::string& file, bool first_file, const std::optional<int64_t>& ust) {
  bool abs = ust.has_value();
  if (first_file) {
    b.set_time_base(abs ? TraceBuilder::TimeBase::kAbsolute : TraceBuilder::TimeBase::kRelative);
    if (abs) b.set_epoch(*ust);
  } else {
    if (abs != b.epoch().has_value())
      return MakeError(file + ": cannot combine SWF logs with and without a UnixStartTime header");
    if (abs && *ust < *b.epoch()) b.set_epoch(*ust);
  }
  return Status::Ok();
}

// A row without 18 fields; one field holding ',' or ';' is probably a CSV file.
void FailFieldCount(Row& row, std::string_view line, size_t fields) {
  if (fields == 1 && (line.find(',') != std::string_view::npos || line.find(';') != std::string_view::npos))
    row.FailRow("wrong number of fields", "expected 18 whitespace-separated SWF fields, got one field containing " +
                                              std::string(line.find(',') != std::string_view::npos ? "','" : "';'") +
                                              " (is this a CSV file?)");
  else
    row.FailRow("wrong number of fields", "expected 18 whitespace-separated SWF fields, got " + std::to_string(fields));
}

// SWF status (field 11) as a job state; false for a value SWF does not define.
inline bool StateOf(int64_t status, JobState* out) {
  switch (status) {
    case 1: case 3: *out = JobState::kCompleted; return true;
    case 0: case 4: *out = JobState::kFailed; return true;
    case 5: *out = JobState::kCancelled; return true;
    case -1: case 2: *out = JobState::kUnknown; return true;
    default: return false;
  }
}
}  // namespace

Status ReadSwf(LineReader& r, TraceBuilder& b) {
  const std::string& file = r.path();
  const uint32_t fidx = b.current_file();
  const bool first_file = fidx == 0;
  const bool as_gpus = b.options().swf_procs_as_gpus;
  b.set_has_ids(true);
  std::map<int64_t, std::string> partitions;
  std::optional<int64_t> ust;
  std::vector<Field> f;
  f.reserve(20);
  std::string_view line;
  ImportReport& rep = b.report();
  bool in_header = true;
  std::string tmp;
  int64_t last_user_num = -1, last_name_num = -1, last_queue_num = -1;  // -1: none cached
  UserId last_user;
  NameId last_name;
  VcId last_queue;
  while (r.Next(&line)) {
    std::string_view t = Trim(line);
    if (t.empty()) continue;
    if (t[0] == ';') {
      ORR_RETURN_IF_ERROR(ReadHeaderComment(t, r, &ust, &partitions));
      continue;
    }
    if (in_header) {
      in_header = false;
      ORR_RETURN_IF_ERROR(BeginData(b, file, first_file, ust));
    }
    ++rep.rows_read;
    const uint64_t ln = r.line_number();
    SplitWhitespace(line, &f);
    Row row(file, ln, f);
    int64_t v[18];
    bool ok = true;
    if (f.size() != 18) {
      FailFieldCount(row, line, f.size());
      ok = false;
    }
    // Fields we use: 1-5, 8, 9, 10, 11-16 (1-based).
    static constexpr int kUsed[] = {0, 1, 2, 3, 4, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    for (int i : kUsed) {
      if (!ok) break;
      int64_t lo = (i == 0 || i == 1) ? 0 : -1;
      int64_t hi = (i == 4 || i == 7) ? kMaxGpus : kMaxSeconds;
      ok = row.Int(i, kSwfFields[i], lo, hi, &v[i], true);
    }
    if (!ok) {
      ORR_RETURN_IF_ERROR(b.BadRow(row.reason(), row.error()));
      continue;
    }
    Job j;
    const int64_t base = ust ? *ust : 0;
    j.submit = base + v[1];
    if (v[2] >= 0) j.start = j.submit + v[2];
    j.duration = v[3];
    if (j.start != kNoTime && v[3] >= 0) j.end = j.start + v[3];
    j.walltime = v[8];
    int64_t procs = v[4] >= 0 ? v[4] : (v[7] >= 0 ? v[7] : 0);
    if (as_gpus) {
      j.gpus = static_cast<uint32_t>(procs);
    } else {
      j.cpu_milli = static_cast<uint32_t>(procs * 1000);
    }
    if (v[9] >= 0 && procs > 0) {
      int64_t mib = (v[9] * procs + 1023) / 1024;  // KB per processor -> MiB per job
      j.mem_mib = mib > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(mib);
    }
    if (!StateOf(v[10], &j.state)) {
      row.Fail(10, "status", "one of -1, 0, 1, 2, 3, 4, 5");
      ORR_RETURN_IF_ERROR(b.BadRow(row.reason(), row.error()));
      continue;
    }
    // Consecutive rows repeat user/executable/queue numbers: remember the last id per column.
    if (v[11] >= 0) {
      if (v[11] != last_user_num) {
        AppendNum(&tmp, 'u', v[11]);
        last_user = b.User(tmp);
        last_user_num = v[11];
      }
      j.user = last_user;
    }
    if (v[13] >= 0) {
      if (v[13] != last_name_num) {
        AppendNum(&tmp, 'x', v[13]);
        last_name = b.Name(tmp);
        last_name_num = v[13];
      }
      j.name = last_name;
    }
    bool vc_ok = true;
    if (v[14] >= 0) {
      if (v[14] != last_queue_num) {
        AppendNum(&tmp, 'q', v[14]);
        vc_ok = b.Vc(tmp, &last_queue);
        last_queue_num = vc_ok ? v[14] : -1;
      }
      j.vc = last_queue;
    } else if (v[15] >= 0) {
      auto it = partitions.find(v[15]);
      if (it != partitions.end()) {
        vc_ok = b.Vc(it->second, &j.vc);
      } else {
        AppendNum(&tmp, 'p', v[15]);
        vc_ok = b.Vc(tmp, &j.vc);
      }
    }
    if (!vc_ok) {
      row.Fail(v[14] >= 0 ? 14 : 15, "queue", "at most 65535 distinct queues/partitions", "too many VCs");
      ORR_RETURN_IF_ERROR(b.BadRow(row.reason(), row.error()));
      continue;
    }
    b.AddJob(j, f[0].text, RowLoc{fidx, ln});
  }
  if (in_header && !first_file && !ust.has_value() && b.epoch().has_value())
    return MakeError(file + ": cannot combine SWF logs with and without a UnixStartTime header");
  if (in_header && first_file) ORR_RETURN_IF_ERROR(BeginData(b, file, first_file, ust));
  return Status::Ok();
}

}  // namespace orrery::trace_internal
