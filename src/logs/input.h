// Reading logs: a file, a gzip file (detected by its magic bytes, through zlib) or "-" for
// standard input, in chunks, so that a tracker can stream and a diagnosis can keep only the
// tail of a multi-gigabyte output.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace orrery::logs {

// Calls sink(chunk) for consecutive chunks of the decompressed bytes of `path`.
Status ForEachChunk(const std::string& path, const std::function<void(std::string_view)>& sink);

// The last max_bytes of `path` (0: everything), starting at a line boundary when cut.
Result<std::string> ReadTail(const std::string& path, size_t max_bytes);

}  // namespace orrery::logs
