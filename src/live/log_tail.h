// A bounded tail of a job's output file (`tail -F` with a byte budget), for the daemon's
// readers of running jobs' logs (the progress tracker; a failed job's last lines).
//
//  * Opened by path; a file that does not exist yet is "not yet" (found = false), never an
//    error: Slurm creates StdOut when the job starts, and the daemon may look earlier.
//  * Each Read() reads only bytes it has not read before, at most max_bytes, and hands out
//    complete lines (a line cut by the budget or still being written is kept for the next
//    Read; lines longer than logs::kMaxLineBytes are cut there).
//  * newest_only: a backlog larger than max_bytes (a first look at a long log, or a log that
//    grows faster than it is read) is skipped but for its newest max_bytes, from the first
//    line boundary in them (counted in TailRead::skipped). Progress lives in the newest lines.
//  * Truncation (the file is shorter than what was read: copytruncate, or Slurm's requeue
//    reopening StdOut with --open-mode=truncate) starts again at byte 0. Rotation (the path
//    names another file: logrotate's rename + create) finishes the old file (its last
//    bytes, up to the budget, and its incomplete last line) and continues with the new one
//    from byte 0. A file unlinked while open keeps being read while nothing replaces it.
//    (A file truncated and then grown past the old position between two reads looks like a
//    continuation: only sizes and inodes are compared, never contents.)
// Only regular files are read (a FIFO or a device would block or never end).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "logs/lines.h"

namespace orrery::live {

struct TailOptions {
  size_t max_bytes = 64 * 1024;  // per Read (1..64 MiB)
  bool newest_only = true;
};

// What one Read() did.
struct TailRead {
  bool found = false;      // the file exists (false: nothing to read yet)
  size_t bytes = 0;        // bytes read by this call
  uint64_t skipped = 0;    // backlog bytes skipped unread (newest_only)
  size_t lines = 0;        // complete lines handed to the sink
  bool truncated = false;  // the file shrank: read again from byte 0
  bool rotated = false;    // the path names a new file: the old one was finished
  bool more = false;       // bytes left unread beyond the budget (newest_only = false)
};

class LogTail {
 public:
  using LineSink = std::function<void(std::string_view line)>;

  explicit LogTail(std::string path, TailOptions options = {});
  ~LogTail();
  LogTail(LogTail&& other) noexcept;
  LogTail& operator=(LogTail&& other) noexcept;
  LogTail(const LogTail&) = delete;
  LogTail& operator=(const LogTail&) = delete;

  // Reads the new bytes (at most max_bytes, and at most `budget`: a caller's share of a larger
  // budget) and calls `sink` for each complete line. An error (permission denied, not a
  // regular file, an I/O error) leaves the position as it was; the next Read tries again.
  Result<TailRead> Read(const LineSink& sink, size_t budget = SIZE_MAX);
  // Forgets the position and the file (the next Read opens the path afresh).
  void Reset();

  const std::string& path() const { return path_; }
  uint64_t offset() const { return offset_; }  // bytes of the open file consumed

 private:
  Status OpenPath();
  Status ReadOpen(size_t budget, const LineSink& sink, TailRead* r);
  void Close();

  std::string path_;
  TailOptions o_;
  int fd_ = -1;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  uint64_t offset_ = 0;
  bool resync_ = false;  // after a skip: drop bytes up to the first line boundary
  logs::LineSplitter split_;
  std::string buf_;
};

// The last complete lines within the last max_bytes of `path` (the whole file when it is
// smaller), e.g. a failed job's log tail; an error when the file cannot be read.
Result<std::string> ReadLastLines(const std::string& path, size_t max_bytes);

}  // namespace orrery::live
