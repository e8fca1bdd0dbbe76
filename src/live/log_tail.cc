#include "live/log_tail.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace orrery::live {

namespace {

Error IoError(const std::string& what, const std::string& path) {
  return MakeError("log " + path + ": " + what + ": " + std::strerror(errno), kExitRuntime);
}

// Reads up to n bytes at `offset` into *buf (resized to what was read).
Status PreadAll(int fd, uint64_t offset, size_t n, std::string* buf, const std::string& path) {
  buf->resize(n);
  size_t got = 0;
  while (got < n) {
    ssize_t k = pread(fd, buf->data() + got, n - got, static_cast<off_t>(offset + got));
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return IoError("read", path);
    if (k == 0) break;  // the file shrank meanwhile: the next Read sees it
    got += static_cast<size_t>(k);
  }
  buf->resize(got);
  return Status::Ok();
}

}  // namespace

LogTail::LogTail(std::string path, TailOptions options) : path_(std::move(path)), o_(options) {
  if (o_.max_bytes == 0) o_.max_bytes = 1;
}

LogTail::~LogTail() { Close(); }

LogTail::LogTail(LogTail&& other) noexcept { *this = std::move(other); }

LogTail& LogTail::operator=(LogTail&& other) noexcept {
  if (this == &other) return *this;
  Close();
  path_ = std::move(other.path_);
  o_ = other.o_;
  fd_ = other.fd_;
  dev_ = other.dev_;
  ino_ = other.ino_;
  offset_ = other.offset_;
  resync_ = other.resync_;
  split_ = std::move(other.split_);
  buf_ = std::move(other.buf_);
  other.fd_ = -1;
  return *this;
}

void LogTail::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  offset_ = 0;
  resync_ = false;
  split_ = logs::LineSplitter();
}

void LogTail::Reset() { Close(); }

Status LogTail::OpenPath() {
  int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return IoError("open", path_);
  struct stat fst;
  if (fstat(fd, &fst) != 0 || !S_ISREG(fst.st_mode)) {
    close(fd);
    return MakeError("log " + path_ + ": not a regular file", kExitRuntime);
  }
  fd_ = fd;
  dev_ = fst.st_dev;
  ino_ = fst.st_ino;
  offset_ = 0;
  resync_ = false;
  split_ = logs::LineSplitter();
  return Status::Ok();
}

// Reads at most `budget` new bytes of the open file and hands out its complete lines.
Status LogTail::ReadOpen(size_t budget, const LineSink& sink, TailRead* r) {
  if (budget == 0) return Status::Ok();
  struct stat st;
  if (fstat(fd_, &st) != 0) return IoError("stat", path_);
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size < offset_) {  // truncated in place
    r->truncated = true;
    offset_ = 0;
    resync_ = false;
    split_ = logs::LineSplitter();
  }
  uint64_t avail = size - offset_;
  if (avail == 0) return Status::Ok();
  uint64_t from = offset_;
  if (avail > budget && o_.newest_only) {
    const uint64_t skip = avail - budget;
    r->skipped += skip;
    offset_ += skip;
    avail = budget;
    resync_ = true;
    split_ = logs::LineSplitter();  // the line it held continued in the skipped bytes
    from = offset_ - 1;             // one byte more: is offset_ a line start?
  } else if (avail > budget) {
    r->more = true;
    avail = budget;
  } else if (resync_ && offset_ > 0) {
    from = offset_ - 1;
  }
  const uint64_t want = avail + (offset_ - from);
  ORR_RETURN_IF_ERROR(PreadAll(fd_, from, static_cast<size_t>(want), &buf_, path_));
  const uint64_t got_new = buf_.size() - std::min<uint64_t>(buf_.size(), offset_ - from);
  offset_ += got_new;
  r->bytes += got_new;
  std::string_view view(buf_);
  if (resync_) {
    const size_t nl = view.find_first_of("\n\r");
    if (nl == std::string_view::npos) return Status::Ok();  // still inside one long line
    view.remove_prefix(nl + 1);
    resync_ = false;
  }
  split_.Feed(view, [&](std::string_view line) {
    ++r->lines;
    sink(line);
  });
  return Status::Ok();
}

Result<TailRead> LogTail::Read(const LineSink& sink, size_t budget) {
  TailRead r;
  const size_t max = std::min(o_.max_bytes, std::max<size_t>(1, budget));
  struct stat st;
  if (stat(path_.c_str(), &st) != 0) {
    if (errno != ENOENT && errno != ENOTDIR) return IoError("stat", path_);
    if (fd_ < 0) return r;  // not yet
    r.found = true;         // unlinked while open: the job may still write to it
    ORR_RETURN_IF_ERROR(ReadOpen(max, sink, &r));
    return r;
  }
  if (!S_ISREG(st.st_mode)) return MakeError("log " + path_ + ": not a regular file", kExitRuntime);
  r.found = true;
  if (fd_ >= 0 && (st.st_dev != dev_ || st.st_ino != ino_)) {
    // Rotated: what was appended to the old file before the switch, then its last line.
    ORR_RETURN_IF_ERROR(ReadOpen(max, sink, &r));
    split_.Finish([&](std::string_view line) {
      ++r.lines;
      sink(line);
    });
    Close();
    r.rotated = true;
  }
  if (fd_ < 0) ORR_RETURN_IF_ERROR(OpenPath());
  ORR_RETURN_IF_ERROR(ReadOpen(max - std::min(max, r.bytes), sink, &r));
  return r;
}

Result<std::string> ReadLastLines(const std::string& path, size_t max_bytes) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return IoError("open", path);
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return MakeError("log " + path + ": not a regular file", kExitRuntime);
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const uint64_t from = size > max_bytes ? size - max_bytes - 1 : 0;  // one byte more: a line start?
  std::string buf;
  Status s = PreadAll(fd, from, static_cast<size_t>(size - from), &buf, path);
  close(fd);
  ORR_RETURN_IF_ERROR(s);
  if (from > 0) {
    const size_t nl = buf.find('\n');
    buf.erase(0, nl == std::string::npos ? buf.size() : nl + 1);
  }
  return buf;
}

}  // namespace orrery::live
