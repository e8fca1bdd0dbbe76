// The API views (/api/v1/queue, /api/v1/decisions, /healthz, /metrics): read-only, under
// the daemon's lock, from the state the last cycle left.
#include <algorithm>

#include <fmt/format.h>

#include "live/daemon.h"

namespace orrery::live {

namespace {

constexpr double kLatencyBuckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5};
constexpr size_t kNumBuckets = sizeof(kLatencyBuckets) / sizeof(kLatencyBuckets[0]);

std::string NodeNames(const std::vector<NodeShare>& n) {
  std::string s;
  for (size_t i = 0; i < n.size(); ++i) s += (i ? "," : "") + n[i].node;
  return s;
}

}  // namespace

size_t LatencyBucket(double seconds) {
  size_t b = 0;
  while (b < kNumBuckets && seconds > kLatencyBuckets[b]) ++b;
  return b;
}
size_t NumLatencyBuckets() { return kNumBuckets + 1; }

std::vector<QueueEntry> Daemon::Queue(size_t limit) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<QueueEntry> out;
  if (!sched_) return out;
  const Time now = last_cycle_ == kNoTime ? clock_->Now() : last_cycle_;
  std::vector<std::vector<const LiveJob*>> queued(opts_.partitions.size());
  for (const auto& [id, lj] : book_)
    if (lj->state() == JobState::kQueued && lj->slot != UINT32_MAX) queued[lj->job.vc.v].push_back(lj.get());
  for (size_t v = 0; v < queued.size() && out.size() < limit; ++v) QueuedEntries(VcId(static_cast<uint16_t>(v)), queued[v], now, limit, &out);
  for (const auto& [id, lj] : book_) {
    if (out.size() >= limit) break;
    if (lj->state() == JobState::kQueued && lj->slot != UINT32_MAX) continue;
    out.push_back(OtherEntry(*lj));
  }
  for (QueueEntry& e : out) e.as_of = now;
  return out;
}

// Queued jobs of one VC in the policy's order, with why each waits and when it should start.
void Daemon::QueuedEntries(VcId vc, std::vector<const LiveJob*>& q, Time now, size_t limit,
                           std::vector<QueueEntry>* out) const {
  std::sort(q.begin(), q.end(), [&](const LiveJob* a, const LiveJob* b) {
    const SchedJob &x = sched_->view(a->slot), &y = sched_->view(b->slot);
    if (x.key1 != y.key1) return x.key1 < y.key1;
    if (x.key2 != y.key2) return x.key2 < y.key2;
    return x.seq < y.seq;
  });
  const bool blocking = sched_->policy().blocking;
  const uint64_t free_now = sched_->cluster_state().vc_free_gpus(vc);
  const PluginStatus block = sched_->last_block(vc);
  const std::string booting = BootingNodes(vc);
  for (size_t i = 0; i < q.size() && out->size() < limit; ++i) {
    const LiveJob* lj = q[i];
    QueueEntry e;
    e.job = lj->id;
    e.state = JobState::kQueued;
    e.gpus = lj->job.gpus;
    e.nodes = std::max<uint32_t>(1, lj->job.nodes);
    e.submit = lj->job.submit;
    e.position = static_cast<int64_t>(i);
    // The core's answer (a dry run of the policy on a copy of the scheduler, one per cycle
    // for every queued job), the same as `orrery explain` gives.
    const StartPrediction p = sched_->PredictStart(lj->slot, now);
    e.predicted_start = p.at;
    e.prediction = PredictionKindName(p.kind);
    FillSignals(*lj, &e);
    if (i == 0) {
      e.why = block.ok() ? "first in the queue: starts at the next cycle if it fits"
                         : fmt::format("{}: {}", block.plugin, block.reason);
    } else if (blocking) {
      e.why = fmt::format("behind job {} (position {} in {} order; head-of-line blocking)", q[0]->id, i,
                          sched_->policy().name);
    } else {
      e.why = fmt::format("position {} in {} order: does not fit the free GPUs ({} free, needs {})", i,
                          sched_->policy().name, free_now, lj->job.gpus);
    }
    if (!booting.empty() && lj->job.gpus > free_now)
      e.why = fmt::format("waits for powered-down node(s) to boot: {} powering up; {}", booting, e.why);
    e.failure = lj->failure;  // a requeued job's last failure
    out->push_back(std::move(e));
  }
}

// Nodes of `vc` that are booting (woken for the queue or by the energy policy).
std::string Daemon::BootingNodes(VcId vc) const {
  std::string booting;
  for (NodeId id : cluster_->vcs[vc.v].nodes) {
    const std::string& name = cluster_->nodes[id.v].name;
    auto it = nodes_.find(name);
    if (it != nodes_.end() && it->second.avail == NodeAvail::kPoweringUp) booting += (booting.empty() ? "" : ",") + name;
  }
  return booting;
}

QueueEntry Daemon::OtherEntry(const LiveJob& lj) const {
  QueueEntry e;
  e.job = lj.id;
  e.state = lj.state();
  e.gpus = lj.job.gpus;
  e.nodes = std::max<uint32_t>(1, lj.job.nodes);
  e.submit = lj.job.submit;
  e.where = lj.nodes;
  FillSignals(lj, &e);
  switch (lj.state()) {
    case JobState::kStarting:
      e.why = "released to Slurm on " + NodeNames(lj.nodes) + "; waiting for Slurm to start it";
      e.predicted_start = lj.started;
      e.prediction = PredictionKindName(PredictionKind::kRunning);
      break;
    case JobState::kRunning:
      e.predicted_start = lj.started;
      e.prediction = PredictionKindName(PredictionKind::kRunning);
      break;
    case JobState::kRejected:
      e.why = lj.reason + " (kept held; retried when the nodes change)";
      break;
    case JobState::kUnplaced:
      e.why = "runs on nodes outside the schedulable set (down or powered off)";
      break;
    case JobState::kQueued:
      e.why = "waiting for the next cycle";
      break;
    case JobState::kUnheld:
      e.why = "not held in Slurm: enters the queue once the daemon's hold shows";
      break;
    case JobState::kRecovering:
      e.why = lj.reason.empty() ? "failed or hung: being diagnosed" : "recovering: " + lj.reason;
      break;
    case JobState::kFailed:
      e.why = lj.reason;
      break;
  }
  e.failure = lj.failure;
  return e;
}

std::optional<SchedJob> Daemon::JobView(uint32_t job) const {
  std::lock_guard<std::mutex> lock(mu_);
  const LiveJob* lj = book_.Find(job);
  if (!sched_ || !lj || lj->slot == kNoSlot) return std::nullopt;
  return sched_->view(lj->slot);
}

std::vector<JournalDecision> Daemon::RecentDecisions(size_t n) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<JournalDecision> out;
  for (auto it = ledger_.recent.rbegin(); it != ledger_.recent.rend() && out.size() < n; ++it) out.push_back(*it);
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
  h.failed_resumes = power_.failed_resumes();
  h.energy = opts_.energy;
  h.events.assign(events_.recent().begin(), events_.recent().end());
  return h;
}

namespace {

struct Metrics {
  std::string m;
  void Counter(const char* name, const char* help, uint64_t v) {
    m += fmt::format("# HELP {} {}\n# TYPE {} counter\n{} {}\n", name, help, name, name, v);
  }
  void Gauge(const char* name, const char* help, double v) {
    m += fmt::format("# HELP {} {}\n# TYPE {} gauge\n{} {}\n", name, help, name, name, v);
  }
  void Histogram(const std::vector<double>& hist) {
    m += "# HELP orrery_cycle_duration_seconds Wall time of one observe-decide-apply cycle.\n";
    m += "# TYPE orrery_cycle_duration_seconds histogram\n";
    double cum = 0, count = 0;
    for (double c : hist) count += c;
    for (size_t i = 0; i < kNumBuckets; ++i) {
      cum += hist[i];
      m += fmt::format("orrery_cycle_duration_seconds_bucket{{le=\"{}\"}} {}\n", kLatencyBuckets[i], cum);
    }
    m += fmt::format("orrery_cycle_duration_seconds_bucket{{le=\"+Inf\"}} {}\n", count);
    m += fmt::format("orrery_cycle_duration_seconds_count {}\n", count);
  }
};

}  // namespace

// A queue entry's estimate (the scheduler's view) and its progress and input problem (the signals).
void Daemon::FillSignals(const LiveJob& lj, QueueEntry* e) const {
  if (sched_ && lj.slot != UINT32_MAX) {
    const SchedJob& v = sched_->view(lj.slot);
    e->estimate = v.estimate;
    e->estimate_source = v.est_source;
  }
  const LiveSignals* signals = signals_.live();
  if (!signals) return;
  if (const ProgressView* p = signals->View(lj.id); p && lj.state() == JobState::kRunning) e->progress = *p;
  e->input_error = signals->InputError(lj.id);
}

// The semantic signals' counters and, per running job with a reading, its progress
// (labels: job id; one series per running job, gone when it ends).
void Daemon::SignalsMetrics(std::string* out) const {
  Metrics x;
  const LiveSignals::Stats& s = signals_.live()->stats();
  x.Counter("orrery_signals_scripts_read_total", "Batch scripts read for the advisor.", s.scripts_read);
  x.Counter("orrery_signals_script_errors_total", "Batch scripts that could not be read.", s.script_errors);
  x.Counter("orrery_signals_lookups_total", "scontrol show job calls for StdOut paths.", s.lookups);
  x.Counter("orrery_signals_lookup_errors_total", "StdOut lookups that failed (retried later).", s.lookup_errors);
  x.Counter("orrery_signals_log_bytes_read_total", "Bytes of job logs read.", s.bytes_read);
  x.Counter("orrery_signals_log_bytes_skipped_total", "Backlog bytes of job logs skipped unread (newest lines only).",
            s.bytes_skipped);
  x.Counter("orrery_signals_log_lines_total", "Complete log lines fed to the progress tracker.", s.lines);
  x.Counter("orrery_signals_log_truncations_total", "Job logs seen truncated (read again from byte 0).", s.truncations);
  x.Counter("orrery_signals_log_rotations_total", "Job logs seen rotated (the path names a new file).", s.rotations);
  x.Counter("orrery_signals_log_read_errors_total", "Job log reads that failed (retried later).", s.read_errors);
  x.Counter("orrery_signals_reports_total", "Progress readings reported to the policy.", s.reports);
  x.Counter("orrery_signals_capped_cycles_total", "Cycles whose log byte budget ran out before every due job was read.",
            s.capped_cycles);
  x.Counter("orrery_signals_llm_calls_total", "Questions sent to the LLM backend about unknown log formats.", s.llm_calls);
  x.Counter("orrery_signals_llm_config_questions_total",
            "Batch scripts the readers could not read well, sent to the LLM backend (in the background).", s.llm_config_questions);
  x.Counter("orrery_signals_llm_config_cached_total", "Batch scripts answered from the LLM answer cache at first sight.",
            s.llm_config_cached);
  x.Counter("orrery_signals_llm_config_merged_total", "LLM answers about batch scripts validated and merged.", s.llm_config_merged);
  x.Counter("orrery_signals_llm_config_rejected_total", "LLM answers about batch scripts rejected as invalid.",
            s.llm_config_rejected);
  x.Counter("orrery_signals_llm_config_failed_total", "LLM questions about batch scripts without an answer (transport, timeout).",
            s.llm_config_failed);
  std::vector<std::pair<uint32_t, const ProgressView*>> views;
  for (const auto& [id, lj] : book_)
    if (lj->state() == JobState::kRunning)
      if (const ProgressView* p = signals_.live()->View(id)) views.emplace_back(id, p);
  std::sort(views.begin(), views.end());
  auto series = [&](const char* name, const char* help, auto value) {
    x.m += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", name, help, name);
    for (const auto& [id, p] : views)
      if (auto v = value(*p)) x.m += fmt::format("{}{{job=\"{}\"}} {}\n", name, id, *v);
  };
  const Time now = last_cycle_;
  series("orrery_job_progress_step", "Steps a running job's log shows done.",
         [](const ProgressView& p) { return std::optional<double>(static_cast<double>(p.step)); });
  series("orrery_job_progress_total_steps", "Steps a running job's log says it will run.", [](const ProgressView& p) {
    return p.total > 0 ? std::optional<double>(static_cast<double>(p.total)) : std::nullopt;
  });
  series("orrery_job_progress_ratio", "Steps done / total steps of a running job (0..1).", [](const ProgressView& p) {
    return p.fraction() >= 0 ? std::optional<double>(p.fraction()) : std::nullopt;
  });
  series("orrery_job_eta_seconds", "A running job's remaining time by the progress tracker, as of the last cycle.",
         [now](const ProgressView& p) { return p.remaining_s(now); });
  *out += x.m;
}

std::string Daemon::MetricsText() const {
  std::lock_guard<std::mutex> lock(mu_);
  Metrics x;
  x.Histogram(latency_hist_);
  x.Gauge("orrery_last_cycle_seconds", "Wall time of the last cycle.", last_stats_.total_ms / 1000.0);
  x.Counter("orrery_cycles_total", "Decision cycles run since the journal was created.", static_cast<uint64_t>(cycle_));
  x.Counter("orrery_decisions_start_total", "Start decisions applied by this process.", applier_.starts());
  x.Counter("orrery_decisions_requeue_total", "Preemptions (requeue+hold) applied by this process.", applier_.requeues());
  x.Counter("orrery_reshapes_total", "Requests of opted-in jobs changed to the planner's shape before their release.",
            applier_.reshapes());
  x.Counter("orrery_shape_line_errors_total", "Batch scripts whose #ORRERY line was refused (the job keeps its request).",
            m_flex_errors_);
  x.Counter("orrery_power_actions_total", "Node power actions applied by this process.", applier_.power_actions());
  x.Counter("orrery_apply_errors_total", "Decisions Slurm refused or could not take (retried).", applier_.apply_errors());
  x.Counter("orrery_slurm_errors_total", "Cycles that could not read Slurm's state.", m_slurm_errors_);
  x.Counter("orrery_node_rows_total",
            "Node rows Slurm listed as new, changed or gone (every row of a full listing), read by this process.",
            m_node_rows_);
  x.Counter("orrery_illegal_moves_total",
            "Job state changes the daemon's tables lack (a defect; each is also an error event).", book_.illegal_moves());
  x.Counter("orrery_journal_errors_total", "Journal writes of events that failed (the event is only in memory).",
            events_.journal_errors());
  x.Counter("orrery_jobs_adopted_total", "Jobs found running without an Orrery decision.", reconciler_.adopted());
  x.Counter("orrery_jobs_requeued_by_slurm_total", "Running jobs Slurm put back to pending.", reconciler_.slurm_requeued());
  x.Counter("orrery_jobs_left_total", "Jobs that ended or left the managed partitions.", m_completed_);
  size_t pending = 0, running = 0, starting = 0;
  for (const auto& [id, lj] : book_) {
    pending += lj->state() == JobState::kQueued || lj->state() == JobState::kUnheld || lj->state() == JobState::kRejected;
    running += lj->state() == JobState::kRunning || lj->state() == JobState::kUnplaced;
    starting += lj->state() == JobState::kStarting;
  }
  x.Gauge("orrery_jobs_pending", "Jobs waiting for a start decision.", static_cast<double>(pending));
  x.Gauge("orrery_jobs_starting", "Jobs released to Slurm, not yet running.", static_cast<double>(starting));
  x.Gauge("orrery_jobs_running", "Jobs running in the managed partitions.", static_cast<double>(running));
  const double total = sched_ ? static_cast<double>(sched_->cluster_state().total_gpus_all()) : 0;
  const double busy = sched_ ? static_cast<double>(sched_->cluster_state().busy_gpu_milli()) / 1000.0 : 0;
  x.Gauge("orrery_gpus_total", "GPUs on schedulable (up) nodes.", total);
  x.Gauge("orrery_gpus_allocated", "GPUs allocated to running or starting jobs.", busy);
  x.Gauge("orrery_gpu_utilization", "Allocated / schedulable GPUs.", total > 0 ? busy / total : 0);
  size_t up = 0, off = 0, booting = 0;
  for (const auto& [n, s] : nodes_) {
    up += s.avail == NodeAvail::kUp;
    off += s.avail == NodeAvail::kPoweredDown;
    booting += s.avail == NodeAvail::kPoweringUp;
  }
  x.Gauge("orrery_nodes_up", "Managed nodes that are schedulable.", static_cast<double>(up));
  x.Gauge("orrery_nodes_total", "Managed nodes.", static_cast<double>(nodes_.size()));
  x.Gauge("orrery_nodes_powered", "Managed nodes powered on (up, not powered down, not booting).", static_cast<double>(up));
  x.Gauge("orrery_nodes_powered_down", "Managed nodes powered down or powering down in Slurm.", static_cast<double>(off));
  x.Gauge("orrery_nodes_booting", "Managed nodes powering up in Slurm.", static_cast<double>(booting));
  x.m += "# HELP orrery_power_decisions_total Node power decisions applied by this process, by source and kind.\n";
  x.m += "# TYPE orrery_power_decisions_total counter\n";
  x.m += fmt::format("orrery_power_decisions_total{{source=\"policy\",kind=\"power-down\"}} {}\n", power_.ces_downs());
  x.m += fmt::format("orrery_power_decisions_total{{source=\"policy\",kind=\"power-up\"}} {}\n", power_.ces_ups());
  x.m += fmt::format("orrery_power_decisions_total{{source=\"demand\",kind=\"power-up\"}} {}\n", power_.demand_ups());
  x.Counter("orrery_power_refused_total", "Energy-policy power-downs dropped: the node had work.", power_.refused());
  x.Counter("orrery_failed_resumes_total", "Nodes seen going DOWN while powering up (missed ResumeTimeout).",
            power_.failed_resumes());
  x.Gauge("orrery_paused", "1 when decisions are paused by an operator.", paused_ ? 1 : 0);
  if (signals_.on()) SignalsMetrics(&x.m);
  x.Counter("orrery_recoveries_total", "Failed or hung jobs diagnosed and acted on by this process.", recoverer_.recoveries());
  x.Counter("orrery_hangs_total", "Jobs found without progress for the configured time.", recoverer_.hangs());
  x.Counter("orrery_give_ups_total", "Failed jobs not retried (script errors, restart limit).", recoverer_.give_ups());
  x.Counter("orrery_drains_total", "Nodes drained by recovery in this process.", recoverer_.drains());
  x.Counter("orrery_undrains_total", "Drained nodes returned to service by an operator.", recoverer_.undrains());
  x.Gauge("orrery_drains_awaiting", "Drains over the hourly limit waiting for an operator.",
          static_cast<double>(recoverer_.awaiting()));
  return x.m;
}

}  // namespace orrery::live
