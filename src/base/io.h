// File input and output.
//  * LineReader streams lines from a plain or gzip file (gzip magic decides), in
//    blocks, without copying each line: plain files with read(2) into a buffer sized
//    to the file (at most 256 KiB, so it stays in L2), gzip files through zlib.
//  * AtomicFile writes to "<path>.tmp.<pid>" and renames over <path> on Commit(),
//    so a reader never sees a half-written output and a failed run leaves the old
//    file untouched. "-" means standard output (written on Commit()).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace orrery {

class LineReader {
 public:
  static Result<std::unique_ptr<LineReader>> Open(const std::string& path);
  // Reads lines from an in-memory copy of `data` (tests, fuzzers, in-memory parsing);
  // `name` stands in for the path in messages. Not gzip-aware.
  static std::unique_ptr<LineReader> FromString(std::string_view data, std::string name = "<memory>");
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // Reads the next line (without '\n' and a trailing '\r'). Returns false at end of
  // input or on a read error (check error()). The view stays valid until the next call.
  bool Next(std::string_view* line) {
    const char* start = buf_.get() + begin_;
    const void* nl = end_ > begin_ ? std::memchr(start, '\n', end_ - begin_) : nullptr;
    if (nl == nullptr) return NextSlow(line);
    size_t len = static_cast<size_t>(static_cast<const char*>(nl) - start);
    begin_ += len + 1;
    if (len > 0 && start[len - 1] == '\r') --len;
    *line = std::string_view(start, len);
    ++line_no_;
    return true;
  }
  // 1-based number of the line last returned.
  uint64_t line_number() const { return line_no_; }
  const std::string& path() const { return path_; }
  // Empty unless reading failed (corrupt gzip stream, I/O error), or a file opened by path
  // has a NUL byte in its first kBinaryProbe bytes (after gunzip): binary data, refused with
  // the byte offset and without its bytes (the rule git uses to tell text from binary).
  static constexpr uint64_t kBinaryProbe = 8000;
  const std::string& error() const { return error_; }
  uint64_t bytes_read() const { return bytes_; }

 private:
  LineReader() = default;
  bool Fill();
  bool NextSlow(std::string_view* line);  // refills the buffer; the last line
  void Reserve(size_t cap);  // grows buf_ to cap bytes, keeping [0, end_)
  void* gz_ = nullptr;        // gzip (or stdin) input via zlib
  int fd_ = -1;               // plain file input via read(2)
  std::string path_;
  std::unique_ptr<char[]> buf_;  // not value-initialised: no memset of a fresh block
  size_t cap_ = 0;
  size_t block_ = 0;             // bytes asked for per read (at least)
  size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  uint64_t line_no_ = 0;
  uint64_t bytes_ = 0;
  std::string error_;
};

class AtomicFile {
 public:
  static Result<std::unique_ptr<AtomicFile>> Create(const std::string& path);
  ~AtomicFile();  // removes the temp file unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void Write(std::string_view s) {
    buf_.append(s.data(), s.size());
    if (buf_.size() >= (1u << 20)) Flush();
  }
  void Put(char c) {
    buf_.push_back(c);
  }
  std::string& buffer() { return buf_; }  // append directly, then MaybeFlush()
  void MaybeFlush() {
    if (buf_.size() >= (1u << 20)) Flush();
  }
  // Flushes, fsyncs and renames into place. After a failure the target is untouched.
  Status Commit();
  const std::string& path() const { return path_; }

 private:
  AtomicFile() = default;
  void Flush();
  std::string path_, tmp_;
  FILE* f_ = nullptr;
  bool to_stdout_ = false, committed_ = false, failed_ = false;
  bool special_ = false;  // target is a device or FIFO: written in place, never renamed over
  std::string buf_;
};

// Reads a whole (plain or gzip) file into memory.
Result<std::string> ReadFile(const std::string& path);
// Writes a whole file atomically.
Status WriteFileAtomic(const std::string& path, std::string_view content);

}  // namespace orrery
