#include "eval/executor.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "model/storage.h"

namespace orrery::eval {

Status ValidateCluster(const ClusterSpec& c) {
  if (c.nodes == 0 || c.nodes > 100'000) return MakeError("--nodes: expected 1 to 100000 nodes");
  if (c.gpus_per_node == 0 || c.gpus_per_node > 64) return MakeError("--gpus-per-node: expected 1 to 64");
  if (c.cpu_slots == 0 || c.cpu_slots > 1'000'000) return MakeError("--cpu-slots: expected 1 to 1000000");
  for (double v : {c.storage_bytes_per_s, c.node_storage_bytes_per_s, c.cache_bytes_per_s})
    if (!(v > 0 && std::isfinite(v))) return MakeError("storage bandwidths must be positive and finite");
  return Status::Ok();
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kTimeEps = 1e-9;

enum class Owner : uint8_t { kGpuJob, kPreload };

struct Flow {
  Owner owner;
  uint32_t index;  // GPU job or node
  uint32_t node;
  double total = 0, remaining = 0, rate = 0;
};

struct GpuState {
  std::vector<Phase> phases;
  size_t phase = 0;
  double timer_end = kInf;    // end of the running fixed-duration phase
  bool waiting_cache = false;
  bool running = false, done = false;
  std::vector<uint32_t> gpus;
};

class Executor {
 public:
  Executor(const Workload& w, const Plan& p, const ClusterSpec& c) : w_(w), p_(p), c_(c) {}

  Result<Schedule> Run() {
    ORR_RETURN_IF_ERROR(Init());
    if (p_.load == LoadSource::kNodeCache)
      for (uint32_t n = 0; n < c_.nodes; ++n) StartPreload(n);
    Dispatch();
    while (!AllDone()) {
      SetRates();
      const double next = NextEvent();
      if (next == kInf) return MakeError("eval executor: no event can happen (plan cannot finish)", kExitRuntime);
      AdvanceFlows(next - t_);
      t_ = next;
      CompleteDue();
      Dispatch();
    }
    return Summarize();
  }

 private:
  Status Init() {
    ORR_RETURN_IF_ERROR(ValidateCluster(c_));
    if (w_.gpus_per_trial > c_.gpus_per_node)
      return MakeError("a trial needs " + std::to_string(w_.gpus_per_trial) + " GPUs, a node has " +
                       std::to_string(c_.gpus_per_node));
    gpu_.resize(p_.gpu_jobs.size());
    s_.gpu_jobs.resize(p_.gpu_jobs.size());
    for (size_t j = 0; j < gpu_.size(); ++j) gpu_[j].phases = ExpandGpuJob(w_, p_, p_.gpu_jobs[j]);
    free_.assign(c_.nodes, std::vector<bool>(c_.gpus_per_node, true));
    cache_ready_.assign(c_.nodes, p_.load != LoadSource::kNodeCache);
    if (p_.load == LoadSource::kNodeCache) s_.preloads.resize(c_.nodes);
    metric_pending_.resize(p_.metric_jobs.size());
    metric_end_.assign(p_.metric_jobs.size(), kInf);
    s_.metric_jobs.resize(p_.metric_jobs.size());
    waiters_.resize(p_.gpu_jobs.size());
    for (uint32_t m = 0; m < p_.metric_jobs.size(); ++m) {
      metric_pending_[m] = static_cast<uint32_t>(p_.metric_jobs[m].after.size());
      for (uint32_t g : p_.metric_jobs[m].after) waiters_[g].push_back(m);
    }
    cpu_free_.assign(c_.cpu_slots, true);
    return Status::Ok();
  }

  bool AllDone() const {
    return gpu_done_ == gpu_.size() && metric_done_ == p_.metric_jobs.size() && preload_done_ == s_.preloads.size();
  }

  // --- storage
  void StartFlow(Owner o, uint32_t index, uint32_t node, double bytes) {
    flows_.push_back(Flow{o, index, node, bytes, bytes, 0});
    s_.storage_bytes += bytes;
    s_.max_concurrent_reads = std::max(s_.max_concurrent_reads, static_cast<uint32_t>(flows_.size()));
  }
  void SetRates() {
    std::vector<uint32_t> per_node(c_.nodes, 0);
    uint32_t nodes_reading = 0;
    for (const Flow& f : flows_) nodes_reading += per_node[f.node]++ == 0;
    if (nodes_reading == 0) return;
    const StorageSpec spec{c_.storage_bytes_per_s, c_.node_storage_bytes_per_s, c_.cache_bytes_per_s};
    for (Flow& f : flows_) f.rate = SharedReadRate(spec, nodes_reading, per_node[f.node]);
  }
  void AdvanceFlows(double dt) {
    for (Flow& f : flows_) f.remaining -= f.rate * dt;
  }
  static bool FlowDone(const Flow& f) { return f.remaining <= 1e-9 * f.total + 1e-6; }

  double NextEvent() const {
    double next = kInf;
    for (const GpuState& g : gpu_) next = std::min(next, g.timer_end);
    for (double e : metric_end_) next = std::min(next, e);
    for (const Flow& f : flows_) next = std::min(next, t_ + std::max(0.0, f.remaining) / f.rate);
    return next;
  }

  // --- preloads
  void StartPreload(uint32_t n) {
    JobRun& r = s_.preloads[n];
    r.node = n;
    r.start = t_;
    r.phases.push_back(PhaseRun{PhaseKind::kPreload, t_, t_, 0});
    StartFlow(Owner::kPreload, n, n, w_.model.checkpoint_bytes());
  }
  void FinishPreload(uint32_t n) {
    JobRun& r = s_.preloads[n];
    r.end = r.phases.back().end = t_;
    ++preload_done_;
    cache_ready_[n] = true;
    for (uint32_t j = 0; j < gpu_.size(); ++j)
      if (gpu_[j].waiting_cache && s_.gpu_jobs[j].node == n) {
        gpu_[j].waiting_cache = false;
        s_.gpu_jobs[j].phases.back().wait_s = t_ - s_.gpu_jobs[j].phases.back().start;
        StartCacheRead(j);
      }
  }

  // --- GPU jobs
  void Dispatch() {
    while (next_gpu_ < gpu_.size() && StartGpuJob(next_gpu_)) ++next_gpu_;
    DispatchMetrics();
  }
  bool StartGpuJob(uint32_t j) {
    const uint32_t need = w_.gpus_per_trial;
    for (uint32_t n = 0; n < c_.nodes; ++n) {
      std::vector<uint32_t> pick;
      for (uint32_t g = 0; g < c_.gpus_per_node && pick.size() < need; ++g)
        if (free_[n][g]) pick.push_back(g);
      if (pick.size() < need) continue;
      for (uint32_t g : pick) free_[n][g] = false;
      GpuState& st = gpu_[j];
      st.gpus = pick;
      st.running = true;
      JobRun& r = s_.gpu_jobs[j];
      r.node = n;
      r.slot = pick.front();
      r.release = 0;
      r.start = t_;
      BeginPhase(j);
      return true;
    }
    return false;
  }
  void BeginPhase(uint32_t j) {
    GpuState& st = gpu_[j];
    JobRun& r = s_.gpu_jobs[j];
    if (st.phase == st.phases.size()) return FinishGpuJob(j);
    const Phase& ph = st.phases[st.phase];
    r.phases.push_back(PhaseRun{ph.kind, t_, t_, 0});
    if (ph.kind != PhaseKind::kLoad) {
      st.timer_end = t_ + ph.seconds;
      return;
    }
    if (p_.load == LoadSource::kSharedStorage) return StartFlow(Owner::kGpuJob, j, r.node, ph.bytes);
    if (!cache_ready_[r.node]) {
      st.waiting_cache = true;
      return;
    }
    StartCacheRead(j);
  }
  void StartCacheRead(uint32_t j) {
    GpuState& st = gpu_[j];
    st.timer_end = t_ + st.phases[st.phase].bytes / c_.cache_bytes_per_s;
  }
  void EndPhase(uint32_t j) {
    GpuState& st = gpu_[j];
    st.timer_end = kInf;
    s_.gpu_jobs[j].phases.back().end = t_;
    ++st.phase;
    BeginPhase(j);
  }
  void FinishGpuJob(uint32_t j) {
    GpuState& st = gpu_[j];
    st.running = false;
    st.done = true;
    s_.gpu_jobs[j].end = t_;
    for (uint32_t g : st.gpus) free_[s_.gpu_jobs[j].node][g] = true;
    ++gpu_done_;
    if (p_.release == MetricRelease::kDatasetDone) {
      for (uint32_t m : waiters_[j])
        if (--metric_pending_[m] == 0) released_now_.push_back(m);
    } else if (gpu_done_ == gpu_.size()) {
      for (uint32_t m = 0; m < p_.metric_jobs.size(); ++m) released_now_.push_back(m);
    }
  }

  // --- CPU metric jobs
  void DispatchMetrics() {
    // Jobs released at the same instant queue in dataset order.
    std::sort(released_now_.begin(), released_now_.end(),
              [&](uint32_t a, uint32_t b) { return p_.metric_jobs[a].dataset < p_.metric_jobs[b].dataset; });
    for (uint32_t m : released_now_) {
      s_.metric_jobs[m].release = t_;
      ready_.push_back(m);
    }
    released_now_.clear();
    while (ready_head_ < ready_.size()) {
      auto slot = std::find(cpu_free_.begin(), cpu_free_.end(), true);
      if (slot == cpu_free_.end()) return;
      *slot = false;
      const uint32_t m = ready_[ready_head_++];
      JobRun& r = s_.metric_jobs[m];
      r.slot = static_cast<uint32_t>(slot - cpu_free_.begin());
      r.start = t_;
      const Phase ph = MetricPhase(w_, p_.metric_jobs[m].dataset);
      metric_end_[m] = t_ + ph.seconds;
      r.phases.push_back(PhaseRun{PhaseKind::kMetric, t_, metric_end_[m], 0});
    }
  }
  void FinishMetric(uint32_t m) {
    metric_end_[m] = kInf;
    s_.metric_jobs[m].end = t_;
    cpu_free_[s_.metric_jobs[m].slot] = true;
    ++metric_done_;
  }

  // Completions at t_, in a fixed order: storage reads, GPU phases by job, metric jobs.
  void CompleteDue() {
    std::vector<Flow> done;
    auto split = std::stable_partition(flows_.begin(), flows_.end(), [](const Flow& f) { return !FlowDone(f); });
    done.assign(split, flows_.end());
    flows_.erase(split, flows_.end());
    for (const Flow& f : done) {
      if (f.owner == Owner::kPreload) FinishPreload(f.index);
      else EndPhase(f.index);
    }
    for (uint32_t j = 0; j < gpu_.size(); ++j)
      if (gpu_[j].timer_end <= t_ + kTimeEps) EndPhase(j);
    for (uint32_t m = 0; m < metric_end_.size(); ++m)
      if (metric_end_[m] <= t_ + kTimeEps) FinishMetric(m);
  }

  Schedule Summarize() {
    const double g = w_.gpus_per_trial;
    for (const JobRun& r : s_.gpu_jobs) {
      s_.gpu_hours += (r.end - r.start) * g / 3600;
      s_.inference_end_s = std::max(s_.inference_end_s, r.end);
      for (const PhaseRun& ph : r.phases) {
        s_.gpu_phase_hours[static_cast<size_t>(ph.kind)] += (ph.end - ph.start) * g / 3600;
        s_.gpu_cache_wait_hours += ph.wait_s * g / 3600;
      }
    }
    s_.gpu_infer_hours = s_.gpu_phase_hours[static_cast<size_t>(PhaseKind::kInfer)];
    s_.gpu_idle_hours = s_.gpu_hours - s_.gpu_infer_hours;
    s_.makespan_s = s_.inference_end_s;
    for (const JobRun& r : s_.metric_jobs) s_.makespan_s = std::max(s_.makespan_s, r.end);
    for (const JobRun& r : s_.preloads) s_.makespan_s = std::max(s_.makespan_s, r.end);
    return std::move(s_);
  }

  const Workload& w_;
  const Plan& p_;
  const ClusterSpec& c_;
  double t_ = 0;
  Schedule s_;
  std::vector<GpuState> gpu_;
  std::vector<std::vector<bool>> free_;
  std::vector<bool> cache_ready_;
  std::vector<Flow> flows_;
  std::vector<uint32_t> metric_pending_;
  std::vector<double> metric_end_;
  std::vector<std::vector<uint32_t>> waiters_;  // GPU job -> metric jobs waiting for it
  std::vector<uint32_t> released_now_, ready_;
  size_t ready_head_ = 0;
  std::vector<bool> cpu_free_;
  uint32_t next_gpu_ = 0;
  size_t gpu_done_ = 0, metric_done_ = 0, preload_done_ = 0;
};

}  // namespace

Result<Schedule> Execute(const Workload& w, const Plan& plan, const ClusterSpec& cluster) {
  return Executor(w, plan, cluster).Run();
}

}  // namespace orrery::eval
