#include "logs/input.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>
#include <vector>

#include <zlib.h>

namespace orrery::logs {

Status ForEachChunk(const std::string& path, const std::function<void(std::string_view)>& sink) {
  int fd = path == "-" ? dup(0) : open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return MakeError(path + ": cannot open: " + std::strerror(errno));
  gzFile gz = gzdopen(fd, "rb");
  if (gz == nullptr) {
    close(fd);
    return MakeError(path + ": cannot read (zlib could not allocate a stream)");
  }
  gzbuffer(gz, 1 << 17);
  std::vector<char> buf(1 << 17);
  Status st;
  while (true) {
    int n = gzread(gz, buf.data(), static_cast<unsigned>(buf.size()));
    if (n < 0) {
      int code = 0;
      const char* msg = gzerror(gz, &code);
      st = MakeError(path + ": read error: " + (code == Z_ERRNO ? std::strerror(errno) : msg));
      break;
    }
    if (n == 0) break;
    sink(std::string_view(buf.data(), static_cast<size_t>(n)));
  }
  gzclose(gz);
  return st;
}

Result<std::string> ReadTail(const std::string& path, size_t max_bytes) {
  std::string data;
  bool cut = false;
  Status st = ForEachChunk(path, [&](std::string_view chunk) {
    data.append(chunk);
    if (max_bytes != 0 && data.size() > 2 * max_bytes) {
      data.erase(0, data.size() - max_bytes);
      cut = true;
    }
  });
  if (!st.ok()) return st.error();
  if (max_bytes != 0 && data.size() > max_bytes) {
    data.erase(0, data.size() - max_bytes);
    cut = true;
  }
  if (cut) {
    size_t nl = data.find('\n');
    data.erase(0, nl == std::string::npos ? 0 : nl + 1);
  }
  return data;
}

}  // namespace orrery::logs
