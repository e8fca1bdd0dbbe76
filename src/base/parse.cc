#include "base/parse.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

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
bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}
}  // namespace

bool ParseDateTime(std::string_view s, int64_t* out) {
  int y, mo, d, h = 0, mi = 0, se = 0;
  if (s.size() != 19 && s.size() != 10) return false;
  if (!Digits(s, 0, 4, &y) || s[4] != '-' || !Digits(s, 5, 2, &mo) || s[7] != '-' || !Digits(s, 8, 2, &d))
    return false;
  if (s.size() == 19) {
    if ((s[10] != ' ' && s[10] != 'T') || !Digits(s, 11, 2, &h) || s[13] != ':' || !Digits(s, 14, 2, &mi) ||
        s[16] != ':' || !Digits(s, 17, 2, &se))
      return false;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) return false;
  *out = DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 86400 + h * 3600 + mi * 60 + se;
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
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02u %02lld:%02lld:%02lld", static_cast<long long>(y), m, d,
                static_cast<long long>(rem / 3600), static_cast<long long>((rem / 60) % 60),
                static_cast<long long>(rem % 60));
  return buf;
}

}  // namespace orrery
