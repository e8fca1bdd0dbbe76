#include "base/parse.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

#include "base/utf8.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace orrery {

namespace {
// General path for lines that contain a '"' (RFC 4180 quoting).
bool SplitLineQuoted(std::string_view line, char delim, std::vector<Field>* out, std::vector<std::string>* scratch,
                     uint32_t* bad_col) {
  out->clear();
  size_t i = 0, n = line.size();
  size_t scratch_used = 0;
  // Views into `scratch` must stay valid: size it before taking any (one string per
  // possible quoted field), so it never reallocates while fields point into it.
  if (std::memchr(line.data(), '"', n) != nullptr) {
    size_t quotes = static_cast<size_t>(std::count(line.begin(), line.end(), '"'));
    if (scratch->size() < quotes / 2 + 1) scratch->resize(quotes / 2 + 1);
  }
  for (;;) {
    if (i < n && line[i] == '"') {
      size_t start = i;
      std::string val;
      ++i;
      for (;;) {
        if (i >= n) {
          *bad_col = static_cast<uint32_t>(start + 1);
          return false;
        }
        if (line[i] == '"') {
          if (i + 1 < n && line[i + 1] == '"') {
            val.push_back('"');
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        val.push_back(line[i++]);
      }
      if (scratch->size() <= scratch_used) scratch->emplace_back();
      (*scratch)[scratch_used] = std::move(val);
      out->push_back(Field{(*scratch)[scratch_used], static_cast<uint32_t>(start + 1)});
      ++scratch_used;
      // skip to delimiter
      while (i < n && line[i] != delim) ++i;
    } else {
      size_t start = i;
      const void* p = i < n ? std::memchr(line.data() + i, delim, n - i) : nullptr;
      size_t end = p ? static_cast<size_t>(static_cast<const char*>(p) - line.data()) : n;
      out->push_back(Field{line.substr(start, end - start), static_cast<uint32_t>(start + 1)});
      i = end;
    }
    if (i >= n) break;
    ++i;  // skip delimiter
    if (i == n) {  // trailing delimiter => empty last field
      out->push_back(Field{std::string_view(), static_cast<uint32_t>(n + 1)});
      break;
    }
  }
  return true;
}
}  // namespace

bool SplitLine(std::string_view line, char delim, std::vector<Field>* out, std::vector<std::string>* scratch,
               uint32_t* bad_col) {
  // Fast path for quote-free lines: one pass that finds every delimiter (16 bytes at a
  // time with SSE2 compare + movemask); any '"' hands the line to the general path.
  // Quote-free, a line splits into count(delim) + 1 fields, each at its start column.
  if (delim == '"') return SplitLineQuoted(line, delim, out, scratch, bad_col);
  out->clear();
  const char* p = line.data();
  const size_t n = line.size();
  size_t start = 0, i = 0;
#if defined(__SSE2__)
  const __m128i vd = _mm_set1_epi8(delim), vq = _mm_set1_epi8('"');
  for (; i + 16 <= n; i += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    if (_mm_movemask_epi8(_mm_cmpeq_epi8(x, vq)) != 0) return SplitLineQuoted(line, delim, out, scratch, bad_col);
    unsigned m = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, vd)));
    while (m != 0) {
      const size_t pos = i + static_cast<size_t>(__builtin_ctz(m));
      out->push_back(Field{std::string_view(p + start, pos - start), static_cast<uint32_t>(start + 1)});
      start = pos + 1;
      m &= m - 1;
    }
  }
#endif
  for (; i < n; ++i) {
    const char c = p[i];
    if (c == '"') return SplitLineQuoted(line, delim, out, scratch, bad_col);
    if (c == delim) {
      out->push_back(Field{std::string_view(p + start, i - start), static_cast<uint32_t>(start + 1)});
      start = i + 1;
    }
  }
  out->push_back(Field{std::string_view(p + start, n - start), static_cast<uint32_t>(start + 1)});
  return true;
}

void SplitWhitespace(std::string_view line, std::vector<Field>* out) {
  out->clear();
  size_t i = 0, n = line.size();
#if defined(__SSE2__)
  // 16 bytes at a time: a bit mask of non-blank bytes; field starts and ends are its
  // 0->1 and 1->0 transitions (carrying the last bit of the previous block).
  {
    const char* p = line.data();
    const __m128i vs = _mm_set1_epi8(' '), vt = _mm_set1_epi8('\t');
    unsigned in = 0;  // 1 when the previous byte was non-blank
    size_t s = 0;
    for (; i + 16 <= n; i += 16) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      const unsigned blank =
          static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(x, vs), _mm_cmpeq_epi8(x, vt))));
      const unsigned nb = ~blank & 0xFFFFu;
      const unsigned prev = ((nb << 1) | in) & 0xFFFFu;
      unsigned ev = (nb ^ prev) & 0xFFFFu;  // starts (nb & ~prev) and ends (~nb & prev), alternating
      while (ev != 0) {
        const size_t pos = i + static_cast<size_t>(__builtin_ctz(ev));
        if (p[pos] != ' ' && p[pos] != '\t') {
          s = pos;
        } else {
          out->push_back(Field{line.substr(s, pos - s), static_cast<uint32_t>(s + 1)});
        }
        ev &= ev - 1;
      }
      in = nb >> 15;
    }
    if (in) {  // a field runs into the scalar tail
      while (i < n && line[i] != ' ' && line[i] != '\t') ++i;
      out->push_back(Field{line.substr(s, i - s), static_cast<uint32_t>(s + 1)});
    }
  }
#endif
  while (i < n) {
    while (i < n && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i >= n) break;
    size_t s = i;
    while (i < n && line[i] != ' ' && line[i] != '\t') ++i;
    out->push_back(Field{line.substr(s, i - s), static_cast<uint32_t>(s + 1)});
  }
}

bool ParseI64(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (*b == '+') ++b;
  auto r = std::from_chars(b, e, *out);
  return r.ec == std::errc() && r.ptr == e;
}

bool ParseI64Lenient(std::string_view s, int64_t* out) {
  if (ParseI64(s, out)) return true;
  size_t dot = s.find('.');
  if (dot == std::string_view::npos || dot == 0) return false;
  for (size_t i = dot + 1; i < s.size(); ++i)
    if (s[i] != '0') return false;
  return ParseI64(s.substr(0, dot), out);
}

std::string Quote(std::string_view v) {
  const bool cut = v.size() > 60;
  if (cut) v = v.substr(0, 57);
  std::string s = "\"";
  for (size_t i = 0; i < v.size();) {
    const size_t bad = FirstInvalidUtf8(v.substr(i));
    const size_t good_end = bad == std::string_view::npos ? v.size() : i + bad;
    for (; i < good_end; ++i) {  // well-formed UTF-8: only control bytes are escaped
      const auto c = static_cast<unsigned char>(v[i]);
      if (c < 0x20 || c == 0x7f) s += fmt::format("\\x{:02x}", c);
      else s += v[i];
    }
    if (i < v.size()) s += fmt::format("\\x{:02x}", static_cast<unsigned char>(v[i++]));
  }
  return s + (cut ? "...\"" : "\"");
}

bool ParseF64(std::string_view s, double* out) {
  if (s.empty()) return false;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (*b == '+') ++b;
  auto r = std::from_chars(b, e, *out);
  return r.ec == std::errc() && r.ptr == e && std::isfinite(*out);
}

namespace {
// Days from 1970-01-01 to y-m-d (proleptic Gregorian), Howard Hinnant's algorithm.
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}
}  // namespace

bool ParseDateTime(std::string_view s, int64_t* out) {
  if (s.size() != 19 && s.size() != 10) return false;
  const unsigned char* p = reinterpret_cast<const unsigned char*>(s.data());
  // Digit positions of "YYYY-MM-DD HH:MM:SS"; all checked at once.
  auto d = [&](size_t i) { return static_cast<unsigned>(p[i]) - '0'; };
  auto nd = [&](size_t i) { return d(i) > 9; };  // not a digit
  // Rows in a trace mostly share the date of the previous row: remember the last valid
  // "YYYY-MM-DD" and its day number (its validity depends on those 10 bytes only).
  struct DateCache {
    char ymd[10];
    int64_t days;
    bool valid;
  };
  thread_local DateCache cache{{}, 0, false};
  int64_t days;
  if (cache.valid && std::memcmp(cache.ymd, p, 10) == 0) {
    days = cache.days;
  } else {
    bool bad = nd(0) | nd(1) | nd(2) | nd(3) | nd(5) | nd(6) | nd(8) | nd(9);
    if (bad || p[4] != '-' || p[7] != '-') return false;
    const int y = static_cast<int>(d(0) * 1000 + d(1) * 100 + d(2) * 10 + d(3));
    const int mo = static_cast<int>(d(5) * 10 + d(6));
    const int dd = static_cast<int>(d(8) * 10 + d(9));
    if (mo < 1 || mo > 12 || dd < 1 || dd > 31) return false;
    days = DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(dd));
    std::memcpy(cache.ymd, p, 10);
    cache.days = days;
    cache.valid = true;
  }
  int h = 0, mi = 0, se = 0;
  if (s.size() == 19) {
    const bool bad = nd(11) | nd(12) | nd(14) | nd(15) | nd(17) | nd(18);
    if ((p[10] != ' ' && p[10] != 'T') || bad || p[13] != ':' || p[16] != ':') return false;
    h = static_cast<int>(d(11) * 10 + d(12));
    mi = static_cast<int>(d(14) * 10 + d(15));
    se = static_cast<int>(d(17) * 10 + d(18));
  }
  if (h > 23 || mi > 59 || se > 60) return false;
  *out = days * 86400 + h * 3600 + mi * 60 + se;
  return true;
}

std::string FormatDateTime(int64_t t) {
  int64_t days = t >= 0 ? t / 86400 : (t - 86399) / 86400;
  int64_t rem = t - days * 86400;
  // civil_from_days
  int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp + (mp < 10 ? 3 : -9);
  y += (m <= 2);
  char buf[64];  // the widest int64 fields the format can print (the compiler checks it)
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02u %02lld:%02lld:%02lld", static_cast<long long>(y), m, d,
                static_cast<long long>(rem / 3600), static_cast<long long>((rem / 60) % 60),
                static_cast<long long>(rem % 60));
  return buf;
}

bool SpellsName(std::string_view given, std::string_view name) {
  if (name.empty() || given.size() != name.size()) return false;
  for (size_t i = 0; i < given.size(); ++i) {
    char g = static_cast<char>(std::tolower(static_cast<unsigned char>(given[i])));
    if (g == '_') g = '-';
    if (g != std::tolower(static_cast<unsigned char>(name[i]))) return false;
  }
  return true;
}

}  // namespace orrery
