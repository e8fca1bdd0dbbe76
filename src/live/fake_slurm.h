// An in-memory Slurm for unit tests and the decision-cycle benchmark. It models what the
// daemon relies on: held/released pending jobs, jobs pinned to nodes start at the next
// Advance() when their nodes have the GPUs, run for their sleep time and complete (nodes are
// listed idle, mixed or allocated by their GPUs in use, as sinfo shows them); requeue
// with hold; node power down/up as Slurm's power saving shows it (idle% for the delay, then
// idle~; idle# for the boot delay, then idle; an injectable resume failure: down~); an unreachable
// controller. It counts every start and completion per job so tests can prove that each
// job ran exactly once.
#pragma once

#include <functional>
#include <map>
#include <unordered_map>

#include "live/slurm_client.h"

namespace orrery::live {

class FakeSlurm final : public SlurmClient {
 public:
  explicit FakeSlurm(const Clock* clock) : clock_(clock) {}

  void AddNode(const std::string& name, uint16_t gpus, const std::string& partition);
  // The node leaves Slurm's listing (removed from its partition); AddNode lists it again.
  void RemoveNode(const std::string& name);
  // Moves time-driven state to clock->Now(): starts released jobs whose nodes are free,
  // completes jobs whose sleep has elapsed, finishes pending power transitions.
  void Advance();

  // Fault injection.
  void set_unreachable(bool v) { unreachable_ = v; }
  void set_fail_resume(const std::string& node, bool v) { fail_resume_[node] = v; }
  void SetNodeDown(const std::string& node, bool down);  // running jobs there are requeued
  // A running job fails now with Slurm's state `state_raw` ("FAILED", "NODE_FAIL", "TIMEOUT").
  void FailJob(uint32_t job, const std::string& state_raw);
  // The node leaves Slurm (RemoveNode) just before the next StartOn that pins it is taken: a
  // node removed between the daemon's listing and its release, so that release fails.
  void RemoveNodeAtNextStart(const std::string& node) { remove_at_start_ = node; }
  void set_power_delay(Duration d) { power_delay_ = d; }
  // Jobs answers in full whatever the cursor (a client without job deltas; the benchmark).
  void set_full_job_listings(bool v) { full_job_listings_ = v; }
  // Changes made while set are left out of the change log (a source of deltas that missed
  // updates): only a full listing or the rolling resync's slice shows them.
  void set_lose_changes(bool v) { lose_changes_ = v; }
  // Timing as the simulator models it (the parity test): a released job whose nodes are
  // free starts at the release instant, not at the next Advance; and a requeued running job
  // resumes from its checkpoint, charged restart_cost(gpus) (empty: it restarts from scratch).
  void set_start_at_release(bool v) { start_at_release_ = v; }
  void set_checkpointing(std::function<Duration(uint32_t gpus)> restart_cost) { restart_cost_ = std::move(restart_cost); }
  // Slurm 22.05's requeue (a preemption's requeuehold): the job is listed COMPLETING, on its
  // nodes, for `completing` s (its processes get KillWait to checkpoint), then pending; when
  // the requeue completes, a begin time that is not in the future is pushed `begin_delay` s
  // ahead (Slurm: ~120 s), which StartOn(after_requeue) resets to now. 0, 0: the requeue is
  // instant and sets no begin time (the default).
  void set_requeue_timing(Duration completing, Duration begin_delay) {
    requeue_completing_ = completing;
    requeue_begin_delay_ = begin_delay;
  }
  // Slurm's MinJobAge: a job that ended `age` s ago leaves the listing (reported gone in the
  // next delta listing) and this fake; and, for a single client, the job and node change-log
  // entries older than the cursor it passes are dropped. < 0 (the default): all kept forever,
  // so that tests can inspect every job. The soak benchmark sets it, as a real
  // controller forgets, so that memory measures the daemon rather than this fake.
  void set_min_job_age(Duration age) { min_job_age_ = age; }
  // A job's files and batch script, as `scontrol show job` / `write batch_script` give them
  // (Files/BatchScript answer kNotFound for a job without them).
  void SetJobFiles(uint32_t job, JobFiles files, std::string batch_script);
  // Every Files/BatchScript call (to prove each job is asked once).
  uint64_t file_calls() const { return file_calls_; }

  // Inspection.
  struct Counters {
    uint32_t starts = 0, completions = 0, releases = 0, holds = 0, requeues = 0, reshapes = 0;
    uint32_t start_calls = 0;  // StartOn requests, taken or refused
  };
  const Counters& counters(uint32_t job) const { return counters_.at(job); }
  // POWER_DOWN / POWER_UP requests per node (to prove none is sent twice).
  struct PowerCalls {
    uint32_t downs = 0, ups = 0;
  };
  // Drain / Undrain requests per node (to prove none is sent twice) and the last reason.
  struct DrainCalls {
    uint32_t drains = 0, undrains = 0;
    std::string reason;
  };
  DrainCalls drain_calls(const std::string& node) const {
    auto it = drain_calls_.find(node);
    return it == drain_calls_.end() ? DrainCalls{} : it->second;
  }
  PowerCalls power_calls(const std::string& node) const {
    auto it = power_calls_.find(node);
    return it == power_calls_.end() ? PowerCalls{} : it->second;
  }
  size_t num_jobs() const { return jobs_.size(); }
  size_t num_done() const { return done_; }
  const SlurmJob& job(uint32_t id) const { return jobs_.at(id).j; }
  const SlurmNode& node(const std::string& name) const { return nodes_.at(name).n; }
  uint64_t calls() const { return calls_; }

  Result<std::vector<SlurmNode>> Nodes(const std::vector<std::string>& partitions) override;
  Status Hold(uint32_t job) override;
  Status StartOn(uint32_t job, const std::vector<NodeShare>& nodes, bool after_requeue) override;
  Status Reshape(uint32_t job, const std::vector<NodeShare>& nodes) override;
  Status RequeueHold(uint32_t job) override;
  Status SetPriority(uint32_t job, uint32_t priority) override;
  Status PowerDown(const std::string& node) override;
  Status PowerUp(const std::string& node) override;
  Result<uint32_t> Submit(const SubmitSpec& spec) override;
  Status Cancel(uint32_t job) override;
  Result<JobFiles> Files(uint32_t job) override;
  Result<std::string> BatchScript(uint32_t job) override;
  Status Drain(const std::string& node, const std::string& reason) override;
  Status Undrain(const std::string& node) override;
  Status RestartHeld(uint32_t job) override;

 protected:
  // With a cursor: the jobs and node rows changed since (a change log, as slurmrestd's
  // update_time), and every job and row of the sweep's slice.
  Result<JobListing> ListJobs(const std::vector<std::string>& partitions, uint64_t cursor, Sweep sweep) override;
  Result<NodeListing> ListNodeChanges(const std::vector<std::string>& partitions, uint64_t cursor, Sweep sweep) override;

 private:
  struct FJob {
    SlurmJob j;
    Duration sleep = 0;
    std::vector<NodeShare> pinned;
    uint64_t changed = 0;
    Time begin = kNoTime;              // eligible from (kNoTime: at once)
    Time requeue_done = kNoTime;       // while COMPLETING after a requeue: when it ends
    std::vector<NodeShare> completing_on;  // the nodes it still holds meanwhile
  };
  struct FNode {
    SlurmNode n;
    Time power_at = kNoTime;  // when a pending power transition completes
    bool going_up = false;
  };
  Status Reach();
  void Touch(FJob& f);
  void TouchNode(FNode& n);
  void Use(const std::string& node, int gpus);  // GPUs taken (< 0: freed) on a node, and its state
  void Requeue(FJob& f, bool hold);
  bool TryStart(FJob& f, Time now);
  void FinishRequeues(Time now);
  const std::vector<NodeRow>& NodeSliceRows(Sweep sweep);

  const Clock* clock_;
  std::map<uint32_t, FJob> jobs_;
  std::vector<const FJob*> by_id_;  // jobs_ by id (Submit; null once forgotten, set_min_job_age)
  std::vector<std::vector<NodeRow>> node_slices_;  // the rows of each sweep slice (empty: to build)
  std::map<std::string, FNode> nodes_;
  std::unordered_map<uint32_t, Counters> counters_;
  std::vector<std::pair<uint64_t, uint32_t>> changelog_;  // (seq, job) in seq order
  std::vector<std::pair<uint64_t, NodeRow>> node_log_;    // (seq, node row) in seq order
  std::vector<uint32_t> running_;
  std::vector<uint32_t> released_;
  std::map<std::string, bool> fail_resume_;
  std::string remove_at_start_;
  std::map<std::string, PowerCalls> power_calls_;
  std::map<std::string, DrainCalls> drain_calls_;
  uint64_t seq_ = 0, calls_ = 0;
  uint32_t next_id_ = 1;
  size_t done_ = 0;
  bool unreachable_ = false;
  Duration power_delay_ = 5;
  bool start_at_release_ = false;
  bool full_job_listings_ = false;
  bool lose_changes_ = false;
  Duration min_job_age_ = -1;
  std::vector<std::pair<Time, uint32_t>> ended_;  // (end, job) of ended jobs, with min_job_age_ >= 0
  std::vector<uint32_t> forgotten_;               // left since the last listing
  void ForgetOld(Time now);
  std::function<Duration(uint32_t)> restart_cost_;
  Duration requeue_completing_ = 0, requeue_begin_delay_ = 0;
  std::map<uint32_t, std::pair<JobFiles, std::string>> files_;
  uint64_t file_calls_ = 0;
};

}  // namespace orrery::live
