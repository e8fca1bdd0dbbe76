// Slurm `sacct --parsable2` output ('|'-separated, header line, columns in any order).
// See docs/formats/importers.md#sacct for the expected --format list.
#include <algorithm>
#include <cmath>

#include "trace/import_internal.h"

namespace orrery::trace_internal {

namespace {

enum Col {
  kJobID, kJobName, kUser, kAccount, kPartition, kSubmit, kStart, kEnd, kElapsed, kTimelimit, kState, kAllocTRES,
  kReqTRES, kNNodes, kNCPUS, kReqMem, kQOS, kNumCols
};

// Slurm times: "2024-01-02T03:04:05"; "Unknown"/"None"/empty = unknown.
bool SlurmTime(Row& row, int i, const char* name, int64_t* out) {
  std::string_view s = i < 0 ? std::string_view() : Trim(row.text(i));
  if (s.empty() || s == "Unknown" || s == "None" || s == "N/A") {
    *out = kNoTime;
    return true;
  }
  if (ParseTimestamp(s, out)) return true;
  return row.Fail(i, name, "a time \"YYYY-MM-DDTHH:MM:SS\", \"Unknown\" or \"None\"");
}

bool Num(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 12) return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

}  // namespace

// "[D-]HH:MM:SS", "MM:SS", "MM", "D-HH", "D-HH:MM" (optional ".fff" fraction) -> seconds;
// "UNLIMITED", "Partition_Limit", "INVALID", "" -> -1. False on anything else.
bool ParseSlurmDuration(std::string_view s, int64_t* out) {
  s = Trim(s);
  if (s.empty() || s == "UNLIMITED" || s == "Partition_Limit" || s == "INVALID" || s == "NOT_SET") {
    *out = -1;
    return true;
  }
  int64_t days = -1;
  size_t dash = s.find('-');
  if (dash != std::string_view::npos) {
    if (!Num(s.substr(0, dash), &days)) return false;
    s.remove_prefix(dash + 1);
  }
  size_t dot = s.find('.');
  if (dot != std::string_view::npos) {
    int64_t frac;
    if (!Num(s.substr(dot + 1), &frac)) return false;
    s = s.substr(0, dot);
  }
  int64_t part[3];
  int n = 0;
  for (;;) {
    if (n == 3) return false;
    size_t c = s.find(':');
    if (!Num(s.substr(0, c), &part[n++])) return false;
    if (c == std::string_view::npos) break;
    s.remove_prefix(c + 1);
  }
  int64_t secs;
  if (days >= 0) {  // D-HH[:MM[:SS]]
    secs = days * 86400 + part[0] * 3600 + (n > 1 ? part[1] * 60 : 0) + (n > 2 ? part[2] : 0);
  } else if (n == 3) {
    secs = part[0] * 3600 + part[1] * 60 + part[2];
  } else if (n == 2) {
    secs = part[0] * 60 + part[1];
  } else {
    secs = part[0] * 60;  // plain minutes
  }
  if (secs > kMaxSeconds) return false;
  *out = secs;
  return true;
}

// Memory "64G", "1.50T", "4000M", "512K", "4000" (MiB) -> MiB. per_node/per_cpu suffix "n"/"c"
// (old ReqMem format) are reported through *suffix.
bool ParseSlurmMem(std::string_view s, int64_t* mib, char* suffix) {
  *suffix = 0;
  if (!s.empty() && (s.back() == 'n' || s.back() == 'c')) {
    *suffix = s.back();
    s.remove_suffix(1);
  }
  if (s.empty()) return false;
  double mult = 1.0;
  switch (s.back()) {
    case 'K': mult = 1.0 / 1024; s.remove_suffix(1); break;
    case 'M': s.remove_suffix(1); break;
    case 'G': mult = 1024; s.remove_suffix(1); break;
    case 'T': mult = 1024.0 * 1024; s.remove_suffix(1); break;
    case 'P': mult = 1024.0 * 1024 * 1024; s.remove_suffix(1); break;
    default: break;
  }
  double v;
  if (!ParseF64(s, &v) || v < 0) return false;
  double m = std::ceil(v * mult);
  if (m > UINT32_MAX) return false;
  *mib = static_cast<int64_t>(m);
  return true;
}

struct Tres {
  int64_t cpu = -1, mem = -1, node = -1, gpus = -1;
  std::vector<std::string_view> gpu_types;
};

// "cpu=8,mem=64G,node=1,billing=8,gres/gpu=4,gres/gpu:a100=4"
bool ParseTres(std::string_view s, Tres* t) {
  while (!s.empty()) {
    size_t c = s.find(',');
    std::string_view kv = s.substr(0, c);
    s = c == std::string_view::npos ? std::string_view() : s.substr(c + 1);
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos) return false;
    std::string_view k = kv.substr(0, eq), v = kv.substr(eq + 1);
    int64_t n;
    char suffix;
    if (k == "cpu") {
      if (!Num(v, &n)) return false;
      t->cpu = n;
    } else if (k == "mem") {
      if (!ParseSlurmMem(v, &n, &suffix) || suffix) return false;
      t->mem = n;
    } else if (k == "node") {
      if (!Num(v, &n)) return false;
      t->node = n;
    } else if (k == "gres/gpu") {
      if (!Num(v, &n)) return false;
      t->gpus = n;
    } else if (k.substr(0, 9) == "gres/gpu:") {
      if (!Num(v, &n)) return false;
      std::string_view type = k.substr(9);
      if (!type.empty() && n > 0) t->gpu_types.push_back(type);
      if (t->gpus < 0) t->gpus = 0;  // count comes from gres/gpu when present
    }
  }
  return true;
}

bool ParseSlurmState(std::string_view s, JobState* out) {
  s = Trim(s);
  size_t sp = s.find(' ');  // "CANCELLED by 123"
  if (sp != std::string_view::npos) s = s.substr(0, sp);
  if (s.size() > 0 && s.back() == '+') s.remove_suffix(1);  // "CANCELLED+" (truncated)
  static constexpr std::pair<std::string_view, JobState> kMap[] = {
      {"COMPLETED", JobState::kCompleted}, {"FAILED", JobState::kFailed},
      {"CANCELLED", JobState::kCancelled}, {"TIMEOUT", JobState::kTimeout},
      {"NODE_FAIL", JobState::kNodeFail},  {"OUT_OF_MEMORY", JobState::kFailed},
      {"PREEMPTED", JobState::kPreempted}, {"RUNNING", JobState::kRunning},
      {"PENDING", JobState::kPending},     {"REQUEUED", JobState::kPending},
      {"BOOT_FAIL", JobState::kNodeFail},  {"DEADLINE", JobState::kTimeout},
      {"SUSPENDED", JobState::kRunning},   {"REVOKED", JobState::kCancelled},
      {"RESIZING", JobState::kRunning},    {"COMPLETING", JobState::kRunning},
      {"CONFIGURING", JobState::kRunning}, {"REQUEUE_HOLD", JobState::kPending},
      {"REQUEUE_FED", JobState::kPending},  {"SPECIAL_EXIT", JobState::kFailed},
  };
  for (const auto& [name, st] : kMap)
    if (s == name) {
      *out = st;
      return true;
    }
  return false;
}

Status ReadSacct(LineReader& r, TraceBuilder& b) {
  const std::string& file = r.path();
  const uint32_t fidx = b.current_file();
  std::string_view line;
  if (!StartAbsoluteWithIds(r, b, &line)) return Status::Ok();
  static const HeaderSpec spec{
      "sacct --parsable2",
      {"JobID", "JobName", "User", "Account", "Partition", "Submit", "Start", "End", "Elapsed", "Timelimit", "State",
       "AllocTRES", "ReqTRES", "NNodes", "NCPUS", "ReqMem", "QOS"},
      {true, false, false, false, false, true, false, false, false, false, false, false, false, false, false, false,
       false},
      '|'};
  ORR_ASSIGN_OR_RETURN(auto c, MapHeader(spec, line, file));
  if (!((c[kStart] >= 0 && c[kEnd] >= 0) || c[kElapsed] >= 0))
    return MakeError(file + ":1: sacct header needs Start and End, or Elapsed (expected e.g. '" +
                     JoinColumns(spec.columns, '|') + "'), got " + Quote(line));

  return ForEachRow(r, b, '|', CountFields(line, '|'), "the header's columns", [&](Row& row, uint64_t ln) {
    std::string_view id = Trim(row.text(c[kJobID]));
    if (id.empty()) return row.Fail(c[kJobID], "JobID", "a job id");
    if (id.find('.') != std::string_view::npos) {  // job step: 123.batch, 123.0, 123_4.extern
      b.SkipRow("job step (JobID with '.')");
      return true;
    }
    Job j;
    int64_t submit, start, end;
    if (!SlurmTime(row, c[kSubmit], "Submit", &submit) || !SlurmTime(row, c[kStart], "Start", &start) ||
        !SlurmTime(row, c[kEnd], "End", &end))
      return false;
    if (submit == kNoTime) return row.Fail(c[kSubmit], "Submit", "a time \"YYYY-MM-DDTHH:MM:SS\"");
    if (c[kState] >= 0) {
      if (!ParseSlurmState(row.text(c[kState]), &j.state))
        return row.Fail(c[kState], "State", "a Slurm job state (COMPLETED, FAILED, CANCELLED, TIMEOUT, ...)");
    }
    int64_t elapsed = -1, limit = -1;
    if (c[kElapsed] >= 0 && !ParseSlurmDuration(row.text(c[kElapsed]), &elapsed))
      return row.Fail(c[kElapsed], "Elapsed", "a duration \"[D-]HH:MM:SS\"");
    if (c[kTimelimit] >= 0 && !ParseSlurmDuration(row.text(c[kTimelimit]), &limit))
      return row.Fail(c[kTimelimit], "Timelimit", "a duration \"[D-]HH:MM:SS\", \"UNLIMITED\" or \"Partition_Limit\"");
    if (start != kNoTime && end != kNoTime && end < start)
      return row.Fail(c[kEnd], "End", "a time not before Start " + FormatDateTime(start), "end before start");
    // A job that never started has Start=Unknown/None (End may be its cancel time).
    if (j.state == JobState::kPending) start = kNoTime, end = kNoTime;
    int64_t dur = -1;
    if (start != kNoTime && end != kNoTime) dur = end - start;
    else if (start != kNoTime && elapsed >= 0) dur = elapsed;  // still running: time so far
    else if (start == kNoTime && c[kStart] < 0 && elapsed >= 0) dur = elapsed;
    if (start == kNoTime && j.state != JobState::kPending && c[kStart] >= 0 && elapsed > 0 && end != kNoTime &&
        end - elapsed >= submit) {
      start = end - elapsed;
      dur = elapsed;
    }
    j.submit = submit;
    j.start = start;
    j.end = end;
    j.duration = dur;
    j.walltime = limit;
    // Resources: AllocTRES, else ReqTRES, else NNodes/NCPUS/ReqMem.
    Tres t;
    int tres_col = (c[kAllocTRES] >= 0 && !Trim(row.text(c[kAllocTRES])).empty()) ? kAllocTRES : kReqTRES;
    if (c[tres_col] >= 0 && !ParseTres(Trim(row.text(c[tres_col])), &t))
      return row.Fail(c[tres_col], tres_col == kAllocTRES ? "AllocTRES" : "ReqTRES",
                      "a TRES list like \"cpu=8,mem=64G,node=1,gres/gpu=4\"");
    int64_t v;
    if (t.node < 0 && c[kNNodes] >= 0 && !row.text(c[kNNodes]).empty()) {
      if (!row.Int(c[kNNodes], "NNodes", 0, 65535, &v)) return false;
      t.node = v;
    }
    if (t.cpu < 0 && c[kNCPUS] >= 0 && !row.text(c[kNCPUS]).empty()) {
      if (!row.Int(c[kNCPUS], "NCPUS", 0, UINT32_MAX / 1000, &v)) return false;
      t.cpu = v;
    }
    if (t.mem < 0 && c[kReqMem] >= 0 && !Trim(row.text(c[kReqMem])).empty()) {
      char suffix;
      if (!ParseSlurmMem(Trim(row.text(c[kReqMem])), &v, &suffix))
        return row.Fail(c[kReqMem], "ReqMem", "a memory size like \"64G\", \"4000M\" or \"2Gc\"");
      if (suffix == 'c') v *= std::max<int64_t>(t.cpu, 1);
      if (suffix == 'n') v *= std::max<int64_t>(t.node, 1);
      t.mem = v;
    }
    if (t.gpus > kMaxGpus) return row.Fail(tres_col, "gres/gpu", "at most 1000000 GPUs", "value out of range in field 'gres/gpu'");
    if (t.node > 65535) return row.Fail(tres_col, "node", "at most 65535 nodes", "value out of range in field 'node'");
    if (t.cpu > UINT32_MAX / 1000) return row.Fail(tres_col, "cpu", "at most 4294967 CPUs", "value out of range in field 'cpu'");
    if (t.mem > UINT32_MAX) return row.Fail(tres_col, "mem", "at most 4294967295 MiB", "value out of range in field 'mem'");
    j.gpus = t.gpus > 0 ? static_cast<uint32_t>(t.gpus) : 0;
    j.nodes = t.node > 0 ? static_cast<uint16_t>(t.node) : 0;
    j.cpu_milli = t.cpu > 0 ? static_cast<uint32_t>(t.cpu * 1000) : 0;
    j.mem_mib = t.mem > 0 ? static_cast<uint32_t>(t.mem) : 0;
    for (auto type : t.gpu_types)
      if (!b.GpuType(type, &j.gpu_types)) return row.Fail(tres_col, "gres/gpu", "at most 32 GPU models", "too many GPU models");
    std::string_view part = c[kPartition] >= 0 ? Trim(row.text(c[kPartition])) : std::string_view();
    part = part.substr(0, part.find(','));  // pending jobs may list several partitions: the first is kept
    if (!b.Vc(part, &j.vc)) return row.Fail(c[kPartition], "Partition", "at most 65535 partitions", "too many VCs");
    if (c[kUser] >= 0) j.user = b.User(Trim(row.text(c[kUser])));
    if (c[kJobName] >= 0) j.name = b.Name(row.text(c[kJobName]));
    b.AddJob(j, id, RowLoc{fidx, ln});
    // Account and QOS: what the slurm policy charges the job to (canonical format v2).
    JobAccount acct;
    if (c[kAccount] >= 0) acct.account = std::string(Trim(row.text(c[kAccount])));
    if (c[kQOS] >= 0) acct.qos = std::string(Trim(row.text(c[kQOS])));
    b.SetAccount(std::move(acct));
    return true;
  });
}

}  // namespace orrery::trace_internal
