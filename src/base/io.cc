#include "base/io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace orrery {

namespace {
constexpr size_t kGzBlock = 1 << 20;      // per gzread: >= 2x gzbuffer, so zlib inflates straight into buf_
constexpr size_t kPlainBlock = 256 << 10;  // per read(2): fits L2 with the parsed state
}  // namespace

Result<std::unique_ptr<LineReader>> LineReader::Open(const std::string& path) {
  std::unique_ptr<LineReader> r(new LineReader());
  r->path_ = path;
  int fd = 0;
  if (path != "-") {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return MakeError(path + ": cannot open: " + std::strerror(errno));
    // Plain regular files bypass zlib (which would copy through its own buffers).
    unsigned char magic[2] = {0, 0};
    const bool gzip = ::pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    struct stat st;
    if (!gzip && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
      r->fd_ = fd;
      size_t want = static_cast<size_t>(st.st_size) + 1;
      if (want < 4096) want = 4096;
      if (want > kPlainBlock) want = kPlainBlock;
      r->block_ = want;
      r->Reserve(want);
#ifdef POSIX_FADV_SEQUENTIAL
      ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
      return r;
    }
  }
  gzFile gz = gzdopen(path == "-" ? dup(0) : fd, "rb");
  if (gz == nullptr) {
    int e = errno;
    if (path != "-") ::close(fd);
    return MakeError(path + ": cannot open: " + std::strerror(e));
  }
  gzbuffer(gz, 256 * 1024);
  r->gz_ = gz;
  r->block_ = kGzBlock;
  r->Reserve(kGzBlock * 2);
  return r;
}

std::unique_ptr<LineReader> LineReader::FromString(std::string_view data, std::string name) {
  std::unique_ptr<LineReader> r(new LineReader());
  r->path_ = std::move(name);
  r->Reserve(data.size() + 1);  // +1: data() is never null
  if (!data.empty()) std::memcpy(r->buf_.get(), data.data(), data.size());
  r->end_ = data.size();
  r->bytes_ = data.size();
  r->eof_ = true;
  return r;
}

LineReader::~LineReader() {
  if (gz_ != nullptr) gzclose(static_cast<gzFile>(gz_));
  if (fd_ >= 0) ::close(fd_);
}

void LineReader::Reserve(size_t cap) {
  std::unique_ptr<char[]> nb(new char[cap]);
  if (end_ > 0) std::memcpy(nb.get(), buf_.get(), end_);
  buf_ = std::move(nb);
  cap_ = cap;
}

bool LineReader::Fill() {
  if (eof_) return false;
  // Move the unread tail to the front; grow if one line fills most of the buffer.
  size_t tail = end_ - begin_;
  if (begin_ > 0) {
    std::memmove(buf_.get(), buf_.get() + begin_, tail);
    begin_ = 0;
    end_ = tail;
  }
  if (cap_ - end_ < block_ / 2 || (gz_ != nullptr && cap_ - end_ < block_)) Reserve(cap_ * 2);
  long n;
  if (fd_ >= 0) {
    do {
      n = static_cast<long>(::read(fd_, buf_.get() + end_, cap_ - end_));
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
      error_ = path_ + ": read error: " + std::strerror(errno);
      eof_ = true;
      return false;
    }
  } else {
    n = gzread(static_cast<gzFile>(gz_), buf_.get() + end_, static_cast<unsigned>(cap_ - end_));
    if (n < 0) {
      int errnum = 0;
      const char* msg = gzerror(static_cast<gzFile>(gz_), &errnum);
      error_ = path_ + ": read error: " + (msg ? msg : "unknown");
      eof_ = true;
      return false;
    }
  }
  if (n == 0) {
    eof_ = true;
    return false;
  }
  if (bytes_ < kBinaryProbe) {  // the first bytes of a file: text or binary?
    const size_t probe = std::min<size_t>(static_cast<size_t>(n), static_cast<size_t>(kBinaryProbe - bytes_));
    const void* nul = std::memchr(buf_.get() + end_, '\0', probe);
    if (nul != nullptr) {
      const uint64_t at = bytes_ + static_cast<uint64_t>(static_cast<const char*>(nul) - (buf_.get() + end_));
      error_ = path_ + ": byte offset " + std::to_string(at) +
               ": expected text, found a NUL byte (a binary file, not a trace, config or log)";
      eof_ = true;
      return false;
    }
  }
  bytes_ += static_cast<uint64_t>(n);
  end_ += static_cast<size_t>(n);
  return true;
}

bool LineReader::NextSlow(std::string_view* line) {
  for (;;) {
    const char* start = buf_.get() + begin_;
    const void* nl = std::memchr(start, '\n', end_ - begin_);
    if (nl != nullptr) {
      size_t len = static_cast<const char*>(nl) - start;
      begin_ += len + 1;
      if (len > 0 && start[len - 1] == '\r') --len;
      *line = std::string_view(start, len);
      ++line_no_;
      return true;
    }
    if (!Fill()) {
      if (!error_.empty()) return false;
      if (end_ > begin_) {  // last line without '\n'
        const char* s = buf_.get() + begin_;
        size_t len = end_ - begin_;
        begin_ = end_;
        if (len > 0 && s[len - 1] == '\r') --len;
        *line = std::string_view(s, len);
        ++line_no_;
        return true;
      }
      return false;
    }
  }
}

Result<std::unique_ptr<AtomicFile>> AtomicFile::Create(const std::string& path) {
  std::unique_ptr<AtomicFile> f(new AtomicFile());
  f->path_ = path;
  if (path == "-") {
    f->to_stdout_ = true;
    return f;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return MakeError(path + ": cannot write: it is a directory");
    if (!S_ISREG(st.st_mode)) {
      // A device or FIFO (/dev/null, a pipe): write straight into it. Renaming a temp file
      // over it would replace the device node itself.
      f->special_ = true;
      f->f_ = std::fopen(path.c_str(), "wb");
      if (f->f_ == nullptr) return MakeError(path + ": cannot open for writing: " + std::strerror(errno));
      return f;
    }
  }
  f->tmp_ = path + ".tmp." + std::to_string(getpid());
  f->f_ = std::fopen(f->tmp_.c_str(), "wb");
  if (f->f_ == nullptr) {
    return MakeError(path + ": cannot create: " + std::strerror(errno));
  }
  return f;
}

AtomicFile::~AtomicFile() {
  if (f_ != nullptr) std::fclose(f_);
  if (!committed_ && !to_stdout_ && !tmp_.empty()) std::remove(tmp_.c_str());
}

void AtomicFile::Flush() {
  if (to_stdout_) return;  // stdout output is written whole on Commit
  if (f_ != nullptr && !buf_.empty()) {
    if (std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size()) failed_ = true;
  }
  buf_.clear();
}

Status AtomicFile::Commit() {
  if (to_stdout_) {
    std::fwrite(buf_.data(), 1, buf_.size(), stdout);
    std::fflush(stdout);
    committed_ = true;
    return Status::Ok();
  }
  Flush();
  if (std::fflush(f_) != 0 || failed_) return MakeError(path_ + ": write failed: " + std::strerror(errno), kExitRuntime);
  if (special_) {
    std::fclose(f_);
    f_ = nullptr;
    committed_ = true;
    return Status::Ok();
  }
  fsync(fileno(f_));
  std::fclose(f_);
  f_ = nullptr;
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    return MakeError(path_ + ": cannot rename temp file into place: " + std::strerror(errno), kExitRuntime);
  }
  committed_ = true;
  return Status::Ok();
}

Result<std::string> ReadFile(const std::string& path) {
  ORR_ASSIGN_OR_RETURN(auto r, LineReader::Open(path));
  std::string out;
  std::string_view line;
  while (r->Next(&line)) {
    out.append(line);
    out.push_back('\n');
  }
  if (!r->error().empty()) return MakeError(r->error());
  return out;
}

Status WriteFileAtomic(const std::string& path, std::string_view content) {
  ORR_ASSIGN_OR_RETURN(auto f, AtomicFile::Create(path));
  f->Write(content);
  return f->Commit();
}

}  // namespace orrery
