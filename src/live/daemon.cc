#include "live/daemon.h"

#include <algorithm>
#include <chrono>
#include <queue>
#include <set>

#include <fmt/format.h>

#include "sched/plugins/ces.h"
#include "sched/plugins/placers.h"
#include "sched/plugins/policies.h"

namespace orrery::live {

namespace {

constexpr double kLatencyBuckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5};
constexpr size_t kNumBuckets = sizeof(kLatencyBuckets) / sizeof(kLatencyBuckets[0]);

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string NodeNames(const std::vector<NodeShare>& n) {
  std::string s;
  for (size_t i = 0; i < n.size(); ++i) s += (i ? "," : "") + n[i].node;
  return s;
}

bool SameNodes(const std::vector<NodeShare>& a, const std::vector<std::string>& b) {
  if (a.size() != b.size()) return false;
  std::vector<std::string> x;
  for (const auto& s : a) x.push_back(s.node);
  std::vector<std::string> y = b;
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  return x == y;
}

// Energy: which managed nodes are in the scheduler's cluster. Down/drained nodes are not;
// powered-down (~ % !) and powering-up (#) nodes are, as unpowered nodes (ClusterState power
// states, as in the simulator): placers never see them, the PowerPlugin sees them as
// powerable, admission counts their GPUs.
bool InModel(NodeAvail a) { return a != NodeAvail::kDown; }
constexpr Duration kPowerUpGrace = 10;
// A node that POWER_UP can wake: fully powered down ("idle~"), not still powering down.
bool Wakeable(const SlurmNode& n) {
  if (n.avail != NodeAvail::kPoweredDown) return false;
  return n.state_raw.empty() || (n.state_raw.back() != '%' && n.state_raw.back() != '!');
}

}  // namespace

Daemon::Daemon(SlurmClient* slurm, Journal* journal, const Clock* clock, DaemonOptions opts)
    : slurm_(slurm), journal_(journal), clock_(clock), opts_(std::move(opts)), latency_hist_(kNumBuckets + 1, 0) {}

Daemon::~Daemon() = default;

std::string Daemon::StartKey(uint32_t job, uint32_t gen) const { return fmt::format("start/{}/{}", job, gen); }

int Daemon::VcOf(const std::string& partition) const {
  for (size_t i = 0; i < opts_.partitions.size(); ++i)
    if (opts_.partitions[i] == partition) return static_cast<int>(i);
  return -1;
}

void Daemon::Note(Time now, const std::string& kind, const std::string& detail) {
  events_.push_back(fmt::format("{} {}: {}", now, kind, detail));
  while (events_.size() > 100) events_.pop_front();
  auto st = journal_->Event(now, kind, detail);
  (void)st;  // the journal's own errors surface at the next commit
}

void Daemon::Remember(const JournalDecision& d) {
  recent_.push_back(d);
  while (recent_.size() > opts_.recent_decisions) recent_.pop_front();
}

Status Daemon::Recover() {
  std::lock_guard<std::mutex> lock(mu_);
  if (opts_.partitions.empty()) return MakeError("daemon: no managed partition configured");
  ORR_ASSIGN_OR_RETURN(gens_, journal_->Gens());
  ORR_ASSIGN_OR_RETURN(auto planned, journal_->WithState("planned"));
  for (auto& d : planned) unapplied_[d.key] = d;
  ORR_ASSIGN_OR_RETURN(auto recent, journal_->Recent(opts_.recent_decisions));
  for (auto it = recent.rbegin(); it != recent.rend(); ++it) recent_.push_back(*it);
  ORR_ASSIGN_OR_RETURN(cycle_, journal_->GetCounter("cycle"));
  if (!opts_.energy.empty()) {
    // Live time is Unix seconds: the forecaster's calendar epoch is 0.
    if (opts_.power_factory) {
      power_ = opts_.power_factory();
    } else {
      auto p = MakePowerPlugin(opts_.energy, opts_.seed, 0);
      if (!p.ok()) return p.error();
      power_ = std::move(*p);
    }
  }
  if (!unapplied_.empty())
    Note(clock_->Now(), "recover", fmt::format("{} decision(s) planned but not confirmed before the restart", unapplied_.size()));
  return Status::Ok();
}

// ---------------------------------------------------------------- snapshot

Status Daemon::ObserveNodes(const std::vector<SlurmNode>& nodes, bool* changed) {
  // O(nodes) with no allocation in the steady state: update the known records in place;
  // the snapshot is rebuilt only when the set of schedulable nodes or their GPUs change.
  Time now = clock_->Now();
  *changed = false;
  size_t seen = 0;
  for (const SlurmNode& n : nodes) {
    if (VcOf(n.partition) < 0) continue;
    auto it = nodes_.find(n.name);
    if (it == nodes_.end()) {
      nodes_.emplace(n.name, n);
      *changed = true;
      ++seen;
      continue;
    }
    SlurmNode& old = it->second;
    if (old.partition != n.partition) continue;  // listed again for a second managed partition
    ++seen;
    if (!power_up_sent_.empty()) {
      // Energy: a POWER_UP we sent shows in sinfo ("#") only at Slurm's next power-thread
      // pass; until then (at most kPowerUpGrace s) keep the node as powering up.
      auto sent = power_up_sent_.find(n.name);
      if (sent != power_up_sent_.end()) {
        if (n.avail == NodeAvail::kPoweredDown && old.avail == NodeAvail::kPoweringUp && now - sent->second < kPowerUpGrace)
          continue;
        power_up_sent_.erase(sent);
      }
    }
    if (old.avail != n.avail) {
      Note(now, "node", fmt::format("{} {} -> {} ({})", n.name, NodeAvailName(old.avail), NodeAvailName(n.avail),
                                    n.state_raw));
      // The snapshot changes when a node becomes (un)schedulable or enters/leaves the model
      // (down nodes are outside it; powered-down and booting ones inside, unpowered).
      // powered-down <-> powering-up changes nothing the placers see: no rebuild.
      if (old.avail == NodeAvail::kUp || n.avail == NodeAvail::kUp || InModel(old.avail) != InModel(n.avail))
        *changed = true;
      if (old.avail == NodeAvail::kPoweringUp && n.avail == NodeAvail::kDown) {
        // Slurm marks a node DOWN when it misses ResumeTimeout after a POWER_UP.
        ++m_failed_resumes_;
        Note(now, "power", fmt::format("failed resume: {} went down while powering up ({})", n.name, n.state_raw));
      }
    }
    if (old.gpus != n.gpus) *changed = true;
    if (old.avail != n.avail || old.state_raw != n.state_raw || old.gpus != n.gpus) old = n;
  }
  if (seen != nodes_.size()) {  // nodes left the managed partitions
    std::set<std::string> present;
    for (const SlurmNode& n : nodes)
      if (VcOf(n.partition) >= 0) present.insert(n.name);
    for (auto it = nodes_.begin(); it != nodes_.end();) {
      if (!present.count(it->first)) {
        Note(now, "node", it->first + " left the managed partitions");
        it = nodes_.erase(it);
        *changed = true;
      } else {
        ++it;
      }
    }
  }
  return Status::Ok();
}

Status Daemon::Rebuild(Time now) {
  // Detach every job from the old scheduler (its slots die with it).
  for (auto& [id, lj] : jobs_) {
    lj->slot = UINT32_MAX;
    if (lj->phase == Phase::kRejected || lj->phase == Phase::kUnplaced)
      lj->phase = lj->nodes.empty() ? Phase::kQueued : Phase::kRunning;
  }
  auto cluster = std::make_unique<Cluster>();
  cluster->name = "slurm";
  for (size_t v = 0; v < opts_.partitions.size(); ++v) {
    VirtualCluster vc;
    vc.id = VcId(static_cast<uint16_t>(v));
    vc.name = opts_.partitions[v];
    cluster->vcs.push_back(std::move(vc));
  }
  std::unordered_map<std::string, NodeId> index;
  std::vector<const SlurmNode*> up;
  for (const auto& [name, n] : nodes_)
    if (n.avail == NodeAvail::kUp || (power_ && InModel(n.avail))) up.push_back(&n);
  std::sort(up.begin(), up.end(), [](const SlurmNode* a, const SlurmNode* b) { return a->name < b->name; });
  for (const SlurmNode* np : up) {  // ascending name: deterministic node ids
    const SlurmNode& n = *np;
    const std::string& name = n.name;
    Node nd;
    nd.id = NodeId(static_cast<uint32_t>(cluster->nodes.size()));
    nd.vc = VcId(static_cast<uint16_t>(VcOf(n.partition)));
    nd.gpus = n.gpus;
    nd.name = name;
    cluster->vcs[nd.vc.v].nodes.push_back(nd.id);
    cluster->vcs[nd.vc.v].gpus += nd.gpus;
    index[name] = nd.id;
    cluster->nodes.push_back(std::move(nd));
  }
  ORR_ASSIGN_OR_RETURN(PolicyParts policy, MakePolicy(opts_.policy, opts_.seed, nullptr));
  ORR_ASSIGN_OR_RETURN(auto placer, MakePlacer(opts_.placer, opts_.seed));
  sched_.reset();
  cluster_ = std::move(cluster);
  declared_ = std::make_unique<DeclaredTruth>(policy.preempt_overhead);
  sched_ = std::make_unique<Scheduler>(*cluster_, false, false, std::move(policy), std::move(placer));
  sched_->AttachTruth(declared_.get());
  node_index_ = std::move(index);
  // Energy: powered-down and booting nodes are in the cluster but unpowered (no free GPU
  // for placement), before any job is attached (a job Slurm runs there stays outside).
  if (power_)
    for (const Node& nd : cluster_->nodes)
      if (nodes_.at(nd.name).avail != NodeAvail::kUp) sched_->SetNodePowered(nd.id, false);
  slot_job_.clear();
  std::vector<uint32_t> ids;
  for (const auto& [id, lj] : jobs_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  for (uint32_t id : ids) Attach(*jobs_[id], now);
  need_rebuild_ = false;
  return Status::Ok();
}

void Daemon::FillJob(LiveJob& lj, const SlurmJob& sj) {
  Job& j = lj.job;
  j.id = JobId(sj.id);
  j.submit = sj.submit == kNoTime ? clock_->Now() : sj.submit;
  Duration hint = DurationHint(sj.comment);
  j.walltime = sj.time_limit;
  j.duration = hint >= 0 ? hint : (sj.time_limit > 0 ? sj.time_limit : opts_.default_duration);
  j.gpus = sj.gpus_per_node * sj.num_nodes;
  j.gpu_milli = 1000;
  j.nodes = static_cast<uint16_t>(sj.num_nodes > 1 ? sj.num_nodes : 0);
  lj.partition = sj.partition;
  int vc = VcOf(sj.partition);
  j.vc = VcId(static_cast<uint16_t>(std::max(vc, 0)));
}

// Puts a job into the scheduler according to its phase. Jobs running on nodes outside
// the model (down, powered off) are not attached: their GPUs are not in the snapshot.
void Daemon::Attach(LiveJob& lj, Time now) {
  if (!sched_ || lj.slot != UINT32_MAX) return;
  Allocation alloc;
  bool active = lj.phase == Phase::kStarting || lj.phase == Phase::kRunning;
  if (active) {
    for (const NodeShare& s : lj.nodes) {
      auto it = node_index_.find(s.node);
      if (it == node_index_.end()) {
        lj.phase = Phase::kUnplaced;
        return;
      }
      alloc.push_back(Slot{it->second, s.gpus, 1000, 0, 0, 0});
    }
    // Slurm wins: a job that runs (or was released) where the snapshot has no room (e.g.
    // Slurm started a job before the daemon could hold it, on GPUs a decision also took)
    // stays outside the snapshot until its GPUs are free there; no invariant is broken.
    for (const Slot& sl : alloc)
      if (sched_->cluster_state().free_gpus(sl.node) < sl.gpus) return;
  }
  if (lj.phase != Phase::kQueued && !active) return;
  // A queued job enters the policy's queue only once Slurm has shown it held: a start
  // decision updates its ReqNodeList, which on a job that Slurm has meanwhile started
  // would resize the running job. A held job cannot start behind our back.
  if (!active && !lj.held) return;
  auto slot = sched_->Submit(&lj.job, lj.job.vc, 0, lj.id, now);
  if (!slot.ok()) {
    if (active) {  // runs in Slurm although the policy would never place it: keep it outside
      lj.phase = Phase::kUnplaced;
      return;
    }
    lj.phase = Phase::kRejected;
    lj.reason = slot.error().message;
    Note(now, "reject", fmt::format("job {}: {} (kept held; retried when nodes change)", lj.id, lj.reason));
    return;
  }
  lj.slot = *slot;
  if (slot_job_.size() <= lj.slot) slot_job_.resize(lj.slot + 1, 0);
  slot_job_[lj.slot] = lj.id;
  if (active) sched_->Adopt(lj.slot, std::move(alloc), lj.started == kNoTime ? now : lj.started);
}

// Takes a job out of the scheduler: only a job that completed teaches the estimators
// (Scheduler::Finish); any other leaves through Withdraw.
void Daemon::Detach(LiveJob& lj, Time now, bool completed) {
  if (!sched_ || lj.slot == UINT32_MAX) return;
  if (completed && sched_->view(lj.slot).running)
    sched_->Finish(lj.slot, now);
  else
    sched_->Withdraw(lj.slot, now);
  sched_->Release(lj.slot);
  lj.slot = UINT32_MAX;
}

// The job went back to pending in Slurm (requeued by Slurm or by us): new generation.
void Daemon::Requeued(LiveJob& lj, Time now, const std::string& why) {
  Detach(lj, now);
  ++lj.gen;
  gens_[lj.id] = lj.gen;
  auto st = journal_->SetGen(lj.id, lj.gen);
  (void)st;
  lj.phase = Phase::kQueued;
  lj.nodes.clear();
  lj.started = kNoTime;
  Note(now, "requeue", fmt::format("job {} back in the queue (generation {}): {}", lj.id, lj.gen, why));
}

// A job ended in Slurm: its decisions not yet confirmed are settled from what Slurm
// reports: applied when it ran where the decision put it, else superseded.
void Daemon::SettleUnapplied(const SlurmJob& sj, Time now) {
  for (auto u = unapplied_.begin(); u != unapplied_.end();) {
    if (u->second.job != sj.id) {
      ++u;
      continue;
    }
    bool ran_there = u->second.kind == "start" && sj.start != kNoTime && SameNodes(u->second.nodes, sj.nodes);
    auto st = journal_->Mark(u->first, ran_there ? "applied" : "superseded", now,
                             std::string(ran_there ? "confirmed: Slurm ran it there, " : "job ended in Slurm: ") +
                                 sj.state_raw);
    (void)st;
    if (ran_there) {
      u->second.state = "applied";
      Remember(u->second);
    }
    u = unapplied_.erase(u);
  }
}

void Daemon::NewJob(const SlurmJob& sj, Time now) {
  if (IsTerminal(sj.state)) {  // finished before we saw it (or while the daemon was down)
    SettleUnapplied(sj, now);
    return;
  }
  auto owned = std::make_unique<LiveJob>();
  LiveJob& lj = *owned;
  lj.id = sj.id;
  FillJob(lj, sj);
  auto g = gens_.find(sj.id);
  lj.gen = g == gens_.end() ? 0 : g->second;
  lj.held = sj.held;
  std::string key = StartKey(sj.id, lj.gen);
  auto un = unapplied_.find(key);
  bool planned = un != unapplied_.end();
  Result<JournalDecision> known = planned ? Result<JournalDecision>(un->second) : journal_->Get(key);
  if (sj.state == SlurmJobState::kRunning) {
    lj.phase = Phase::kRunning;
    lj.started = sj.start == kNoTime ? now : sj.start;
    for (const auto& n : sj.nodes) lj.nodes.push_back(NodeShare{n, static_cast<uint16_t>(sj.gpus_per_node)});
    if (planned) {
      auto st = journal_->Mark(key, "applied", now, "confirmed after restart: Slurm runs it on " + NodeNames(lj.nodes));
      (void)st;
      unapplied_.erase(un);
    } else if (!known.ok()) {
      ++m_adopted_;
      Note(now, "adopt", fmt::format("job {} runs on {} without an Orrery decision (adopted)", sj.id, NodeNames(lj.nodes)));
    }
  } else if (known.ok() && known->state != "superseded" && known->state != "failed") {
    // A start decision exists for this generation.
    if (sj.held && known->state == "applied") {
      // Someone held it again after we released it: Slurm wins, it is queued anew.
      auto st = journal_->Mark(key, "superseded", now, "job held again in Slurm");
      (void)st;
      jobs_[sj.id] = std::move(owned);
      Requeued(*jobs_[sj.id], now, "held again after its start decision");
      return;
    }
    lj.phase = Phase::kStarting;
    lj.nodes = known->nodes;
    // Decisions are made only for jobs seen held, and the release is the last step of
    // applying one: released means applied (confirm it); still held means not applied
    // (ApplyPending applies it again, on a job that cannot have started meanwhile).
    if (!sj.held && planned) {
      auto st = journal_->Mark(key, "applied", now, "confirmed after restart: Slurm shows it released");
      (void)st;
      un->second.state = "applied";
      Remember(un->second);
      unapplied_.erase(un);
    }
  } else {
    lj.phase = Phase::kQueued;
    if (!sj.held && opts_.hold_unheld) {  // queued once the next listing shows it held
      auto st = slurm_->Hold(sj.id);
      if (!st.ok()) Note(now, "error", fmt::format("cannot hold job {}: {}", sj.id, st.error().message));
    }
  }
  uint32_t id = sj.id;
  jobs_[id] = std::move(owned);
  if (!need_rebuild_) Attach(*jobs_[id], now);
}

void Daemon::Reconcile(const SlurmJob& sj, Time now) {
  if (VcOf(sj.partition) < 0) return;
  auto it = jobs_.find(sj.id);
  if (it == jobs_.end()) {
    NewJob(sj, now);
    return;
  }
  LiveJob& lj = *it->second;
  lj.held = sj.held;
  if (IsTerminal(sj.state)) {
    Detach(lj, now, sj.state == SlurmJobState::kFinished);
    SettleUnapplied(sj, now);
    ++m_completed_;
    jobs_.erase(it);
    return;
  }
  if (sj.state == SlurmJobState::kRunning) {
    if (lj.phase == Phase::kRunning && SameNodes(lj.nodes, sj.nodes)) {
      if (lj.slot == UINT32_MAX && !need_rebuild_) Attach(lj, now);  // retry: room in the snapshot now?
      return;
    }
    if (lj.phase == Phase::kStarting && SameNodes(lj.nodes, sj.nodes)) {
      lj.phase = Phase::kRunning;
      lj.started = sj.start == kNoTime ? now : sj.start;
      if (lj.slot == UINT32_MAX && !need_rebuild_) Attach(lj, now);
      return;
    }
    // Started by someone else, or elsewhere than decided: Slurm wins.
    if (lj.phase == Phase::kQueued) {
      ++m_adopted_;
      Note(now, "adopt", fmt::format("job {} started in Slurm on {} without an Orrery decision", lj.id,
                                     fmt::format("{}", fmt::join(sj.nodes, ","))));
    }
    Detach(lj, now);
    lj.phase = Phase::kRunning;
    lj.started = sj.start == kNoTime ? now : sj.start;
    lj.nodes.clear();
    for (const auto& n : sj.nodes) lj.nodes.push_back(NodeShare{n, static_cast<uint16_t>(sj.gpus_per_node)});
    if (!need_rebuild_) Attach(lj, now);
    return;
  }
  // Pending in Slurm.
  if (lj.phase == Phase::kRunning || lj.phase == Phase::kUnplaced) {
    ++m_slurm_requeued_;
    Requeued(lj, now, "Slurm requeued it (" + sj.reason + ")");
    if (!sj.held && opts_.hold_unheld) {
      auto st = slurm_->Hold(sj.id);
      if (!st.ok()) Note(now, "error", fmt::format("cannot hold job {}: {}", sj.id, st.error().message));
    }
    if (!need_rebuild_) Attach(lj, now);
    return;
  }
  // Released and pinned, but Slurm says the chosen nodes are unavailable (a node went down
  // between the decision and the launch): take the decision back and queue the job again.
  if ((lj.phase == Phase::kStarting || lj.phase == Phase::kUnplaced) && !sj.held &&
      sj.reason.rfind("ReqNodeNotAvail", 0) == 0 && !unapplied_.count(StartKey(lj.id, lj.gen))) {
    auto hold = slurm_->Hold(sj.id);
    if (!hold.ok()) {
      Note(now, "error", fmt::format("cannot hold job {}: {}", sj.id, hold.error().message));
      return;
    }
    auto st = journal_->Mark(StartKey(lj.id, lj.gen), "superseded", now, "Slurm: " + sj.reason);
    (void)st;
    Requeued(lj, now, "its nodes became unavailable before it started (" + sj.reason + ")");
    if (!need_rebuild_) Attach(lj, now);
    return;
  }
  if (lj.phase == Phase::kStarting && sj.held && !unapplied_.count(StartKey(lj.id, lj.gen))) {
    auto st = journal_->Mark(StartKey(lj.id, lj.gen), "superseded", now, "job held again in Slurm");
    (void)st;
    Requeued(lj, now, "held again after its start decision");
    if (!need_rebuild_) Attach(lj, now);
    return;
  }
  if (lj.phase == Phase::kQueued && !sj.held) {  // released by someone else: out of the queue
    Detach(lj, now);
    if (opts_.hold_unheld) {
      auto st = slurm_->Hold(sj.id);
      if (!st.ok()) Note(now, "error", fmt::format("cannot hold job {}: {}", sj.id, st.error().message));
    }
    return;
  }
  if ((lj.phase == Phase::kQueued || lj.phase == Phase::kStarting) && lj.slot == UINT32_MAX && !need_rebuild_)
    Attach(lj, now);  // queued: now held; starting: room in the snapshot now?
}

// ---------------------------------------------------------------- decide and apply

Status Daemon::ApplyPending(Time now, CycleStats* st) {
  std::vector<std::string> done;
  for (auto& [key, d] : unapplied_) {
    auto it = jobs_.find(d.job);
    if (d.kind == "start") {
      if (it == jobs_.end()) continue;  // not listed yet (or gone: superseded when seen terminal)
      LiveJob& lj = *it->second;
      if (lj.phase == Phase::kRunning && lj.gen == d.gen) {  // took effect before we could confirm it
        ORR_RETURN_IF_ERROR(journal_->Mark(key, "applied", now, "confirmed: Slurm runs it on " + NodeNames(lj.nodes)));
        d.state = "applied";
        Remember(d);
        done.push_back(key);
        continue;
      }
      if (lj.phase != Phase::kStarting || lj.gen != d.gen) {
        auto s = journal_->Mark(key, "superseded", now, "job state changed before the decision was applied");
        (void)s;
        done.push_back(key);
        continue;
      }
      Status s = slurm_->StartOn(d.job, d.nodes);
      if (!s.ok()) {
        ++st->apply_errors;
        ++m_apply_errors_;
        last_error_ = s.error().message;
        continue;  // retried next cycle
      }
      ORR_RETURN_IF_ERROR(journal_->Mark(key, "applied", now, "applied after a retry"));
      d.state = "applied";
      d.applied_time = now;
      Remember(d);
      ++st->starts;
      ++m_starts_;
      done.push_back(key);
    } else if (d.kind == "requeue") {
      Status s = slurm_->RequeueHold(d.job);
      if (!s.ok() && s.error().message.find("not running") == std::string::npos &&
          s.error().message.find("Invalid job id") == std::string::npos) {
        ++st->apply_errors;
        ++m_apply_errors_;
        last_error_ = s.error().message;
        continue;
      }
      ORR_RETURN_IF_ERROR(journal_->Mark(key, "applied", now, s.ok() ? "applied after a retry" : s.error().message));
      done.push_back(key);
    } else if (d.kind == "power-down" || d.kind == "power-up") {
      if (d.nodes.empty()) {
        done.push_back(key);
        continue;
      }
      const std::string& node = d.nodes[0].node;
      const bool up = d.kind == "power-up";
      // Idempotent across restarts: a decision planned before a crash may have reached Slurm;
      // what Slurm shows now tells (never send it twice).
      auto obs = nodes_.find(node);
      if (obs != nodes_.end()) {
        NodeAvail a = obs->second.avail;
        if ((up && (a == NodeAvail::kPoweringUp || a == NodeAvail::kUp)) || (!up && a == NodeAvail::kPoweredDown)) {
          ORR_RETURN_IF_ERROR(journal_->Mark(key, "applied", now,
                                             (d.detail.empty() ? "" : d.detail + "; ") + "confirmed: Slurm shows " +
                                                 node + " " + obs->second.state_raw));
          d.state = "applied";
          Remember(d);
          done.push_back(key);
          continue;
        }
        if (!up && a == NodeAvail::kUp && power_) {
          std::vector<std::string> busy = NodesWithWork();
          if (std::binary_search(busy.begin(), busy.end(), node)) {  // never power down a node with work
            ++m_power_refused_;
            ORR_RETURN_IF_ERROR(journal_->Mark(key, "superseded", now, node + " has work now"));
            done.push_back(key);
            continue;
          }
        }
      }
      Status s = up ? slurm_->PowerUp(node) : slurm_->PowerDown(node);
      if (!s.ok()) {
        ++st->apply_errors;
        ++m_apply_errors_;
        last_error_ = s.error().message;
        auto m = journal_->Mark(key, "failed", now, s.error().message);
        (void)m;
        Note(now, "power", fmt::format("{} {} failed: {}", d.kind, d.nodes[0].node, s.error().message));
      } else {
        ORR_RETURN_IF_ERROR(journal_->Mark(key, "applied", now, d.detail));
        ++m_power_;
        if (d.detail == "ces") ++(up ? m_power_ces_up_ : m_power_ces_down_);
        if (d.detail == "demand") ++m_power_demand_up_;
        PowerApplied(node, up);
        Note(now, "power", fmt::format("{}: {} {}", d.detail.empty() ? "operator" : d.detail, d.kind, node));
      }
      done.push_back(key);
    }
  }
  for (const auto& k : done) unapplied_.erase(k);
  return Status::Ok();
}

Status Daemon::Decide(Time now, CycleStats* st) {
  decisions_.clear();
  auto t0 = std::chrono::steady_clock::now();
  sched_->Schedule(now, &decisions_);
  st->decide_ms = MsSince(t0);
  if (decisions_.empty()) return Status::Ok();
  auto t1 = std::chrono::steady_clock::now();
  // 1. Journal every decision as planned (one transaction) before touching Slurm.
  std::vector<JournalDecision> planned;
  ORR_RETURN_IF_ERROR(journal_->Begin());
  for (const Decision& dec : decisions_) {
    const uint32_t slot = SlotOf(dec);
    uint32_t id = slot_job_[slot];
    LiveJob& lj = *jobs_.at(id);
    JournalDecision jd;
    jd.cycle = cycle_;
    jd.time = now;
    jd.job = id;
    if (std::holds_alternative<StartDecision>(dec)) {  // (the live helper turns this into a visit)
      jd.kind = "start";
      jd.gen = lj.gen;
      jd.key = StartKey(id, lj.gen);
      for (const Slot& s : sched_->view(slot).alloc)
        jd.nodes.push_back(NodeShare{cluster_->nodes[s.node.v].name, s.gpus});
      lj.phase = Phase::kStarting;
      lj.nodes = jd.nodes;
      lj.started = now;
    } else {
      jd.kind = "requeue";
      jd.gen = lj.gen;
      jd.key = fmt::format("requeue/{}/{}", id, lj.gen);
      jd.nodes = lj.nodes;
      // The scheduler has re-queued it: a new generation starts now.
      ++lj.gen;
      gens_[id] = lj.gen;
      ORR_RETURN_IF_ERROR(journal_->SetGen(id, lj.gen));
      lj.phase = Phase::kQueued;
      lj.nodes.clear();
      lj.started = kNoTime;
    }
    Status s = journal_->Plan(&jd);
    if (!s.ok()) {
      auto rb = journal_->Commit();
      (void)rb;
      return s;
    }
    planned.push_back(std::move(jd));
  }
  ORR_RETURN_IF_ERROR(journal_->Commit());
  // 2. Apply; 3. confirm (one transaction).
  ORR_RETURN_IF_ERROR(journal_->Begin());
  for (JournalDecision& jd : planned) {
    Status s = jd.kind == "start" ? slurm_->StartOn(jd.job, jd.nodes) : slurm_->RequeueHold(jd.job);
    if (!s.ok()) {
      ++st->apply_errors;
      ++m_apply_errors_;
      last_error_ = s.error().message;
      Note(now, "error", fmt::format("{}: {} (retried next cycle)", jd.key, s.error().message));
      unapplied_[jd.key] = jd;
      continue;
    }
    Status m = journal_->Mark(jd.key, "applied", now, "");
    if (!m.ok()) {
      auto c = journal_->Commit();
      (void)c;
      return m;
    }
    jd.state = "applied";
    jd.applied_time = now;
    if (jd.kind == "start") {
      ++st->starts;
      ++m_starts_;
    } else {
      ++st->requeues;
      ++m_requeues_;
    }
    Remember(jd);
  }
  ORR_RETURN_IF_ERROR(journal_->Commit());
  st->apply_ms = MsSince(t1);
  return Status::Ok();
}

// ---------------------------------------------------------------- energy

std::vector<std::string> Daemon::NodesWithWork() const {
  // A node has work when a job runs there, a start decision pinned a job there (released or
  // not yet applied), or the snapshot holds an allocation there.
  std::vector<std::string> out;
  for (const auto& [id, lj] : jobs_)
    if (lj->phase == Phase::kStarting || lj->phase == Phase::kRunning || lj->phase == Phase::kUnplaced)
      for (const NodeShare& s : lj->nodes) out.push_back(s.node);
  for (const auto& [key, d] : unapplied_)
    if (d.kind == "start")
      for (const NodeShare& s : d.nodes) out.push_back(s.node);
  if (sched_)
    for (const Node& n : cluster_->nodes)
      if (sched_->cluster_state().powered(n.id) && sched_->cluster_state().free_gpus(n.id) != n.gpus)
        out.push_back(n.name);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void Daemon::PowerApplied(const std::string& node, bool up) {
  // Mirror the action at once (Slurm shows it at the next listing): a node being powered
  // down leaves placement now, a node powering up counts as booting for the wake-up logic.
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return;
  SlurmNode& n = it->second;
  if (up) {
    if (n.avail == NodeAvail::kPoweredDown) {
      n.avail = NodeAvail::kPoweringUp;
      n.state_raw = "idle#";
      power_up_sent_[node] = clock_->Now();
    }
    return;
  }
  if (n.avail == NodeAvail::kPoweredDown) return;
  auto id = node_index_.find(node);
  bool was_up = n.avail == NodeAvail::kUp;
  n.avail = NodeAvail::kPoweredDown;
  n.state_raw = "idle%";
  idle_since_.erase(node);
  if (!sched_ || id == node_index_.end() || !was_up || !power_) {
    need_rebuild_ = true;
    return;
  }
  const ClusterState& cs = sched_->cluster_state();
  if (cs.powered(id->second) && cs.free_gpus(id->second) == cluster_->nodes[id->second.v].gpus)
    sched_->SetNodePowered(id->second, false);
  else
    need_rebuild_ = true;  // (an operator's power-down of a busy node) the next rebuild sorts it out
}

Status Daemon::PlanAndApplyPower(Time now, const std::vector<std::pair<std::string, bool>>& todo,
                                 const char* source, CycleStats* st) {
  if (todo.empty()) return Status::Ok();
  // 1. Plan (one transaction), 2. apply, 3. confirm — as start decisions. A decision Slurm
  // refuses stays planned and is retried once by ApplyPending (then marked failed).
  ORR_ASSIGN_OR_RETURN(int64_t n, journal_->GetCounter("power"));
  std::vector<JournalDecision> planned;
  ORR_RETURN_IF_ERROR(journal_->Begin());
  for (const auto& [node, up] : todo) {
    JournalDecision d;
    d.kind = up ? "power-up" : "power-down";
    d.key = fmt::format("{}/{}/{}", d.kind, node, ++n);
    d.cycle = cycle_;
    d.time = now;
    d.nodes = {NodeShare{node, nodes_.at(node).gpus}};
    d.detail = source;
    Status s = journal_->Plan(&d);
    if (s.ok()) s = journal_->SetCounter("power", n);
    if (!s.ok()) {
      auto c = journal_->Commit();
      (void)c;
      return s;
    }
    planned.push_back(std::move(d));
    if (!up) PowerApplied(node, false);  // out of placement from the moment it is planned
  }
  ORR_RETURN_IF_ERROR(journal_->Commit());
  ORR_RETURN_IF_ERROR(journal_->Begin());
  for (JournalDecision& d : planned) {
    const std::string& node = d.nodes[0].node;
    const bool up = d.kind == "power-up";
    Status s = up ? slurm_->PowerUp(node) : slurm_->PowerDown(node);
    if (!s.ok()) {
      ++st->apply_errors;
      ++m_apply_errors_;
      last_error_ = s.error().message;
      Note(now, "error", fmt::format("{}: {} (retried next cycle)", d.key, s.error().message));
      unapplied_[d.key] = d;
      continue;
    }
    Status m = journal_->Mark(d.key, "applied", now, source);
    if (!m.ok()) {
      auto c = journal_->Commit();
      (void)c;
      return m;
    }
    d.state = "applied";
    d.applied_time = now;
    Remember(d);
    ++m_power_;
    if (up) {
      ++st->power_ups;
      ++(std::string_view(source) == "demand" ? m_power_demand_up_ : m_power_ces_up_);
      PowerApplied(node, true);
    } else {
      ++st->power_downs;
      ++m_power_ces_down_;
    }
    Note(now, "power", fmt::format("{}: {} {}", source, d.kind, node));
  }
  return journal_->Commit();
}

Status Daemon::PowerStep(Time now, CycleStats* st) {
  const size_t nv = opts_.partitions.size();
  if (vc_used_peak_.size() != nv) {
    vc_used_peak_.assign(nv, 0);
    vc_demand_wakes_.assign(nv, 0);
  }
  if (next_power_tick_ == kNoTime) next_power_tick_ = now + power_->period();
  const std::vector<std::string> busy = NodesWithWork();
  auto is_busy = [&](const std::string& n) { return std::binary_search(busy.begin(), busy.end(), n); };
  // Idle-since per node (the per-node keep-alive): reset while it works or is not on.
  std::vector<uint32_t> used_now(nv, 0), booting(nv, 0), idle_on(nv, 0), off(nv, 0);
  for (const Node& nd : cluster_->nodes) {
    const SlurmNode& sn = nodes_.at(nd.name);
    const bool on = sn.avail == NodeAvail::kUp, b = is_busy(nd.name);
    if (!on || b) {
      idle_since_.erase(nd.name);
    } else if (!idle_since_.count(nd.name)) {
      idle_since_[nd.name] = now;
    }
    used_now[nd.vc.v] += on && b;
    idle_on[nd.vc.v] += on && !b;
    booting[nd.vc.v] += sn.avail == NodeAvail::kPoweringUp;
    off[nd.vc.v] += sn.avail == NodeAvail::kPoweredDown;
  }
  for (size_t v = 0; v < nv; ++v) vc_used_peak_[v] = std::max(vc_used_peak_[v], used_now[v]);

  // Pending work per VC (jobs in the policy's queue), as the simulator counts it.
  std::vector<uint32_t> pending(nv, 0);
  std::vector<uint64_t> big_nodes(nv, 0), small_milli(nv, 0);
  std::vector<uint16_t> gpn(nv, 1);
  for (const Node& nd : cluster_->nodes) gpn[nd.vc.v] = std::max(gpn[nd.vc.v], nd.gpus);
  for (const auto& [id, lj] : jobs_) {
    if (lj->phase != Phase::kQueued || lj->slot == UINT32_MAX) continue;
    const uint16_t v = lj->job.vc.v;
    ++pending[v];
    if (lj->job.nodes > 1)
      big_nodes[v] += lj->job.nodes;
    else if (lj->job.gpus > gpn[v])
      big_nodes[v] += (lj->job.gpus + gpn[v] - 1) / gpn[v];
    else
      small_milli[v] += lj->job.gpu_milli_total();
  }

  // 1. The control step, every period.
  std::vector<std::pair<std::string, bool>> todo;
  if (now >= next_power_tick_) {
    while (next_power_tick_ <= now) next_power_tick_ += power_->period();
    snap_.now = now;
    snap_.cluster = cluster_.get();
    snap_.nodes.assign(cluster_->nodes.size(), NodePowerView{});
    for (const Node& nd : cluster_->nodes) {
      const SlurmNode& sn = nodes_.at(nd.name);
      NodePowerView& pv = snap_.nodes[nd.id.v];
      pv.state = sn.avail == NodeAvail::kUp          ? PowerState::kOn
                 : sn.avail == NodeAvail::kPoweringUp ? PowerState::kBooting
                                                      : PowerState::kOff;
      pv.busy = is_busy(nd.name);
      auto it = idle_since_.find(nd.name);
      pv.idle_since = it == idle_since_.end() ? now : it->second;
    }
    snap_.used_peak = vc_used_peak_;
    snap_.used_now = used_now;
    snap_.demand_wakes = vc_demand_wakes_;
    snap_.pending = pending;
    power_out_.clear();
    power_->Decide(snap_, &power_out_);
    for (const PowerDecision& d : power_out_) {
      if (d.node.v >= cluster_->nodes.size()) continue;
      const std::string& name = cluster_->nodes[d.node.v].name;
      const SlurmNode& sn = nodes_.at(name);
      if (d.kind == PowerDecision::kPowerUp) {
        if (Wakeable(sn)) todo.emplace_back(name, true);
      } else if (sn.avail == NodeAvail::kUp) {
        if (is_busy(name)) {
          ++m_power_refused_;  // the rule every driver enforces: never power down a node with work
          continue;
        }
        todo.emplace_back(name, false);
      }
    }
    vc_used_peak_ = used_now;
    std::fill(vc_demand_wakes_.begin(), vc_demand_wakes_.end(), 0);
    for (const auto& [name, up] : todo) {
      auto id = node_index_.at(name);
      uint16_t v = cluster_->nodes[id.v].vc.v;
      if (up) {
        --off[v];
        ++booting[v];
      } else {
        --idle_on[v];
        ++off[v];
      }
    }
    ORR_RETURN_IF_ERROR(PlanAndApplyPower(now, todo, "ces", st));
  }

  // 2. Wake-ups for pending jobs (what Slurm's own power saving does when it allocates a
  // powered-down node; here jobs are held, so the daemon wakes them): enough nodes for the
  // VC's pending work beyond its idle powered and booting nodes (and, for small jobs, the
  // free GPUs of partly used nodes); at least one when jobs wait and nothing is on its way.
  // The core's one rule (DemandWakeups, sched/framework/power.h), as in the simulator.
  std::vector<std::pair<std::string, bool>> wake;
  const ClusterState& cs = sched_->cluster_state();
  for (size_t v = 0; v < nv; ++v) {
    VcPowerLoad load;
    load.pending_jobs = pending[v];
    load.off = off[v];
    load.booting = booting[v];
    load.idle_on = idle_on[v];
    load.gpus_per_node = gpn[v];
    load.free_gpus = cs.vc_free_gpus(VcId(static_cast<uint16_t>(v)));
    load.pending_small_milli = small_milli[v];
    load.pending_big_nodes = big_nodes[v];
    uint64_t n = DemandWakeups(load);
    for (NodeId id : cluster_->vcs[v].nodes) {  // lowest-named first
      if (n == 0) break;
      const std::string& name = cluster_->nodes[id.v].name;
      if (!Wakeable(nodes_.at(name))) continue;
      bool dup = false;
      for (const auto& [k, d] : unapplied_) dup |= d.kind == "power-up" && !d.nodes.empty() && d.nodes[0].node == name;
      if (dup) continue;
      wake.emplace_back(name, true);
      ++vc_demand_wakes_[v];
      --n;
    }
  }
  return PlanAndApplyPower(now, wake, "demand", st);
}

Result<CycleStats> Daemon::Cycle() {
  std::lock_guard<std::mutex> lock(mu_);
  auto t0 = std::chrono::steady_clock::now();
  CycleStats st;
  Time now = clock_->Now();
  st.now = now;
  st.cycle = ++cycle_;
  bool full = cursor_ == 0 || (opts_.full_resync_cycles > 0 && cycle_ % opts_.full_resync_cycles == 0);
  auto listing = slurm_->Jobs(opts_.partitions, full ? 0 : cursor_);
  if (!listing.ok()) {
    ++m_slurm_errors_;
    last_error_ = listing.error().message;
    return listing.error();
  }
  auto nodes = slurm_->Nodes(opts_.partitions);
  if (!nodes.ok()) {
    ++m_slurm_errors_;
    last_error_ = nodes.error().message;
    return nodes.error();
  }
  bool changed = false;
  ORR_RETURN_IF_ERROR(ObserveNodes(*nodes, &changed));
  if (changed) need_rebuild_ = true;
  ORR_RETURN_IF_ERROR(journal_->Begin());
  for (const SlurmJob& sj : listing->jobs) Reconcile(sj, now);
  if (listing->full) {
    // Jobs Slurm no longer reports at all (purged after MinJobAge) are gone.
    std::set<uint32_t> seen;
    for (const SlurmJob& sj : listing->jobs) seen.insert(sj.id);
    std::vector<uint32_t> gone;
    for (const auto& [id, lj] : jobs_)
      if (!seen.count(id)) gone.push_back(id);
    for (uint32_t id : gone) {
      Detach(*jobs_[id], now, true);  // left the listing: completed (sacct is not read)
      jobs_.erase(id);
      ++m_completed_;
    }
  }
  cursor_ = listing->cursor;
  if (need_rebuild_) {
    Status s = Rebuild(now);
    if (!s.ok()) {
      auto c = journal_->Commit();
      (void)c;
      return s.error();
    }
    st.rebuilt = true;
  }
  ORR_RETURN_IF_ERROR(journal_->SetCounter("cycle", cycle_));
  ORR_RETURN_IF_ERROR(journal_->Commit());
  st.observe_ms = MsSince(t0);
  if (!unapplied_.empty()) {
    ORR_RETURN_IF_ERROR(journal_->Begin());
    Status s = ApplyPending(now, &st);
    auto c = journal_->Commit();
    ORR_RETURN_IF_ERROR(s);
    ORR_RETURN_IF_ERROR(c);
  }
  if (!paused_) ORR_RETURN_IF_ERROR(Decide(now, &st));
  if (power_ && !paused_) ORR_RETURN_IF_ERROR(PowerStep(now, &st));
  st.pending = sched_->pending_total();
  st.running = sched_->running_total();
  st.total_ms = MsSince(t0);
  // Housekeeping after this cycle's decisions are applied (so not in total_ms): fold the
  // write-ahead log into the database once it has grown past ~4 MB.
  auto t2 = std::chrono::steady_clock::now();
  Status ck = journal_->Checkpoint(1000);
  if (!ck.ok()) Note(now, "error", ck.error().message);
  st.housekeeping_ms = MsSince(t2);
  last_stats_ = st;
  last_cycle_ = now;
  if (st.apply_errors == 0) last_error_.clear();
  double secs = st.total_ms / 1000.0;
  size_t b = 0;
  while (b < kNumBuckets && secs > kLatencyBuckets[b]) ++b;
  latency_hist_[b] += 1;
  return st;
}

Status Daemon::RequestPower(const std::string& node, bool up) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!nodes_.count(node)) return MakeError("no managed node named '" + node + "'");
  ORR_ASSIGN_OR_RETURN(int64_t n, journal_->GetCounter("power"));
  JournalDecision d;
  d.kind = up ? "power-up" : "power-down";
  d.key = fmt::format("{}/{}/{}", d.kind, node, n + 1);
  d.cycle = cycle_;
  d.time = clock_->Now();
  d.nodes = {NodeShare{node, nodes_[node].gpus}};
  ORR_RETURN_IF_ERROR(journal_->Begin());
  Status s = journal_->Plan(&d);
  if (s.ok()) s = journal_->SetCounter("power", n + 1);
  ORR_RETURN_IF_ERROR(journal_->Commit());
  ORR_RETURN_IF_ERROR(s);
  unapplied_[d.key] = d;  // applied at the next cycle
  Remember(d);
  return Status::Ok();
}

void Daemon::SetPaused(bool paused) {
  std::lock_guard<std::mutex> lock(mu_);
  paused_ = paused;
  Note(clock_->Now(), "operator", paused ? "decisions paused" : "decisions resumed");
}

// ---------------------------------------------------------------- views

std::vector<QueueEntry> Daemon::Queue(size_t limit) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<QueueEntry> out;
  if (!sched_) return out;
  Time now = last_cycle_ == kNoTime ? clock_->Now() : last_cycle_;
  // Queued jobs in policy order, per VC.
  std::vector<std::vector<const LiveJob*>> queued(opts_.partitions.size());
  for (const auto& [id, lj] : jobs_)
    if (lj->phase == Phase::kQueued && lj->slot != UINT32_MAX) queued[lj->job.vc.v].push_back(lj.get());
  const bool blocking = sched_->policy().blocking;
  for (size_t v = 0; v < queued.size(); ++v) {
    auto& q = queued[v];
    std::sort(q.begin(), q.end(), [&](const LiveJob* a, const LiveJob* b) {
      const SchedJob &x = sched_->view(a->slot), &y = sched_->view(b->slot);
      if (x.key1 != y.key1) return x.key1 < y.key1;
      if (x.key2 != y.key2) return x.key2 < y.key2;
      return x.seq < y.seq;
    });
    // Predicted start: list scheduling of the queue over the GPUs freed by running jobs'
    // estimated ends (GPU counts only; node fragmentation ignored).
    VcId vc(static_cast<uint16_t>(v));
    int64_t free = static_cast<int64_t>(sched_->cluster_state().vc_free_gpus(vc));
    using End = std::pair<Time, int64_t>;
    std::priority_queue<End, std::vector<End>, std::greater<>> ends;
    for (const auto& [id, lj] : jobs_)
      if ((lj->phase == Phase::kRunning || lj->phase == Phase::kStarting) && lj->slot != UINT32_MAX &&
          lj->job.vc == vc) {
        const SchedJob& sj = sched_->view(lj->slot);
        ends.push({std::max(now, sj.est_end), static_cast<int64_t>(lj->job.gpus)});
      }
    PluginStatus block = sched_->last_block(vc);
    // Energy: nodes of this VC that are booting (woken for the queue or by the policy).
    std::string booting;
    for (NodeId id : cluster_->vcs[v].nodes) {
      const std::string& name = cluster_->nodes[id.v].name;
      auto it = nodes_.find(name);
      if (it != nodes_.end() && it->second.avail == NodeAvail::kPoweringUp) booting += (booting.empty() ? "" : ",") + name;
    }
    Time t = now, prev = now;
    int64_t total = static_cast<int64_t>(sched_->cluster_state().vc_total_gpus(vc));
    for (size_t i = 0; i < q.size() && out.size() < limit; ++i) {
      const LiveJob* lj = q[i];
      const SchedJob& sj = sched_->view(lj->slot);
      QueueEntry e;
      e.job = lj->id;
      e.phase = "queued";
      e.gpus = lj->job.gpus;
      e.nodes = std::max<uint32_t>(1, lj->job.nodes);
      e.submit = lj->job.submit;
      e.position = static_cast<int64_t>(i);
      int64_t need = lj->job.gpus;
      if (need <= total) {
        t = blocking ? std::max(t, prev) : now;
        while (free < need && !ends.empty()) {
          t = std::max(t, ends.top().first);
          free += ends.top().second;
          ends.pop();
        }
        e.predicted_start = t;
        prev = t;
        free -= need;
        Duration est = sj.estimate >= 0 ? sj.estimate : lj->job.duration;
        ends.push({t + std::max<Duration>(1, est), need});
      }
      if (i == 0) {
        e.why = block.ok() ? "first in the queue: starts at the next cycle if it fits"
                           : fmt::format("{}: {}", block.plugin, block.reason);
      } else if (blocking) {
        e.why = fmt::format("behind job {} (position {} in {} order; head-of-line blocking)", q[0]->id, i,
                            sched_->policy().name);
      } else {
        e.why = fmt::format("position {} in {} order: does not fit the free GPUs ({} free, needs {})", i,
                            sched_->policy().name, sched_->cluster_state().vc_free_gpus(vc), need);
      }
      if (!booting.empty() && need > static_cast<int64_t>(sched_->cluster_state().vc_free_gpus(vc)))
        e.why = fmt::format("waits for powered-down node(s) to boot: {} powering up; {}", booting, e.why);
      out.push_back(std::move(e));
    }
  }
  for (const auto& [id, lj] : jobs_) {
    if (out.size() >= limit) break;
    if (lj->phase == Phase::kQueued && lj->slot != UINT32_MAX) continue;
    QueueEntry e;
    e.job = lj->id;
    e.gpus = lj->job.gpus;
    e.nodes = std::max<uint32_t>(1, lj->job.nodes);
    e.submit = lj->job.submit;
    e.where = lj->nodes;
    switch (lj->phase) {
      case Phase::kStarting:
        e.phase = "starting";
        e.why = "released to Slurm on " + NodeNames(lj->nodes) + "; waiting for Slurm to start it";
        e.predicted_start = lj->started;
        break;
      case Phase::kRunning:
        e.phase = "running";
        e.predicted_start = lj->started;
        break;
      case Phase::kRejected:
        e.phase = "rejected";
        e.why = lj->reason + " (kept held; retried when the nodes change)";
        break;
      case Phase::kUnplaced:
        e.phase = "unplaced";
        e.why = "runs on nodes outside the schedulable set (down or powered off)";
        break;
      case Phase::kQueued:
        e.phase = "queued";
        e.why = "waiting for the next cycle";
        break;
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<JournalDecision> Daemon::RecentDecisions(size_t n) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<JournalDecision> out;
  for (auto it = recent_.rbegin(); it != recent_.rend() && out.size() < n; ++it) out.push_back(*it);
  return out;
}

Daemon::Health Daemon::GetHealth() const {
  std::lock_guard<std::mutex> lock(mu_);
  Health h;
  h.ok = last_error_.empty() && last_cycle_ != kNoTime;
  h.paused = paused_;
  h.last_error = last_error_;
  h.last_cycle = last_cycle_;
  h.cycles = cycle_;
  h.nodes_total = nodes_.size();
  for (const auto& [n, s] : nodes_) {
    h.nodes_up += s.avail == NodeAvail::kUp;
    h.nodes_powered_down += s.avail == NodeAvail::kPoweredDown;
    h.nodes_booting += s.avail == NodeAvail::kPoweringUp;
  }
  h.failed_resumes = m_failed_resumes_;
  h.energy = opts_.energy;
  h.events.assign(events_.begin(), events_.end());
  return h;
}

std::string Daemon::MetricsText() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string m;
  auto counter = [&](const char* name, const char* help, uint64_t v) {
    m += fmt::format("# HELP {} {}\n# TYPE {} counter\n{} {}\n", name, help, name, name, v);
  };
  auto gauge = [&](const char* name, const char* help, double v) {
    m += fmt::format("# HELP {} {}\n# TYPE {} gauge\n{} {}\n", name, help, name, name, v);
  };
  m += "# HELP orrery_cycle_duration_seconds Wall time of one observe-decide-apply cycle.\n";
  m += "# TYPE orrery_cycle_duration_seconds histogram\n";
  double cum = 0, count = 0;
  for (size_t i = 0; i <= kNumBuckets; ++i) count += latency_hist_[i];
  for (size_t i = 0; i < kNumBuckets; ++i) {
    cum += latency_hist_[i];
    m += fmt::format("orrery_cycle_duration_seconds_bucket{{le=\"{}\"}} {}\n", kLatencyBuckets[i], cum);
  }
  m += fmt::format("orrery_cycle_duration_seconds_bucket{{le=\"+Inf\"}} {}\n", count);
  m += fmt::format("orrery_cycle_duration_seconds_count {}\n", count);
  gauge("orrery_last_cycle_seconds", "Wall time of the last cycle.", last_stats_.total_ms / 1000.0);
  counter("orrery_cycles_total", "Decision cycles run since the journal was created.", static_cast<uint64_t>(cycle_));
  counter("orrery_decisions_start_total", "Start decisions applied by this process.", m_starts_);
  counter("orrery_decisions_requeue_total", "Preemptions (requeue+hold) applied by this process.", m_requeues_);
  counter("orrery_power_actions_total", "Node power actions applied by this process.", m_power_);
  counter("orrery_apply_errors_total", "Decisions Slurm refused or could not take (retried).", m_apply_errors_);
  counter("orrery_slurm_errors_total", "Cycles that could not read Slurm's state.", m_slurm_errors_);
  counter("orrery_jobs_adopted_total", "Jobs found running without an Orrery decision.", m_adopted_);
  counter("orrery_jobs_requeued_by_slurm_total", "Running jobs Slurm put back to pending.", m_slurm_requeued_);
  counter("orrery_jobs_left_total", "Jobs that ended or left the managed partitions.", m_completed_);
  size_t pending = 0, running = 0, starting = 0;
  for (const auto& [id, lj] : jobs_) {
    pending += lj->phase == Phase::kQueued || lj->phase == Phase::kRejected;
    running += lj->phase == Phase::kRunning || lj->phase == Phase::kUnplaced;
    starting += lj->phase == Phase::kStarting;
  }
  gauge("orrery_jobs_pending", "Jobs waiting for a start decision.", static_cast<double>(pending));
  gauge("orrery_jobs_starting", "Jobs released to Slurm, not yet running.", static_cast<double>(starting));
  gauge("orrery_jobs_running", "Jobs running in the managed partitions.", static_cast<double>(running));
  double total = sched_ ? static_cast<double>(sched_->cluster_state().total_gpus_all()) : 0;
  double busy = sched_ ? static_cast<double>(sched_->cluster_state().busy_gpu_milli()) / 1000.0 : 0;
  gauge("orrery_gpus_total", "GPUs on schedulable (up) nodes.", total);
  gauge("orrery_gpus_allocated", "GPUs allocated to running or starting jobs.", busy);
  gauge("orrery_gpu_utilization", "Allocated / schedulable GPUs.", total > 0 ? busy / total : 0);
  size_t up = 0;
  for (const auto& [n, s] : nodes_) up += s.avail == NodeAvail::kUp;
  gauge("orrery_nodes_up", "Managed nodes that are schedulable.", static_cast<double>(up));
  gauge("orrery_nodes_total", "Managed nodes.", static_cast<double>(nodes_.size()));
  size_t off = 0, booting = 0;
  for (const auto& [n, s] : nodes_) {
    off += s.avail == NodeAvail::kPoweredDown;
    booting += s.avail == NodeAvail::kPoweringUp;
  }
  gauge("orrery_nodes_powered", "Managed nodes powered on (up, not powered down, not booting).", static_cast<double>(up));
  gauge("orrery_nodes_powered_down", "Managed nodes powered down or powering down in Slurm.", static_cast<double>(off));
  gauge("orrery_nodes_booting", "Managed nodes powering up in Slurm.", static_cast<double>(booting));
  m += "# HELP orrery_power_decisions_total Node power decisions applied by this process, by source and kind.\n";
  m += "# TYPE orrery_power_decisions_total counter\n";
  m += fmt::format("orrery_power_decisions_total{{source=\"policy\",kind=\"power-down\"}} {}\n", m_power_ces_down_);
  m += fmt::format("orrery_power_decisions_total{{source=\"policy\",kind=\"power-up\"}} {}\n", m_power_ces_up_);
  m += fmt::format("orrery_power_decisions_total{{source=\"demand\",kind=\"power-up\"}} {}\n", m_power_demand_up_);
  counter("orrery_power_refused_total", "Energy-policy power-downs dropped: the node had work.", m_power_refused_);
  counter("orrery_failed_resumes_total", "Nodes seen going DOWN while powering up (missed ResumeTimeout).", m_failed_resumes_);
  gauge("orrery_paused", "1 when decisions are paused by an operator.", paused_ ? 1 : 0);
  return m;
}

}  // namespace orrery::live
