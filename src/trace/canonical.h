// Orrery's canonical trace format (docs/formats/trace.md): CSV with '#' metadata lines,
// one job per row, lossless for model::Job. import → canonical → import is identity.
#pragma once

#include <string>

#include "base/result.h"
#include "model/trace.h"
#include "trace/import.h"

namespace orrery {

// Writes atomically (temp file + rename). "-" writes to stdout.
Status WriteCanonicalTrace(const Trace& trace, const std::string& path);
// Serialises into a string (tests, small traces).
std::string CanonicalTraceToString(const Trace& trace);
// Reads a canonical trace; the header and metadata lines are required.
Result<Trace> ReadCanonicalTrace(const std::string& path, const ImportOptions& options, ImportReport* report);

// Field-by-field equality of two traces (jobs, string tables, source ids, epoch, origin).
// On a difference returns false and, if `diff` is set, describes the first one.
bool TracesEqual(const Trace& a, const Trace& b, std::string* diff = nullptr);

}  // namespace orrery
