#include "slurm/values.h"

#include <algorithm>
#include <charconv>

#include "base/parse.h"

namespace orrery::slurm {

namespace {

// A non-negative integer of at most nine digits (a bound that keeps every product in int64).
std::optional<int64_t> SmallCount(std::string_view s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  int64_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

// Up to three colon-separated counts ("A", "A:B", "A:B:C"): how many, and their values.
struct ColonParts {
  int64_t v[3] = {0, 0, 0};
  size_t n = 0;
};
std::optional<ColonParts> SplitColons(std::string_view s) {
  ColonParts p;
  for (;;) {
    const size_t colon = s.find(':');
    if (p.n == 3) return std::nullopt;
    auto v = SmallCount(s.substr(0, colon));
    if (!v) return std::nullopt;
    p.v[p.n++] = *v;
    if (colon == std::string_view::npos) return p;
    s.remove_prefix(colon + 1);
  }
}

// "H", "H:M" or "H:M:S" after a "D-" prefix, in seconds.
std::optional<int64_t> HoursPart(std::string_view s) {
  auto p = SplitColons(s);
  if (!p) return std::nullopt;
  return p->v[0] * 3600 + p->v[1] * 60 + p->v[2];
}

// Without a day part: M, M:S or H:M:S.
std::optional<int64_t> ClockPart(std::string_view s) {
  auto p = SplitColons(s);
  if (!p) return std::nullopt;
  switch (p->n) {
    case 1: return p->v[0] * 60;
    case 2: return p->v[0] * 60 + p->v[1];
    default: return p->v[0] * 3600 + p->v[1] * 60 + p->v[2];
  }
}

}  // namespace

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::optional<int64_t> ParseDuration(std::string_view s) {
  const std::string l = Lower(s);
  if (l == "unlimited" || l == "infinite" || l == "-1") return kUnlimited;
  const size_t dash = s.find('-');
  if (dash == std::string_view::npos) return ClockPart(s);
  auto days = SmallCount(s.substr(0, dash));
  auto rest = HoursPart(s.substr(dash + 1));
  if (!days || !rest) return std::nullopt;
  return *days * 86400 + *rest;
}

std::optional<bool> ParseBool(std::string_view s) {
  const std::string l = Lower(s);
  if (l == "yes" || l == "true" || l == "1") return true;
  if (l == "no" || l == "false" || l == "0") return false;
  return std::nullopt;
}

namespace {

// Appends every expansion of `name` (brackets resolved left to right) to *out.
Status ExpandOne(std::string_view name, const std::string& prefix, size_t limit, std::vector<std::string>* out) {
  const size_t open = name.find('[');
  if (open == std::string_view::npos) {
    if (name.find(']') != std::string_view::npos) return MakeError("expected every ']' to close a '[', got " + Quote(name));
    if (out->size() >= limit) return MakeError("expected at most " + std::to_string(limit) + " names, got more");
    if (prefix.size() + name.size() > kMaxHostNameBytes)
      return MakeError("expected host names of at most " + std::to_string(kMaxHostNameBytes) + " bytes, got one of " +
                       std::to_string(prefix.size() + name.size()));
    out->push_back(prefix + std::string(name));
    return Status::Ok();
  }
  const size_t close = name.find(']', open);
  if (close == std::string_view::npos) return MakeError("expected a ']' closing the '[', got " + Quote(name));
  const std::string head = prefix + std::string(name.substr(0, open));
  if (head.find(']') != std::string::npos) return MakeError("expected every ']' to close a '[', got " + Quote(name));
  const std::string_view inner = name.substr(open + 1, close - open - 1);
  const std::string_view tail = name.substr(close + 1);
  size_t pos = 0;
  std::string_view item;
  while (pos <= inner.size()) {
    const size_t comma = inner.find(',', pos);
    item = inner.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    pos = comma == std::string_view::npos ? inner.size() + 1 : comma + 1;
    const size_t dash = item.find('-');
    const std::string_view lo_s = item.substr(0, dash);
    const std::string_view hi_s = dash == std::string_view::npos ? lo_s : item.substr(dash + 1);
    auto lo = SmallCount(lo_s), hi = SmallCount(hi_s);
    if (!lo || !hi) return MakeError("expected a number or range N-M inside '[...]', got " + Quote(item));
    if (*hi < *lo) return MakeError("expected a range whose end is not below its start, got " + Quote(item));
    for (int64_t v = *lo; v <= *hi; ++v) {
      std::string num = std::to_string(v);
      if (num.size() < lo_s.size()) num.insert(0, lo_s.size() - num.size(), '0');
      ORR_RETURN_IF_ERROR(ExpandOne(tail, head + num, limit, out));
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<std::string>> ExpandHostList(std::string_view s, size_t limit) {
  std::vector<std::string> out;
  size_t depth = 0, start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i < s.size() && s[i] == '[') ++depth;
    if (i < s.size() && s[i] == ']' && depth > 0) --depth;
    if (i < s.size() && (s[i] != ',' || depth > 0)) continue;
    const std::string_view name = s.substr(start, i - start);
    if (name.empty()) return MakeError("expected a host name between commas, got " + Quote(s));
    if (std::count(name.begin(), name.end(), '[') > 8)
      return MakeError("expected at most 8 bracketed ranges in one host name, got " + Quote(name));
    ORR_RETURN_IF_ERROR(ExpandOne(name, "", limit, &out));
    start = i + 1;
  }
  return out;
}

namespace {

std::optional<int64_t> MemMiB(std::string_view v) {
  int64_t scale = 1;  // MiB
  if (!v.empty()) {
    switch (v.back()) {
      case 'K': case 'k': scale = -1024; break;
      case 'M': case 'm': scale = 1; break;
      case 'G': case 'g': scale = 1024; break;
      case 'T': case 't': scale = 1024 * 1024; break;
      default: scale = 0; break;
    }
    if (scale != 0) v.remove_suffix(1);
    else scale = 1;
  }
  auto n = SmallCount(v);
  if (!n) return std::nullopt;
  if (scale < 0) return (*n + 1023) / 1024;
  return *n * scale;
}

}  // namespace

Result<std::map<std::string, int64_t>> ParseTres(std::string_view s) {
  std::map<std::string, int64_t> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    const size_t comma = s.find(',', pos);
    const std::string_view item = s.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    pos = comma == std::string_view::npos ? s.size() + 1 : comma + 1;
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0)
      return MakeError("expected a TRES as name=count (cpu=64, gres/gpu=8, mem=512G), got " + Quote(item));
    const std::string name = Lower(item.substr(0, eq));
    const std::string_view value = item.substr(eq + 1);
    auto n = name == "mem" ? MemMiB(value) : SmallCount(value);
    if (!n) return MakeError("expected TRES '" + name + "' to be a non-negative count" +
                             std::string(name == "mem" ? " (K, M, G or T suffix)" : "") + ", got " + Quote(value));
    if (!out.emplace(name, *n).second) return MakeError("expected TRES '" + name + "' once, got it twice");
    if (out.size() > 64) return MakeError("expected at most 64 TRES in one list, got more");
  }
  return out;
}

}  // namespace orrery::slurm
