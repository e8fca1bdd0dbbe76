// Import dispatch, format detection, and the shared finalize step (TraceBuilder).
#include "trace/import.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>

#include <sys/stat.h>

#include "trace/canonical.h"
#include "trace/import_internal.h"

namespace orrery {

namespace ti = trace_internal;

namespace {
constexpr std::string_view kFormatNames[] = {"auto", "canonical", "helios", "philly", "openb", "swf", "sacct", "acme"};
}  // namespace

Result<TraceFormat> ParseTraceFormat(std::string_view name) {
  for (size_t i = 0; i < std::size(kFormatNames); ++i)
    if (name == kFormatNames[i]) return static_cast<TraceFormat>(i);
  if (name == "alibaba" || name == "alibaba-openb") return TraceFormat::kAlibabaOpenb;
  return MakeError("unknown trace format '" + std::string(name) +
                   "' (expected one of: auto, canonical, helios, philly, openb, swf, sacct, acme)");
}

std::string_view TraceFormatName(TraceFormat f) { return kFormatNames[static_cast<int>(f)]; }

namespace trace_internal {

// ---------------------------------------------------------------- TraceBuilder

TraceBuilder::TraceBuilder(const ImportOptions& options, ImportReport* report, std::string origin)
    : options_(options), report_(report), users_(&trace_.users), vcs_(&trace_.vcs), names_(&trace_.names) {
  trace_.origin = std::move(origin);
}

uint32_t TraceBuilder::AddFile(const std::string& path) {
  files_.push_back(path);
  return static_cast<uint32_t>(files_.size() - 1);
}

Status TraceBuilder::BadRow(std::string_view reason, Error err) {
  if (!options_.skip_bad_rows) return err;
  ++report_->rows_skipped;
  ++report_->skipped_by_reason[std::string(reason)];
  if (examples_ < 5) {
    ++examples_;
    report_->warnings.push_back("skipped: " + err.message);
  }
  return Status::Ok();
}

void TraceBuilder::SkipRow(std::string_view reason) {
  ++report_->rows_skipped;
  ++report_->skipped_by_reason[std::string(reason)];
}

void TraceBuilder::Warn(std::string msg) { report_->warnings.push_back(std::move(msg)); }

bool TraceBuilder::Vc(std::string_view s, VcId* out) {
  if (s.empty()) {
    *out = VcId();
    return true;
  }
  uint32_t id = vcs_.Intern(s);
  if (id >= VcId::kInvalid) return false;
  *out = VcId(static_cast<uint16_t>(id));
  return true;
}

bool TraceBuilder::GpuType(std::string_view s, GpuTypeMask* mask) {
  if (s.empty()) return true;
  uint32_t id = trace_.gpu_types.Intern(s);
  if (id >= 32) return false;
  *mask |= (1u << id);
  return true;
}

bool TraceBuilder::GpuTypes(std::string_view list, GpuTypeMask* mask) {
  if (list.empty()) {
    *mask = 0;
    return true;
  }
  // Rows tend to repeat the last list; a list's mask never changes once interned.
  if (gpu_list_cached_ && list == last_gpu_list_) {
    *mask = last_gpu_mask_;
    return true;
  }
  if (!GpuTypesUncached(list, mask)) return false;
  last_gpu_list_.assign(list);
  last_gpu_mask_ = *mask;
  gpu_list_cached_ = true;
  return true;
}

bool TraceBuilder::GpuTypesUncached(std::string_view list, GpuTypeMask* mask) {
  *mask = 0;
  while (!list.empty()) {
    size_t p = list.find('|');
    std::string_view t = list.substr(0, p);
    if (!GpuType(t, mask)) return false;
    if (p == std::string_view::npos) break;
    list.remove_prefix(p + 1);
  }
  return true;
}

void TraceBuilder::ReserveFor(const std::string& path) {
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0) return;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || st.st_size <= 0) return;
  // ~40 bytes per row in the densest formats; reserved pages are only touched when used.
  size_t rows = static_cast<size_t>(st.st_size) / 40 + 16;
  if (rows > (64u << 20)) rows = 64u << 20;
  trace_.jobs.reserve(trace_.jobs.size() + rows);
  locs_.reserve(locs_.size() + rows);  // touched only from the first non-empty id on (AddJob)
}

// The ids and row locations serve only the duplicate-id check, which skips empty ids: while
// every id so far is empty (the generator's traces), neither is kept; the first non-empty id
// fills in the rows before it (empty, at no location read).
void TraceBuilder::AddJob(const Job& job, std::string_view source_id, RowLoc loc) {
  in_submit_order_ = in_submit_order_ && (trace_.jobs.empty() || trace_.jobs.back().submit <= job.submit);
  trace_.jobs.push_back(job);
  trace_.jobs.back().id = JobId(static_cast<uint32_t>(trace_.jobs.size() - 1));  // its index unless dropped or sorted
  if (!has_ids_ || (source_id.empty() && id_arena_.empty())) return;
  if (id_off_.size() < trace_.jobs.size()) {
    id_off_.resize(trace_.jobs.size(), 0);
    locs_.resize(trace_.jobs.size() - 1);
  }
  id_arena_.append(source_id);
  id_off_.push_back(static_cast<uint32_t>(id_arena_.size()));
  locs_.push_back(loc);
}

void TraceBuilder::SetAccount(JobAccount a) {
  if (a.empty() && accounting_.empty()) return;
  accounting_.resize(trace_.jobs.size());
  accounting_.back() = std::move(a);
}

void TraceBuilder::MoveAccounting(const std::vector<uint32_t>& perm, Trace* out) {
  if (accounting_.empty()) return;
  accounting_.resize(trace_.jobs.size());
  if (perm.empty()) {
    out->accounting = std::move(accounting_);
  } else {
    out->accounting.reserve(perm.size());
    for (uint32_t k : perm) out->accounting.push_back(std::move(accounting_[k]));
  }
  if (!out->has_accounting()) out->accounting.clear();
}

bool TraceBuilder::IdsDistinct() const {
  const size_t n = id_off_.size() - 1;  // 0 while every id is empty (AddJob)
  auto sid = [&](size_t i) {
    return std::string_view(id_arena_).substr(id_off_[i], id_off_[i + 1] - id_off_[i]);
  };
  // 1. Ids strictly increasing in (length, bytes) order -- numbered rows, e.g. "9" < "10" --
  //    are distinct. One sequential pass.
  {
    std::string_view prev;
    bool have = false, increasing = true;
    for (size_t i = 0; i < n && increasing; ++i) {
      std::string_view s = sid(i);
      if (s.empty()) continue;
      if (have && !(prev.size() < s.size() || (prev.size() == s.size() && prev < s))) increasing = false;
      prev = s;
      have = true;
    }
    if (increasing) return true;
  }
  // 2. Otherwise a hash set of the non-empty ids (open addressing, cached hashes).
  size_t cap = 16;
  while (cap < 2 * n) cap <<= 1;
  struct Slot {
    uint64_t h;
    uint32_t idx1;  // index + 1; 0 = empty
  };
  std::vector<Slot> t(cap, Slot{0, 0});
  const size_t mask = cap - 1;
  for (size_t i = 0; i < n; ++i) {
    std::string_view s = sid(i);
    if (s.empty()) continue;
    const uint64_t h = StringPool::Hash(s);
    size_t j = static_cast<size_t>(h) & mask;
    for (;;) {
      Slot& sl = t[j];
      if (sl.idx1 == 0) {
        sl = Slot{h, static_cast<uint32_t>(i + 1)};
        break;
      }
      if (sl.h == h && sid(sl.idx1 - 1) == s) return false;
      j = (j + 1) & mask;
    }
  }
  return true;
}

std::string_view TraceBuilder::SourceId(size_t i) const {
  return std::string_view(id_arena_).substr(id_off_[i], id_off_[i + 1] - id_off_[i]);
}

// Duplicate source ids: the first occurrence (by file, line) wins. Usually there are none,
// which IdsDistinct() proves in O(n); only then is the sort needed. Marks the later
// occurrences in `drop` (left empty when nothing is dropped) and returns how many.
Result<size_t> TraceBuilder::DropDuplicateIds(std::vector<uint8_t>* drop) {
  const size_t n = trace_.jobs.size();
  if (!has_ids_ || n == 0 || IdsDistinct()) return size_t{0};
  // Sort (hash, id string, input index): integer compares except on hash ties.
  struct HKey {
    uint64_t h;
    uint32_t idx;
  };
  std::vector<HKey> hk;
  hk.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    auto s = SourceId(i);
    if (s.empty()) continue;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
    hk.push_back(HKey{h, static_cast<uint32_t>(i)});
  }
  std::sort(hk.begin(), hk.end(), [&](const HKey& a, const HKey& b) {
    if (a.h != b.h) return a.h < b.h;
    auto sa = SourceId(a.idx), sb = SourceId(b.idx);
    if (sa != sb) return sa < sb;
    return a.idx < b.idx;  // input order == (file, line) order
  });
  size_t dropped = 0;
  for (size_t k = 1; k < hk.size(); ++k) {
    if (SourceId(hk[k].idx) != SourceId(hk[k - 1].idx)) continue;
    size_t first = k - 1;
    while (first > 0 && SourceId(hk[first - 1].idx) == SourceId(hk[k].idx)) --first;
    const RowLoc& a = locs_[hk[first].idx];
    const RowLoc& d = locs_[hk[k].idx];
    Error e = MakeError(files_[d.file] + ":" + std::to_string(d.line) + ": duplicate job id " +
                        Quote(SourceId(hk[k].idx)) + " (first seen at " + files_[a.file] + ":" +
                        std::to_string(a.line) + ")");
    // Without skip_bad_rows this is the earliest duplicate in sort order: a stable message.
    if (!options_.skip_bad_rows) return e;
    ORR_RETURN_IF_ERROR(BadRow("duplicate job id", e));
    if (drop->empty()) drop->assign(n, 0);
    (*drop)[hk[k].idx] = 1;
    ++dropped;
  }
  return dropped;
}

Error TraceBuilder::NoJobsError() const {
  std::string names;
  for (size_t i = 0; i < files_.size(); ++i) names += (i ? ", " : "") + files_[i];
  return MakeError(names + ": no jobs" +
                   (report_->rows_read == 0 ? std::string(" (empty input or header only)")
                                            : " (all " + std::to_string(report_->rows_read) + " rows skipped)"));
}

namespace {

struct SubmitKey {
  int64_t submit;
  uint32_t idx;
};

// Counts per 11-bit digit, turned into exclusive prefix sums by Prefix(p).
class RadixCounts {
 public:
  static constexpr size_t kBuckets = 1 << 11;
  explicit RadixCounts(int passes) : count_(static_cast<size_t>(passes) * kBuckets, 0) {}
  void Add(uint64_t v, int passes) {
    for (int p = 0; p < passes; ++p) ++count_[p * kBuckets + ((v >> (11 * p)) & (kBuckets - 1))];
  }
  uint32_t* Prefix(int p) {
    uint32_t* c = &count_[p * kBuckets];
    uint32_t sum = 0;
    for (size_t b = 0; b < kBuckets; ++b) {
      uint32_t x = c[b];
      c[b] = sum;
      sum += x;
    }
    return c;
  }

 private:
  std::vector<uint32_t> count_;
};

// LSD radix sort of (submit - min) << 32 | input index, 11-bit digits over the submit part
// only: stable, and the index makes ties keep input order -- the same result as the
// (submit, idx) sort. Wider ranges sort 16-byte keys the same way.
void RadixSortBySubmit(std::vector<SubmitKey>* keys_ptr) {
  std::vector<SubmitKey>& keys = *keys_ptr;
  int64_t mn = keys[0].submit, mx = keys[0].submit;
  for (const SubmitKey& k : keys) {
    mn = std::min(mn, k.submit);
    mx = std::max(mx, k.submit);
  }
  const uint64_t range = static_cast<uint64_t>(mx) - static_cast<uint64_t>(mn);
  int passes = 0;
  for (uint64_t r = range; r != 0; r >>= 11) ++passes;
  RadixCounts count(passes);
  constexpr size_t kMask = RadixCounts::kBuckets - 1;
  auto offset = [mn](const SubmitKey& k) { return static_cast<uint64_t>(k.submit) - static_cast<uint64_t>(mn); };
  if (range <= UINT32_MAX) {
    std::vector<uint64_t> pk(keys.size()), tmp(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      const uint64_t v = offset(keys[i]);
      pk[i] = v << 32 | keys[i].idx;
      count.Add(v, passes);
    }
    for (int p = 0; p < passes; ++p) {
      uint32_t* c = count.Prefix(p);
      const int shift = 32 + 11 * p;
      for (uint64_t x : pk) tmp[c[(x >> shift) & kMask]++] = x;
      pk.swap(tmp);
    }
    for (size_t i = 0; i < keys.size(); ++i) keys[i].idx = static_cast<uint32_t>(pk[i]);
    return;
  }
  for (const SubmitKey& k : keys) count.Add(offset(k), passes);
  std::vector<SubmitKey> tmp(keys.size());
  for (int p = 0; p < passes; ++p) {
    uint32_t* c = count.Prefix(p);
    for (const SubmitKey& k : keys) tmp[c[(offset(k) >> (11 * p)) & kMask]++] = k;
    keys.swap(tmp);
  }
}

// Stable sort of `perm` by the jobs' submit times, as a plain sort on (submit, input
// index): contiguous keys, no indirection.
void StableSortBySubmit(const std::vector<Job>& jobs, std::vector<uint32_t>* perm) {
  std::vector<SubmitKey> keys(perm->size());
  for (size_t k = 0; k < perm->size(); ++k) keys[k] = SubmitKey{jobs[(*perm)[k]].submit, (*perm)[k]};
  if (keys.size() < 1024) {
    std::sort(keys.begin(), keys.end(), [](const SubmitKey& a, const SubmitKey& b) {
      return a.submit != b.submit ? a.submit < b.submit : a.idx < b.idx;
    });
  } else {
    RadixSortBySubmit(&keys);
  }
  for (size_t k = 0; k < perm->size(); ++k) (*perm)[k] = keys[k].idx;
}

// Applies a permutation of all jobs in place, cycle by cycle (no second job array to
// allocate and fault in): afterwards a[k] is the old a[perm[k]], and perm[k] == k.
void PermuteInPlace(Job* a, std::vector<uint32_t>* perm_ptr) {
  std::vector<uint32_t>& perm = *perm_ptr;
  const size_t n = perm.size();
  for (size_t k = 0; k < n; ++k) {
    if (perm[k] == k) continue;
    Job tmp = a[k];
    size_t cur = k;
    // The cycle visits jobs in random order: walk `ahead` kPrefetch steps in front
    // (perm fits in cache) and prefetch those jobs so the misses overlap.
    constexpr int kPrefetch = 12;
    size_t ahead = k;
    auto prefetch = [&] {
      ahead = perm[ahead];
      __builtin_prefetch(&a[ahead]);
      __builtin_prefetch(reinterpret_cast<const char*>(&a[ahead]) + sizeof(Job) - 1);
    };
    for (int d = 0; d < kPrefetch; ++d) prefetch();
    for (;;) {
      size_t next = perm[cur];
      perm[cur] = static_cast<uint32_t>(cur);
      prefetch();
      if (next == k) {
        a[cur] = tmp;
        break;
      }
      a[cur] = a[next];
      cur = next;
    }
  }
}

}  // namespace

// The kept jobs' input indexes, in stable submit order; warns when the input was unsorted.
// Empty when that is every job in input order (the usual case: no index array to build).
std::vector<uint32_t> TraceBuilder::SubmitOrder(const std::vector<uint8_t>& drop, size_t kept, bool* reordered) {
  const std::vector<Job>& jobs = trace_.jobs;
  *reordered = false;
  if (drop.empty() && in_submit_order_) return {};
  std::vector<uint32_t> perm;
  perm.reserve(kept);
  for (size_t i = 0; i < jobs.size(); ++i)
    if (drop.empty() || !drop[i]) perm.push_back(static_cast<uint32_t>(i));
  size_t out_of_order = 0;
  for (size_t k = 1; k < perm.size(); ++k)
    if (jobs[perm[k]].submit < jobs[perm[k - 1]].submit) ++out_of_order;
  *reordered = out_of_order > 0;
  if (out_of_order == 0) return perm;
  Warn("input was not sorted by submit time (" + std::to_string(out_of_order) +
       " rows earlier than their predecessor); jobs were stable-sorted by submit");
  StableSortBySubmit(jobs, &perm);
  return perm;
}

// The source ids in output order; none at all when every id is empty (an empty arena: no
// million empty strings built and dropped).
void TraceBuilder::MoveSourceIds(const std::vector<uint32_t>& perm, Trace* out) const {
  if (!has_ids_ || id_arena_.empty()) return;
  const size_t n = perm.empty() ? trace_.jobs.size() : perm.size();
  out->source_ids.reserve(n);
  bool any_id = false;
  for (size_t k = 0; k < n; ++k) {
    auto s = SourceId(perm.empty() ? k : perm[k]);
    any_id = any_id || !s.empty();
    out->source_ids.emplace_back(s);
  }
  if (!any_id) out->source_ids.clear();
}

// An empty `perm` (SubmitOrder) keeps every job where it is, numbered as AddJob did.
void TraceBuilder::MoveJobs(std::vector<uint32_t>* perm, bool reordered, Trace* out) {
  std::vector<Job>& jobs = trace_.jobs;
  if (perm->empty()) {
    out->jobs = std::move(jobs);
    return;
  }
  if (perm->size() == jobs.size()) {
    out->jobs = std::move(jobs);
    if (reordered) PermuteInPlace(out->jobs.data(), perm);
  } else {
    out->jobs.resize(perm->size());
    for (size_t k = 0; k < perm->size(); ++k) out->jobs[k] = jobs[(*perm)[k]];
  }
  for (size_t k = 0; k < out->jobs.size(); ++k) out->jobs[k].id = JobId(static_cast<uint32_t>(k));
  std::vector<Job>().swap(jobs);
}

void TraceBuilder::SetEpoch(Trace* out) const {
  if (time_base_ == TimeBase::kAbsolute) {
    int64_t epoch = epoch_ ? *epoch_ : out->jobs.front().submit;
    for (Job& j : out->jobs) {
      j.submit -= epoch;
      if (j.start != kNoTime) j.start -= epoch;
      if (j.end != kNoTime) j.end -= epoch;
    }
    out->epoch_unix = epoch;
    out->epoch_known = true;
  } else if (epoch_) {
    out->epoch_unix = *epoch_;
    out->epoch_known = true;
  }
}

Result<Trace> TraceBuilder::Finish() {
  std::vector<uint8_t> drop;
  ORR_ASSIGN_OR_RETURN(size_t dropped, DropDuplicateIds(&drop));
  const size_t kept = trace_.jobs.size() - dropped;
  report_->jobs_imported = kept;
  if (kept == 0) return NoJobsError();
  bool reordered = false;
  std::vector<uint32_t> perm = SubmitOrder(drop, kept, &reordered);
  Trace out;
  out.origin = trace_.origin;
  out.users = std::move(trace_.users);
  out.vcs = std::move(trace_.vcs);
  out.names = std::move(trace_.names);
  out.gpu_types = std::move(trace_.gpu_types);
  MoveSourceIds(perm, &out);
  MoveAccounting(perm, &out);
  MoveJobs(&perm, reordered, &out);
  SetEpoch(&out);
  CanonicaliseTables(&out);
  return out;
}

namespace {

// Whether each of t's string tables is already in order of first use by its jobs, with no
// unused entry, and its GPU types too (bits in ascending order): then CanonicaliseTables
// would rewrite every job to itself. One read-only pass (a trace read back from the
// canonical format is canonical).
bool TablesCanonical(const Trace& t) {
  uint32_t users = 0, vcs = 0, names = 0, types = 0;  // ids first used so far
  auto next = [](auto id, uint32_t* seen) {
    if (!id.valid() || id.value() < *seen) return true;
    return id.value() == (*seen)++;
  };
  for (const Job& j : t.jobs) {
    if (!next(j.user, &users) || !next(j.vc, &vcs) || !next(j.name, &names)) return false;
    for (GpuTypeMask m = j.gpu_types; m != 0; m &= m - 1) {
      const uint32_t b = static_cast<uint32_t>(std::countr_zero(m));
      if (b >= t.gpu_types.size() || b > types) return false;
      types += b == types;
    }
  }
  return users == t.users.size() && vcs == t.vcs.size() && names == t.names.size() && types == t.gpu_types.size();
}

// CanonicaliseTables' renumbering of the string tables and GPU types.
void RemapTables(Trace* t) {
  auto remap = [&](StringPool& pool, auto get, auto set) {
    // New id = rank of first use (pool strings are distinct, so interning them in that
    // order would give exactly these ids).
    std::vector<uint32_t> map(pool.size(), UINT32_MAX);
    std::vector<uint32_t> order;
    bool identity = true;
    for (Job& j : t->jobs) {
      auto id = get(j);
      if (!id.valid()) continue;
      uint32_t& m = map[id.value()];
      if (m == UINT32_MAX) {
        m = static_cast<uint32_t>(order.size());
        order.push_back(id.value());
        identity = identity && m == id.value();
      }
      set(j, m);
    }
    if (identity && order.size() == pool.size()) return;  // already canonical
    StringPool fresh;
    for (uint32_t old : order) fresh.Intern(pool.Get(old));
    pool = std::move(fresh);
  };
  remap(t->users, [](const Job& j) { return j.user; }, [](Job& j, uint32_t v) { j.user = UserId(v); });
  remap(t->vcs, [](const Job& j) { return j.vc; }, [](Job& j, uint32_t v) { j.vc = VcId(static_cast<uint16_t>(v)); });
  remap(t->names, [](const Job& j) { return j.name; }, [](Job& j, uint32_t v) { j.name = NameId(v); });
  {
    std::vector<int> map(t->gpu_types.size(), -1);
    StringPool fresh;
    for (Job& j : t->jobs) {
      if (j.gpu_types == 0) continue;
      GpuTypeMask m = 0;
      for (uint32_t b = 0; b < 32; ++b) {
        if (!(j.gpu_types & (1u << b))) continue;
        if (b >= map.size()) continue;  // dangling bit: dropped
        if (map[b] < 0) map[b] = static_cast<int>(fresh.Intern(t->gpu_types.Get(b)));
        m |= 1u << map[b];
      }
      j.gpu_types = m;
    }
    t->gpu_types = std::move(fresh);
  }
}

}  // namespace

void CanonicaliseTables(Trace* t) {
  if (!TablesCanonical(*t)) RemapTables(t);
  bool any = false;
  for (const auto& s : t->source_ids) any = any || !s.empty();
  if (!any) t->source_ids.clear();
  if (!t->epoch_known) t->epoch_unix = 0;
}

// ---------------------------------------------------------------- Row

namespace {
std::string Range(int64_t lo, int64_t hi) {
  if (lo == 0 && hi == INT64_MAX) return "a non-negative integer";
  return "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
}
// Distinguishes "not a number" from "a number out of range".
bool LooksNumeric(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  if (s.empty()) return false;
  bool dot = false;
  for (char c : s) {
    if (c == '.' && !dot) {
      dot = true;
      continue;
    }
    if (c < '0' || c > '9') return false;
  }
  return true;
}
}  // namespace

bool Row::Fail(int i, const char* name, std::string_view expected, std::string reason) {
  if (err_) return false;
  err_ = FieldError(pos(i), name, expected, i < 0 ? std::string_view() : f_[i].text);
  reason_ = reason.empty() ? "bad value in field '" + std::string(name) + "'" : std::move(reason);
  return false;
}

bool Row::FailRow(std::string reason, std::string message) {
  if (err_) return false;
  err_ = MakeError(std::string(file_) + ":" + std::to_string(line_) + ": " + message);
  reason_ = std::move(reason);
  return false;
}

bool Row::IntSlow(int i, const char* name, int64_t lo, int64_t hi, int64_t* out, bool lenient) {
  std::string_view s = f_[i].text;
  int64_t v;
  bool ok = lenient ? ParseI64Lenient(s, &v) : ParseI64(s, &v);
  if (ok && v >= lo && v <= hi) {
    *out = v;
    return true;
  }
  if ((ok || LooksNumeric(s)) && !s.empty() && s.find('.') == std::string_view::npos) {
    return Fail(i, name, Range(lo, hi) + " (value out of range)", "value out of range in field '" + std::string(name) + "'");
  }
  if (ok) return Fail(i, name, Range(lo, hi) + " (value out of range)", "value out of range in field '" + std::string(name) + "'");
  return Fail(i, name, Range(lo, hi));
}

bool Row::DateTime(int i, const char* name, int64_t* out) {
  if (ParseTimestamp(f_[i].text, out)) return true;
  return Fail(i, name, "a date-time \"YYYY-MM-DD HH:MM:SS\"");
}

bool Row::OptDateTime(int i, const char* name, int64_t* out) {
  if (i < 0 || f_[i].text.empty()) {
    *out = kNoTime;
    return true;
  }
  return DateTime(i, name, out);
}

bool ParseTimestamp(std::string_view s, int64_t* out) {
  if (s.size() == 19 || s.size() == 10) return ParseDateTime(s, out);
  if (s.size() < 19) return false;
  int64_t base;
  if (!ParseDateTime(s.substr(0, 19), &base)) return false;
  std::string_view rest = s.substr(19);
  if (!rest.empty() && rest[0] == '.') {
    size_t k = 1;
    while (k < rest.size() && rest[k] >= '0' && rest[k] <= '9') ++k;
    if (k == 1) return false;
    rest.remove_prefix(k);
  }
  if (rest.empty() || rest == "Z") {
    *out = base;
    return true;
  }
  if (rest[0] != '+' && rest[0] != '-') return false;
  int sign = rest[0] == '-' ? -1 : 1;
  rest.remove_prefix(1);
  auto two = [](std::string_view d, int* v) {
    if (d.size() != 2 || d[0] < '0' || d[0] > '9' || d[1] < '0' || d[1] > '9') return false;
    *v = (d[0] - '0') * 10 + (d[1] - '0');
    return true;
  };
  int hh, mm = 0;
  if (rest.size() == 5 && rest[2] == ':') {
    if (!two(rest.substr(0, 2), &hh) || !two(rest.substr(3, 2), &mm)) return false;
  } else if (rest.size() == 4) {
    if (!two(rest.substr(0, 2), &hh) || !two(rest.substr(2, 2), &mm)) return false;
  } else if (rest.size() == 2) {
    if (!two(rest, &hh)) return false;
  } else {
    return false;
  }
  if (hh > 23 || mm > 59) return false;
  *out = base - sign * (hh * 3600 + mm * 60);
  return true;
}

// ---------------------------------------------------------------- headers

std::string JoinColumns(const std::vector<std::string_view>& cols, char delim) {
  std::string s;
  for (size_t i = 0; i < cols.size(); ++i) {
    if (i) s.push_back(delim);
    s.append(cols[i]);
  }
  return s;
}

namespace {
std::string DelimName(char d) {
  switch (d) {
    case '\t': return "tab";
    case ';': return "';'";
    case '|': return "'|'";
    case ',': return "','";
    default: return std::string("'") + d + "'";
  }
}
std::vector<std::string_view> SplitSimple(std::string_view s, char d) {
  std::vector<std::string_view> out;
  for (;;) {
    size_t p = s.find(d);
    out.push_back(Trim(s.substr(0, p)));
    if (p == std::string_view::npos) break;
    s.remove_prefix(p + 1);
  }
  return out;
}
}  // namespace

Result<std::vector<int>> MapHeader(const HeaderSpec& spec, std::string_view line, std::string_view file) {
  line = StripBom(line);
  const std::string expected = "'" + JoinColumns(spec.columns, spec.delim) + "'";
  // The format's own delimiter splits the header exactly as ForEachRow splits rows
  // (quotes included), so that every mapped index is inside every accepted row.
  std::vector<Field> fields;
  std::vector<std::string> scratch;
  uint32_t bad_col = 0;
  if (!SplitLine(line, spec.delim, &fields, &scratch, &bad_col))
    return MakeError(std::string(file) + ":1:" + std::to_string(bad_col) + ": unterminated quote in the " +
                     std::string(spec.format) + " header (expected " + expected + ")");
  std::vector<std::string_view> own;
  for (const Field& f : fields) own.push_back(Trim(f.text));
  auto map_with = [&](char d, std::vector<int>* idx, std::string* missing) {
    auto names = d == spec.delim ? own : SplitSimple(line, d);
    idx->assign(spec.columns.size(), -1);
    int found = 0;
    for (size_t c = 0; c < spec.columns.size(); ++c) {
      for (size_t k = 0; k < names.size(); ++k) {
        if (names[k] == spec.columns[c]) {
          (*idx)[c] = static_cast<int>(k);
          ++found;
          break;
        }
      }
      if ((*idx)[c] < 0 && spec.required[c]) {
        if (!missing->empty()) *missing += ", ";
        *missing += "'" + std::string(spec.columns[c]) + "'";
      }
    }
    return found;
  };
  std::vector<int> idx;
  std::string missing;
  int found = map_with(spec.delim, &idx, &missing);
  if (missing.empty()) return idx;
  // Wrong delimiter? Try the usual suspects.
  for (char d : {',', ';', '\t', '|'}) {
    if (d == spec.delim || line.find(d) == std::string_view::npos) continue;
    std::vector<int> idx2;
    std::string missing2;
    int found2 = map_with(d, &idx2, &missing2);
    if (found2 > found && found2 >= 2) {
      return MakeError(std::string(file) + ":1: the header is separated by " + DelimName(d) + ", but the " +
                       std::string(spec.format) + " format uses " + DelimName(spec.delim) + " (expected header " +
                       expected + ", got " + Quote(line) + ")");
    }
  }
  return MakeError(std::string(file) + ":1: not a " + std::string(spec.format) + " header: expected " + expected +
                   " (missing column" + (missing.find(',') != std::string::npos ? "s " : " ") + missing + "), got " +
                   Quote(line));
}

// ---------------------------------------------------------------- dispatch

Result<Trace> ImportFromReaders(TraceFormat format, std::vector<std::unique_ptr<LineReader>>& readers,
                                const ImportOptions& options, ImportReport* report) {
  ImportReport local;
  if (report == nullptr) report = &local;
  if (readers.empty()) return MakeError("no input files");
  if (format == TraceFormat::kAuto) return MakeError("internal: format not resolved");
  TraceBuilder b(options, report, std::string(TraceFormatName(format)));
  Status (*reader)(LineReader&, TraceBuilder&) = nullptr;
  switch (format) {
    case TraceFormat::kCanonical: reader = ReadCanonical; break;
    case TraceFormat::kHelios: reader = ReadHelios; break;
    case TraceFormat::kPhilly: reader = ReadPhilly; break;
    case TraceFormat::kAlibabaOpenb: reader = ReadOpenb; break;
    case TraceFormat::kSwf: reader = ReadSwf; break;
    case TraceFormat::kSacct: reader = ReadSacct; break;
    case TraceFormat::kAcme: reader = ReadAcme; break;
    case TraceFormat::kAuto: break;
  }
  for (auto& r : readers) {
    b.AddFile(r->path());
    b.ReserveFor(r->path());
    Status s = reader(*r, b);
    report->bytes_read += r->bytes_read();
    if (!s.ok()) return s.error();
    if (!r->error().empty()) return MakeError(r->error());
  }
  return b.Finish();
}

}  // namespace trace_internal

Result<Trace> ImportTrace(TraceFormat format, const std::vector<std::string>& inputs, const ImportOptions& options,
                          ImportReport* report) {
  if (inputs.empty()) return MakeError("import: no input files");
  if (format == TraceFormat::kAuto) {
    ORR_ASSIGN_OR_RETURN(format, DetectTraceFormat(inputs.front()));
  }
  std::vector<std::unique_ptr<LineReader>> readers;
  for (const auto& in : inputs) {
    ORR_ASSIGN_OR_RETURN(auto r, LineReader::Open(in));
    readers.push_back(std::move(r));
  }
  return ti::ImportFromReaders(format, readers, options, report);
}

Result<Trace> ImportTraceFromString(TraceFormat format, std::string_view data, const std::string& name,
                                    const ImportOptions& options, ImportReport* report) {
  std::vector<std::unique_ptr<LineReader>> readers;
  readers.push_back(LineReader::FromString(data, name));
  if (format == TraceFormat::kAuto) return MakeError(name + ": ImportTraceFromString needs an explicit format");
  return ti::ImportFromReaders(format, readers, options, report);
}

namespace {
bool Has(const std::vector<std::string_view>& cols, std::string_view c) {
  return std::find(cols.begin(), cols.end(), c) != cols.end();
}
// Format implied by a list of header names, or kAuto when none matches.
TraceFormat FromColumns(const std::vector<std::string_view>& c) {
  if (c.empty()) return TraceFormat::kAuto;
  if (Has(c, "timestamp") && Has(c, "num_gpus") && Has(c, "gpu_time")) return TraceFormat::kPhilly;
  if (Has(c, "vc") && Has(c, "node num")) return TraceFormat::kPhilly;  // philly_vc.csv (config)
  if (Has(c, "pod_phase") || (Has(c, "num_gpu") && Has(c, "gpu_milli"))) return TraceFormat::kAlibabaOpenb;
  if (Has(c, "sn") && Has(c, "model")) return TraceFormat::kAlibabaOpenb;  // node list (config)
  if (Has(c, "job_id") && Has(c, "vc") && Has(c, "gpu_num")) return TraceFormat::kHelios;
  if (Has(c, "job_id") && Has(c, "type") && Has(c, "gpu_num")) return TraceFormat::kAcme;
  if (c.front() == "date") return TraceFormat::kHelios;  // cluster_gpu_number.csv
  if (Has(c, "JobID") || Has(c, "JobIDRaw")) return TraceFormat::kSacct;
  if (Has(c, "id") && Has(c, "gpu_milli") && Has(c, "state")) return TraceFormat::kCanonical;
  return TraceFormat::kAuto;
}
}  // namespace

Result<TraceFormat> DetectTraceFormat(const std::string& path) {
  ORR_ASSIGN_OR_RETURN(auto r, LineReader::Open(path));
  std::string_view line;
  while (r->Next(&line)) {
    line = ti::StripBom(line);
    if (ti::IsBlank(line)) continue;
    if (line.rfind("#orrery-trace", 0) == 0) return TraceFormat::kCanonical;
    if (line[0] == ';') return TraceFormat::kSwf;
    if (line[0] == '#') continue;
    if (line.find('|') != std::string_view::npos && line.find("JobID") != std::string_view::npos)
      return TraceFormat::kSacct;
    TraceFormat f = FromColumns(ti::SplitSimple(line, ','));
    if (f != TraceFormat::kAuto) return f;
    for (char d : {';', '\t'}) {
      TraceFormat g = FromColumns(ti::SplitSimple(line, d));
      if (g != TraceFormat::kAuto)
        return MakeError(path + ":" + std::to_string(r->line_number()) + ": looks like a " +
                         std::string(TraceFormatName(g)) + " file separated by " + ti::DelimName(d) +
                         ", but that format uses " + (g == TraceFormat::kSacct ? "'|'" : "','"));
    }
    std::vector<Field> ws;
    SplitWhitespace(line, &ws);
    if (ws.size() == 18) {
      bool numeric = true;
      for (const auto& f : ws) numeric = numeric && ti::LooksNumeric(f.text);
      if (numeric) return TraceFormat::kSwf;
    }
    return MakeError(path + ":" + std::to_string(r->line_number()) + ": cannot detect the trace format from " +
                     Quote(line) + "; name the format explicitly (--from for import, --format for the other commands)");
  }
  if (!r->error().empty()) return MakeError(r->error());
  return MakeError(path + ": empty file: cannot detect the trace format");
}

Result<Trace> LoadTrace(const std::string& path, TraceFormat format, const ImportOptions& options,
                        ImportReport* report) {
  return ImportTrace(format, {path}, options, report);
}

}  // namespace orrery
