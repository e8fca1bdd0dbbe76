// Canonical trace format: writer (hand-formatted, no iostreams) and reader.
// docs/formats/trace.md describes it column by column.
#include "trace/canonical.h"

#include <array>
#include <charconv>
#include <cstring>
#include <unordered_map>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "base/io.h"
#include "trace/import_internal.h"

namespace orrery {

namespace {

// v1: the job columns; v2 (written when a job has an account, QOS or nice value): v1's
// columns and account, qos, nice. Both are read.
constexpr std::string_view kMagic = "#orrery-trace v1";
constexpr std::string_view kMagicV2 = "#orrery-trace v2";
constexpr std::string_view kHeader =
    "id,source_id,user,vc,name,submit,duration,walltime,start,end,gpus,gpu_milli,gpu_types,nodes,cpu_milli,mem_mib,"
    "state";
constexpr std::string_view kHeaderV2 =
    "id,source_id,user,vc,name,submit,duration,walltime,start,end,gpus,gpu_milli,gpu_types,nodes,cpu_milli,mem_mib,"
    "state,account,qos,nice";
constexpr int kCols = 17;
constexpr int kColsV2 = 20;
constexpr int64_t kMaxNice = 1'000'000'000;

// RFC 4180 quoting when the value holds ',' or '"' (or starts with a space or '#', to be safe).
std::string QuoteCsv(std::string_view s) {
  bool need = s.find_first_of(",\"") != std::string_view::npos;
  if (!need) return std::string(s);
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  for (char c : s) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

inline void PutInt(std::string& b, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  b.append(buf, r.ptr);
}

std::vector<std::string> QuotedPool(const StringPool& p) {
  std::vector<std::string> out;
  out.reserve(p.size());
  for (const auto& s : p.all()) out.push_back(QuoteCsv(s));
  return out;
}

// Writes the whole trace to `sink`, calling flush(b) whenever the buffer is large.
template <class Flush>
void Serialise(const Trace& t, std::string& b, Flush&& flush) {
  const bool v2 = t.has_accounting();
  b.append(v2 ? kMagicV2 : kMagic);
  b.append("\n#origin=");
  b.append(t.origin);
  b.append("\n#epoch_unix=");
  if (t.epoch_known) PutInt(b, t.epoch_unix);
  b.push_back('\n');
  b.append(v2 ? kHeaderV2 : kHeader);
  b.push_back('\n');
  const auto users = QuotedPool(t.users), vcs = QuotedPool(t.vcs), names = QuotedPool(t.names);
  std::unordered_map<GpuTypeMask, std::string> masks;
  auto mask_text = [&](GpuTypeMask m) -> const std::string& {
    auto it = masks.find(m);
    if (it != masks.end()) return it->second;
    std::string s;
    for (uint32_t i = 0; i < 32; ++i) {
      if (!(m & (1u << i)) || i >= t.gpu_types.size()) continue;
      if (!s.empty()) s.push_back('|');
      s.append(t.gpu_types.Get(i));
    }
    return masks.emplace(m, QuoteCsv(s)).first->second;
  };
  const bool ids = !t.source_ids.empty();
  for (size_t i = 0; i < t.jobs.size(); ++i) {
    const Job& j = t.jobs[i];
    PutInt(b, j.id.value());
    b.push_back(',');
    if (ids && i < t.source_ids.size()) {
      const std::string& s = t.source_ids[i];
      if (s.find_first_of(",\"") == std::string::npos) b.append(s);
      else b.append(QuoteCsv(s));
    }
    b.push_back(',');
    if (j.user.valid() && j.user.value() < users.size()) b.append(users[j.user.value()]);
    b.push_back(',');
    if (j.vc.valid() && j.vc.value() < vcs.size()) b.append(vcs[j.vc.value()]);
    b.push_back(',');
    if (j.name.valid() && j.name.value() < names.size()) b.append(names[j.name.value()]);
    b.push_back(',');
    PutInt(b, j.submit);
    b.push_back(',');
    if (j.duration >= 0) PutInt(b, j.duration);
    b.push_back(',');
    if (j.walltime >= 0) PutInt(b, j.walltime);
    b.push_back(',');
    if (j.start != kNoTime) PutInt(b, j.start);
    b.push_back(',');
    if (j.end != kNoTime) PutInt(b, j.end);
    b.push_back(',');
    PutInt(b, j.gpus);
    b.push_back(',');
    PutInt(b, j.gpu_milli);
    b.push_back(',');
    if (j.gpu_types != 0) b.append(mask_text(j.gpu_types));
    b.push_back(',');
    PutInt(b, j.nodes);
    b.push_back(',');
    PutInt(b, j.cpu_milli);
    b.push_back(',');
    PutInt(b, j.mem_mib);
    b.push_back(',');
    b.append(JobStateName(j.state));
    if (v2) {
      const JobAccount& a = t.account_of(i);
      b.push_back(',');
      b.append(QuoteCsv(a.account));
      b.push_back(',');
      b.append(QuoteCsv(a.qos));
      b.push_back(',');
      PutInt(b, a.nice);
    }
    b.push_back('\n');
    if (b.size() >= (1u << 20)) flush(b);
  }
}

}  // namespace

Status WriteCanonicalTrace(const Trace& trace, const std::string& path) {
  ORR_ASSIGN_OR_RETURN(auto f, AtomicFile::Create(path));
  std::string& b = f->buffer();
  b.reserve(1u << 21);
  Serialise(trace, b, [&](std::string&) { f->MaybeFlush(); });
  return f->Commit();
}

std::string CanonicalTraceToString(const Trace& trace) {
  std::string b;
  b.reserve(128 + trace.jobs.size() * 64);
  Serialise(trace, b, [](std::string&) {});
  return b;
}

namespace trace_internal {

namespace {

// The fast path's reading of one row, field by field, left to right in one pass (inlined into
// the row loop): each field ends at a ',' (the last at the row's end). Text fields may hold
// anything but '"' (a quoted row goes to the general path); integer fields are an optional '-'
// and 1..18 digits (Row::FastInt without its lenient ".000" form). A false answer leaves the
// row to the general path, which re-reads it and produces the exact error; nothing here has
// side effects.
class RowCursor {
 public:
  explicit RowCursor(std::string_view line) : p_(line.data()), e_(line.data() + line.size()) {}

  [[gnu::always_inline]] bool Text(std::string_view* out) {
    if (ended_) return false;
    const char* q = FindDelimiter(p_, e_);
    if (q != e_ && *q == '"') return false;
    *out = std::string_view(p_, static_cast<size_t>(q - p_));
    return Step(q);
  }
  // An integer in [lo, hi]; OptInt: an empty field gives `if_empty`.
  [[gnu::always_inline]] bool Int(int64_t lo, int64_t hi, int64_t* out) {
    if (ended_) return false;
    const bool neg = p_ != e_ && *p_ == '-';
    const char* q = p_ + neg;
    uint64_t v = 0;
    const int digits = ReadDigits(&q, e_, &v);
    if (digits == 0 || digits > 18 || (q != e_ && *q != ',')) return false;
    const int64_t x = neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
    if (x < lo || x > hi) return false;
    *out = x;
    return Step(q);
  }
  [[gnu::always_inline]] bool OptInt(int64_t lo, int64_t hi, int64_t if_empty, int64_t* out) {
    if (!ended_ && (p_ == e_ || *p_ == ',')) {
      *out = if_empty;
      return Step(p_);
    }
    return Int(lo, hi, out);
  }
  // After the last column: the row ended there, or holds one more, empty, field.
  bool Complete() const { return ended_ || p_ == e_; }

 private:
  // Moves past the field that ends at q (a ',' or the row's end).
  bool Step(const char* q) {
    ended_ = q == e_;
    p_ = ended_ ? e_ : q + 1;
    return true;
  }
  // The first ',' or '"' in [p, e), or e; 16 bytes at a time (SSE2 compare + movemask).
  [[gnu::always_inline]] static const char* FindDelimiter(const char* p, const char* e) {
#if defined(__SSE2__)
    const __m128i comma = _mm_set1_epi8(','), quote = _mm_set1_epi8('"');
    for (; e - p >= 16; p += 16) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      const __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(x, comma), _mm_cmpeq_epi8(x, quote));
      const unsigned m = static_cast<unsigned>(_mm_movemask_epi8(hit));
      if (m != 0) return p + __builtin_ctz(m);
    }
#endif
    while (p != e && *p != ',' && *p != '"') ++p;
    return p;
  }
  // Reads the digits at *q (moving *q past them) into *v; returns how many there were (more
  // than 18: *v is not meaningful).
  [[gnu::always_inline]] static int ReadDigits(const char** q, const char* e, uint64_t* v) {
    const char* p = *q;
    for (; p != e && static_cast<unsigned>(*p - '0') < 10; ++p) *v = *v * 10 + static_cast<unsigned>(*p - '0');
    const int digits = static_cast<int>(p - *q);
    *q = p;
    return digits;
  }

  const char* p_;
  const char* e_;
  bool ended_ = false;  // the last field read ended the row
};

// The state column as the writer spells it (JobStateName, compared inline: most rows name
// another state than the row before), else ParseJobState (any case).
bool ParseState(std::string_view s, JobState* out) {
  static const std::array<std::string_view, kNumJobStates> kWritten = [] {
    std::array<std::string_view, kNumJobStates> a;
    for (int i = 0; i < kNumJobStates; ++i) a[static_cast<size_t>(i)] = JobStateName(static_cast<JobState>(i));
    return a;
  }();
  for (int i = 0; i < kNumJobStates; ++i) {
    if (CachedPool::SameBytes(s, kWritten[static_cast<size_t>(i)])) {
      *out = static_cast<JobState>(i);
      return true;
    }
  }
  return ParseJobState(s, out);
}

}  // namespace

// Times in a canonical file: importers produce at most a few kMaxSeconds after the
// epoch shift; allow 10x, still far from int64 overflow.
constexpr int64_t kMaxT = 10 * kMaxSeconds;

namespace {

// The magic line, the '#key=value' metadata lines and the column header. The first file sets
// the trace's origin and epoch; later ones must have the same epoch. *empty: the file has no
// line at all (nothing to read, and no error).
Status ReadHeader(LineReader& r, TraceBuilder& b, bool* empty, bool* v2) {
  const std::string& file = r.path();
  std::string_view line;
  *empty = !NextNonBlank(r, &line);
  if (*empty) return Status::Ok();
  *v2 = StripBom(line) == kMagicV2;
  if (StripBom(line) != kMagic && !*v2)
    return MakeError(file + ":" + std::to_string(r.line_number()) + ": expected '" + std::string(kMagic) + "' or '" +
                     std::string(kMagicV2) + "' as the first line of a canonical trace, got " + Quote(line));
  const std::string_view header = *v2 ? kHeaderV2 : kHeader;
  bool have_origin = false, have_epoch = false;
  std::optional<int64_t> epoch;
  std::string origin;
  for (;;) {
    if (!r.Next(&line)) return MakeError(file + ": missing header line '" + std::string(header) + "'");
    if (line.empty() || line[0] != '#') break;
    std::string_view kv = line.substr(1);
    if (kv.rfind("origin=", 0) == 0) {
      origin.assign(kv.substr(7));
      have_origin = true;
    } else if (kv.rfind("epoch_unix=", 0) == 0) {
      std::string_view v = kv.substr(11);
      int64_t e;
      if (!v.empty()) {
        if (!ParseI64(v, &e) || e < -kMaxSeconds || e > kMaxSeconds)
          return MakeError(file + ":" + std::to_string(r.line_number()) +
                           ": '#epoch_unix=': expected an integer (UTC seconds) or nothing, got " + Quote(v));
        epoch = e;
      }
      have_epoch = true;
    }  // other '#key=value' lines: ignored (forward compatible)
  }
  if (!have_origin || !have_epoch)
    return MakeError(file + ": missing metadata line '" + std::string(have_origin ? "#epoch_unix=" : "#origin=") +
                     "' before the header");
  if (line != header)
    return MakeError(file + ":" + std::to_string(r.line_number()) + ": expected the header '" + std::string(header) +
                     "', got " + Quote(line));
  if (b.current_file() == 0) {
    b.trace().origin = origin;
    b.set_epoch(epoch);
  } else if (b.epoch() != epoch) {
    return MakeError(file + ": cannot combine canonical traces with different epochs");
  }
  return Status::Ok();
}

}  // namespace

Status ReadCanonical(LineReader& r, TraceBuilder& b) {
  const std::string& file = r.path();
  const uint32_t fidx = b.current_file();
  b.set_has_ids(true);
  b.set_time_base(TraceBuilder::TimeBase::kRelative);
  bool empty = false, v2 = false;
  ORR_RETURN_IF_ERROR(ReadHeader(r, b, &empty, &v2));
  if (empty) return Status::Ok();
  uint64_t id_mismatch = 0;
  uint64_t expected_id = b.trace().jobs.size();
  // Fast path (one pass, no field vector): a quote-free row of exactly 17 fields (or 18
  // with an empty last one) whose every field parses on the plain fast path. Anything
  // else -- or any check that would fail -- is handed to the general path below, which
  // re-reads the row and produces the exact error; the fast path has no side effects
  // until every check passed.
  auto fast = [&](std::string_view line, uint64_t ln) -> bool {
    if (v2) return false;  // v2 rows take the general path
    RowCursor c(line);
    std::string_view f[kCols];  // the text fields at their column
    int64_t id, submit, dur, wall, start_t, end_t, gpus, milli, nodes, cpu, mem;
    if (!c.OptInt(0, UINT32_MAX - 1, -1, &id) || !c.Text(&f[1]) || !c.Text(&f[2]) || !c.Text(&f[3]) ||
        !c.Text(&f[4]) || !c.Int(-kMaxT, kMaxT, &submit) || !c.OptInt(0, kMaxT, -1, &dur) ||
        !c.OptInt(0, kMaxT, -1, &wall) || !c.OptInt(-kMaxT, kMaxT, kNoTime, &start_t) ||
        !c.OptInt(-kMaxT, kMaxT, kNoTime, &end_t) || !c.Int(0, kMaxGpus, &gpus) || !c.Int(0, 1000, &milli) ||
        !c.Text(&f[12]) || !c.Int(0, 65535, &nodes) || !c.Int(0, UINT32_MAX, &cpu) || !c.Int(0, UINT32_MAX, &mem) ||
        !c.Text(&f[16]) || !c.Complete())
      return false;
    if (start_t != kNoTime && end_t != kNoTime && end_t < start_t) return false;
    Job j;
    if (!ParseState(f[16], &j.state)) return false;
    // Interning is idempotent, so a failure after it (re-done by the general path) is harmless.
    if (!b.Vc(f[3], &j.vc)) return false;
    if (!b.GpuTypes(f[12], &j.gpu_types)) return false;
    if (id != static_cast<int64_t>(expected_id)) ++id_mismatch;
    ++expected_id;
    j.user = b.User(f[2]);
    j.name = b.Name(f[4]);
    j.submit = submit;
    j.duration = dur;
    j.walltime = wall;
    j.start = start_t;
    j.end = end_t;
    j.gpus = static_cast<uint32_t>(gpus);
    j.gpu_milli = static_cast<uint16_t>(milli);
    j.nodes = static_cast<uint16_t>(nodes);
    j.cpu_milli = static_cast<uint32_t>(cpu);
    j.mem_mib = static_cast<uint32_t>(mem);
    b.AddJob(j, f[1], RowLoc{fidx, ln});
    return true;
  };
  auto slow = [&](Row& row, uint64_t ln) {
    Job j;
    int64_t id, submit, dur, wall, start, end, gpus, milli, nodes, cpu, mem;
    if (!row.OptInt(0, "id", 0, UINT32_MAX - 1, -1, &id) || !row.Int(5, "submit", -kMaxT, kMaxT, &submit) ||
        !row.OptInt(6, "duration", 0, kMaxT, -1, &dur) || !row.OptInt(7, "walltime", 0, kMaxT, -1, &wall) ||
        !row.OptInt(8, "start", -kMaxT, kMaxT, kNoTime, &start) || !row.OptInt(9, "end", -kMaxT, kMaxT, kNoTime, &end) ||
        !row.Int(10, "gpus", 0, kMaxGpus, &gpus) || !row.Int(11, "gpu_milli", 0, 1000, &milli) ||
        !row.Int(13, "nodes", 0, 65535, &nodes) || !row.Int(14, "cpu_milli", 0, UINT32_MAX, &cpu) ||
        !row.Int(15, "mem_mib", 0, UINT32_MAX, &mem))
      return false;
    if (start != kNoTime && end != kNoTime && end < start)
      return row.Fail(9, "end", "a time not before start " + std::to_string(start), "end before start");
    if (!ParseState(row.text(16), &j.state)) {
      return row.Fail(16, "state", "one of UNKNOWN, COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, RUNNING, PENDING, PREEMPTED");
    }
    if (!b.Vc(row.text(3), &j.vc)) return row.Fail(3, "vc", "at most 65535 distinct VCs", "too many VCs");
    if (!b.GpuTypes(row.text(12), &j.gpu_types))
      return row.Fail(12, "gpu_types", "at most 32 distinct GPU models", "too many GPU models");
    if (id != static_cast<int64_t>(expected_id)) ++id_mismatch;
    ++expected_id;
    j.user = b.User(row.text(2));
    j.name = b.Name(row.text(4));
    j.submit = submit;
    j.duration = dur;
    j.walltime = wall;
    j.start = start;
    j.end = end;
    j.gpus = static_cast<uint32_t>(gpus);
    j.gpu_milli = static_cast<uint16_t>(milli);
    j.nodes = static_cast<uint16_t>(nodes);
    j.cpu_milli = static_cast<uint32_t>(cpu);
    j.mem_mib = static_cast<uint32_t>(mem);
    JobAccount acct;
    if (v2) {
      int64_t nice;
      if (!row.Int(19, "nice", -kMaxNice, kMaxNice, &nice)) return false;
      acct = JobAccount{std::string(row.text(17)), std::string(row.text(18)), static_cast<int32_t>(nice)};
    }
    b.AddJob(j, row.text(1), RowLoc{fidx, ln});
    b.SetAccount(std::move(acct));
    return true;
  };
  Status st = ForEachRowFast(r, b, ',', v2 ? kColsV2 : kCols, v2 ? kHeaderV2 : kHeader, fast, slow);
  if (id_mismatch > 0)
    b.Warn(file + ": " + std::to_string(id_mismatch) + " rows have an id other than their row index; jobs were renumbered");
  return st;
}

}  // namespace trace_internal

Result<Trace> ReadCanonicalTrace(const std::string& path, const ImportOptions& options, ImportReport* report) {
  return ImportTrace(TraceFormat::kCanonical, {path}, options, report);
}

bool TracesEqual(const Trace& a, const Trace& b, std::string* diff) {
  auto fail = [&](std::string what) {
    if (diff) *diff = std::move(what);
    return false;
  };
  if (a.origin != b.origin) return fail("origin: " + a.origin + " vs " + b.origin);
  if (a.epoch_known != b.epoch_known || a.epoch_unix != b.epoch_unix)
    return fail("epoch: " + std::to_string(a.epoch_unix) + " vs " + std::to_string(b.epoch_unix));
  if (a.users.all() != b.users.all()) return fail("users table differs");
  if (a.vcs.all() != b.vcs.all()) return fail("vcs table differs");
  if (a.names.all() != b.names.all()) return fail("names table differs");
  if (a.gpu_types.all() != b.gpu_types.all()) return fail("gpu_types table differs");
  if (a.source_ids != b.source_ids) return fail("source_ids differ");
  for (size_t i = 0; i < std::max(a.accounting.size(), b.accounting.size()); ++i)
    if (!(a.account_of(i) == b.account_of(i))) return fail("job " + std::to_string(i) + ": account, qos or nice differs");
  if (a.jobs.size() != b.jobs.size())
    return fail("job count: " + std::to_string(a.jobs.size()) + " vs " + std::to_string(b.jobs.size()));
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    const Job &x = a.jobs[i], &y = b.jobs[i];
    if (x.id != y.id || x.user != y.user || x.vc != y.vc || x.name != y.name || x.submit != y.submit ||
        x.duration != y.duration || x.walltime != y.walltime || x.start != y.start || x.end != y.end ||
        x.gpus != y.gpus || x.gpu_milli != y.gpu_milli || x.nodes != y.nodes || x.cpu_milli != y.cpu_milli ||
        x.mem_mib != y.mem_mib || x.gpu_types != y.gpu_types || x.state != y.state)
      return fail("job " + std::to_string(i) + " differs");
  }
  return true;
}

}  // namespace orrery
