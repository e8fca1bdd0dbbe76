// UTF-8 validity, the one rule every TOML reader applies before handing text to toml11:
// Debian's toml11 (3.7) overruns a buffer while reporting invalid UTF-8 inside a literal
// string (found by cluster_config_fuzz, diagnose_fuzz and inspect_fuzz), so no reader may
// pass it such text.
#pragma once

#include <cstddef>
#include <string_view>

namespace orrery {

// RFC 3629's table: the second byte's range after a lead byte excludes overlong forms
// (C0, C1; E0 80..9F; F0 80..8F), UTF-16 surrogates (ED A0..BF) and code points above
// U+10FFFF (F4 90..BF; F5..F7). The continuation bit pattern is checked by the caller.
inline bool WellFormedLead(unsigned char lead, unsigned char second) {
  switch (lead) {
    case 0xE0: return second >= 0xA0;
    case 0xED: return second <= 0x9F;
    case 0xF0: return second >= 0x90;
    case 0xF4: return second <= 0x8F;
    default: return lead >= 0xC2 && lead <= 0xF4;
  }
}

// Offset of the first byte that is not part of well-formed UTF-8 (or is NUL), or npos.
inline size_t FirstInvalidUtf8(std::string_view text) {
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const unsigned char b = static_cast<unsigned char>(text[i]);
    const size_t len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    bool ok = len != 0 && i + len <= n && b != 0;
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    if (ok && len > 1) ok = WellFormedLead(b, static_cast<unsigned char>(text[i + 1]));
    if (!ok) return i;
    i += len;
  }
  return std::string_view::npos;
}

}  // namespace orrery
