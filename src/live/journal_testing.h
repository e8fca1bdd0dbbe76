// Test support (header only, not in the library): fresh journal paths under the temp dir.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace orrery::live {

// `name` in a per-process folder `suite`_<pid> of the temp dir, with the file and SQLite's
// WAL and shared-memory side files removed, so a test starts from an empty journal.
inline std::string FreshJournalPath(const std::string& suite, const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / (suite + "_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto p = dir / name;
  std::filesystem::remove(p);
  std::filesystem::remove(p.string() + "-wal");
  std::filesystem::remove(p.string() + "-shm");
  return p.string();
}

}  // namespace orrery::live
