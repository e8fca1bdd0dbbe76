#include "live/fake_slurm.h"

#include <algorithm>
#include <tuple>

namespace orrery::live {

void FakeSlurm::AddNode(const std::string& name, uint16_t gpus, const std::string& partition) {
  FNode f;
  f.n.name = name;
  f.n.partition = partition;
  f.n.gpus = gpus;
  f.n.state_raw = "idle";
  FNode& n = nodes_[name] = std::move(f);
  node_slices_.clear();
  TouchNode(n);
}

void FakeSlurm::RemoveNode(const std::string& name) {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return;
  node_log_.emplace_back(++seq_, NodeRow{name, it->second.n.partition});
  nodes_.erase(it);
  node_slices_.clear();
}

Status FakeSlurm::Reach() {
  ++calls_;
  if (unreachable_)
    return SlurmError("slurm: `squeue` exited 1: slurm_load_jobs error: Unable to contact slurm controller (connect failure)");
  return Status::Ok();
}

void FakeSlurm::Touch(FJob& f) {
  f.changed = ++seq_;
  if (!lose_changes_) changelog_.emplace_back(seq_, f.j.id);
}

void FakeSlurm::TouchNode(FNode& n) {
  ++seq_;
  if (!lose_changes_) node_log_.emplace_back(seq_, NodeRow{n.n.name, n.n.partition});
}

// As sinfo shows it: an up node is idle, mixed or allocated by its GPUs in use; a drained
// node is draining while jobs still run there.
void FakeSlurm::Use(const std::string& node, int gpus) {
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return;
  SlurmNode& n = it->second.n;
  n.gpus_used = static_cast<uint16_t>(std::max(0, n.gpus_used + gpus));
  const std::string& s = n.state_raw;
  if (s == "idle" || s == "mixed" || s == "allocated")
    n.state_raw = n.gpus_used == 0 ? "idle" : n.gpus_used >= n.gpus ? "allocated" : "mixed";
  else if (s == "draining" || s == "drained")
    n.state_raw = n.gpus_used > 0 ? "draining" : "drained";
  TouchNode(it->second);
}

void FakeSlurm::Requeue(FJob& f, bool hold) {
  if (restart_cost_ && f.j.state == SlurmJobState::kRunning) {  // a checkpointing job resumes
    const uint32_t gpus = f.j.gpus_per_node * f.j.num_nodes;
    f.sleep = std::max<Duration>(0, f.j.start + f.sleep - clock_->Now()) + restart_cost_(gpus);
  }
  for (const auto& s : f.pinned) Use(s.node, -s.gpus);
  running_.erase(std::remove(running_.begin(), running_.end(), f.j.id), running_.end());
  f.j.state = SlurmJobState::kPending;
  f.j.state_raw = "PENDING";
  f.j.held = hold;
  f.j.reason = hold ? "JobHeldAdmin" : "BeginTime";
  f.j.start = kNoTime;
  f.j.nodes.clear();
  f.pinned.clear();
  ++counters_[f.j.id].requeues;
  Touch(f);
}

void FakeSlurm::SetNodeDown(const std::string& node, bool down) {
  FNode& n = nodes_.at(node);
  n.n.avail = down ? NodeAvail::kDown : NodeAvail::kUp;
  n.n.state_raw = down ? "down*" : "idle";
  TouchNode(n);
  if (!down) return;
  std::vector<uint32_t> victims;
  for (uint32_t id : running_)
    for (const auto& s : jobs_.at(id).pinned)
      if (s.node == node) victims.push_back(id);
  for (uint32_t id : victims) Requeue(jobs_.at(id), false);  // Slurm requeues on node failure
}

void FakeSlurm::FailJob(uint32_t job, const std::string& state_raw) {
  FJob& f = jobs_.at(job);
  if (f.j.state != SlurmJobState::kRunning) return;
  for (const auto& s : f.pinned) Use(s.node, -s.gpus);
  running_.erase(std::remove(running_.begin(), running_.end(), job), running_.end());
  f.j.state = SlurmJobState::kFailed;
  f.j.failure = state_raw == "NODE_FAIL" ? SlurmFailure::kNodeFail
                : state_raw == "TIMEOUT" ? SlurmFailure::kTimeout
                                         : SlurmFailure::kExit;
  f.j.state_raw = state_raw;
  f.j.reason = state_raw == "FAILED" ? "NonZeroExitCode" : state_raw;
  f.j.end = clock_->Now();
  Touch(f);
}

void FakeSlurm::Advance() {
  Time now = clock_->Now();
  // Completions.
  std::vector<uint32_t> still;
  for (uint32_t id : running_) {
    FJob& f = jobs_.at(id);
    if (f.j.start + f.sleep > now) {
      still.push_back(id);
      continue;
    }
    for (const auto& s : f.pinned) Use(s.node, -s.gpus);
    f.j.state = SlurmJobState::kFinished;
    f.j.state_raw = "COMPLETED";
    f.j.end = f.j.start + f.sleep;
    ++counters_[id].completions;
    ++done_;
    Touch(f);
    if (min_job_age_ >= 0) ended_.emplace_back(f.j.end, id);
  }
  running_.swap(still);
  ForgetOld(now);
  // Power transitions.
  for (auto& [name, n] : nodes_) {
    if (n.power_at == kNoTime || n.power_at > now) continue;
    n.power_at = kNoTime;
    if (n.going_up) {
      bool fail = fail_resume_.count(name) && fail_resume_[name];
      n.n.avail = fail ? NodeAvail::kDown : NodeAvail::kUp;
      n.n.state_raw = fail ? "down~" : "idle";
    } else {
      n.n.avail = NodeAvail::kPoweredDown;
      n.n.state_raw = "idle~";
    }
    TouchNode(n);
  }
  FinishRequeues(now);
  // Starts: released jobs in release order whose pinned nodes have the GPUs.
  std::vector<uint32_t> wait;
  for (uint32_t id : released_) {
    FJob& f = jobs_.at(id);
    if (f.j.state != SlurmJobState::kPending || f.j.held) continue;
    if (!TryStart(f, now)) wait.push_back(id);
  }
  released_.swap(wait);
}

// Jobs that ended min_job_age_ s ago leave (ended_ is in end order: completions append
// with their end times, which never decrease with the clock).
void FakeSlurm::ForgetOld(Time now) {
  size_t k = 0;
  for (; k < ended_.size() && ended_[k].first + min_job_age_ <= now; ++k) {
    const uint32_t id = ended_[k].second;
    auto it = jobs_.find(id);
    if (it == jobs_.end() || !IsTerminal(it->second.j.state)) continue;  // requeued since: stays
    by_id_[id] = nullptr;
    jobs_.erase(it);
    counters_.erase(id);
    files_.erase(id);
    forgotten_.push_back(id);
  }
  ended_.erase(ended_.begin(), ended_.begin() + static_cast<std::ptrdiff_t>(k));
}

bool FakeSlurm::TryStart(FJob& f, Time now) {
  if (f.requeue_done != kNoTime) return false;  // still completing its requeue
  if (f.begin != kNoTime && now < f.begin) {
    if (f.j.reason != "BeginTime") {
      f.j.reason = "BeginTime";
      Touch(f);
    }
    return false;
  }
  bool fits = !f.pinned.empty();
  for (const auto& s : f.pinned) {
    auto it = nodes_.find(s.node);
    fits = fits && it != nodes_.end() && it->second.n.avail == NodeAvail::kUp &&
           it->second.n.gpus - it->second.n.gpus_used >= s.gpus;
  }
  if (!fits) {
    std::string unavailable;
    for (const auto& sh : f.pinned) {
      auto it = nodes_.find(sh.node);
      if (it == nodes_.end() || it->second.n.avail != NodeAvail::kUp) unavailable += (unavailable.empty() ? "" : ",") + sh.node;
    }
    std::string reason = unavailable.empty() ? "Resources" : "ReqNodeNotAvail, UnavailableNodes:" + unavailable;
    if (f.j.reason != reason) {
      f.j.reason = reason;
      Touch(f);
    }
    return false;
  }
  f.j.nodes.clear();
  for (const auto& s : f.pinned) {
    Use(s.node, s.gpus);
    f.j.nodes.push_back(s.node);
  }
  f.j.state = SlurmJobState::kRunning;
  f.j.state_raw = "RUNNING";
  f.j.reason = "None";
  f.j.start = now;
  ++counters_[f.j.id].starts;
  running_.push_back(f.j.id);
  Touch(f);
  return true;
}

Result<JobListing> FakeSlurm::ListJobs(const std::vector<std::string>&, uint64_t cursor, Sweep sweep) {
  ORR_RETURN_IF_ERROR(Reach());
  JobListing l;
  l.cursor = seq_;
  if (cursor == 0 || full_job_listings_) {
    l.full = true;
    forgotten_.clear();
    l.jobs.reserve(jobs_.size());
    for (const auto& [id, f] : jobs_) l.jobs.push_back(f.j);
    return l;
  }
  l.full = false;
  auto it = std::upper_bound(changelog_.begin(), changelog_.end(), std::make_pair(cursor, UINT32_MAX));
  std::vector<uint32_t> ids;
  for (; it != changelog_.end(); ++it)
    if (it->second < by_id_.size() && by_id_[it->second]) ids.push_back(it->second);
  l.gone.swap(forgotten_);
  if (min_job_age_ >= 0)  // one client: what it has listed is not asked for again
    changelog_.erase(changelog_.begin(), std::upper_bound(changelog_.begin(), changelog_.end(),
                                                          std::make_pair(cursor, UINT32_MAX)));
  if (sweep.any()) {  // ids are dense from 1: step through the slice's
    l.swept = sweep;
    for (uint64_t id = sweep.slice; id < by_id_.size(); id += sweep.of)
      if (by_id_[id]) ids.push_back(static_cast<uint32_t>(id));
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  l.jobs.reserve(ids.size());
  for (uint32_t id : ids) l.jobs.push_back(by_id_[id]->j);
  return l;
}

Result<std::vector<SlurmNode>> FakeSlurm::Nodes(const std::vector<std::string>&) {
  ORR_RETURN_IF_ERROR(Reach());
  std::vector<SlurmNode> out;
  out.reserve(nodes_.size());
  for (const auto& [name, n] : nodes_) out.push_back(n.n);
  return out;
}

Result<NodeListing> FakeSlurm::ListNodeChanges(const std::vector<std::string>& partitions, uint64_t cursor,
                                               Sweep sweep) {
  if (cursor == 0) {
    NodeListing l;
    ORR_ASSIGN_OR_RETURN(l.nodes, Nodes(partitions));
    l.cursor = seq_;
    return l;
  }
  ORR_RETURN_IF_ERROR(Reach());
  NodeListing l;
  l.full = false;
  l.cursor = seq_;
  auto it = std::upper_bound(node_log_.begin(), node_log_.end(), cursor,
                             [](uint64_t c, const std::pair<uint64_t, NodeRow>& e) { return c < e.first; });
  std::vector<const NodeRow*> rows;
  for (; it != node_log_.end(); ++it) rows.push_back(&it->second);
  if (sweep.any()) {
    l.swept = sweep;
    for (const NodeRow& r : NodeSliceRows(sweep)) rows.push_back(&r);
  }
  auto key = [](const NodeRow* r) { return std::tie(r->name, r->partition); };
  std::sort(rows.begin(), rows.end(), [&](const NodeRow* a, const NodeRow* b) { return key(a) < key(b); });
  rows.erase(std::unique(rows.begin(), rows.end(), [&](const NodeRow* a, const NodeRow* b) { return key(a) == key(b); }),
             rows.end());
  for (const NodeRow* r : rows) {
    auto n = nodes_.find(r->name);
    if (n != nodes_.end() && n->second.n.partition == r->partition)
      l.nodes.push_back(n->second.n);
    else
      l.gone.push_back(*r);
  }
  if (min_job_age_ >= 0)  // one client (the soak): rows it has listed are not asked for again
    node_log_.erase(node_log_.begin(), std::upper_bound(node_log_.begin(), node_log_.end(), cursor,
                                                        [](uint64_t c, const std::pair<uint64_t, NodeRow>& e) {
                                                          return c < e.first;
                                                        }));
  return l;
}

// The rows of a sweep's slice (rebuilt when nodes join or leave, or the slice count changes).
const std::vector<NodeRow>& FakeSlurm::NodeSliceRows(Sweep sweep) {
  if (node_slices_.size() != sweep.of) {
    node_slices_.assign(sweep.of, {});
    for (const auto& [name, n] : nodes_) node_slices_[NodeSlice(name, sweep.of)].push_back(NodeRow{name, n.n.partition});
  }
  return node_slices_[sweep.slice];
}

Status FakeSlurm::Hold(uint32_t job) {
  ORR_RETURN_IF_ERROR(Reach());
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return SlurmError("slurm: Invalid job id specified");
  FJob& f = it->second;
  if (f.j.state != SlurmJobState::kPending) return SlurmError("slurm: Job is no longer pending execution");
  if (!f.j.held) {
    f.j.held = true;
    f.j.reason = "JobHeldAdmin";
    released_.erase(std::remove(released_.begin(), released_.end(), job), released_.end());
    ++counters_[job].holds;
    Touch(f);
  }
  return Status::Ok();
}

Status FakeSlurm::StartOn(uint32_t job, const std::vector<NodeShare>& nodes, bool after_requeue) {
  ORR_RETURN_IF_ERROR(Reach());
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return SlurmError("slurm: Invalid job id specified");
  FJob& f = it->second;
  ++counters_[job].start_calls;
  // A requeue still completing is pending in Slurm (PENDING|COMPLETING): updates are taken.
  if (f.j.state != SlurmJobState::kPending && f.requeue_done == kNoTime)
    return SlurmError("slurm: Job is no longer pending execution");
  if (after_requeue) f.begin = clock_->Now();  // StartTime=now
  for (const auto& s : nodes)
    if (s.node == remove_at_start_) {
      RemoveNode(s.node);
      remove_at_start_.clear();
    }
  for (const auto& s : nodes)
    if (!nodes_.count(s.node)) return SlurmError("slurm: Invalid node name specified: " + s.node);
  f.pinned = nodes;
  if (f.j.held) {
    f.j.held = false;
    f.j.reason = "None";
    ++counters_[job].releases;
    Touch(f);
  }
  // Released and pinned: Slurm starts it on those nodes once they are free (at once when
  // start_at_release is set and they are free now).
  if (start_at_release_ && TryStart(f, clock_->Now())) return Status::Ok();
  if (std::find(released_.begin(), released_.end(), job) == released_.end()) released_.push_back(job);
  return Status::Ok();
}

// As Slurm 22.05: only a pending job's request changes (a held one, in the daemon's use).
Status FakeSlurm::Reshape(uint32_t job, const std::vector<NodeShare>& nodes) {
  ORR_RETURN_IF_ERROR(Reach());
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return SlurmError("slurm: Invalid job id specified");
  FJob& f = it->second;
  if (f.j.state != SlurmJobState::kPending) return SlurmError("slurm: Job is no longer pending execution");
  ORR_ASSIGN_OR_RETURN(const uint16_t gpus, UniformGpus(nodes));
  for (const auto& s : nodes)
    if (!nodes_.count(s.node)) return SlurmError("slurm: Invalid node name specified: " + s.node);
  f.j.num_nodes = static_cast<uint32_t>(nodes.size());
  f.j.gpus_per_node = gpus;
  f.pinned = nodes;
  ++counters_[job].reshapes;
  Touch(f);
  return Status::Ok();
}

Status FakeSlurm::RequeueHold(uint32_t job) {
  ORR_RETURN_IF_ERROR(Reach());
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return SlurmError("slurm: Invalid job id specified");
  FJob& f = it->second;
  if (f.j.state != SlurmJobState::kRunning || f.requeue_done != kNoTime) return SlurmError("slurm: Job is not running");
  if (requeue_completing_ <= 0) {
    Requeue(f, true);
    return Status::Ok();
  }
  // Listed COMPLETING on its nodes (held: "job requeued in held state") until the requeue ends.
  running_.erase(std::remove(running_.begin(), running_.end(), job), running_.end());
  f.requeue_done = clock_->Now() + requeue_completing_;
  f.completing_on = std::move(f.pinned);
  f.pinned.clear();
  f.j.state_raw = "COMPLETING";
  f.j.held = true;
  f.j.reason = "job requeued in held state";
  Touch(f);
  return Status::Ok();
}

// Requeues whose COMPLETING phase is over: pending (held unless released meanwhile), their
// GPUs free, the begin time pushed ahead unless it is already in the future.
void FakeSlurm::FinishRequeues(Time now) {
  for (auto& [id, f] : jobs_) {
    if (f.requeue_done == kNoTime || f.requeue_done > now) continue;
    f.requeue_done = kNoTime;
    for (const auto& s : f.completing_on) Use(s.node, -s.gpus);
    f.completing_on.clear();
    f.j.state = SlurmJobState::kPending;
    f.j.state_raw = "PENDING";
    f.j.start = kNoTime;
    f.j.nodes.clear();
    if (f.j.held) f.j.reason = "job requeued in held state";
    if (requeue_begin_delay_ > 0 && (f.begin == kNoTime || f.begin <= now)) f.begin = now + requeue_begin_delay_;
    ++counters_[id].requeues;
    Touch(f);
  }
}

// As Slurm: a failed (or running) batch job goes back to pending, held; the nodes it ran
// on stay as they are (a drained node keeps its state).
Status FakeSlurm::RestartHeld(uint32_t job) {
  ORR_RETURN_IF_ERROR(Reach());
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return SlurmError("slurm: Invalid job id specified");
  FJob& f = it->second;
  if (f.j.state == SlurmJobState::kPending) return SlurmError("slurm: Job is pending execution");
  if (f.j.state != SlurmJobState::kRunning) f.pinned.clear();  // finished: its GPUs are free already
  f.j.failure = SlurmFailure::kNone;
  f.j.end = kNoTime;
  Requeue(f, true);
  return Status::Ok();
}

Status FakeSlurm::Drain(const std::string& node, const std::string& reason) {
  ORR_RETURN_IF_ERROR(Reach());
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return SlurmError("slurm: Invalid node name specified");
  DrainCalls& c = drain_calls_[node];
  ++c.drains;
  c.reason = reason;
  it->second.n.avail = NodeAvail::kDown;
  it->second.n.state_raw = it->second.n.gpus_used > 0 ? "draining" : "drained";
  TouchNode(it->second);
  return Status::Ok();
}

Status FakeSlurm::Undrain(const std::string& node) {
  ORR_RETURN_IF_ERROR(Reach());
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return SlurmError("slurm: Invalid node name specified");
  ++drain_calls_[node].undrains;
  it->second.n.avail = NodeAvail::kUp;
  it->second.n.state_raw = "idle";
  Use(node, 0);  // idle, mixed or allocated by its GPUs in use
  return Status::Ok();
}

Status FakeSlurm::SetPriority(uint32_t job, uint32_t) {
  ORR_RETURN_IF_ERROR(Reach());
  if (!jobs_.count(job)) return SlurmError("slurm: Invalid job id specified");
  return Status::Ok();
}

Status FakeSlurm::PowerDown(const std::string& node) {
  ORR_RETURN_IF_ERROR(Reach());
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return SlurmError("slurm: Invalid node name specified");
  ++power_calls_[node].downs;
  it->second.n.avail = NodeAvail::kPoweredDown;
  it->second.n.state_raw = "idle%";
  it->second.power_at = clock_->Now() + power_delay_;
  it->second.going_up = false;
  TouchNode(it->second);
  return Status::Ok();
}

Status FakeSlurm::PowerUp(const std::string& node) {
  ORR_RETURN_IF_ERROR(Reach());
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return SlurmError("slurm: Invalid node name specified");
  ++power_calls_[node].ups;
  it->second.n.avail = NodeAvail::kPoweringUp;
  it->second.n.state_raw = "idle#";
  it->second.power_at = clock_->Now() + power_delay_;
  it->second.going_up = true;
  TouchNode(it->second);
  return Status::Ok();
}

Result<uint32_t> FakeSlurm::Submit(const SubmitSpec& s) {
  ORR_RETURN_IF_ERROR(Reach());
  FJob f;
  f.j.id = next_id_++;
  f.j.name = s.name;
  f.j.partition = s.partition;
  f.j.user = "root";
  f.j.num_nodes = s.nodes;
  f.j.gpus_per_node = s.gpus_per_node;
  f.j.time_limit = s.time_limit_s;
  f.j.submit = clock_->Now();
  f.j.held = s.hold;
  f.j.reason = s.hold ? "JobHeldUser" : "None";
  f.j.state_raw = "PENDING";
  if (s.duration_hint >= 0) f.j.comment = "orrery:duration=" + std::to_string(s.duration_hint);
  if (!s.comment.empty()) f.j.comment += (f.j.comment.empty() ? "" : " ") + s.comment;
  f.sleep = s.sleep_s;
  uint32_t id = f.j.id;
  counters_[id];
  auto& ref = jobs_[id] = std::move(f);
  if (by_id_.size() <= id) by_id_.resize(id + 1, nullptr);
  by_id_[id] = &ref;
  Touch(ref);
  // A job submitted without --hold may be started by Slurm's own scheduler before the
  // daemon holds it; the fake leaves it pending (the daemon adopts it either way).
  return id;
}

Status FakeSlurm::Cancel(uint32_t job) {
  ORR_RETURN_IF_ERROR(Reach());
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return SlurmError("slurm: Invalid job id specified");
  FJob& f = it->second;
  if (IsTerminal(f.j.state)) return Status::Ok();
  if (f.j.state == SlurmJobState::kRunning) {
    for (const auto& s : f.pinned) Use(s.node, -s.gpus);
    running_.erase(std::remove(running_.begin(), running_.end(), job), running_.end());
  }
  f.j.state = SlurmJobState::kCancelled;
  f.j.state_raw = "CANCELLED";
  f.j.end = clock_->Now();
  ++done_;
  Touch(f);
  return Status::Ok();
}

void FakeSlurm::SetJobFiles(uint32_t job, JobFiles files, std::string batch_script) {
  files_[job] = {std::move(files), std::move(batch_script)};
}

Result<JobFiles> FakeSlurm::Files(uint32_t job) {
  ORR_RETURN_IF_ERROR(Reach());
  ++file_calls_;
  auto it = files_.find(job);
  if (it == files_.end()) return SlurmError("slurm_load_jobs error: Invalid job id specified");
  return it->second.first;
}

Result<std::string> FakeSlurm::BatchScript(uint32_t job) {
  ORR_RETURN_IF_ERROR(Reach());
  ++file_calls_;
  auto it = files_.find(job);
  if (it == files_.end()) return SlurmError("slurm_load_jobs error: Invalid job id specified");
  return it->second.second;
}

}  // namespace orrery::live
