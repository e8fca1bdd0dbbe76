// Per-cell claims (two runs of one cell never write at once) and the submission plan of
// `sweep --slurm` (which cells go out, given their outputs and the sweep's tasks in the queue).
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/io.h"
#include "sweep/sweep.h"

namespace orrery::sweep {

namespace {

// Holds flock(LOCK_EX) on DIR/cells/<id>/claim.lock for its lifetime: every read and change of
// the claim happens under it, so a check and the takeover that follows it are one step.
class SweepClaimLock {
 public:
  explicit SweepClaimLock(const std::string& path) : fd_(open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0 && flock(fd_, LOCK_EX) != 0) {
      close(fd_);
      fd_ = -1;
    }
  }
  ~SweepClaimLock() {
    if (fd_ >= 0) close(fd_);  // releases the lock
  }
  SweepClaimLock(const SweepClaimLock&) = delete;
  SweepClaimLock& operator=(const SweepClaimLock&) = delete;
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_;
};

std::string SweepClaimHolder(const std::string& path) {
  Result<std::string> t = ReadFile(path);
  if (!t.ok()) return "";
  std::string s = *t;
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string SweepHostName() {
  char h[256] = {};
  if (gethostname(h, sizeof h - 1) != 0) return "localhost";
  return h;
}

}  // namespace

std::string LocalOwner() { return "pid:" + SweepHostName() + ":" + std::to_string(getpid()); }

bool LocalOwnerAlive(const std::string& owner) {
  const std::string prefix = "pid:" + SweepHostName() + ":";
  if (owner.rfind(prefix, 0) != 0) return true;  // another host's or another kind: cannot tell, so alive
  char* end = nullptr;
  const long pid = std::strtol(owner.c_str() + prefix.size(), &end, 10);
  if (end == owner.c_str() + prefix.size() || *end != '\0' || pid <= 0) return false;
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

Result<std::string> ClaimCell(const std::string& cell_dir, const CellClaim& claim) {
  SweepClaimLock lock(cell_dir + "/claim.lock");
  if (!lock.ok()) return MakeError(cell_dir + "/claim.lock: cannot lock: " + std::strerror(errno), kExitRuntime);
  const std::string path = cell_dir + "/claim";
  const std::string holder = SweepClaimHolder(path);
  if (!holder.empty() && holder != claim.owner && (!claim.alive || claim.alive(holder))) return holder;
  ORR_RETURN_IF_ERROR(WriteFileAtomic(path, claim.owner + "\n"));
  return std::string();
}

void ReleaseCell(const std::string& cell_dir, const CellClaim& claim) {
  SweepClaimLock lock(cell_dir + "/claim.lock");
  if (lock.ok() && SweepClaimHolder(cell_dir + "/claim") == claim.owner) std::remove((cell_dir + "/claim").c_str());
}

CellAction PlanCell(bool complete, QueueState queued) {
  if (complete) return CellAction::kComplete;
  if (queued != QueueState::kAbsent) return CellAction::kQueued;
  return CellAction::kSubmit;
}

}  // namespace orrery::sweep
