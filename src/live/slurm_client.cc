#include "live/slurm_client.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <ctime>
#include <set>

#include "base/parse.h"

extern char** environ;

namespace orrery::live {

namespace {

constexpr char kSep = kFieldSep;

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t b = 0;
  while (true) {
    size_t e = s.find(sep, b);
    if (e == std::string_view::npos) {
      out.push_back(s.substr(b));
      return out;
    }
    out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
}

bool ParseU64(std::string_view s, uint64_t* v) {
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), *v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

std::string Trim(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.remove_suffix(1);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return std::string(s);
}

SlurmFailure FailureOf(std::string_view raw) {
  if (raw == "NODE_FAIL") return SlurmFailure::kNodeFail;
  if (raw == "BOOT_FAIL") return SlurmFailure::kBootFail;
  if (raw == "TIMEOUT" || raw == "DEADLINE") return SlurmFailure::kTimeout;
  if (raw == "OUT_OF_MEMORY") return SlurmFailure::kOutOfMemory;
  return SlurmFailure::kExit;  // FAILED, SPECIAL_EXIT and any failure state Slurm adds
}

SlurmJobState StateOf(std::string_view raw) {
  if (raw == "PENDING" || raw == "REQUEUED" || raw == "REQUEUE_HOLD" || raw == "REQUEUE_FED" ||
      raw == "RESV_DEL_HOLD")
    return SlurmJobState::kPending;
  if (raw == "RUNNING" || raw == "COMPLETING" || raw == "CONFIGURING" || raw == "SUSPENDED" ||
      raw == "STAGE_OUT" || raw == "SIGNALING" || raw == "RESIZING" || raw == "STOPPED")
    return SlurmJobState::kRunning;
  if (raw == "COMPLETED") return SlurmJobState::kFinished;
  if (raw == "CANCELLED" || raw == "PREEMPTED" || raw == "REVOKED") return SlurmJobState::kCancelled;
  return SlurmJobState::kFailed;  // FAILED TIMEOUT NODE_FAIL OUT_OF_MEMORY BOOT_FAIL DEADLINE SPECIAL_EXIT
}

}  // namespace

SlurmJobState ParseSlurmJobState(std::string_view raw) { return StateOf(raw); }

std::string_view SlurmJobStateName(SlurmJobState s) {
  switch (s) {
    case SlurmJobState::kPending: return "pending";
    case SlurmJobState::kRunning: return "running";
    case SlurmJobState::kFinished: return "completed";
    case SlurmJobState::kFailed: return "failed";
    case SlurmJobState::kCancelled: return "cancelled";
  }
  return "?";
}

std::string_view SlurmFailureName(SlurmFailure f) {
  switch (f) {
    case SlurmFailure::kNone: return "";
    case SlurmFailure::kExit: return "FAILED";
    case SlurmFailure::kNodeFail: return "NODE_FAIL";
    case SlurmFailure::kBootFail: return "BOOT_FAIL";
    case SlurmFailure::kTimeout: return "TIMEOUT";
    case SlurmFailure::kOutOfMemory: return "OUT_OF_MEMORY";
  }
  return "?";
}

FailureKind FailureKindOf(SlurmFailure f) {
  switch (f) {
    case SlurmFailure::kNone: return FailureKind::kNone;
    case SlurmFailure::kExit: return FailureKind::kUser;  // the script's own non-zero exit
    case SlurmFailure::kNodeFail:
    case SlurmFailure::kBootFail: return FailureKind::kHardware;
    case SlurmFailure::kTimeout: return FailureKind::kTimeout;
    case SlurmFailure::kOutOfMemory: return FailureKind::kOom;
  }
  return FailureKind::kUnknown;
}

bool IsTerminal(SlurmJobState s) {
  return s == SlurmJobState::kFinished || s == SlurmJobState::kFailed || s == SlurmJobState::kCancelled;
}

std::string_view NodeAvailName(NodeAvail a) {
  switch (a) {
    case NodeAvail::kUp: return "up";
    case NodeAvail::kDown: return "down";
    case NodeAvail::kPoweredDown: return "powered-down";
    case NodeAvail::kPoweringUp: return "powering-up";
  }
  return "?";
}

namespace {

// The error of a hostlist at byte `col` (1-based) of the list.
Error HostlistError(std::string_view s, size_t col, const std::string& what) {
  return MakeError("hostlist " + Quote(s) + " (" + std::to_string(s.size()) + " bytes), column " + std::to_string(col) +
                   ": " + what);
}

// Checks `count` names of `name_bytes` each against one bound (`max_names` names,
// kMaxHostlistBytes bytes) before they are expanded; `*seen` holds the totals so far.
Status CheckBound(std::string_view s, size_t col, uint64_t count, size_t name_bytes, size_t max_names,
                  const HostlistBudget& seen) {
  if (count > max_names - seen.names)
    return HostlistError(s, col, "expected at most " + std::to_string(max_names) + " names, got more");
  if (count * name_bytes > kMaxHostlistBytes - seen.bytes)
    return HostlistError(s, col, "expected at most " + std::to_string(kMaxHostlistBytes) + " bytes of names, got more");
  return Status::Ok();
}

// Checks one bracket range before it is expanded: `count` names of prefix + digits + suffix,
// against the list's own bound (`max_names`, totals in `*list`) and, when given, the bound of
// the whole listing (`*listing`); both totals are updated.
Status CheckRange(std::string_view s, size_t col, uint64_t count, size_t name_bytes, size_t max_names,
                  HostlistBudget* list, HostlistBudget* listing) {
  if (name_bytes > kMaxNodeNameBytes)
    return HostlistError(s, col, "expected node names of at most " + std::to_string(kMaxNodeNameBytes) +
                                     " bytes, got one of " + std::to_string(name_bytes));
  ORR_RETURN_IF_ERROR(CheckBound(s, col, count, name_bytes, max_names, *list));
  if (listing) {
    Status whole = CheckBound(s, col, count, name_bytes, kMaxHostlistNames, *listing);
    if (!whole.ok()) return whole.error().With("the listing's hostlists together");
    listing->names += count;
    listing->bytes += count * name_bytes;
  }
  list->names += count;
  list->bytes += count * name_bytes;
  return Status::Ok();
}

}  // namespace

Result<std::vector<std::string>> ExpandHostlist(std::string_view s, size_t max_names, HostlistBudget* listing) {
  std::vector<std::string> out;
  if (s.empty() || s == "(null)" || s == "N/A") return out;
  max_names = std::min(max_names, kMaxHostlistNames);
  HostlistBudget list;
  size_t i = 0;
  while (i < s.size()) {
    // One item: prefix[ranges]suffix? up to a comma outside brackets.
    size_t b = i;
    int depth = 0;
    size_t e = i;
    for (; e < s.size(); ++e) {
      if (s[e] == '[') ++depth;
      else if (s[e] == ']') { if (--depth < 0) break; }
      else if (s[e] == ',' && depth == 0) break;
    }
    if (depth != 0) return HostlistError(s, b + 1, "unbalanced brackets");
    std::string_view item = s.substr(b, e - b);
    i = e + 1;
    if (item.empty()) continue;
    size_t lb = item.find('[');
    if (lb == std::string_view::npos) {
      ORR_RETURN_IF_ERROR(CheckRange(s, b + 1, 1, item.size(), max_names, &list, listing));
      out.emplace_back(item);
      continue;
    }
    size_t rb = item.find(']', lb);
    if (rb == std::string_view::npos || item.find('[', lb + 1) < rb) return HostlistError(s, b + 1, "nested or unbalanced brackets");
    std::string_view prefix = item.substr(0, lb), suffix = item.substr(rb + 1);
    if (suffix.find('[') != std::string_view::npos)
      return HostlistError(s, b + 1, "more than one bracket group per name is not supported");
    for (std::string_view r : Split(item.substr(lb + 1, rb - lb - 1), ',')) {
      size_t dash = r.find('-');
      std::string_view a = r.substr(0, dash), z = dash == std::string_view::npos ? r : r.substr(dash + 1);
      uint64_t lo, hi;
      if (!ParseU64(a, &lo) || !ParseU64(z, &hi) || hi < lo)
        return HostlistError(s, b + lb + 2, "bad range " + Quote(r));
      const size_t width = std::max(a.size(), std::to_string(hi).size());
      const uint64_t count = hi - lo < kMaxHostlistNames ? hi - lo + 1 : kMaxHostlistNames + 1;  // no wrap at 2^64
      ORR_RETURN_IF_ERROR(CheckRange(s, b + 1, count, prefix.size() + width + suffix.size(), max_names, &list, listing));
      for (uint64_t v = lo; v <= hi; ++v) {
        std::string num = std::to_string(v);
        if (num.size() < a.size()) num.insert(0, a.size() - num.size(), '0');
        out.push_back(std::string(prefix) + num + std::string(suffix));
      }
    }
  }
  return out;
}

uint32_t ParseGpuCount(std::string_view gres) {
  // Several comma-separated entries may appear (e.g. "gpu:8,shard:64"); sum the gpu ones.
  uint32_t total = 0;
  int depth = 0;
  size_t b = 0;
  for (size_t i = 0; i <= gres.size(); ++i) {
    if (i < gres.size() && gres[i] == '(') ++depth;
    if (i < gres.size() && gres[i] == ')') --depth;
    if (i < gres.size() && !(gres[i] == ',' && depth == 0)) continue;
    std::string_view e = gres.substr(b, i - b);
    b = i + 1;
    if (size_t p = e.find('('); p != std::string_view::npos) e = e.substr(0, p);
    if (e.rfind("gres:", 0) == 0 || e.rfind("gres/", 0) == 0) e.remove_prefix(5);
    if (e.rfind("gpu", 0) != 0) continue;
    if (e.size() > 3 && e[3] != ':' && e[3] != '=') continue;  // e.g. "gpumem"
    size_t p = e.find_last_of(":=");
    uint64_t n;
    if (p == std::string_view::npos) total += 1;
    else if (ParseU64(e.substr(p + 1), &n)) total += static_cast<uint32_t>(n);
    else total += 1;  // "gpu:a100" without a count means one
  }
  return total;
}

namespace {

// mktime of a local time (Slurm prints local time; tm_isdst = -1 lets the zone decide).
Time LocalToUnix(int y, int mo, int d, int h, int mi, int se) {
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = se;
  tm.tm_isdst = -1;
  return static_cast<Time>(std::mktime(&tm));
}

// glibc's mktime takes ~2 us (it locks and consults the zone), and a listing has three times a
// row: most fall in a few hours. An hour whose local times map to Unix times without a jump
// (its first and last second are 3,599 s apart: no DST change inside it) is converted once,
// and its seconds are added; any other hour, and any field out of range, goes to mktime
// itself. 64 direct-mapped hours per thread; the key is the hour's own fields.
Time CachedLocalToUnix(int y, int mo, int d, int h, int mi, int se) {
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 59) return LocalToUnix(y, mo, d, h, mi, se);
  struct Hour {
    int64_t key = -1;
    Time base = 0;  // Unix time of hh:00:00, or kNoTime when the hour has a jump
  };
  thread_local std::array<Hour, 64> cache;
  const int64_t key = ((static_cast<int64_t>(y) * 12 + (mo - 1)) * 31 + (d - 1)) * 24 + h;
  Hour& e = cache[static_cast<size_t>(key) % cache.size()];
  if (e.key != key) {
    const Time first = LocalToUnix(y, mo, d, h, 0, 0);
    const Time last = LocalToUnix(y, mo, d, h, 59, 59);
    e = {key, last - first == 3599 ? first : kNoTime};
  }
  if (e.base == kNoTime) return LocalToUnix(y, mo, d, h, mi, se);
  return e.base + mi * 60 + se;
}

}  // namespace

Time ParseSlurmTime(std::string_view s) {
  if (s.size() < 19 || s[4] != '-' || s[10] != 'T') return kNoTime;
  uint64_t y, mo, d, h, mi, se;
  if (!ParseU64(s.substr(0, 4), &y) || !ParseU64(s.substr(5, 2), &mo) || !ParseU64(s.substr(8, 2), &d) ||
      !ParseU64(s.substr(11, 2), &h) || !ParseU64(s.substr(14, 2), &mi) || !ParseU64(s.substr(17, 2), &se))
    return kNoTime;
  return CachedLocalToUnix(static_cast<int>(y), static_cast<int>(mo), static_cast<int>(d), static_cast<int>(h),
                           static_cast<int>(mi), static_cast<int>(se));
}

std::string FormatSlurmTime(Time t) {
  if (t == kNoTime) return "N/A";
  std::tm tm{};
  const time_t tt = static_cast<time_t>(t);
  localtime_r(&tt, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%S", &tm);
  return b;
}

Duration ParseTimeLimit(std::string_view s) {
  if (s == "UNLIMITED" || s == "INFINITE" || s == "NOT_SET" || s.empty() || s == "N/A") return -1;
  uint64_t days = 0;
  if (size_t dash = s.find('-'); dash != std::string_view::npos) {
    if (!ParseU64(s.substr(0, dash), &days)) return -1;
    s = s.substr(dash + 1);
  }
  auto parts = Split(s, ':');
  uint64_t v[3] = {0, 0, 0};
  for (size_t i = 0; i < parts.size() && i < 3; ++i)
    if (!ParseU64(parts[i], &v[i])) return -1;
  Duration secs;
  if (parts.size() == 3) secs = static_cast<Duration>(v[0] * 3600 + v[1] * 60 + v[2]);
  else if (parts.size() == 2) secs = days ? static_cast<Duration>(v[0] * 3600 + v[1] * 60) : static_cast<Duration>(v[0] * 60 + v[1]);
  else secs = days ? static_cast<Duration>(v[0] * 3600) : static_cast<Duration>(v[0] * 60);
  return secs + static_cast<Duration>(days) * 86400;
}

Duration DurationHint(std::string_view comment) {
  constexpr std::string_view kKey = "orrery:duration=";
  size_t p = comment.find(kKey);
  if (p == std::string_view::npos) return -1;
  std::string_view rest = comment.substr(p + kKey.size());
  size_t e = 0;
  while (e < rest.size() && rest[e] >= '0' && rest[e] <= '9') ++e;
  uint64_t v;
  if (!ParseU64(rest.substr(0, e), &v) || v > (1ULL << 40)) return -1;
  return static_cast<Duration>(v);
}

// %i id, %T state, %P partition, %u user, %D nodes, %b tres-per-node, %l limit, %V submit,
// %S start, %e end, %r reason, %N nodelist, %j name, %k comment.
const char* const kSqueueFormat = "%i\x1f%T\x1f%P\x1f%u\x1f%D\x1f%b\x1f%l\x1f%V\x1f%S\x1f%e\x1f%r\x1f%N\x1f%j\x1f%k";
const char* const kSinfoFormat = "%N\x1f%R\x1f%T\x1f%G";

Result<std::vector<SlurmJob>> ParseSqueue(std::string_view text, size_t max_nodes) {
  std::vector<SlurmJob> jobs;
  HostlistBudget listing;
  size_t lineno = 0;
  for (std::string_view line : Split(text, '\n')) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    ORR_ASSIGN_OR_RETURN(std::optional<SlurmJob> j, ParseSqueueLine(line, lineno, max_nodes, &listing));
    if (j) jobs.push_back(std::move(*j));
  }
  return jobs;
}

Result<std::optional<SlurmJob>> ParseSqueueLine(std::string_view line, size_t lineno, size_t max_nodes,
                                                HostlistBudget* listing) {
  auto f = Split(line, kSep);
  auto bad = [&](const std::string& what) {
    return MakeError("squeue output line " + std::to_string(lineno) + ": " + what + ", got \"" +
                     std::string(line.substr(0, 120)) + "\"", kExitRuntime);
  };
  if (f.size() != 14) return bad("expected 14 fields");
  SlurmJob j;
  uint64_t v;
  // Array and heterogeneous jobs ("12_3", "12+1") are not managed: skip them.
  if (!ParseU64(f[0], &v)) return std::optional<SlurmJob>();
  if (v == 0 || v > UINT32_MAX) return bad("bad job id");
  j.id = static_cast<uint32_t>(v);
  j.state_raw = std::string(f[1]);
  j.state = StateOf(f[1]);
  if (j.state == SlurmJobState::kFailed) j.failure = FailureOf(f[1]);
  j.partition = std::string(f[2]);
  j.user = std::string(f[3]);
  if (!ParseU64(f[4], &v) || v > 100000) return bad("bad node count");
  j.num_nodes = static_cast<uint32_t>(std::max<uint64_t>(1, v));
  j.gpus_per_node = ParseGpuCount(f[5]);
  j.time_limit = ParseTimeLimit(f[6]);
  j.submit = ParseSlurmTime(f[7]);
  j.start = ParseSlurmTime(f[8]);
  j.end = ParseSlurmTime(f[9]);
  j.reason = std::string(f[10]);
  // "launch failed requeued held": Slurm could not launch the batch script (seen on a node
  // that had just resumed from power saving) and requeued the job held; it needs a release.
  // "job requeued in held state": `scontrol requeuehold` (a preemption) on Slurm 22.05.
  j.held = j.state == SlurmJobState::kPending &&
           (j.reason == "JobHeldAdmin" || j.reason == "JobHeldUser" || j.state_raw == "REQUEUE_HOLD" ||
            j.reason == "launch failed requeued held" || j.reason == "job requeued in held state");
  auto nodes = ExpandHostlist(f[11], max_nodes, listing);
  if (!nodes.ok()) return bad(nodes.error().message);
  j.nodes = std::move(*nodes);
  j.name = std::string(f[12]);
  j.comment = f[13] == "(null)" ? "" : std::string(f[13]);
  return std::optional<SlurmJob>(std::move(j));
}

Result<std::vector<SlurmNode>> ParseSinfo(std::string_view text) {
  std::vector<SlurmNode> nodes;
  size_t lineno = 0;
  for (std::string_view line : Split(text, '\n')) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    ORR_ASSIGN_OR_RETURN(SlurmNode n, ParseSinfoLine(line, lineno));
    nodes.push_back(std::move(n));
  }
  return nodes;
}

Result<SlurmNode> ParseSinfoLine(std::string_view line, size_t lineno) {
  auto f = Split(line, kSep);
  if (f.size() != 4)
    return MakeError("sinfo output line " + std::to_string(lineno) + ": expected 4 fields, got \"" +
                     std::string(line.substr(0, 120)) + "\"", kExitRuntime);
  if (f[0].empty())
    return MakeError("sinfo output line " + std::to_string(lineno) + ": expected a node name, got an empty field",
                     kExitRuntime);
  SlurmNode n;
  n.name = std::string(f[0]);
  n.partition = std::string(f[1]);
  n.state_raw = std::string(f[2]);
  n.gpus = static_cast<uint16_t>(std::min<uint32_t>(ParseGpuCount(f[3]), UINT16_MAX));
  std::string_view st = f[2];
  char suffix = st.empty() ? 0 : st.back();
  std::string_view base = st;
  while (!base.empty() && std::strchr("*~#!%$@^-", base.back())) base.remove_suffix(1);
  if (base == "down" || base == "drained" || base == "fail")  // e.g. "down~": a resume that failed
    n.avail = NodeAvail::kDown;
  else if (suffix == '~' || suffix == '%' || suffix == '!' || base == "powered_down" || base == "power_down" ||
      base == "powering_down")
    n.avail = NodeAvail::kPoweredDown;
  else if (suffix == '#' || base == "powering_up")
    n.avail = NodeAvail::kPoweringUp;
  else if (suffix == '*' || base == "down" || base == "drained" || base == "draining" || base == "drain" ||
           base == "fail" || base == "failing" || base == "unknown" || base == "future" || base == "inval" ||
           base == "maint" || base == "reboot_issued" || base == "reboot_requested")
    n.avail = NodeAvail::kDown;
  else
    n.avail = NodeAvail::kUp;  // idle, mixed, allocated, completing, planned, reserved
  return n;
}

// --------------------------------------------------------------------------- Exec

Result<ExecResult> Exec(const std::vector<std::string>& argv, int timeout_ms, const std::vector<std::string>& extra_env) {
  if (argv.empty()) return MakeError("exec: empty command", kExitRuntime);
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return MakeError(std::string("exec: pipe: ") + std::strerror(errno), kExitRuntime);
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return MakeError(std::string("exec: pipe: ") + std::strerror(errno), kExitRuntime);
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_store;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    bool overridden = false;
    for (const auto& x : extra_env)
      if (kv.substr(0, kv.find('=') + 1) == std::string_view(x).substr(0, x.find('=') + 1)) overridden = true;
    if (!overridden) env_store.emplace_back(kv);
  }
  for (const auto& x : extra_env) env_store.push_back(x);
  std::vector<char*> envp;
  for (auto& e : env_store) envp.push_back(e.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  pid_t pid;
  int rc = posix_spawnp(&pid, args[0], &fa, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (rc != 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    return MakeError("cannot run " + argv[0] + ": " + std::strerror(rc), kExitRuntime, ErrorCode::kNoTool);
  }
  ExecResult r;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      r.timed_out = true;
      kill(-pid, SIGKILL);
      break;
    }
    int n = poll(fds, 2, static_cast<int>(left));
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t k = read(fds[i].fd, buf, sizeof buf);
      if (k > 0) {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(k));
      } else if (k == 0 || (k < 0 && errno != EINTR && errno != EAGAIN)) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) r.exit_code = 128 + WTERMSIG(status);
  return r;
}

bool Completing(const SlurmJob& j) { return j.state == SlurmJobState::kRunning && j.state_raw == "COMPLETING"; }

bool WaitsForBeginTime(const SlurmJob& j) {
  return j.state == SlurmJobState::kPending && !j.held && j.reason == "BeginTime";
}

bool WaitsForUnavailableNodes(const SlurmJob& j) {
  return j.state == SlurmJobState::kPending && !j.held && j.reason.rfind("ReqNodeNotAvail", 0) == 0;
}

// --------------------------------------------------------------------------- replies

ErrorCode ClassifySlurmReply(std::string_view text) {
  auto has = [&](std::string_view s) { return text.find(s) != std::string_view::npos; };
  if (has("Invalid job id") || has("Invalid node name")) return ErrorCode::kNotFound;
  if (has("already")) return ErrorCode::kAlreadyDone;
  if (has("not running") || has("not pending") || has("no longer pending") || has("not held"))
    return ErrorCode::kWrongState;
  if (has("Unable to contact") || has("Socket timed out") || has("Connection refused") || has("connect failure"))
    return ErrorCode::kUnavailable;
  return ErrorCode::kGeneric;
}

Error SlurmError(std::string message) {
  ErrorCode code = ClassifySlurmReply(message);
  return MakeError(std::move(message), kExitRuntime, code);
}

// --------------------------------------------------------------------------- ExecSlurmClient

Result<std::string> ExecSlurmClient::Run(const std::string& tool, std::vector<std::string> args) {
  std::string bin = opts_.bin_dir.empty() ? tool : opts_.bin_dir + "/" + tool;
  args.insert(args.begin(), bin);
  std::vector<std::string> env;
  if (!opts_.slurm_conf.empty()) env.push_back("SLURM_CONF=" + opts_.slurm_conf);
  ORR_ASSIGN_OR_RETURN(ExecResult r, Exec(args, opts_.timeout_ms, env));
  std::string cmdline;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    for (char& c : a)
      if (c == kSep) c = '|';
    cmdline += (i ? " " : "") + a;
  }
  if (r.timed_out)
    return MakeError("slurm: `" + cmdline + "` timed out after " + std::to_string(opts_.timeout_ms) +
                     " ms (is slurmctld reachable?)", kExitRuntime, ErrorCode::kUnavailable);
  if (r.exit_code != 0) {
    std::string err = Trim(r.err);
    if (err.empty()) err = Trim(r.out);
    if (err.find("Access/permission denied") != std::string::npos || err.find("Invalid user") != std::string::npos)
      err += " (orrery serve needs Slurm operator rights for priority/hold/release/requeue and administrator "
             "rights for node power; run it as root or SlurmUser, or give its user AdminLevel=Operator/Admin "
             "with sacctmgr)";
    return SlurmError("slurm: `" + cmdline + "` exited " + std::to_string(r.exit_code) + ": " + err);
  }
  return std::move(r.out);
}

namespace {
std::string JoinParts(const std::vector<std::string>& parts) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? "," : "") + parts[i];
  return s;
}
}  // namespace

Result<std::string> ExecSlurmClient::Squeue(const std::vector<std::string>& partitions) {
  std::vector<std::string> args = {"-h", "-a", "-t", "all", "-o", kSqueueFormat};
  if (!partitions.empty()) {
    args.push_back("-p");
    args.push_back(JoinParts(partitions));
  }
  return Run("squeue", std::move(args));
}

uint32_t JobSlice(uint32_t id, uint32_t of) { return of == 0 ? 0 : id % of; }

uint32_t NodeSlice(std::string_view name, uint32_t of) {
  if (of == 0) return 0;
  uint64_t h = 14695981039346656037ull;  // FNV-1a, 64 bits
  for (const char c : name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return static_cast<uint32_t>(h % of);
}

// A key that is no job id (an array task "12_3", which is not managed) is in slice 0.
uint32_t SqueueKeySlice(std::string_view key, uint32_t of) {
  uint64_t id = 0;
  return ParseU64(key, &id) && id <= UINT32_MAX ? JobSlice(static_cast<uint32_t>(id), of) : 0;
}

uint32_t SinfoKeySlice(std::string_view key, uint32_t of) { return NodeSlice(key.substr(0, key.find(kSep)), of); }

template <class Listing>
Result<Listing> ExecSlurmClient::Listed(Listings& l, std::string out, const std::vector<std::string>& partitions,
                                        uint64_t cursor, Sweep sweep,
                                        Result<Listing> (ExecSlurmClient::*diff_to)(const ListingDelta::Diff&, bool)) {
  bool full = false;
  const ListingDelta::Diff diff = Changed(l, std::move(out), partitions, cursor, sweep, &full);
  Result<Listing> listing = (this->*diff_to)(diff, full);
  const uint64_t next = Settle(l, listing.ok(), partitions);
  if (listing.ok()) {
    listing->cursor = next;
    if (!full) listing->swept = sweep;
  }
  return listing;
}

// squeue has no changed-since filter either: as NodeChanges, only the rows whose bytes differ
// from the previous listing's are parsed (key: the job id), and the sweep's slice.
Result<JobListing> ExecSlurmClient::ListJobs(const std::vector<std::string>& partitions, uint64_t cursor, Sweep sweep) {
  ORR_ASSIGN_OR_RETURN(std::string out, Squeue(partitions));
  return Listed(squeue_, std::move(out), partitions, cursor, sweep, &ExecSlurmClient::JobDiff);
}

Result<JobListing> ExecSlurmClient::JobDiff(const ListingDelta::Diff& diff, bool full) {
  JobListing l;
  l.full = full;
  l.jobs.reserve(diff.changed.size());
  HostlistBudget listing;
  for (const ListingDelta::Line& row : diff.changed) {
    ORR_ASSIGN_OR_RETURN(std::optional<SlurmJob> j,
                         ParseSqueueLine(row.text, row.lineno, cluster_nodes_ > 0 ? cluster_nodes_ : kMaxHostlistNames,
                                         &listing));
    if (j) l.jobs.push_back(std::move(*j));
  }
  uint64_t id = 0;
  for (std::string_view key : diff.gone)
    if (ParseU64(key, &id) && id > 0 && id <= UINT32_MAX) l.gone.push_back(static_cast<uint32_t>(id));
  return l;
}

Result<NodeListing> SlurmClient::ListNodeChanges(const std::vector<std::string>& partitions, uint64_t, Sweep) {
  NodeListing l;
  ORR_ASSIGN_OR_RETURN(l.nodes, Nodes(partitions));
  return l;
}

Result<std::string> ExecSlurmClient::Sinfo(const std::vector<std::string>& partitions) {
  std::vector<std::string> args = {"-h", "-N", "-o", kSinfoFormat};
  if (!partitions.empty()) {
    args.push_back("-p");
    args.push_back(JoinParts(partitions));
  }
  return Run("sinfo", std::move(args));
}

Result<std::vector<SlurmNode>> ExecSlurmClient::Nodes(const std::vector<std::string>& partitions) {
  ORR_ASSIGN_OR_RETURN(std::string out, Sinfo(partitions));
  return ParseSinfo(out);
}

// A listing is a delta only against the one this client answered last for the same tool (its
// cursor, the same partitions); anything else, and the first listing, is full.
ListingDelta::Diff ExecSlurmClient::Changed(Listings& l, std::string out, const std::vector<std::string>& partitions,
                                            uint64_t cursor, Sweep sweep, bool* full) {
  *full = cursor == 0 || cursor != l.cursor || partitions != l.partitions;
  if (*full) l.rows.Forget();
  l.cursor = 0;
  return l.rows.Next(std::move(out), sweep);
}

// A listing that failed to parse is forgotten, so that the next one is full again and no row
// is ever skipped; a parsed one gets its cursor.
uint64_t ExecSlurmClient::Settle(Listings& l, bool parsed, const std::vector<std::string>& partitions) {
  if (!parsed) {
    l.rows.Forget();
    return 0;
  }
  l.partitions = partitions;
  return l.cursor = ++listings_;
}

Result<NodeListing> ExecSlurmClient::ListNodeChanges(const std::vector<std::string>& partitions, uint64_t cursor,
                                                     Sweep sweep) {
  ORR_ASSIGN_OR_RETURN(std::string out, Sinfo(partitions));
  Result<NodeListing> l = Listed(sinfo_, std::move(out), partitions, cursor, sweep, &ExecSlurmClient::NodeDiff);
  if (l.ok() && l->full && partitions.empty()) {  // the whole cluster
    std::set<std::string_view> names;
    for (const SlurmNode& n : l->nodes) names.insert(n.name);
    cluster_nodes_ = names.size();
  }
  return l;
}

Result<NodeListing> ExecSlurmClient::NodeDiff(const ListingDelta::Diff& diff, bool full) {
  NodeListing l;
  l.full = full;
  l.nodes.reserve(diff.changed.size());
  for (const ListingDelta::Line& row : diff.changed) {
    ORR_ASSIGN_OR_RETURN(SlurmNode n, ParseSinfoLine(row.text, row.lineno));
    l.nodes.push_back(std::move(n));
  }

  for (std::string_view key : diff.gone) {
    const size_t sep = key.find(kSep);
    l.gone.push_back(NodeRow{std::string(key.substr(0, sep)),
                             sep == std::string_view::npos ? std::string() : std::string(key.substr(sep + 1))});
  }
  return l;
}

Status ExecSlurmClient::Hold(uint32_t job) {
  auto r = Run("scontrol", {"hold", std::to_string(job)});
  if (!r.ok() && r.error().code == ErrorCode::kAlreadyDone) return Status::Ok();
  if (!r.ok()) return r.error();
  return Status::Ok();
}

Status ExecSlurmClient::StartOn(uint32_t job, const std::vector<NodeShare>& nodes, bool after_requeue) {
  std::vector<std::string> names;
  for (const auto& n : nodes) names.push_back(n.node);
  std::string id = std::to_string(job);
  // Only the node list: the node count is the job's own (the placer honours it), and an
  // update of NumNodes reaching a job that has just started would resize it. A held job
  // cannot start behind our back, so clearing a requeue's begin-time delay is safe.
  std::vector<std::string> args = {"update", "JobId=" + id, "ReqNodeList=" + JoinParts(names)};
  if (after_requeue) args.push_back("StartTime=now");
  auto u = Run("scontrol", std::move(args));
  if (!u.ok()) return u.error();
  auto r = Run("scontrol", {"release", id});
  // Releasing twice (e.g. re-applying after a crash) is harmless.
  if (!r.ok() && r.error().code != ErrorCode::kWrongState) return r.error();
  return Status::Ok();
}

Result<uint16_t> UniformGpus(const std::vector<NodeShare>& nodes) {
  if (nodes.empty()) return MakeError("a shape needs at least one node", kExitRuntime);
  for (const NodeShare& n : nodes)
    if (n.gpus != nodes[0].gpus)
      return MakeError("Slurm's request is per node: " + nodes[0].node + " has " + std::to_string(nodes[0].gpus) +
                           " GPUs, " + n.node + " " + std::to_string(n.gpus),
                       kExitRuntime);
  return nodes[0].gpus;
}

Status ExecSlurmClient::Reshape(uint32_t job, const std::vector<NodeShare>& nodes) {
  ORR_ASSIGN_OR_RETURN(const uint16_t gpus, UniformGpus(nodes));
  std::vector<std::string> names;
  for (const auto& n : nodes) names.push_back(n.node);
  const std::string count = std::to_string(nodes.size());
  auto u = Run("scontrol", {"update", "JobId=" + std::to_string(job), "NumNodes=" + count + "-" + count,
                            "TresPerNode=gres:gpu:" + std::to_string(gpus), "ReqNodeList=" + JoinParts(names)});
  if (!u.ok()) return u.error();
  return Status::Ok();
}

Status ExecSlurmClient::RequeueHold(uint32_t job) {
  auto r = Run("scontrol", {"requeuehold", std::to_string(job)});
  if (!r.ok()) return r.error();
  return Status::Ok();
}

Status ExecSlurmClient::SetPriority(uint32_t job, uint32_t priority) {
  auto r = Run("scontrol", {"update", "JobId=" + std::to_string(job), "Priority=" + std::to_string(priority)});
  if (!r.ok()) return r.error();
  return Status::Ok();
}

Status ExecSlurmClient::PowerDown(const std::string& node) {
  auto r = Run("scontrol", {"update", "NodeName=" + node, "State=POWER_DOWN"});
  if (!r.ok()) return r.error();
  return Status::Ok();
}

Status ExecSlurmClient::PowerUp(const std::string& node) {
  auto r = Run("scontrol", {"update", "NodeName=" + node, "State=POWER_UP"});
  if (!r.ok()) return r.error();
  return Status::Ok();
}

Result<uint32_t> ExecSlurmClient::Submit(const SubmitSpec& s) {
  std::vector<std::string> args = {"--parsable", "-J", s.name, "-N", std::to_string(s.nodes), "-o", "/dev/null",
                                   "-D", s.workdir};
  if (!s.partition.empty()) args.insert(args.end(), {"-p", s.partition});
  if (s.gpus_per_node > 0) args.push_back("--gres=gpu:" + std::to_string(s.gpus_per_node));
  if (s.hold) args.push_back("--hold");
  if (!s.user.empty()) args.push_back("--uid=" + s.user);
  if (!s.account.empty()) args.push_back("--account=" + s.account);
  if (s.cpus_per_gpu > 0) args.push_back("--cpus-per-gpu=" + std::to_string(s.cpus_per_gpu));
  std::string comment = s.duration_hint >= 0 ? "orrery:duration=" + std::to_string(s.duration_hint) : "";
  if (!s.comment.empty()) comment += (comment.empty() ? "" : " ") + s.comment;
  if (!comment.empty()) args.push_back("--comment=" + comment);
  if (s.time_limit_s > 0) args.push_back("--time=" + std::to_string((s.time_limit_s + 59) / 60));
  args.push_back("--wrap=sleep " + std::to_string(s.sleep_s));
  ORR_ASSIGN_OR_RETURN(std::string out, Run("sbatch", std::move(args)));
  std::string t = Trim(out);
  t = t.substr(0, t.find(';'));
  uint64_t v;
  if (!ParseU64(t, &v) || v == 0 || v > UINT32_MAX)
    return MakeError("sbatch --parsable printed \"" + t + "\", expected a job id", kExitRuntime);
  return static_cast<uint32_t>(v);
}

Status ExecSlurmClient::Drain(const std::string& node, const std::string& reason) {
  auto r = Run("scontrol", {"update", "NodeName=" + node, "State=DRAIN", "Reason=" + reason});
  if (!r.ok()) return r.error();
  return Status::Ok();
}

Status ExecSlurmClient::Undrain(const std::string& node) {
  auto r = Run("scontrol", {"update", "NodeName=" + node, "State=RESUME"});
  if (!r.ok()) return r.error();
  return Status::Ok();
}

Status ExecSlurmClient::RestartHeld(uint32_t job) {
  std::string id = std::to_string(job);
  auto r = Run("scontrol", {"requeuehold", id});  // a finished job too (JobRequeue / --requeue)
  if (!r.ok()) return r.error();
  return Status::Ok();
}

Status ExecSlurmClient::Cancel(uint32_t job) {
  auto r = Run("scancel", {std::to_string(job)});
  if (!r.ok()) return r.error();
  return Status::Ok();
}

}  // namespace orrery::live
