// `orrery replay --slurm TRACE --speedup N`: submits a segment of a trace to a live Slurm
// partition as scaled sleep jobs (sbatch --hold, each at its scaled arrival time), drives
// the chosen policy with the same live Daemon as `orrery serve` (in-process, journal in the
// output folder), waits until every job has ended, then runs Simulate() on exactly the same
// scaled segment on a cluster built from what sinfo reports, and compares measured (Slurm's
// own submit/start/end times, from squeue) with predicted JCT and queueing delay
// (docs/live.md "Replay", docs/formats/replay.md). On SIGINT/SIGTERM or any error it
// cancels every job it submitted that has not ended.
//
// With --native Slurm schedules by itself: the jobs are submitted unheld, each under a user
// and account of the policy's sacctmgr listing and with a time limit, no daemon runs (the
// replay only polls squeue), and the prediction is `--policy slurm:conf=FILE,...` on the same
// jobs (docs/validation/slurm-native.md).
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/io.h"
#include "cli/commands.h"
#include "cli/live_runtime.h"
#include "cli/replay.h"
#include "live/daemon.h"
#include "live/journal.h"
#include "live/live_policy.h"
#include "live/serve_config.h"
#include "live/slurm_cluster.h"
#include "live/slurm_client.h"
#include "sched/plugins/spec_args.h"
#include "sim/simulator.h"
#include "slurm/accounts.h"
#include "slurm/conf.h"
#include "trace/import.h"

namespace orrery::cli {

namespace {

double WallNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Forwards to the real client and keeps the last state Slurm reported for the replay's own
// jobs (squeue -t all keeps ended jobs for MinJobAge, 300 s by default): the measured times
// come from the same listings the daemon observes, at no extra squeue call.
class RecordingClient final : public live::SlurmClient {
 public:
  explicit RecordingClient(live::SlurmClient* inner) : inner_(inner) {}
  void Track(uint32_t id) { tracked_.insert(id); }
  const std::map<uint32_t, live::SlurmJob>& seen() const { return seen_; }
  bool Ended(uint32_t id) const {
    auto it = seen_.find(id);
    return it != seen_.end() && live::IsTerminal(it->second.state);
  }
  Result<live::JobListing> ListJobs(const std::vector<std::string>& p, uint64_t cursor, live::Sweep sweep) override {
    auto l = inner_->Jobs(p, cursor, sweep);
    if (l.ok())
      for (const live::SlurmJob& j : l->jobs)
        if (tracked_.count(j.id)) seen_[j.id] = j;
    return l;
  }
  Result<std::vector<live::SlurmNode>> Nodes(const std::vector<std::string>& p) override { return inner_->Nodes(p); }
  Result<live::NodeListing> ListNodeChanges(const std::vector<std::string>& p, uint64_t cursor,
                                             live::Sweep sweep) override {
    return inner_->NodeChanges(p, cursor, sweep);
  }
  Status Hold(uint32_t j) override { return inner_->Hold(j); }
  Status StartOn(uint32_t j, const std::vector<live::NodeShare>& n, bool r) override { return inner_->StartOn(j, n, r); }
  Status Reshape(uint32_t j, const std::vector<live::NodeShare>& n) override { return inner_->Reshape(j, n); }
  Status RequeueHold(uint32_t j) override { return inner_->RequeueHold(j); }
  Status SetPriority(uint32_t j, uint32_t p) override { return inner_->SetPriority(j, p); }
  Status PowerDown(const std::string& n) override { return inner_->PowerDown(n); }
  Status PowerUp(const std::string& n) override { return inner_->PowerUp(n); }
  Result<uint32_t> Submit(const live::SubmitSpec& s) override { return inner_->Submit(s); }
  Status Cancel(uint32_t j) override { return inner_->Cancel(j); }
  Status Drain(const std::string& n, const std::string& r) override { return inner_->Drain(n, r); }
  Status Undrain(const std::string& n) override { return inner_->Undrain(n); }
  Status RestartHeld(uint32_t j) override { return inner_->RestartHeld(j); }
  Result<live::JobFiles> Files(uint32_t j) override { return inner_->Files(j); }
  Result<std::string> BatchScript(uint32_t j) override { return inner_->BatchScript(j); }

 private:
  live::SlurmClient* inner_;
  std::set<uint32_t> tracked_;
  std::map<uint32_t, live::SlurmJob> seen_;
};

struct Options {
  std::string trace, format = "auto";
  double speedup = 0;
  std::string policy = "fifo", placer = "consolidate";
  uint64_t seed = 1;
  uint64_t skip = 0, jobs = 0;
  int64_t window = 0;
  std::string partition, config, slurm_conf, bin_dir;
  std::string out_dir = "orrery-replay";
  int interval_ms = 200;
  bool clamp_oversize = false;
  int64_t max_duration = 0;
  int64_t max_wall = 0;
  int64_t wave_latency = 1;   // s a start that waits for a completion pays live (replay::HoldLonger)
  int timeout_ms = 10000;
  bool skip_bad_rows = false;
  bool swf_procs_as_gpus = false;
  bool dry_run = false;       // select, scale and predict only; nothing is submitted
  bool warmup = true;         // one short job through Slurm before t0 (see RunWarmup)
  bool native = false;        // Slurm schedules by itself; the policy is `slurm` (predicts it)
  uint32_t dry_nodes = 0, dry_node_gpus = 8;  // with --dry-run: this cluster instead of sinfo's
};

int ReplayFail(const std::string& msg, int code = kExitBadInput) {
  fmt::print(stderr, "orrery replay: {}\n", msg);
  return code;
}

// A freshly started slurmctld does not act on its first releases at once (measured: jobs
// released 2.3 s after start were allocated 2.3 s later; later ones in the same second).
// One unheld `sleep 0` job on one GPU, run to its end before t0, takes that out of the
// measurement. Returns an error when Slurm does not run it within 60 s.
Status RunWarmup(live::SlurmClient& slurm, const std::string& partition) {
  live::SubmitSpec w;
  w.name = "orrery-replay-warmup";
  w.partition = partition;
  w.gpus_per_node = 1;
  w.sleep_s = 0;
  w.hold = false;
  ORR_ASSIGN_OR_RETURN(uint32_t id, slurm.Submit(w));
  for (int i = 0; i < 600; ++i) {
    ORR_ASSIGN_OR_RETURN(live::JobListing l, slurm.Jobs({partition}, 0));
    for (const live::SlurmJob& j : l.jobs)
      if (j.id == id && live::IsTerminal(j.state)) return Status::Ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::string also;
  if (Status c = slurm.Cancel(id); !c.ok()) also = "; cancelling it failed too: " + c.error().message;
  return MakeError("the warm-up job " + std::to_string(id) + " did not run within 60 s (is the partition usable?)" + also,
                   kExitRuntime);
}

// --- options, trace (nothing touches Slurm before these are valid)

// --native predicts Slurm with the slurm policy: any other is refused.
Status CheckNativePolicy(const std::string& policy) {
  auto spec = ParsePluginSpec(policy, "policy");
  if (!spec.ok()) return MakeError("--policy: " + spec.error().message);
  if (spec->name != "slurm")
    return MakeError("--native: Slurm schedules by itself, so the prediction must be Slurm's model: expected --policy "
                     "slurm:conf=FILE[,accounts=FILE], got '" + policy + "'");
  return Status::Ok();
}

// Checks the options and fills in the Slurm client's options and the partition (from
// --config). Errors carry the exit code.
Status CheckOptions(Options* o, live::ExecSlurmOptions* so) {
  if (!(o->speedup > 0)) return MakeError("--speedup must be a positive number");
  if (o->interval_ms < 10) return MakeError("--interval-ms must be at least 10");
  // The live daemon runs the policy: what live mode refuses is refused here, before Slurm.
  if (o->native) {
    if (Status s = CheckNativePolicy(o->policy); !s.ok()) return s;
  } else if (Status s = live::CheckLivePolicy(o->policy, o->seed); !s.ok()) {
    return MakeError("--policy: " + s.error().message);
  }
  if (!o->config.empty()) {
    ORR_ASSIGN_OR_RETURN(live::ServeConfig cfg, live::LoadServeConfig(o->config));
    *so = cfg.slurm;
    if (o->partition.empty() && !cfg.daemon.partitions.empty()) o->partition = cfg.daemon.partitions.front();
  }
  if (!o->slurm_conf.empty()) so->slurm_conf = o->slurm_conf;
  if (!o->bin_dir.empty()) so->bin_dir = o->bin_dir;
  so->timeout_ms = o->timeout_ms;
  if (o->partition.empty()) return MakeError("give --partition P (or --config serve.toml)");
  return Status::Ok();
}

Result<Trace> LoadReplayTrace(const Options& o) {
  ORR_ASSIGN_OR_RETURN(TraceFormat fmt, ParseTraceFormat(o.format));
  ImportOptions io;
  io.skip_bad_rows = o.skip_bad_rows;
  io.swf_procs_as_gpus = o.swf_procs_as_gpus;
  return LoadTrace(o.trace, fmt, io, nullptr);
}

// --- the live cluster as sinfo reports it (or, for a dry run, as given)

struct LiveCluster {
  std::vector<live::SlurmNode> up;  // the partition's schedulable GPU nodes, by name
  uint16_t node_gpus = 0;           // the smallest GPU count among them
  Cluster cluster;
};

// The partition's nodes and how many of its jobs have not ended (none for a --dry-nodes run).
struct Listing {
  std::vector<live::SlurmNode> nodes;
  size_t busy = 0;
};

Result<Listing> ListNodes(const Options& o, live::ExecSlurmClient& exec) {
  Listing l;
  if (o.dry_run && o.dry_nodes > 0) {
    for (uint32_t k = 1; k <= o.dry_nodes; ++k)
      l.nodes.push_back(live::SlurmNode{"node" + std::to_string(k), o.partition, "idle", live::NodeAvail::kUp,
                                        static_cast<uint16_t>(o.dry_node_gpus), 0});
    return l;
  }
  auto nodes = exec.Nodes({o.partition});
  if (!nodes.ok()) return MakeError("cannot reach Slurm: " + nodes.error().message);
  auto probe = exec.Jobs({o.partition}, 0);
  if (!probe.ok()) return MakeError("cannot reach Slurm: " + probe.error().message);
  l.nodes = std::move(*nodes);
  for (const live::SlurmJob& j : probe->jobs)
    if (!live::IsTerminal(j.state)) ++l.busy;
  return l;
}

Result<LiveCluster> ReadCluster(const Options& o, live::ExecSlurmClient& exec) {
  ORR_ASSIGN_OR_RETURN(Listing l, ListNodes(o, exec));
  LiveCluster lc;
  size_t not_up = 0;
  for (const live::SlurmNode& n : l.nodes) {
    if (n.partition != o.partition) continue;
    if (n.avail == live::NodeAvail::kUp && n.gpus > 0) lc.up.push_back(n);
    else ++not_up;
  }
  if (lc.up.empty())
    return MakeError(fmt::format("partition '{}' not found or has no schedulable GPU node (sinfo reports {} node(s) there)",
                                 o.partition, not_up));
  std::sort(lc.up.begin(), lc.up.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  lc.node_gpus = lc.up.front().gpus;
  for (const auto& n : lc.up) lc.node_gpus = std::min(lc.node_gpus, n.gpus);
  if (l.busy && !o.dry_run)
    return MakeError(fmt::format("partition '{}' has {} job(s) pending or running; a replay needs it idle (its "
                                 "measurements would include them)", o.partition, l.busy));
  std::vector<const live::SlurmNode*> model;
  for (const auto& n : lc.up) model.push_back(&n);
  lc.cluster = live::ClusterFromSinfo({o.partition}, std::move(model)).cluster;
  return lc;
}

Result<replay::Segment> Select(const Options& o, const Trace& trace, const LiveCluster& lc) {
  replay::SegmentOptions sopt;
  sopt.skip = o.skip;
  sopt.jobs = o.jobs;
  sopt.window = o.window;
  sopt.speedup = o.speedup;
  sopt.node_gpus = lc.node_gpus;
  sopt.cluster_nodes = static_cast<uint32_t>(lc.up.size());
  sopt.clamp_oversize = o.clamp_oversize;
  sopt.max_duration = o.max_duration;
  return replay::SelectSegment(trace, sopt);
}

// --- --native: the users and accounts jobs are submitted under, and their CPUs

struct NativeSetup {
  std::vector<replay::NativeUser> users;  // empty: the invoking user, under its default account
  std::vector<uint32_t> assigned;         // per segment job, an index into users
  uint32_t cpus_per_gpu = 0;              // the partition's first node: CPUs / GPUs (slurm.conf)
};

// From the policy's files: the conf must define the replay's partition (it is the
// configuration Slurm runs with), the accounts file (if any) must list a user.
Result<NativeSetup> PrepareNative(const Options& o, const replay::Segment& seg) {
  NativeSetup ns;
  ORR_ASSIGN_OR_RETURN(PluginSpec spec, ParsePluginSpec(o.policy, "policy"));
  std::string conf, accounts;
  for (const auto& [k, v] : spec.params) {
    if (k == "conf") conf = v;
    if (k == "accounts") accounts = v;
  }
  if (conf.empty()) return MakeError("--native: expected --policy slurm:conf=FILE (the slurm.conf Slurm runs with)");
  ORR_ASSIGN_OR_RETURN(slurm::SlurmConf sc, slurm::ReadSlurmConf(conf));
  const slurm::PartitionDef* part = nullptr;
  for (const slurm::PartitionDef& p : sc.partitions)
    if (p.name == o.partition) part = &p;
  if (!part || part->nodes.empty())
    return MakeError("--native: " + conf + " has no partition '" + o.partition +
                     "' with nodes (expected the slurm.conf the replayed Slurm runs with)");
  const slurm::NodeDef& node = sc.nodes[part->nodes.front()];
  if (node.gpus > 0) ns.cpus_per_gpu = node.cpus / node.gpus;
  if (!accounts.empty()) {
    ORR_ASSIGN_OR_RETURN(slurm::Accounts acc, slurm::ReadSacctmgr(accounts));
    ns.users = replay::NativeUsers(acc);
    if (ns.users.empty()) return MakeError("--native: " + accounts + " lists no user association");
    ns.assigned = replay::AssignUsers(seg, ns.users.size());
  }
  return ns;
}

// --- the prediction

SimConfig PredictionConfig(const Options& o) {
  SimConfig sc;
  sc.policy = o.policy;
  sc.placer = o.placer;
  sc.seed = o.seed;
  sc.sample_interval = 0;
  return sc;
}

// Simulate() on the replay's trace with the wave latency modelled (replay::HoldLonger).
Result<SimResult> Predict(const Options& o, const Trace& trace, const Cluster& cluster) {
  ORR_ASSIGN_OR_RETURN(SimResult r, Simulate(replay::HoldLonger(trace, o.wave_latency), cluster, PredictionConfig(o)));
  replay::ReleaseEarlier(r.outcomes, o.wave_latency);
  return r;
}

Time Makespan(const SimResult& sim) {
  Time makespan = 0;
  for (const JobOutcome& oc : sim.outcomes)
    if (oc.end != kNoTime) makespan = std::max(makespan, oc.end);
  return makespan;
}

void PrintPlan(const Options& o, const replay::Segment& seg, const LiveCluster& lc, Time makespan, double max_wall) {
  fmt::print("orrery replay: {} job(s) of {} (skip {}, {} considered: {} CPU-only, {} without duration, {} larger than "
             "the cluster {}) at speedup {} on partition '{}' ({} node(s) × {} GPUs), policy {}, placer {}\n",
             seg.jobs.size(), o.trace, o.skip, seg.considered, seg.skipped_cpu, seg.skipped_no_duration,
             o.clamp_oversize ? seg.clamped_oversize : seg.skipped_oversize, o.clamp_oversize ? "clamped" : "skipped",
             o.speedup, o.partition, lc.up.size(), lc.node_gpus, o.policy, o.placer);
  if (seg.reshaped || seg.fractional || seg.duration_capped)
    fmt::print("orrery replay: {} job(s) rounded up to equal GPUs per node, {} fractional job(s) as 1 GPU, {} duration(s) "
               "capped at {} s\n", seg.reshaped, seg.fractional, seg.duration_capped, o.max_duration);
  fmt::print("orrery replay: predicted makespan {} s (last arrival {} s); giving up after {:.0f} s\n", makespan,
             seg.jobs.back().arrival, max_wall);
  std::fflush(stdout);
}

void PrintDryRun(const replay::Segment& seg, const SimResult& sim) {
  const size_t n = seg.jobs.size();
  double w = 0, jct = 0;
  for (size_t i = 0; i < n; ++i) {
    w += static_cast<double>(sim.outcomes[i].start - seg.jobs[i].arrival);
    jct += static_cast<double>(sim.outcomes[i].end - seg.jobs[i].arrival);
  }
  fmt::print("orrery replay: dry run: predicted avg JCT {:.2f} s, avg queueing delay {:.2f} s; nothing submitted\n",
             jct / static_cast<double>(n), w / static_cast<double>(n));
}

// --- the live run

// The output folder and a fresh journal in it.
Result<std::unique_ptr<live::Journal>> OpenJournal(const std::string& out_dir) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) return MakeError("cannot create " + out_dir + ": " + ec.message());
  const std::string jpath = out_dir + "/replay-journal.db";
  for (const char* suf : {"", "-wal", "-shm"}) std::filesystem::remove(jpath + suf, ec);
  return live::Journal::Open(jpath, false);
}

// SIGINT/SIGTERM set g_stop while it lives; the previous handlers come back after.
class StopOnSignals {
 public:
  StopOnSignals() {
    struct sigaction sa {};
    sa.sa_handler = OnSignal;
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopOnSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

// What the submission and cycle loop did.
struct LiveRun {
  Time t0 = 0;                // job i is submitted 50 ms into second t0 + arrival_i
  std::vector<uint32_t> ids;  // Slurm id per segment job (0 = not submitted)
  size_t next = 0, ended = 0;
  std::string abort_why;      // empty: every job ended
  int64_t cycles = 0, failed_cycles = 0;
  double cycle_ms = 0;
  double wall = 0;
};

class ReplayLoop {
 public:
  // daemon: the steered replay's; null with --native (Slurm schedules; the loop only polls).
  ReplayLoop(const Options& o, const replay::Segment& seg, RecordingClient& slurm, live::Daemon* daemon,
             const NativeSetup* native, double max_wall)
      : o_(o), seg_(seg), slurm_(slurm), daemon_(daemon), native_(native), max_wall_(max_wall) {}

  LiveRun Run() {
    // t0: the next whole second (Slurm's times are whole seconds); job i is submitted 50 ms
    // into second t0 + arrival_i so that Slurm's submit second is that one.
    r_.t0 = static_cast<Time>(std::floor(WallNow())) + 1;
    r_.ids.assign(seg_.jobs.size(), 0);
    last_progress_ = WallNow();
    while (Step()) {
    }
    r_.wall = WallNow() - static_cast<double>(r_.t0);
    return std::move(r_);
  }

 private:
  double Due(size_t i) const { return static_cast<double>(r_.t0 + seg_.jobs[i].arrival) + 0.05; }

  // One cycle: submissions due, the daemon's cycle, progress; then sleeps. False when done.
  bool Step() {
    const size_t n = seg_.jobs.size();
    const double cycle_start = WallNow();
    if (g_stop.load()) {
      r_.abort_why = "interrupted";
      return false;
    }
    if (cycle_start - static_cast<double>(r_.t0) > max_wall_) {
      r_.abort_why = fmt::format("not finished after {:.0f} s (--max-wall)", max_wall_);
      return false;
    }
    if (!SubmitDue(cycle_start) || !Cycle()) return false;
    r_.ended = 0;
    for (size_t i = 0; i < r_.next; ++i) r_.ended += slurm_.Ended(r_.ids[i]);
    if (r_.next == n && r_.ended == n) return false;
    ReportProgress();
    SleepUntilNext(cycle_start);
    return true;
  }

  // Submissions due now, but at most ~0.3 s of sbatch calls per cycle: a burst of arrivals
  // must not stall the daemon's observation of completions (those that wait are submitted
  // later; the comparison uses the submit times Slurm recorded).
  bool SubmitDue(double cycle_start) {
    while (r_.next < seg_.jobs.size() && cycle_start >= Due(r_.next) && WallNow() - cycle_start < 0.3) {
      const replay::ReplayJob& r = seg_.jobs[r_.next];
      live::SubmitSpec sub;
      sub.name = "orrery-replay-" + std::to_string(r_.next);
      sub.partition = o_.partition;
      sub.nodes = r.nodes;
      sub.gpus_per_node = r.gpus_per_node;
      sub.sleep_s = r.duration;
      sub.duration_hint = r.duration;
      sub.hold = native_ == nullptr;
      if (native_) SetNative(r_.next, &sub);
      auto id = slurm_.Submit(sub);
      if (!id.ok()) {
        r_.abort_why = "sbatch failed: " + id.error().message;
        return false;
      }
      r_.ids[r_.next] = *id;
      slurm_.Track(*id);
      ++r_.next;
    }
    return true;
  }

  // --native: unheld, under the job's user and account, with its time limit and CPUs.
  void SetNative(size_t i, live::SubmitSpec* sub) const {
    sub->time_limit_s = replay::NativeTimeLimit(seg_.jobs[i].duration);
    sub->cpus_per_gpu = native_->cpus_per_gpu;
    if (native_->users.empty()) return;
    const replay::NativeUser& u = native_->users[native_->assigned[i]];
    sub->user = u.user;
    sub->account = u.account;
  }

  // The daemon's cycle, or with --native a listing (RecordingClient keeps what it shows).
  Status CycleOnce() {
    const double t = WallNow();
    if (daemon_) {
      auto cs = daemon_->Cycle();
      if (!cs.ok()) return cs.error();
      r_.cycle_ms += cs->total_ms;
      return Status::Ok();
    }
    auto l = slurm_.Jobs({o_.partition}, 0);
    if (!l.ok()) return l.error();
    r_.cycle_ms += (WallNow() - t) * 1000;
    return Status::Ok();
  }

  // One cycle; Slurm unreachable for 60 s ends the run.
  bool Cycle() {
    Status cs = CycleOnce();
    if (cs.ok()) {
      ++r_.cycles;
      first_fail_ = -1;
      last_err_.clear();
      return true;
    }
    ++r_.failed_cycles;
    if (cs.error().message != last_err_) fmt::print(stderr, "orrery replay: cycle failed: {}\n", cs.error().message);
    last_err_ = cs.error().message;
    if (first_fail_ < 0) first_fail_ = WallNow();
    if (WallNow() - first_fail_ > 60) {
      r_.abort_why = "Slurm unreachable for 60 s: " + cs.error().message;
      return false;
    }
    return true;
  }

  void ReportProgress() {
    if (WallNow() - last_progress_ < 10) return;
    last_progress_ = WallNow();
    fmt::print("orrery replay: t={:.0f} s: {} submitted, {} ended\n", last_progress_ - static_cast<double>(r_.t0),
               r_.next, r_.ended);
    std::fflush(stdout);
  }

  // Sleeps until the next cycle or the next arrival, whichever is first.
  void SleepUntilNext(double cycle_start) const {
    double wake = cycle_start + o_.interval_ms / 1000.0;
    if (r_.next < seg_.jobs.size()) wake = std::min(wake, Due(r_.next));
    while (!g_stop.load() && WallNow() < wake)
      std::this_thread::sleep_for(std::chrono::milliseconds(std::clamp(static_cast<int>((wake - WallNow()) * 1000), 1, 50)));
  }

  const Options& o_;
  const replay::Segment& seg_;
  RecordingClient& slurm_;
  live::Daemon* daemon_;
  const NativeSetup* native_;
  const double max_wall_;
  LiveRun r_;
  std::string last_err_;
  double first_fail_ = -1;
  double last_progress_ = 0;
};

// An aborted run: cancels every submitted job that has not ended; the message for Fail.
std::string CancelUnended(const LiveRun& r, const RecordingClient& slurm, live::SlurmClient& exec, size_t n) {
  size_t cancelled = 0, failed = 0;
  for (size_t i = 0; i < r.next; ++i) {
    if (slurm.Ended(r.ids[i])) continue;
    if (exec.Cancel(r.ids[i]).ok()) ++cancelled;
    else ++failed;
  }
  return fmt::format("{}; {} of {} job(s) submitted, {} ended, {} cancelled{}", r.abort_why, r.next, n, r.ended,
                     cancelled, failed ? fmt::format(", {} could not be cancelled (scancel them)", failed) : "");
}

// --- the comparison

// The workload as Slurm received it: arrivals are Slurm's submit seconds (sbatch may lag the
// plan in a burst), never decreasing.
Trace AsSubmitted(const Trace& planned, const RecordingClient& slurm, const LiveRun& r) {
  Trace t = planned;
  for (size_t i = 0; i < t.jobs.size(); ++i) {
    auto it = slurm.seen().find(r.ids[i]);
    if (it != slurm.seen().end() && it->second.submit != kNoTime) t.jobs[i].submit = std::max<Time>(it->second.submit - r.t0, 0);
    if (i > 0) t.jobs[i].submit = std::max(t.jobs[i].submit, t.jobs[i - 1].submit);
  }
  return t;
}

// Mean JCT and queueing delay of the prediction on the planned arrivals.
struct PlannedAverages {
  double jct = 0, wait = 0;
};
PlannedAverages Averages(const SimResult& planned, const replay::Segment& seg) {
  PlannedAverages a;
  size_t count = 0;
  for (size_t i = 0; i < seg.jobs.size(); ++i) {
    const JobOutcome& p = planned.outcomes[i];
    if (p.status != OutcomeStatus::kFinished || p.end == kNoTime) continue;
    a.jct += static_cast<double>(p.end - seg.jobs[i].arrival);
    a.wait += static_cast<double>(p.start - seg.jobs[i].arrival);
    ++count;
  }
  if (count) {
    a.jct /= static_cast<double>(count);
    a.wait /= static_cast<double>(count);
  }
  return a;
}

// Per job: measured (Slurm) against predicted times, and replay_jobs.csv.
struct JobRows {
  std::vector<replay::JobTimes> times;
  size_t not_completed = 0;
  double submit_lag = 0;  // summed over measured jobs
  std::string csv;
};

// The m_submit..m_jct columns of replay_jobs.csv (seconds from t0; empty where unknown).
std::string MeasuredColumns(const live::SlurmJob* sj, bool measured, Time t0) {
  if (measured)
    return fmt::format("{},{},{},{},{}", sj->submit - t0, sj->start - t0, sj->end - t0, sj->start - sj->submit,
                       sj->end - sj->submit);
  if (!sj) return ",,,,";
  return fmt::format("{},{},{},,", sj->submit != kNoTime ? std::to_string(sj->submit - t0) : "",
                     sj->start != kNoTime ? std::to_string(sj->start - t0) : "",
                     sj->end != kNoTime ? std::to_string(sj->end - t0) : "");
}

std::string NodeList(const live::SlurmJob& sj) {
  std::string s;
  for (const auto& nd : sj.nodes) {
    if (!s.empty()) s += ' ';
    s += nd;
  }
  return s;
}

JobRows CompareJobs(const replay::Segment& seg, const Trace& as_submitted, const SimResult& sim,
                    const SimResult& planned, const RecordingClient& slurm, const LiveRun& r) {
  const size_t n = seg.jobs.size();
  JobRows rows;
  rows.times.resize(n);
  rows.csv =
      "index,source_id,slurm_id,nodes,gpus_per_node,trace_gpus,trace_duration,arrival,duration,state,m_submit,m_start,"
      "m_end,m_wait,m_jct,p_start,p_end,p_wait,p_jct,jct_error,ran_on,p_plan_start,p_plan_end,user\n";
  const Time t0 = r.t0;
  for (size_t i = 0; i < n; ++i) {
    const replay::ReplayJob& rj = seg.jobs[i];
    const JobOutcome& p = sim.outcomes[i];
    const JobOutcome& pp = planned.outcomes[i];
    const Time a = as_submitted.jobs[i].submit;
    const auto it = slurm.seen().find(r.ids[i]);
    const live::SlurmJob* sj = it == slurm.seen().end() ? nullptr : &it->second;
    replay::JobTimes& t = rows.times[i];
    bool p_ok = p.status == OutcomeStatus::kFinished && p.end != kNoTime;
    t.measured = p_ok && sj && sj->state == live::SlurmJobState::kFinished && sj->start != kNoTime && sj->end != kNoTime &&
                 sj->submit != kNoTime;
    if (!t.measured) ++rows.not_completed;
    if (p_ok) {
      t.p_wait = static_cast<double>(p.start - a);
      t.p_jct = static_cast<double>(p.end - a);
      t.p_end = static_cast<double>(p.end);
      t.p_start = static_cast<double>(p.start);
    }
    if (t.measured) {
      t.m_wait = static_cast<double>(sj->start - sj->submit);
      t.m_jct = static_cast<double>(sj->end - sj->submit);
      t.m_end = static_cast<double>(sj->end - t0);
      t.m_start = static_cast<double>(sj->start - t0);
      rows.submit_lag += static_cast<double>(sj->submit - t0 - rj.arrival);
    }
    const std::string m_cols = MeasuredColumns(sj, t.measured, t0);
    const std::string nodes_s = sj ? NodeList(*sj) : "";
    const bool pp_ok = pp.status == OutcomeStatus::kFinished && pp.end != kNoTime;
    const UserId u = as_submitted.jobs[i].user;
    const std::string user = u.valid() ? as_submitted.users.Get(u.value()) : "";
    rows.csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", i, rj.source_id, r.ids[i],
                            rj.nodes, rj.gpus_per_node, rj.trace_gpus, rj.trace_duration, rj.arrival, rj.duration,
                            sj ? std::string(live::SlurmJobStateName(sj->state)) : std::string("UNSEEN"), m_cols,
                            p_ok ? std::to_string(p.start) : "", p_ok ? std::to_string(p.end) : "",
                            p_ok ? std::to_string(p.start - a) : "", p_ok ? std::to_string(p.end - a) : "",
                            t.measured ? std::to_string(static_cast<long long>(t.m_jct - t.p_jct)) : "", nodes_s,
                            pp_ok ? std::to_string(pp.start) : "", pp_ok ? std::to_string(pp.end) : "", user);
  }
  return rows;
}

nlohmann::ordered_json SegmentJson(const Options& o, const replay::Segment& seg) {
  nlohmann::ordered_json sg;
  sg["skip"] = o.skip;
  sg["first_submit"] = seg.first_submit;
  sg["considered"] = seg.considered;
  sg["replayed"] = seg.jobs.size();
  sg["skipped_cpu"] = seg.skipped_cpu;
  sg["skipped_no_duration"] = seg.skipped_no_duration;
  sg["skipped_oversize"] = seg.skipped_oversize;
  sg["clamped_oversize"] = seg.clamped_oversize;
  sg["reshaped"] = seg.reshaped;
  sg["fractional"] = seg.fractional;
  sg["duration_capped"] = seg.duration_capped;
  sg["max_duration"] = o.max_duration;
  return sg;
}

// summary.json (docs/formats/replay.md).
nlohmann::ordered_json Summary(const Options& o, const LiveCluster& lc, const replay::Segment& seg, const LiveRun& r,
                               const replay::Comparison& c, const JobRows& rows, double submit_lag, Time makespan,
                               Time planned_makespan, const PlannedAverages& planned) {
  nlohmann::ordered_json j;
  j["trace"] = o.trace;
  j["partition"] = o.partition;
  j["nodes"] = lc.up.size();
  j["gpus_per_node"] = lc.node_gpus;
  j["mode"] = o.native ? "native" : "steered";
  j["policy"] = o.policy;
  j["placer"] = o.placer;
  j["seed"] = o.seed;
  j["speedup"] = o.speedup;
  j["interval_ms"] = o.interval_ms;
  j["wave_latency_s"] = o.wave_latency;
  j["segment"] = SegmentJson(o, seg);
  j["t0_unix"] = r.t0;
  j["cycles"] = r.cycles;
  j["failed_cycles"] = r.failed_cycles;
  j["avg_cycle_ms"] = r.cycles ? std::round(r.cycle_ms / static_cast<double>(r.cycles) * 10) / 10 : 0.0;
  j["wall_s"] = std::round(r.wall * 10) / 10;
  j["jobs"] = c.jobs;
  j["measured"] = c.measured;
  j["not_completed"] = rows.not_completed;
  auto r3 = [](double v) { return std::round(v * 1000) / 1000; };
  auto r4 = [](double v) { return std::round(v * 10000) / 10000; };
  j["avg_submit_lag_s"] = r3(submit_lag);
  j["avg_jct_measured_s"] = r3(c.avg_jct_measured);
  j["avg_jct_predicted_s"] = r3(c.avg_jct_predicted);
  j["avg_jct_rel_error"] = r4(c.jct_rel_error);
  j["avg_wait_measured_s"] = r3(c.avg_wait_measured);
  j["avg_wait_predicted_s"] = r3(c.avg_wait_predicted);
  j["avg_wait_error_s"] = r3(c.wait_error_s);
  j["p50_abs_jct_error_s"] = r3(c.p50_abs_jct_error_s);
  j["p95_abs_jct_error_s"] = r3(c.p95_abs_jct_error_s);
  j["p50_rel_jct_error"] = r4(c.p50_rel_jct_error);
  j["p95_rel_jct_error"] = r4(c.p95_rel_jct_error);
  j["order_pairs"] = c.pairs;
  j["order_agreement"] = r4(c.order_agreement);
  j["kendall_tau"] = r4(c.kendall_tau);
  j["start_order_pairs"] = c.start_pairs;
  j["start_kendall_tau"] = r4(c.start_kendall_tau);
  j["mean_abs_start_error_s"] = r3(c.mean_abs_start_error_s);
  j["predicted_makespan_s"] = makespan;
  nlohmann::ordered_json pl;
  pl["avg_jct_predicted_s"] = r3(planned.jct);
  pl["avg_wait_predicted_s"] = r3(planned.wait);
  pl["predicted_makespan_s"] = planned_makespan;
  j["planned_arrivals"] = pl;
  return j;
}

void PrintComparison(const Options& o, size_t n, const LiveRun& r, const replay::Comparison& c, double submit_lag,
                     const PlannedAverages& planned) {
  fmt::print("orrery replay: {} job(s), {} completed and measured, wall {:.0f} s (mean submit lag {:.2f} s; {} cycles, "
             "{:.1f} ms each on average)\n", n, c.measured, r.wall, submit_lag, r.cycles,
             r.cycles ? r.cycle_ms / static_cast<double>(r.cycles) : 0.0);
  fmt::print("  avg JCT          measured {:9.2f} s   predicted {:9.2f} s   error {:+.2f} %\n", c.avg_jct_measured,
             c.avg_jct_predicted, 100 * c.jct_rel_error);
  fmt::print("  avg queueing     measured {:9.2f} s   predicted {:9.2f} s   error {:+.2f} s\n", c.avg_wait_measured,
             c.avg_wait_predicted, c.wait_error_s);
  fmt::print("  per-job |JCT error|  p50 {:.1f} s ({:.1f} %)   p95 {:.1f} s ({:.1f} %)\n", c.p50_abs_jct_error_s,
             100 * c.p50_rel_jct_error, c.p95_abs_jct_error_s, 100 * c.p95_rel_jct_error);
  fmt::print("  completion order: {} of {} untied pairs agree ({:.1f} %), Kendall tau {:.3f}\n", c.concordant, c.pairs,
             100 * c.order_agreement, c.kendall_tau);
  fmt::print("  start order: Kendall tau {:.3f} over {} untied pairs; mean |start error| {:.2f} s\n", c.start_kendall_tau,
             c.start_pairs, c.mean_abs_start_error_s);
  fmt::print("  (prediction on the planned arrivals: avg JCT {:.2f} s, avg queueing {:.2f} s)\n", planned.jct, planned.wait);
  fmt::print("  wrote {}/summary.json and {}/replay_jobs.csv\n", o.out_dir, o.out_dir);
}

// The prediction for the workload as Slurm received it, compared with what Slurm measured;
// writes replay_jobs.csv and summary.json. The planned-arrival prediction is reported beside.
int CompareAndWrite(const Options& o, const LiveCluster& lc, const replay::Segment& seg, const Trace& planned_trace,
                    const SimResult& planned, const RecordingClient& slurm, const LiveRun& r) {
  const Trace as_submitted = AsSubmitted(planned_trace, slurm, r);
  auto sim = Predict(o, as_submitted, lc.cluster);
  if (!sim.ok()) return ReplayFail(sim.error().message, sim.error().exit_code);
  const PlannedAverages plan = Averages(planned, seg);
  const JobRows rows = CompareJobs(seg, as_submitted, *sim, planned, slurm, r);
  const replay::Comparison c = replay::Compare(rows.times);
  const double submit_lag = c.measured ? rows.submit_lag / static_cast<double>(c.measured) : rows.submit_lag;
  const nlohmann::ordered_json j = Summary(o, lc, seg, r, c, rows, submit_lag, Makespan(*sim), Makespan(planned), plan);
  if (Status s = WriteFileAtomic(o.out_dir + "/replay_jobs.csv", rows.csv); !s.ok()) return ReplayFail(s.error().message, kExitRuntime);
  if (Status s = WriteFileAtomic(o.out_dir + "/summary.json", DumpJson(j, 2) + "\n"); !s.ok())
    return ReplayFail(s.error().message, kExitRuntime);
  PrintComparison(o, seg.jobs.size(), r, c, submit_lag, plan);
  return rows.not_completed ? kExitRuntime : kExitOk;
}

// --native: submits the segment (unheld) and polls until every job has ended (or the run is
// aborted: then every unended job is cancelled), then compares.
int RunNative(const Options& o, live::ExecSlurmClient& exec, const LiveCluster& lc, const replay::Segment& seg,
              const Trace& planned_trace, const SimResult& planned, double max_wall, const NativeSetup& native) {
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) return ReplayFail("cannot create " + o.out_dir + ": " + ec.message());
  if (o.warmup) {
    if (Status s = RunWarmup(exec, o.partition); !s.ok()) return ReplayFail(s.error().message, s.error().exit_code);
  }
  RecordingClient slurm(&exec);
  LiveRun r;
  {
    StopOnSignals signals;
    r = ReplayLoop(o, seg, slurm, nullptr, &native, max_wall).Run();
    if (!r.abort_why.empty())
      return ReplayFail(CancelUnended(r, slurm, exec, seg.jobs.size()), g_stop.load() ? 130 : kExitRuntime);
  }
  return CompareAndWrite(o, lc, seg, planned_trace, planned, slurm, r);
}

// Submits the segment to Slurm and drives the daemon until every job has ended (or the run
// is aborted: then every unended job is cancelled), then compares.
int RunLive(const Options& o, live::ExecSlurmClient& exec, const LiveCluster& lc, const replay::Segment& seg,
            const Trace& planned_trace, const SimResult& planned, double max_wall, const NativeSetup* native) {
  if (native) return RunNative(o, exec, lc, seg, planned_trace, planned, max_wall, *native);
  auto journal = OpenJournal(o.out_dir);
  if (!journal.ok()) return ReplayFail(journal.error().message);
  if (o.warmup) {
    if (Status s = RunWarmup(exec, o.partition); !s.ok()) return ReplayFail(s.error().message, s.error().exit_code);
  }
  RecordingClient slurm(&exec);
  WallClock clock;
  live::DaemonOptions dopt;
  dopt.partitions = {o.partition};
  dopt.policy = o.policy;
  dopt.placer = o.placer;
  dopt.seed = o.seed;
  live::Daemon daemon(&slurm, journal->get(), &clock, dopt);
  if (Status s = daemon.Recover(); !s.ok()) return ReplayFail(s.error().message);
  LiveRun r;
  {
    StopOnSignals signals;
    r = ReplayLoop(o, seg, slurm, &daemon, nullptr, max_wall).Run();
    if (!r.abort_why.empty())
      return ReplayFail(CancelUnended(r, slurm, exec, seg.jobs.size()), g_stop.load() ? 130 : kExitRuntime);
  }
  return CompareAndWrite(o, lc, seg, planned_trace, planned, slurm, r);
}

int RunReplay(Options o) {
  live::ExecSlurmOptions so;
  if (Status s = CheckOptions(&o, &so); !s.ok()) return ReplayFail(s.error().message, s.error().exit_code);
  auto trace = LoadReplayTrace(o);
  if (!trace.ok()) return ReplayFail(trace.error().message, trace.error().exit_code);
  live::ExecSlurmClient exec(so);
  auto lc = ReadCluster(o, exec);
  if (!lc.ok()) return ReplayFail(lc.error().message, lc.error().exit_code);
  auto seg = Select(o, *trace, *lc);
  if (!seg.ok()) return ReplayFail(seg.error().message);
  NativeSetup native;
  if (o.native) {
    auto ns = PrepareNative(o, *seg);
    if (!ns.ok()) return ReplayFail(ns.error().message, ns.error().exit_code);
    native = std::move(*ns);
  }
  // The prediction first (cheap; it also bounds the wall time).
  const Trace planned_trace =
      o.native ? replay::NativeTrace(*seg, native.users, native.assigned) : replay::SegmentTrace(*seg);
  auto sim = Predict(o, planned_trace, lc->cluster);
  if (!sim.ok()) return ReplayFail(sim.error().message, sim.error().exit_code);
  const Time makespan = Makespan(*sim);
  const double max_wall = o.max_wall > 0 ? static_cast<double>(o.max_wall) : 3.0 * static_cast<double>(makespan) + 120;
  PrintPlan(o, *seg, *lc, makespan, max_wall);
  if (o.dry_run) {
    PrintDryRun(*seg, *sim);
    return kExitOk;
  }
  return RunLive(o, exec, *lc, *seg, planned_trace, *sim, max_wall, o.native ? &native : nullptr);
}

}  // namespace

void RegisterReplay(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "replay", "Replay a trace segment on a live Slurm partition as scaled sleep jobs and compare with the simulator");
  SetExamples(cmd, {"./build/orrery replay --slurm tests/fixtures/trace/replay_philly.csv --speedup 10 --policy qssf:estimator=walltime "
                    "--partition gpu --dry-run --nodes 2 --node-gpus 8",
                    "./build/orrery replay --slurm tests/fixtures/trace/replay_philly.csv --native --speedup 10 --policy "
                    "slurm:conf=configs/slurm/gpu-site.conf,accounts=configs/slurm/gpu-site-accounts.txt --partition batch "
                    "--dry-run --nodes 2 --node-gpus 8"},
              {"./build/orrery replay --slurm tests/fixtures/trace/replay_philly.csv --speedup 10 --policy qssf:estimator=walltime "
               "--partition gpu --out /tmp/orrery-example-replay"});
  auto o = std::make_shared<Options>();
  cmd->add_option("--slurm", o->trace, "trace to replay on Slurm (any format `orrery import` reads)")->required();
  cmd->add_option("--format", o->format, "trace format (auto|philly|helios|...; as `orrery simulate`)");
  cmd->add_option("--speedup", o->speedup, "divide arrivals and durations by N")->required();
  cmd->add_option("--policy", o->policy, "policy spec (as `orrery simulate --policy`, one policy)");
  cmd->add_option("--placer", o->placer, "placer");
  cmd->add_option("--seed", o->seed, "seed (policy and placer RNG streams)");
  cmd->add_option("--skip", o->skip, "skip the first K trace jobs (submit order)");
  cmd->add_option("--jobs", o->jobs, "replay at most N jobs");
  cmd->add_option("--window", o->window, "only jobs submitted within S trace seconds of the segment's first job");
  cmd->add_option("--partition", o->partition, "Slurm partition to replay on (all its jobs must have ended)");
  cmd->add_option("--config", o->config, "take [slurm] settings and the first partition from a serve config");
  cmd->add_option("--slurm-conf", o->slurm_conf, "SLURM_CONF for the Slurm tools");
  cmd->add_option("--bin-dir", o->bin_dir, "directory of squeue/sinfo/scontrol/sbatch (default: PATH)");
  cmd->add_option("--timeout-ms", o->timeout_ms, "timeout of one Slurm command");
  cmd->add_option("--out-dir,--out", o->out_dir, "output folder (summary.json, replay_jobs.csv, replay-journal.db)");
  cmd->add_option("--interval-ms", o->interval_ms, "daemon cycle period (ms)");
  cmd->add_flag("--clamp-oversize", o->clamp_oversize, "clamp jobs larger than the cluster to it (default: skip them)");
  cmd->add_option("--max-duration", o->max_duration, "cap scaled durations at S seconds (0 = no cap)");
  cmd->add_option("--wave-latency", o->wave_latency,
                  "seconds a start that waits for a completion comes after it on the live Slurm, modelled in "
                  "the prediction (default 1, measured; 0 = plain Simulate())")
      ->check(CLI::Range(int64_t{0}, int64_t{3600}));
  cmd->add_option("--max-wall", o->max_wall, "give up (and cancel) after S seconds (default 3 × predicted makespan + 120)");
  cmd->add_flag("!--no-warmup", o->warmup, "skip the warm-up job run through Slurm before the replay starts");
  cmd->add_flag("--dry-run", o->dry_run, "select, scale and predict only (sinfo still read unless --nodes is given)");
  cmd->add_option("--nodes", o->dry_nodes, "with --dry-run: assume N nodes instead of asking sinfo");
  cmd->add_option("--node-gpus", o->dry_node_gpus, "with --dry-run --nodes: GPUs per node");
  cmd->add_flag("--skip-bad-rows", o->skip_bad_rows, "skip malformed trace rows");
  cmd->add_flag("--swf-procs-as-gpus", o->swf_procs_as_gpus, "SWF: count processors as GPUs (as `orrery simulate`)");
  auto* native = cmd->add_flag("--native", o->native,
                               "Slurm schedules by itself (jobs unheld, under the users of the policy's accounts "
                               "file); the prediction is --policy slurm:conf=FILE (the slurm.conf Slurm runs with)");
  auto* interval = cmd->get_option("--interval-ms");
  cmd->callback([=] {
    if (*native && interval->count() == 0) o->interval_ms = 1000;  // a poll of squeue: once a second
    *exit_code = RunReplay(*o);
  });
}

}  // namespace orrery::cli
