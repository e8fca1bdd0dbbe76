// Shared body of the importer fuzz targets (import_<format>_fuzz.cc): the importer must
// never crash, whatever the input (errors are fine), with and without --skip-bad-rows,
// and whatever imports must survive the canonical round trip unchanged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "trace/canonical.h"
#include "trace/import.h"

namespace orrery {

inline int FuzzImport(TraceFormat format, const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (bool skip : {false, true}) {
    ImportOptions o;
    o.skip_bad_rows = skip;
    ImportReport rep;
    auto t = ImportTraceFromString(format, text, "fuzz", o, &rep);
    if (!t.ok()) continue;
    std::string s = CanonicalTraceToString(*t);
    auto back = ImportTraceFromString(TraceFormat::kCanonical, s, "rt", {}, nullptr);
    if (!back.ok() || !TracesEqual(*t, *back) || CanonicalTraceToString(*back) != s) __builtin_trap();
  }
  return 0;
}

}  // namespace orrery
