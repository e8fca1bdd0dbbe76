// libFuzzer target: the acme importer must never crash, whatever the input
// (errors are fine). Parses from memory through LineReader::FromString.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "trace/canonical.h"
#include "trace/import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (bool skip : {false, true}) {
    orrery::ImportOptions o;
    o.skip_bad_rows = skip;
    orrery::ImportReport rep;
    auto t = orrery::ImportTraceFromString(orrery::TraceFormat::kAcme, text, "fuzz", o, &rep);
    if (t.ok()) {
      // Whatever imports must survive the canonical round trip.
      std::string s = orrery::CanonicalTraceToString(*t);
      auto back = orrery::ImportTraceFromString(orrery::TraceFormat::kCanonical, s, "rt", {}, nullptr);
      if (!back.ok() || !orrery::TracesEqual(*t, *back) || orrery::CanonicalTraceToString(*back) != s) __builtin_trap();
    }
  }
  return 0;
}
