#include "base/io.h"

#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>

namespace orrery {

namespace {
constexpr size_t kBlock = 1 << 20;
}

Result<std::unique_ptr<LineReader>> LineReader::Open(const std::string& path) {
  std::unique_ptr<LineReader> r(new LineReader());
  r->path_ = path;
  gzFile gz = path == "-" ? gzdopen(dup(0), "rb") : gzopen(path.c_str(), "rb");
  if (gz == nullptr) {
    return MakeError(path + ": cannot open: " + std::strerror(errno));
  }
  gzbuffer(gz, 256 * 1024);
  r->gz_ = gz;
  r->buf_.resize(kBlock * 2);
  return r;
}

std::unique_ptr<LineReader> LineReader::FromString(std::string_view data, std::string name) {
  std::unique_ptr<LineReader> r(new LineReader());
  r->path_ = std::move(name);
  r->buf_.resize(data.size() + 1);  // +1: data() is never null
  if (!data.empty()) std::memcpy(r->buf_.data(), data.data(), data.size());
  r->end_ = data.size();
  r->bytes_ = data.size();
  r->eof_ = true;
  return r;
}

LineReader::~LineReader() {
  if (gz_ != nullptr) gzclose(static_cast<gzFile>(gz_));
}

bool LineReader::Fill() {
  if (eof_) return false;
  // Move the unread tail to the front, grow if one line exceeds the buffer.
  size_t tail = end_ - begin_;
  if (begin_ > 0) {
    std::memmove(buf_.data(), buf_.data() + begin_, tail);
    begin_ = 0;
    end_ = tail;
  }
  if (buf_.size() - end_ < kBlock) buf_.resize(buf_.size() * 2);
  int n = gzread(static_cast<gzFile>(gz_), buf_.data() + end_, static_cast<unsigned>(buf_.size() - end_));
  if (n < 0) {
    int errnum = 0;
    const char* msg = gzerror(static_cast<gzFile>(gz_), &errnum);
    error_ = path_ + ": read error: " + (msg ? msg : "unknown");
    eof_ = true;
    return false;
  }
  if (n == 0) {
    eof_ = true;
    return false;
  }
  bytes_ += static_cast<uint64_t>(n);
  end_ += static_cast<size_t>(n);
  return true;
}

bool LineReader::Next(std::string_view* line) {
  for (;;) {
    const char* start = buf_.data() + begin_;
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
        const char* s = buf_.data() + begin_;
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
