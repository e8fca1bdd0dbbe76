// Test helpers for the live mode against a real local Slurm (tests/slurm/harness.sh):
// an RAII cluster (every daemon it starts is stopped in the destructor, also when a test
// fails) and an RAII `orrery serve` process.
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "live/slurm_client.h"

extern char** environ;

namespace orrery::testing {

inline bool SlurmInstalled() {
  // The Slurm daemons live in /usr/sbin, which a non-login PATH may lack.
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
  for (const char* d : {"/usr/sbin", "/sbin"})
    if (("" + path + ":").find(std::string(d) + ":") == std::string::npos) path += std::string(":") + d;
  setenv("PATH", path.c_str(), 1);
  for (const char* b : {"slurmctld", "slurmd", "munged", "squeue", "sbatch", "scontrol"}) {
    std::string cmd = std::string("command -v ") + b + " >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) return false;
  }
  return geteuid() == 0;
}

class SlurmCluster {
 public:
  // env: assignments put before the harness's start (ORRERY_SLURM_ACCOUNTS=..., harness.sh).
  explicit SlurmCluster(int nodes, const std::string& env = "") {
    // One local Slurm at a time (ctest -j2 may run two of these tests at once). Close-on-exec:
    // the harness's daemons must not inherit the lock, or a harness left running by a killed
    // test would hold it for every later test.
    lock_fd_ = open("/tmp/orrery-slurm-tests.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd_ >= 0) flock(lock_fd_, LOCK_EX);
    char tmpl[] = "/tmp/orrery-slurm-XXXXXX";
    dir_ = mkdtemp(tmpl);
    std::string cmd = env + (env.empty() ? "" : " ") + "bash " ORRERY_SOURCE_DIR "/tests/slurm/harness.sh start " + dir_ + " " +
                      std::to_string(nodes) + " > " + dir_ + "/harness.log 2>&1";
    ok_ = std::system(cmd.c_str()) == 0;
  }
  ~SlurmCluster() {
    std::string cmd = std::string("bash ") + ORRERY_SOURCE_DIR "/tests/slurm/harness.sh stop " + dir_ + " >/dev/null 2>&1";
    int rc = std::system(cmd.c_str());
    (void)rc;
    if (!std::getenv("ORRERY_KEEP_SLURM_DIR")) std::filesystem::remove_all(dir_);
    if (lock_fd_ >= 0) close(lock_fd_);  // releases the lock
  }
  bool ok() const { return ok_; }
  const std::string& dir() const { return dir_; }
  std::string conf() const { return dir_ + "/etc/slurm.conf"; }
  std::string log() const {
    std::ifstream in(dir_ + "/harness.log");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  int Harness(const std::string& args) const {
    std::string cmd = std::string("bash ") + ORRERY_SOURCE_DIR "/tests/slurm/harness.sh " + args + " >> " + dir_ +
                      "/harness.log 2>&1";
    return std::system(cmd.c_str());
  }
  live::ExecSlurmClient Client() const { return live::ExecSlurmClient(live::ExecSlurmOptions{"", conf(), 15000}); }
  // jobcomp/filetxt: one line per job completion.
  struct Completion {
    std::string state, nodes;
    Time start = kNoTime, end = kNoTime;
  };
  // Distinct jobs with a COMPLETED record.
  size_t CompletedJobs() const {
    std::set<uint32_t> ids;
    for (const auto& [id, c] : Completions())
      if (c.state == "COMPLETED") ids.insert(id);
    return ids.size();
  }
  std::multimap<uint32_t, Completion> Completions() const {
    std::multimap<uint32_t, Completion> out;
    std::ifstream in(dir_ + "/jobcomp.txt");
    std::string line;
    auto field = [](const std::string& l, const std::string& k) {
      size_t p = l.find(" " + k + "=");
      if (p == std::string::npos) p = l.rfind(k + "=", 0) == 0 ? 0 : std::string::npos;
      if (p == std::string::npos) return std::string();
      p = l.find('=', p) + 1;
      return l.substr(p, l.find(' ', p) - p);
    };
    while (std::getline(in, line)) {
      Completion c;
      c.state = field(line, "JobState");
      c.nodes = field(line, "NodeList");
      c.start = live::ParseSlurmTime(field(line, "StartTime"));
      c.end = live::ParseSlurmTime(field(line, "EndTime"));
      out.emplace(static_cast<uint32_t>(std::stoul(field(line, "JobId"))), c);
    }
    return out;
  }

 private:
  std::string dir_;
  bool ok_ = false;
  int lock_fd_ = -1;
};

// `orrery serve --config FILE` as a child process; killed (SIGKILL) in the destructor.
class ServeProcess {
 public:
  ServeProcess(const std::string& config, const std::string& log, const std::string& slurm_conf) {
    std::vector<std::string> args = {ORRERY_BINARY, "serve", "--config", config, "-v"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e)
      if (std::string_view(*e).rfind("SLURM_CONF=", 0) != 0) env.emplace_back(*e);
    env.push_back("SLURM_CONF=" + slurm_conf);
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    if (posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), envp.data()) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
  }
  ~ServeProcess() { Kill(SIGKILL); }
  bool running() const { return pid_ > 0; }
  // Returns the exit status (or 128+signal).
  int Kill(int sig) {
    if (pid_ <= 0) return -1;
    kill(pid_, sig);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
};

// A TCP port free on 127.0.0.1 now (for the daemon's HTTP API).
inline int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

// Polls `done` every 100 ms for up to `seconds`; its last answer.
inline bool WaitFor(const std::function<bool()>& done, double seconds) {
  for (int i = 0; i < static_cast<int>(seconds * 10); ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return done();
}

// The last `max_bytes` of a file (a daemon's log in a failure message); "" when absent.
inline std::string LogTail(const std::string& path, size_t max_bytes = 4000) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return s.size() > max_bytes ? s.substr(s.size() - max_bytes) : s;
}

inline void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

// The bearer token the real-Slurm tests configure for the daemon's HTTP API.
inline constexpr const char* kTestToken = "orrery-test-token-0123456789";

}  // namespace orrery::testing

// Skips a test when the Slurm daemons are missing or the test does not run as root (the
// harness needs both); CI installs them and runs as root.
#define REQUIRE_SLURM()                                                                  \
  if (!::orrery::testing::SlurmInstalled())                                              \
  GTEST_SKIP() << "slurmctld/slurmd/munged/slurm-client not installed or not root: run " \
                  "scripts/install-deps.sh (as root) to run the live-mode Slurm tests"
