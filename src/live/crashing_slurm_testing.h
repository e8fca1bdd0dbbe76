// Test support (header only, not in the library): a SlurmClient over FakeSlurm that
// "crashes" the daemon after `budget` mutating calls. The call that crosses the budget still
// reaches Slurm (Slurm took it, the daemon never learns) unless `lose_crossing_call` (killed
// just before sending it), and every later call fails.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "live/fake_slurm.h"
#include "live/slurm_client.h"

namespace orrery::live {

class CrashingSlurm final : public SlurmClient {
 public:
  explicit CrashingSlurm(FakeSlurm* inner) : inner_(inner) {}
  int budget = 1 << 30;  // mutating calls left before the "crash"
  bool crashed = false;
  bool lose_crossing_call = false;
  Result<JobListing> ListJobs(const std::vector<std::string>& p, uint64_t c, Sweep w) override {
    if (crashed) return MakeError("crashed", kExitRuntime);
    return inner_->Jobs(p, c, w);
  }
  Result<std::vector<SlurmNode>> Nodes(const std::vector<std::string>& p) override {
    if (crashed) return MakeError("crashed", kExitRuntime);
    return inner_->Nodes(p);
  }
  Result<NodeListing> ListNodeChanges(const std::vector<std::string>& p, uint64_t c, Sweep w) override {
    if (crashed) return MakeError("crashed", kExitRuntime);
    return inner_->NodeChanges(p, c, w);
  }
  Status Gate(const std::function<Status()>& f) {
    if (crashed) return MakeError("crashed", kExitRuntime);
    if (--budget < 0) {
      crashed = true;
      if (!lose_crossing_call) {
        Status s = f();  // Slurm took it, the daemon never learns
        (void)s;
      }
      return MakeError("crashed", kExitRuntime);
    }
    return f();
  }
  Status Hold(uint32_t j) override { return Gate([&] { return inner_->Hold(j); }); }
  Status StartOn(uint32_t j, const std::vector<NodeShare>& n, bool r) override {
    return Gate([&] { return inner_->StartOn(j, n, r); });
  }
  Status Reshape(uint32_t j, const std::vector<NodeShare>& n) override {
    return Gate([&] { return inner_->Reshape(j, n); });
  }
  Status RequeueHold(uint32_t j) override { return Gate([&] { return inner_->RequeueHold(j); }); }
  Status SetPriority(uint32_t j, uint32_t p) override { return Gate([&] { return inner_->SetPriority(j, p); }); }
  Status PowerDown(const std::string& n) override { return Gate([&] { return inner_->PowerDown(n); }); }
  Status PowerUp(const std::string& n) override { return Gate([&] { return inner_->PowerUp(n); }); }
  Status Drain(const std::string& n, const std::string& r) override { return Gate([&] { return inner_->Drain(n, r); }); }
  Status Undrain(const std::string& n) override { return Gate([&] { return inner_->Undrain(n); }); }
  Status RestartHeld(uint32_t j) override { return Gate([&] { return inner_->RestartHeld(j); }); }
  Result<JobFiles> Files(uint32_t j) override {
    if (crashed) return MakeError("crashed", kExitRuntime);
    return inner_->Files(j);
  }
  Result<std::string> BatchScript(uint32_t j) override {
    if (crashed) return MakeError("crashed", kExitRuntime);
    return inner_->BatchScript(j);
  }
  Result<uint32_t> Submit(const SubmitSpec& s) override { return inner_->Submit(s); }
  Status Cancel(uint32_t j) override { return inner_->Cancel(j); }

 private:
  FakeSlurm* inner_;
};

}  // namespace orrery::live
