#include "sim/helios_compat.h"

#include <algorithm>
#include <numeric>
#include <queue>
#include <set>

#include "sched/plugins/placers.h"
#include "sched/plugins/policies.h"

namespace orrery {

namespace {

enum class Mode { kFifo, kSjf, kQssf };

struct VcSim {
  std::vector<uint32_t> queue;  // job indices in queue order
  std::vector<uint32_t> arrivals;  // indices arriving this second
};

Result<Mode> ModeOf(const std::string& policy) {
  std::string base = policy.substr(0, policy.find(':'));
  if (base == "fifo") return Mode::kFifo;
  if (base == "sjf") return Mode::kSjf;
  if (base == "qssf") return Mode::kQssf;
  return MakeError("Helios-compatible mode supports fifo, sjf and qssf, not '" + base + "'");
}

// Job indices by submit time, same-second arrivals by the tie order (else by index).
std::vector<uint32_t> ArrivalOrder(const Trace& trace, const std::vector<uint32_t>& tie_order) {
  auto seq_of = [&](uint32_t i) { return tie_order.empty() ? i : tie_order[i]; };
  std::vector<uint32_t> order(trace.jobs.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const Job &ja = trace.jobs[a], &jb = trace.jobs[b];
    return ja.submit != jb.submit ? ja.submit < jb.submit : seq_of(a) < seq_of(b);
  });
  return order;
}

// The cluster's VC index of each trace VC, matched by name (-1: not in the cluster).
std::vector<int32_t> VcMap(const Trace& trace, const Cluster& cluster) {
  std::vector<int32_t> vcmap(trace.vcs.size(), -1);
  for (size_t i = 0; i < trace.vcs.size(); ++i)
    for (size_t v = 0; v < cluster.vcs.size(); ++v)
      if (cluster.vcs[v].name == trace.vcs.Get(static_cast<uint32_t>(i))) vcmap[i] = static_cast<int32_t>(v);
  return vcmap;
}

// One Helios-compatible run: the reference's per-second loop (helios_compat.h) and its state.
class HeliosCompatRun {
 public:
  HeliosCompatRun(const Trace& trace, const Cluster& cluster, const SimConfig& cfg, Mode mode, PolicyParts policy,
                  std::unique_ptr<Placer> placer)
      : trace_(trace),
        cfg_(cfg),
        mode_(mode),
        policy_(std::move(policy)),
        placer_(std::move(placer)),
        n_(trace.jobs.size()),
        state_(cluster, false, false),
        order_(ArrivalOrder(trace, cfg.tie_order)),
        vcmap_(VcMap(trace, cluster)),
        vcs_(cluster.vcs.size()),
        priority_(n_, 0),
        has_priority_(n_, 0),
        allocs_(n_),
        sj_(n_),
        touched_(cluster.vcs.size(), 0) {
    r_.policy = cfg.policy + " (helios-compat)";
    r_.placer = "consolidate";
    r_.oracle = mode == Mode::kSjf || (policy_.estimator && policy_.estimator->is_oracle());
    r_.total_gpus = cluster.total_gpus();
    for (const auto& v : cluster.vcs) r_.vc_names.push_back(v.name);
    r_.outcomes.resize(n_);
    r_.first_submit = n_ ? trace.jobs[order_[0]].submit : 0;
    if (cfg.sample_interval > 0 && n_) {
      Time m = r_.first_submit % cfg.sample_interval;
      next_sample_ = r_.first_submit - (m < 0 ? m + cfg.sample_interval : m);
    }
  }

  Result<SimResult> Run() {
    while (next_ < n_ || !running_.empty() || !extra_ticks_.empty()) {
      Time t = next_ < n_ ? trace_.jobs[order_[next_]].submit : INT64_MAX;
      if (!running_.empty()) t = std::min(t, running_.top().first);
      if (!extra_ticks_.empty()) t = std::min(t, *extra_ticks_.begin());
      bool extra = !extra_ticks_.empty() && *extra_ticks_.begin() == t;
      if (extra) extra_ticks_.erase(extra_ticks_.begin());
      SampleUntil(t);
      if (last_t_ != kNoTime) r_.gpu_seconds_busy += static_cast<double>(busy_) * static_cast<double>(t - last_t_);
      last_t_ = t;
      ReleaseEnded(t);  // 1. Release.
      Arrive(t);        // 2. Arrivals.
      if (extra) {
        for (uint16_t v = 0; v < vcs_.size(); ++v)
          if (!vcs_[v].queue.empty()) Touch(v);
      }
      SortAndPlaceTouched(t);  // 3-4.
    }
    if (next_sample_ != kNoTime && next_sample_ <= last_t_)
      r_.samples.push_back(TimeSample{next_sample_, busy_ * 1000, 0, 0, 0});
    for (auto& vs : vcs_)
      if (!vs.queue.empty()) return MakeError("Helios-compatible run ended with jobs blocked forever", kExitRuntime);
    return std::move(r_);
  }

 private:
  // The time samples before second t.
  void SampleUntil(Time t) {
    while (next_sample_ != kNoTime && next_sample_ < t) {
      r_.samples.push_back(TimeSample{next_sample_, busy_ * 1000, static_cast<uint32_t>(nrunning_),
                                      static_cast<uint32_t>(pending_), pending_milli_});
      next_sample_ += cfg_.sample_interval;
    }
  }

  void ReleaseEnded(Time t) {
    while (!running_.empty() && running_.top().first == t) {
      uint32_t j = running_.top().second;
      running_.pop();
      state_.Release(allocs_[j]);
      busy_ -= trace_.jobs[j].gpus;
      --nrunning_;
      r_.last_end = std::max(r_.last_end, t);
      Touch(r_.outcomes[j].vc.v);
      ++r_.events;
    }
  }

  // Queues the jobs submitted at t on their VC; those that cannot run here are skipped or
  // rejected with the reason.
  void Arrive(Time t) {
    while (next_ < n_ && trace_.jobs[order_[next_]].submit == t) {
      uint32_t j = order_[next_++];
      const Job& job = trace_.jobs[j];
      JobOutcome& o = r_.outcomes[j];
      o.job = JobId(j);
      o.gpus = job.gpus;
      o.gpu_milli = job.gpu_milli;
      ++r_.events;
      int32_t v = job.vc.valid() && job.vc.v < vcmap_.size() ? vcmap_[job.vc.v] : -1;
      if (job.duration < 0) {
        o.status = OutcomeStatus::kSkipped;
        o.reject_reason = ReasonId("duration unknown in the trace");
        continue;
      }
      if (v < 0) {
        o.status = OutcomeStatus::kRejected;
        o.reject_reason = ReasonId("job's VC is not in the cluster");
        continue;
      }
      if (job.gpus > state_.vc_total_gpus(VcId(static_cast<uint16_t>(v))) || job.gpus == 0 || job.is_fractional()) {
        o.status = OutcomeStatus::kRejected;
        o.reject_reason = ReasonId("job cannot run in Helios-compatible mode (0 GPUs, fractional, or larger than its VC)");
        continue;
      }
      o.vc = VcId(static_cast<uint16_t>(v));
      sj_[j].job = &job;
      sj_[j].vc = o.vc;
      vcs_[v].arrivals.push_back(j);
      vcs_[v].queue.push_back(j);
      ++pending_;
      pending_milli_ += job.gpu_milli_total();
      Touch(static_cast<uint16_t>(v));
    }
  }

  // Sorts and places the queue of every VC touched this second, in VC order.
  void SortAndPlaceTouched(Time t) {
    std::sort(touched_list_.begin(), touched_list_.end());
    for (uint16_t v : touched_list_) {
      touched_[v] = 0;
      VcSim& vs = vcs_[v];
      const bool gpu_only = SortQueue(vs, t);
      vs.arrivals.clear();
      PlaceInOrder(vs.queue, t);
      if (gpu_only && !vs.queue.empty()) extra_ticks_.insert(t + 1);
    }
    touched_list_.clear();
  }

  // Stable sort of the whole queue by the policy's key. Returns true when QSSF sorted by GPU
  // count only (the queue held only this second's arrivals): the next second is simulated
  // then, and sorts by priority.
  bool SortQueue(VcSim& vs, Time t) {
    auto& q = vs.queue;
    bool gpu_only = false;
    switch (mode_) {
      case Mode::kFifo:
        std::stable_sort(q.begin(), q.end(),
                         [&](uint32_t a, uint32_t b) { return trace_.jobs[a].submit < trace_.jobs[b].submit; });
        break;
      case Mode::kSjf:
        std::stable_sort(q.begin(), q.end(),
                         [&](uint32_t a, uint32_t b) { return trace_.jobs[a].duration < trace_.jobs[b].duration; });
        break;
      case Mode::kQssf:
        std::stable_sort(q.begin(), q.end(),
                         [&](uint32_t a, uint32_t b) { return trace_.jobs[a].gpus < trace_.jobs[b].gpus; });
        if (q.size() > vs.arrivals.size()) {
          for (uint32_t j : q) {
            if (!has_priority_[j]) {
              priority_[j] = policy_.estimator->Estimate(trace_.jobs[j], t) * static_cast<int64_t>(trace_.jobs[j].gpus);
              has_priority_[j] = 1;
            }
          }
          std::stable_sort(q.begin(), q.end(), [&](uint32_t a, uint32_t b) { return priority_[a] < priority_[b]; });
        } else {
          gpu_only = true;
        }
        break;
    }
    return gpu_only;
  }

  // Starts the queue's jobs in order until the first that the placer cannot place.
  void PlaceInOrder(std::vector<uint32_t>& q, Time t) {
    size_t placed = 0;
    for (; placed < q.size(); ++placed) {
      uint32_t j = q[placed];
      Allocation a;
      if (!placer_->Place(sj_[j], state_, nullptr, &a).ok()) break;
      state_.Apply(a);
      allocs_[j] = std::move(a);
      JobOutcome& o = r_.outcomes[j];
      o.start = t;
      o.end = t + trace_.jobs[j].duration;
      o.wait = t - trace_.jobs[j].submit;
      o.run = trace_.jobs[j].duration;
      busy_ += trace_.jobs[j].gpus;
      ++nrunning_;
      --pending_;
      pending_milli_ -= trace_.jobs[j].gpu_milli_total();
      running_.emplace(o.end, j);
      if (trace_.jobs[j].duration == 0) r_.last_end = std::max(r_.last_end, t);
    }
    q.erase(q.begin(), q.begin() + static_cast<std::ptrdiff_t>(placed));
  }

  uint8_t ReasonId(std::string_view why) {
    for (size_t i = 0; i < r_.reasons.size(); ++i)
      if (r_.reasons[i] == why) return static_cast<uint8_t>(i);
    r_.reasons.emplace_back(why);
    return static_cast<uint8_t>(r_.reasons.size() - 1);
  }

  void Touch(uint16_t v) {
    if (!touched_[v]) {
      touched_[v] = 1;
      touched_list_.push_back(v);
    }
  }

  const Trace& trace_;
  const SimConfig& cfg_;
  const Mode mode_;
  PolicyParts policy_;
  std::unique_ptr<Placer> placer_;
  const size_t n_;
  SimResult r_;
  ClusterState state_;
  std::vector<uint32_t> order_;
  std::vector<int32_t> vcmap_;
  std::vector<VcSim> vcs_;
  std::vector<int64_t> priority_;
  std::vector<uint8_t> has_priority_;
  std::vector<Allocation> allocs_;
  std::vector<SchedJob> sj_;
  using Ev = std::pair<Time, uint32_t>;  // (end, job)
  std::priority_queue<Ev, std::vector<Ev>, std::greater<>> running_;
  std::vector<uint8_t> touched_;
  std::vector<uint16_t> touched_list_;
  std::set<Time> extra_ticks_;
  uint64_t busy_ = 0;
  Time last_t_ = kNoTime;
  size_t next_ = 0;
  Time next_sample_ = kNoTime;
  size_t pending_ = 0, nrunning_ = 0;
  uint64_t pending_milli_ = 0;
};

}  // namespace

Result<SimResult> SimulateHeliosCompat(const Trace& trace, const Cluster& cluster, const SimConfig& cfg) {
  ORR_ASSIGN_OR_RETURN(Mode mode, ModeOf(cfg.policy));
  if (cfg.placer != "consolidate") return MakeError("Helios-compatible mode uses the consolidate placer only");
  ORR_ASSIGN_OR_RETURN(PolicyParts policy, MakePolicy(cfg.policy, cfg.seed, &trace));
  ORR_ASSIGN_OR_RETURN(auto placer, MakePlacer("consolidate", cfg.seed));
  const size_t n = trace.jobs.size();
  if (!cfg.tie_order.empty() && cfg.tie_order.size() != n) return MakeError("tie order size does not match the trace");
  return HeliosCompatRun(trace, cluster, cfg, mode, std::move(policy), std::move(placer)).Run();
}

}  // namespace orrery
