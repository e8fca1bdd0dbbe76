// Helpers of the end-to-end tests that run the `orrery` binary (ORRERY_BINARY) or a shell
// command and look at its exit status, output and files. One home for what every CLI test
// needs; each test file keeps only its own fixtures.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace orrery::cli_testing {

struct CmdOut {
  int status = -1;   // exit status; -1 when the command did not exit normally
  std::string text;  // stdout and stderr, interleaved
};

// Runs `command` through /bin/sh with stderr folded into stdout.
inline CmdOut RunShell(const std::string& command) {
  CmdOut o;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return o;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) o.text.append(buf, n);
  const int st = pclose(p);
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return o;
}

#ifdef ORRERY_BINARY
// Runs the binary under test with `args` (a shell word list).
inline CmdOut RunOrrery(const std::string& args) { return RunShell(std::string(ORRERY_BINARY) + " " + args); }
#endif

inline std::string Slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// An empty folder under the system temp dir, unique to this process and `tag`.
inline std::filesystem::path FreshTempDir(const std::string& tag) {
  namespace fs = std::filesystem;
  fs::path d = fs::temp_directory_path() / ("orrery_" + tag + "_" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace orrery::cli_testing
