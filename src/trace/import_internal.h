// Internals shared by the importers (not part of the public API): the TraceBuilder
// that collects jobs, handles bad rows (fail or skip + count), detects duplicate ids,
// sorts and finalises; and located field parsing helpers.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "base/io.h"
#include "base/parse.h"
#include "base/result.h"
#include "base/string_pool.h"
#include "model/trace.h"
#include "trace/import.h"

namespace orrery::trace_internal {

// Bounds that keep all time arithmetic far from int64 overflow (~31,700 years).
inline constexpr int64_t kMaxSeconds = 1'000'000'000'000LL;
inline constexpr int64_t kMaxGpus = 1'000'000;

// Where a job row came from (for duplicate-id messages).
struct RowLoc {
  uint32_t file = 0;
  uint64_t line = 0;
};

// Interns into a StringPool with a one-entry cache (consecutive rows often repeat a value).
class CachedPool {
 public:
  // a == b, compared inline (StringPool::BytesEqual): the state column and the one-entry caches.
  static bool SameBytes(std::string_view a, std::string_view b) {
    return a.size() == b.size() && StringPool::BytesEqual(a.data(), b.data(), a.size());
  }
  explicit CachedPool(StringPool* pool) : pool_(pool) {}
  uint32_t Intern(std::string_view s) {
    // Compare with the pool's own copy of the last value: no per-miss string copy.
    if (last_id_ != UINT32_MAX && SameBytes(pool_->Get(last_id_), s)) return last_id_;
    last_id_ = pool_->Intern(s);
    return last_id_;
  }
  size_t size() const { return pool_->size(); }

 private:
  StringPool* pool_;
  uint32_t last_id_ = UINT32_MAX;
};

class TraceBuilder {
 public:
  TraceBuilder(const ImportOptions& options, ImportReport* report, std::string origin);

  // Registers an input file; returns its index.
  uint32_t AddFile(const std::string& path);
  const std::string& file(uint32_t i) const { return files_[i]; }
  uint32_t current_file() const { return static_cast<uint32_t>(files_.size() - 1); }

  // A bad row: with skip_bad_rows counts it under `reason` and returns Ok (the caller
  // drops the row); otherwise returns `err` (the import fails).
  Status BadRow(std::string_view reason, Error err);
  // A row skipped by design (e.g. a Slurm job step); never an error.
  void SkipRow(std::string_view reason);
  void Warn(std::string msg);

  // Interning; an empty string gives an invalid id. Returns false when the id space
  // is exhausted (VCs: 65,535; GPU types: 32).
  UserId User(std::string_view s) { return s.empty() ? UserId() : UserId(users_.Intern(s)); }
  NameId Name(std::string_view s) { return s.empty() ? NameId() : NameId(names_.Intern(s)); }
  bool Vc(std::string_view s, VcId* out);
  bool GpuType(std::string_view s, GpuTypeMask* mask);
  // Splits "A|B" into a mask; false if more than 32 distinct types.
  bool GpuTypes(std::string_view list, GpuTypeMask* mask);

  // Adds a job (times absolute or relative per time_base). id is ignored (renumbered).
  void AddJob(const Job& job, std::string_view source_id, RowLoc loc);
  void set_has_ids(bool v) { has_ids_ = v; }
  // The account, QOS and nice value of the job AddJob added last (kept through Finish's
  // sorting; a trace none of whose jobs has one gets no accounting).
  void SetAccount(JobAccount a);
  // Reserves job storage from the size of a plain input file (no-op for gzip/memory).
  void ReserveFor(const std::string& path);

  // How Finish() sets the epoch:
  //  kRelative: times are already relative; epoch_unix = epoch (if known) else unknown.
  //  kAbsolute: times are absolute UTC seconds; epoch = `epoch` if set, else the first submit.
  enum class TimeBase { kRelative, kAbsolute };
  void set_time_base(TimeBase t) { time_base_ = t; }
  void set_epoch(std::optional<int64_t> e) { epoch_ = e; }
  std::optional<int64_t> epoch() const { return epoch_; }

  // Duplicate ids, sorting, epoch, renumbering, canonical string-table order.
  Result<Trace> Finish();

  ImportReport& report() { return *report_; }
  const ImportOptions& options() const { return options_; }
  Trace& trace() { return trace_; }

 private:
  // True when the non-empty source ids are pairwise distinct (the common case).
  bool IdsDistinct() const;
  std::string_view SourceId(size_t i) const;
  // Finish()'s steps, in order.
  Result<size_t> DropDuplicateIds(std::vector<uint8_t>* drop);
  Error NoJobsError() const;
  std::vector<uint32_t> SubmitOrder(const std::vector<uint8_t>& drop, size_t kept, bool* reordered);
  void MoveSourceIds(const std::vector<uint32_t>& perm, Trace* out) const;
  void MoveAccounting(const std::vector<uint32_t>& perm, Trace* out);
  void MoveJobs(std::vector<uint32_t>* perm, bool reordered, Trace* out);
  void SetEpoch(Trace* out) const;
  bool GpuTypesUncached(std::string_view list, GpuTypeMask* mask);
  std::string last_gpu_list_;
  GpuTypeMask last_gpu_mask_ = 0;
  bool gpu_list_cached_ = false;

  ImportOptions options_;
  ImportReport* report_;
  Trace trace_;
  CachedPool users_, vcs_, names_;
  std::vector<std::string> files_;
  // Per row, from the first row with a non-empty source id on (AddJob): its location and
  // the end of its id in the arena.
  std::vector<RowLoc> locs_;
  std::string id_arena_;
  std::vector<uint32_t> id_off_{0};
  bool has_ids_ = false;
  std::vector<JobAccount> accounting_;  // by AddJob order; empty until a job has one
  bool in_submit_order_ = true;  // every job added so far submits no earlier than the one before
  TimeBase time_base_ = TimeBase::kRelative;
  std::optional<int64_t> epoch_;
  uint64_t examples_ = 0;
};

// Renumbers string tables of `t` in order of first use by jobs[0..n) (gpu types: bits in
// ascending old id), drops unused entries, clears all-empty source_ids. Idempotent.
void CanonicaliseTables(Trace* t);

// Located parsing of one split row. Each getter returns false after recording the
// error (message + reason) in the row; the importer then calls Reject().
class Row {
 public:
  Row(std::string_view file, uint64_t line, const std::vector<Field>& fields) : file_(file), line_(line), f_(fields) {}

  const Field& field(int i) const { return f_[i]; }
  std::string_view text(int i) const { return i < 0 ? std::string_view() : f_[i].text; }

  // Integer in [lo, hi]; `lenient` also accepts "12.0". The common case (plain digits,
  // in range) is inline; everything else goes to IntSlow.
  bool Int(int i, const char* name, int64_t lo, int64_t hi, int64_t* out, bool lenient = false) {
    int64_t v;
    if (FastInt(f_[i].text, lenient, &v) && v >= lo && v <= hi) {
      *out = v;
      return true;
    }
    return IntSlow(i, name, lo, hi, out, lenient);
  }
  // Fast path: optional '-', 1..18 digits, and (lenient) ".000". False for anything else.
  static bool FastInt(std::string_view s, bool lenient, int64_t* out) {
    const char* p = s.data();
    const char* e = p + s.size();
    bool neg = false;
    if (p != e && *p == '-') {
      neg = true;
      ++p;
    }
    const char* d0 = p;
    uint64_t v = 0;
    while (p != e && static_cast<unsigned>(*p - '0') < 10) v = v * 10 + static_cast<unsigned>(*p++ - '0');
    size_t nd = static_cast<size_t>(p - d0);
    if (nd == 0 || nd > 18) return false;
    if (p != e) {
      if (!lenient || *p != '.') return false;
      for (++p; p != e; ++p)
        if (*p != '0') return false;
    }
    *out = neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
    return true;
  }
  // Like Int, but an empty field (or one of `missing`, e.g. "-1" handled by the caller) gives `if_empty`.
  bool OptInt(int i, const char* name, int64_t lo, int64_t hi, int64_t if_empty, int64_t* out, bool lenient = false) {
    if (i < 0 || Trim(f_[i].text).empty()) {
      *out = if_empty;
      return true;
    }
    return Int(i, name, lo, hi, out, lenient);
  }
  // "YYYY-MM-DD HH:MM:SS" (or 'T'; optional fraction and Z/+HH:MM offset) as UTC seconds.
  bool DateTime(int i, const char* name, int64_t* out);
  bool OptDateTime(int i, const char* name, int64_t* out);  // empty -> kNoTime

  bool Fail(int i, const char* name, std::string_view expected, std::string reason = {});
  bool FailRow(std::string reason, std::string message);  // whole-row problem: "file:line: message"

  bool failed() const { return err_.has_value(); }
  const Error& error() const { return *err_; }
  const std::string& reason() const { return reason_; }
  SourcePos pos(int i) const { return SourcePos{file_, line_, i < 0 ? 1u : f_[i].col}; }

 private:
  bool IntSlow(int i, const char* name, int64_t lo, int64_t hi, int64_t* out, bool lenient);

  std::string_view file_;
  uint64_t line_;
  const std::vector<Field>& f_;
  std::optional<Error> err_;
  std::string reason_;
};

// Flexible timestamp: "YYYY-MM-DD[ T]HH:MM:SS[.fff][Z|±HH:MM|±HHMM]" or "YYYY-MM-DD".
bool ParseTimestamp(std::string_view s, int64_t* out);

// Header handling for delimited formats whose columns are found by name.
struct HeaderSpec {
  std::string_view format;            // "philly"
  std::vector<std::string_view> columns;  // expected columns, in documented order
  std::vector<bool> required;         // same size as columns
  char delim = ',';
};
// Maps the header line to column indices (-1 = absent). Errors name the expected header,
// missing columns, and a wrong delimiter (';', tab, '|' or ',') when that is the cause.
Result<std::vector<int>> MapHeader(const HeaderSpec& spec, std::string_view line, std::string_view file);
std::string JoinColumns(const std::vector<std::string_view>& cols, char delim);

// Strips a UTF-8 byte order mark.
inline std::string_view StripBom(std::string_view s) {
  if (s.size() >= 3 && s.substr(0, 3) == "\xEF\xBB\xBF") s.remove_prefix(3);
  return s;
}
inline bool IsBlank(std::string_view s) { return Trim(s).empty(); }

// Next non-blank line; false at end of input.
inline bool NextNonBlank(LineReader& r, std::string_view* line) {
  while (r.Next(line))
    if (!IsBlank(*line)) return true;
  return false;
}

// Start of the readers whose files carry absolute times and their own job ids (Helios,
// Acme, sacct): sets the builder up and reads the header line; false = empty input.
inline bool StartAbsoluteWithIds(LineReader& r, TraceBuilder& b, std::string_view* header) {
  b.set_time_base(TraceBuilder::TimeBase::kAbsolute);
  b.set_has_ids(true);
  return NextNonBlank(r, header);
}

// Data-row loop shared by the delimited formats: skips blank lines, counts rows, splits
// on `delim`, rejects unterminated quotes and wrong field counts (a trailing empty
// field is tolerated), and hands each row to fn(Row&, line) -> bool (false = bad row).
// `fast(line, ln) -> bool`, tried first on every row, may take a row whole (true) in a
// reader's own single pass; it must leave the row untouched when it answers false, and the
// row then goes the general way, which produces the exact error.
template <class Fast, class Fn>
Status ForEachRowFast(LineReader& r, TraceBuilder& b, char delim, size_t ncols, std::string_view columns, Fast&& fast,
                      Fn&& fn) {
  std::vector<Field> f;
  f.reserve(ncols + 2);
  // SplitLine keeps views into `scratch` strings: reserve so that they never move
  // (rows with more fields than this are rejected without reading their fields).
  std::vector<std::string> scratch;
  scratch.reserve(ncols + 256);
  std::string_view line;
  ImportReport& rep = b.report();
  const std::string& file = r.path();
  while (r.Next(&line)) {
    if (line.empty() || IsBlank(line)) continue;
    ++rep.rows_read;
    const uint64_t ln = r.line_number();
    if (fast(line, ln)) continue;
    uint32_t bad_col = 0;
    if (!SplitLine(line, delim, &f, &scratch, &bad_col)) {
      ORR_RETURN_IF_ERROR(b.BadRow("unterminated quote", MakeError(file + ":" + std::to_string(ln) + ":" +
                                                                   std::to_string(bad_col) + ": unterminated quote")));
      continue;
    }
    if (f.size() == ncols + 1 && f.back().text.empty()) f.pop_back();
    Row row(file, ln, f);
    if (f.size() != ncols) {
      row.FailRow("wrong number of fields", "expected " + std::to_string(ncols) + " fields (" + std::string(columns) +
                                                "), got " + std::to_string(f.size()));
    } else {
      fn(row, ln);
    }
    if (row.failed()) ORR_RETURN_IF_ERROR(b.BadRow(row.reason(), row.error()));
  }
  return Status::Ok();
}
template <class Fn>
Status ForEachRow(LineReader& r, TraceBuilder& b, char delim, size_t ncols, std::string_view columns, Fn&& fn) {
  return ForEachRowFast(r, b, delim, ncols, columns, [](std::string_view, uint64_t) { return false; }, fn);
}

// Splits a quote-free row into exactly N fields at `delim` (an N+1-th, empty, field is
// tolerated, as ForEachRow does); false for anything else (a quote, another field count).
// Delimiters are found 16 bytes at a time (SSE2 compare + movemask), as SplitLine does.
template <size_t N>
bool SplitPlain(std::string_view line, char delim, std::string_view (&out)[N]) {
  const char* p = line.data();
  const size_t n = line.size();
  size_t start = 0, k = 0, i = 0;
  auto cut = [&](size_t pos) {  // a delimiter at pos ends field k
    if (k == N) return false;
    out[k++] = std::string_view(p + start, pos - start);
    start = pos + 1;
    return true;
  };
#if defined(__SSE2__)
  const __m128i vd = _mm_set1_epi8(delim), vq = _mm_set1_epi8('"');
  // The 16 bytes at `at`, of which the first `skip` were scanned already.
  auto block = [&](size_t at, unsigned skip) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + at));
    const unsigned fresh = 0xffffu << skip & 0xffffu;
    if ((static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, vq))) & fresh) != 0) return false;
    for (unsigned m = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, vd))) & fresh; m != 0; m &= m - 1)
      if (!cut(at + static_cast<size_t>(__builtin_ctz(m)))) return false;
    return true;
  };
  for (; i + 16 <= n; i += 16)
    if (!block(i, 0)) return false;
  if (i < n && n >= 16) {  // the tail: the line's last 16 bytes, less those already scanned
    if (!block(n - 16, static_cast<unsigned>(i - (n - 16)))) return false;
    i = n;
  }
#endif
  for (; i < n; ++i) {
    if (p[i] == '"' || (p[i] == delim && !cut(i))) return false;
  }
  if (k == N) return start == n;  // N delimiters: the field after the last one is empty
  out[k++] = std::string_view(p + start, n - start);
  return k == N;
}

// Number of fields in a header line.
inline size_t CountFields(std::string_view line, char delim) {
  std::vector<Field> f;
  std::vector<std::string> s;
  uint32_t bad;
  SplitLine(StripBom(line), delim, &f, &s, &bad);
  return f.size();
}

// Columns of the Helios cluster_log schema that Acme's schema keeps (-1 = absent).
struct HeliosLikeColumns {
  int job_id, gpus, cpus, nodes, state, submit, start, end, duration;
};
// Parses the fields shared by Helios and Acme rows into *j (times, counts, state); false
// (with the row error set) on a bad row. The caller interns the user last, so that a row
// rejected by a later check adds no user. Counts rows whose duration disagrees with end - start in *dur_mismatch.
bool ParseHeliosLikeRow(Row& row, const HeliosLikeColumns& c, Job* j, uint64_t* dur_mismatch);
// The warning for rows counted by ParseHeliosLikeRow's *dur_mismatch (none if zero).
void WarnDurationMismatch(TraceBuilder& b, const std::string& file, uint64_t mismatch);

// Per-format readers: read all rows of one input into the builder.
Status ReadPhilly(LineReader& r, TraceBuilder& b);
Status ReadHelios(LineReader& r, TraceBuilder& b);
Status ReadOpenb(LineReader& r, TraceBuilder& b);
Status ReadSwf(LineReader& r, TraceBuilder& b);
Status ReadSacct(LineReader& r, TraceBuilder& b);
Status ReadAcme(LineReader& r, TraceBuilder& b);
Status ReadCanonical(LineReader& r, TraceBuilder& b);

// Imports from already-open readers (files or memory).
Result<Trace> ImportFromReaders(TraceFormat format, std::vector<std::unique_ptr<LineReader>>& readers,
                                const ImportOptions& options, ImportReport* report);

}  // namespace orrery::trace_internal
