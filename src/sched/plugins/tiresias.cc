#include "sched/plugins/tiresias.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <memory>
#include <queue>
#include <string>

#include "base/weighted_order.h"
#include "sched/framework/api/plugin.h"

namespace orrery {

Duration LucidPreemptionOverhead(uint32_t gpus) { return gpus <= 8 ? 40 : 60; }

namespace {

// Parameters and the Gittins table, shared by the QueueSort and Reschedule plugins.
struct TiresiasCore {
  TiresiasOptions o;
  // 2D-Gittins: GPU-time of finished jobs; sorted copy + prefix sums rebuilt when the
  // sample has grown by 10 %.
  std::vector<int64_t> sample, sorted;
  std::vector<double> prefix;

  // Attained service since the last starvation promotion.
  int64_t Service(const SchedJob& j, Time now) const {
    int64_t a = j.attained + (j.running ? (now - j.started) * static_cast<int64_t>(j.job->gpus) : 0) - j.policy_aux;
    if (!o.gpu_time) a = j.job->gpus ? a / j.job->gpus : 0;
    return a;
  }
  // Executed seconds since the last promotion (the starvation rule's `executed_time`).
  int64_t Executed(const SchedJob& j) const {
    return j.job->gpus ? (j.attained - j.policy_aux) / j.job->gpus : 0;
  }
  int Queue(int64_t service) const {
    return static_cast<int>(std::upper_bound(o.thresholds.begin(), o.thresholds.end(), service) - o.thresholds.begin());
  }
  // Gittins index P/E for attained service a and quantum Δ (0 with no sample above a).
  double Index(int64_t a) const {
    const size_t n = sorted.size();
    size_t i = std::upper_bound(sorted.begin(), sorted.end(), a) - sorted.begin();
    if (i >= n) return 0;
    size_t k = std::upper_bound(sorted.begin() + static_cast<ptrdiff_t>(i), sorted.end(), a + o.delta) - sorted.begin();
    const double gt = static_cast<double>(n - i);
    const double cnt = static_cast<double>(k - i);
    const double in_sum = prefix[k] - prefix[i] - cnt * static_cast<double>(a);
    const double e = (in_sum + static_cast<double>(n - k) * static_cast<double>(o.delta)) / gt;
    return e > 0 ? (cnt / gt) / e : 0;
  }
  void MaybeRebuild() {
    if (!o.gittins || sample.size() < sorted.size() + sorted.size() / 10 + 1) return;
    sorted = sample;
    std::sort(sorted.begin(), sorted.end());
    prefix.assign(sorted.size() + 1, 0);
    for (size_t i = 0; i < sorted.size(); ++i) prefix[i + 1] = prefix[i] + static_cast<double>(sorted[i]);
  }
  SortKey KeyAt(const SchedJob& j, Time now) const {
    const int64_t a = Service(j, now);
    const int q = Queue(a);
    if (!o.gittins) return {q, j.job->submit};
    // Index at the service quantised to multiples of Δ: a job's rank within its queue changes
    // only when it completes a quantum (re-evaluated every Δ, as in the original), not at every
    // event — otherwise two jobs of one queue would preempt each other back and forth.
    return {q, -std::llround(Index(a - a % o.delta) * 1e12)};  // higher index first; ties by seq
  }
};

class TiresiasSort final : public QueueSortPlugin {
 public:
  explicit TiresiasSort(std::shared_ptr<TiresiasCore> c) : c_(std::move(c)) {}
  std::string_view name() const override { return "tiresias"; }
  SortKey Key(const SchedJob& j, Time now) override { return c_->KeyAt(j, now); }
  std::unique_ptr<QueueSortPlugin> Clone(PluginCopies& copies) const override {
    return std::make_unique<TiresiasSort>(copies.Of(c_));
  }

 private:
  std::shared_ptr<TiresiasCore> c_;
};

class TiresiasResched final : public ReschedulePlugin {
  // A running job's (queue, key, seq) packed into 128 bits, so the order's searches compare
  // with one wide compare instead of three data-dependent branches (the comparisons were
  // ~6 % of a 1M-job run): hi = queue (32 bits, offset) | key's high half, lo = key's low
  // half | seq. Queues are small non-negative indices; the key is any int64 (offset to keep
  // the order).
  struct RunEntry {
    uint64_t hi = 0, lo = 0;
    uint32_t slot = 0;
    static RunEntry Of(int64_t k1, int64_t k2, uint32_t seq, uint32_t slot) {
      const uint64_t q = static_cast<uint32_t>(static_cast<int32_t>(k1)) ^ 0x80000000u;
      const uint64_t k = static_cast<uint64_t>(k2) ^ (uint64_t{1} << 63);
      return RunEntry{q << 32 | k >> 32, k << 32 | seq, slot};
    }
    int64_t k1() const { return static_cast<int32_t>(static_cast<uint32_t>(hi >> 32) ^ 0x80000000u); }
    unsigned __int128 wide() const { return static_cast<unsigned __int128>(hi) << 64 | lo; }
    // The (queue, key) part, without the tie order.
    unsigned __int128 order_key() const { return wide() >> 32; }
    bool operator<(const RunEntry& o) const { return wide() < o.wide(); }
  };
  // Running jobs by current (queue, FIFO) key, weighted by the GPUs (milli) a preemption
  // would free: the demand, 0 while inside the restart protection (the walks read the
  // weights, no SchedJob).
  using RunningOrder = WeightedOrder<RunEntry>;
  struct VcState {
    RunningOrder running;
    int64_t used_milli = 0;      // Σ GPU demand (milli) of `running`
    int64_t protected_milli = 0;  // Σ GPU demand of the running jobs inside their restart protection
  };
  struct Timer {
    Time t;
    uint32_t slot, seq;
    Time stamp;   // demotion: start of the running segment; promotion: time enqueued
    bool demote;   // false: starvation promotion
    bool operator>(const Timer& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  // The end of a restart protection (prot_until_ says whether it is still that slot's).
  struct ProtectionEnd {
    Time t;
    uint32_t slot;
    VcId vc;
  };
  // Protection ends in time order, one FIFO per protection length (a few: protect × the
  // restart overhead of the job's size). Starts come at non-decreasing times, so appending
  // keeps each FIFO in order: O(1) per restart where a tree paid an insert and an erase
  // (1.85M restarts on the 1M scale run). An entry stays until its end even if its job
  // stopped; each end is a wake-up, as the timer each restart pushed before.
  struct ProtectionFifo {
    Duration length;
    std::deque<ProtectionEnd> ends;
  };

 public:
  explicit TiresiasResched(std::shared_ptr<TiresiasCore> c) : c_(std::move(c)) {}
  std::string_view name() const override { return "tiresias"; }
  // Every timer (demotions, promotions, protection ends) and running key is copied; the core
  // (thresholds, Gittins table) is shared with the sort plugin's copy.
  std::unique_ptr<ReschedulePlugin> Clone(PluginCopies& copies) const override {
    auto r = std::make_unique<TiresiasResched>(*this);
    r->c_ = copies.Of(c_);
    return r;
  }

  void Advance(SchedulerHandle& h) override {
    const Time now = h.now();
    c_->MaybeRebuild();
    ExpireProtection(h);
    while (!timers_.empty() && timers_.top().t <= now) {
      Timer tm = timers_.top();
      timers_.pop();
      SchedJob& j = h.job(tm.slot);
      if (!j.job || j.seq != tm.seq) continue;
      if (tm.demote) {
        if (j.running && j.started == tm.stamp) {
          const RunEntry before = cur_[tm.slot];
          Rekey(h, tm.slot);
          if (cur_[tm.slot].order_key() != before.order_key()) h.MarkDirty(j.vc);
        }
      } else if (!j.running && j.enqueued == tm.stamp && c_->Queue(c_->Service(j, now)) > 0) {
        const int q = c_->Queue(c_->Service(j, now));
        const int64_t exec = c_->Executed(j);
        j.policy_aux = j.attained;  // executed service reset: back to Q0
        h.Rekey(tm.slot);
        h.MarkDirty(j.vc);
        if (h.watched(tm.slot))
          h.Note(tm.slot, {now, "tiresias", "promoted",
                           "starvation promotion: pending " + std::to_string(now - j.enqueued) + " s >= knob x executed " +
                               std::to_string(exec) + " s; service reset, back to Q0",
                           {{"from_queue", q}, {"to_queue", 0}}});
      }
    }
  }

  void JobStarted(SchedulerHandle& h, uint32_t slot) override {
    SchedJob& j = h.job(slot);
    VcState& v = V(j.vc);
    const int64_t demand = static_cast<int64_t>(j.job->gpu_milli_total());
    v.used_milli += demand;
    if (prot_until_.size() <= slot) prot_until_.resize(slot + 1u, kNoTime);
    const Duration p = Protection(j);
    // protected at t ⟺ t - started < p ⟺ t < started + p; set before Insert, which weighs
    // the entry by it (Freeable: 0 while protected)
    prot_until_[slot] = p > 0 ? j.started + p : kNoTime;
    Insert(h, v, slot);
    if (p > 0) {
      Protect(ProtectionEnd{prot_until_[slot], slot, j.vc}, p);
      v.protected_milli += demand;
    }
    // 2D-Gittins: a pending key was computed with the index table of its enqueue time; if
    // the running key differs, the order changed: decide again at the next Schedule call.
    if (cur_[slot].order_key() != RunEntry::Of(j.key1, j.key2, 0, slot).order_key()) h.MarkDirty(j.vc);
  }

  void JobStopped(SchedulerHandle& h, uint32_t slot, EndCause cause, bool requeued) override {
    const bool finished = cause == EndCause::kFinished;
    SchedJob& j = h.job(slot);
    VcState& v = V(j.vc);
    v.used_milli -= static_cast<int64_t>(j.job->gpu_milli_total());
    v.running.Erase(cur_[slot]);
    if (slot < prot_until_.size() && prot_until_[slot] != kNoTime) {  // its FIFO entry is left to expire
      v.protected_milli -= static_cast<int64_t>(j.job->gpu_milli_total());
      prot_until_[slot] = kNoTime;
    }
    if (finished && c_->o.gittins)
      c_->sample.push_back(j.attained + (h.now() - j.started) * static_cast<int64_t>(j.job->gpus));
    if (requeued && c_->o.knob > 0) {
      // Waits again (j.attained already includes the segment): arm its starvation promotion.
      const int64_t a = j.attained - j.policy_aux;
      const int q = c_->Queue(c_->o.gpu_time ? a : c_->Executed(j));
      if (q > 0) {
        const Time due = h.now() + static_cast<Time>(std::ceil(c_->o.knob * static_cast<double>(c_->Executed(j))));
        timers_.push(Timer{due, slot, j.seq, h.now(), false});
      }
    }
  }

  Time NextWakeup() const override {
    Time t = timers_.empty() ? kNoTime : timers_.top().t;
    for (const ProtectionFifo& f : protections_)
      if (!f.ends.empty() && (t == kNoTime || f.ends.front().t < t)) t = f.ends.front().t;
    return t;
  }

  Next Run(SchedulerHandle& h, VcId vc, PluginStatus* block) override {
    const Time now = h.now();
    VcState& v = V(vc);
    SortKey minp;
    if (!h.MinPendingKey(vc, &minp)) return Next::kStop;
    const int64_t capacity = static_cast<int64_t>(h.state().vc_total_gpus(vc)) * 1000;
    // Preemption is possible only if some pending job precedes some running job.
    bool walk_running = false;
    if (!v.running.empty()) {
      const RunEntry& last = v.running.last();
      walk_running = RunEntry::Of(minp.k1, minp.k2, 0, 0).order_key() <= last.order_key();
    }
    // Without preemption every running job precedes every pending one: only the free
    // count is left for pending jobs.
    int64_t budget = walk_running ? capacity : capacity - v.used_milli;
    if (budget <= 0) {
      *block = PluginStatus::Unschedulable(kHeld);
      return Next::kStop;
    }
    place_.clear();
    preempt_.clear();
    Resume resume;
    if (walk_running && AdmitWithoutPreemption(h, vc, v, capacity, block, &resume)) {
      Apply(h, block);
      return Next::kStop;
    }
    // Restarted jobs inside their protection keep their GPUs whatever their priority (without
    // preemption the budget is the free count, which already lacks them).
    if (walk_running) budget -= v.protected_milli;
    RunningOrder::Cursor it = v.running.begin();
    int64_t unvisited = v.used_milli - v.protected_milli;  // Σ unprotected demand from `it` on
    auto consume_running = [&](const RunEntry* bound) {
      ConsumeRunning(v.running, bound, &it, &budget, &unvisited);
    };
    size_t examined = 0;
    bool skipped = false;
    // Phase 1 decided every job before its stop: the walk takes up there (see Resume).
    const int64_t prefix_bound = budget / 1000;
    if (resume.valid) {
      it = resume.cursor;
      budget = resume.budget;
      unvisited = resume.tail;
      skipped = resume.skipped;
      if (resume.held) *block = PluginStatus::Unschedulable(kHeld);
    }
    bool at_p = !resume.valid;
    const bool watching = h.watching();
    // The visitors read the queue's entries (key, demand), not the jobs' records.
    auto admit = [&](const PendingEntry& e) -> int64_t {
      const RunEntry pe = RunEntry::Of(e.k1, e.k2, e.seq, e.slot);
      if (!at_p) {
        if (pe < resume.at) return prefix_bound;  // decided by phase 1 (in place_ if admitted)
        at_p = true;
      }
      if (walk_running) consume_running(&pe);
      const int64_t d = static_cast<int64_t>(e.gpu_milli);
      if (d <= budget) {
        budget -= d;
        place_.push_back(e.slot);
      } else {
        if (!skipped && place_.empty()) *block = PluginStatus::Unschedulable(kHeld);
        skipped = true;
        if (watching && h.watched(e.slot))
          h.Note(e.slot, {now, "tiresias", "held",
                          "not admitted: needs " + std::to_string(d / 1000) + " GPUs, " + std::to_string(budget / 1000) +
                              " left after jobs ahead of it (queue Q" + std::to_string(e.k1) + ")",
                          {{"queue", static_cast<double>(e.k1)}, {"gpus_left", static_cast<double>(budget) / 1000}}});
      }
      if (++examined >= kMaxExamined || budget <= 0) return -1;
      return budget / 1000;
    };
    h.ForEachPending(vc, std::ref(admit));  // std::ref: the std::function is not allocated
    if (walk_running) consume_running(nullptr);
    Apply(h, block);
    return Next::kStop;
  }

  // Where the full walk may take up after phase 1 stopped at job p (AdmitWithoutPreemption).
  // Up to p the full walk keeps every running job (b1 ≥ 0 leaves each one's demand within its
  // budget) and admits exactly phase 1's jobs: its budget at a job is b1 + the freeable demand
  // after it, so those with d ≤ b1 fit, and the others had d > b1 + (an upper bound of) that
  // demand. Its bound after each job before p is at least B_p = (b1 + the freeable demand
  // after p) / 1000 GPUs. Where B_p exceeds a node's GPUs every size class stays shown, so it
  // visits every job up to p, p included, as phase 1 did (whose bounds are no smaller): the
  // same unadmitted jobs, hence the same `skipped` and held reason. Then its state at p is
  // phase 1's: place_ as admitted, budget b1 + that demand (`tail`), the running cursor just
  // after p. It passes the jobs before p with a bound no smaller than its own there (the
  // budget before any job), so it reaches p and from p on visits and decides exactly as a walk
  // from the start. (With B_p within a node, a class hidden before p may differ, p's own
  // included when it spans nodes: then it walks from the start.) Not when the job being
  // explained was left unadmitted before p (its note tells the full walk's budget), and only
  // where the VC's pending jobs are fewer than kMaxExamined (the walks' visit counts before p
  // differ; that bound cannot bind there).
  struct Resume {
    bool valid = false;
    RunEntry at;                  // p
    RunningOrder::Cursor cursor;  // the first running job after p
    int64_t budget = 0, tail = 0;
    bool skipped = false;  // a job before p was not admitted
    bool held = false;     // ... before any job was admitted (the walk's held reason)
  };

  // Phase 1 of a decision with possible preemption: admit pending jobs in order against the
  // free GPU count (every running job kept). This is exactly the full walk's outcome unless
  // some job p not admitted here would fit once the running jobs after it were counted as
  // free: d_p ≤ free_left + Σ demand of the unprotected running jobs ordered after p (the full walk gives p
  // exactly that budget as long as it has kept every running job and admitted the same
  // jobs so far). Returns false when such a p exists: the full walk runs, from p where
  // *resume says so (place_ then holds the jobs admitted before p), else from the start
  // (place_ cleared). Cost: pending jobs visited + the running jobs after the first job
  // that could preempt.
  bool AdmitWithoutPreemption(SchedulerHandle& h, VcId vc, VcState& v, int64_t capacity, PluginStatus* block,
                              Resume* resume) {
    int64_t b1 = capacity - v.used_milli;
    int64_t tail = v.used_milli;  // upper bound of Σ running after the current job until computed
    bool tail_exact = false, need_full = false;
    RunningOrder::Cursor fc;
    size_t examined = 0;
    uint32_t held_watch = UINT32_MAX;
    int64_t held_left = 0;
    bool skipped = false, held = false;  // a job visited was not admitted (before any was)
    RunEntry stop_at;
    const bool watching = h.watching();
    auto admit = [&](const PendingEntry& e) -> int64_t {
      const int64_t d = static_cast<int64_t>(e.gpu_milli);
      if (d <= b1) {
        b1 -= d;
        place_.push_back(e.slot);
      } else if (d <= b1 + tail) {
        const RunEntry pe = RunEntry::Of(e.k1, e.k2, e.seq, e.slot);
        if (!tail_exact) {
          fc = v.running.UpperBound(pe);
          tail = v.running.SumFrom(fc);  // the freeable demand after pe (weights: 0 if protected)
          tail_exact = true;
        } else {
          tail -= v.running.AdvanceNotAfter(&fc, pe);
        }
        if (d <= b1 + tail) {
          need_full = true;
          stop_at = pe;
          return -1;
        }
      }
      if (d > b1) {
        held = held || (!skipped && place_.empty());
        skipped = true;
        if (watching && h.watched(e.slot)) {
          held_watch = e.slot;
          held_left = b1;
        }
      }
      if (++examined >= kMaxExamined) return -1;
      const int64_t bound = b1 + tail;  // no later job can get more than this
      return bound <= 0 ? -1 : bound / 1000;
    };
    h.ForEachPending(vc, std::ref(admit));
    if (need_full) {
      const bool every_class_shown = (b1 + tail) / 1000 > h.state().vc_max_node_gpus(vc);
      if (every_class_shown && held_watch == UINT32_MAX && h.pending_count(vc) < kMaxExamined)
        *resume = Resume{true, stop_at, fc, b1 + tail, tail, skipped, held};
      else
        place_.clear();
      return false;
    }
    if (place_.empty()) *block = PluginStatus::Unschedulable(kHeld);
    if (held_watch != UINT32_MAX) {
      const SchedJob& j = h.job(held_watch);
      h.Note(held_watch, {h.now(), "tiresias", "held",
                          "not admitted: needs " + std::to_string(j.job->gpu_milli_total() / 1000) + " GPUs, " +
                              std::to_string(held_left / 1000) + " free and the running jobs behind it are too few to preempt",
                          {{"queue", static_cast<double>(j.key1)}, {"gpus_left", static_cast<double>(held_left) / 1000}}});
    }
    return true;
  }

  // Carries out a decision: preemptions (preempt_) first, then placements (place_).
  void Apply(SchedulerHandle& h, PluginStatus* block) {
    const Time now = h.now();
    for (uint32_t s : preempt_) {
      if (h.watched(s)) {
        const SchedJob& j = h.job(s);
        h.Note(s, {now, "tiresias", "preempt",
                   "preempted by Tiresias: queue Q" + std::to_string(c_->Queue(c_->Service(j, now))) +
                       ", higher-priority pending jobs need its GPUs",
                   {{"attained_gpu_s", static_cast<double>(c_->Service(j, now))}}});
      }
      h.Preempt(s);
    }
    for (uint32_t s : place_) {
      SchedJob& j = h.job(s);
      if (h.placer().Place(j, h.state(), nullptr, &alloc_).ok()) {
        h.Start(s, std::move(alloc_));
      } else {
        if (block->ok()) *block = PluginStatus::Unschedulable(kNoPlacement);
        if (h.watched(s))
          h.Note(s, {now, "tiresias", "no-placement",
                     "admitted by GPU count but the placer found no nodes (fragmentation); retried at the next decision",
                     {}});
      }
      alloc_.clear();
    }
  }

  void Describe(const SchedJob& j, Time now, std::vector<ExplainNote>* out) const override {
    const int64_t a = c_->Service(j, now);
    ExplainNote n{now, "tiresias", "queue", "", {}};
    const int q = c_->Queue(a);
    n.text = "queue Q" + std::to_string(q) + " of " + std::to_string(c_->o.thresholds.size() + 1) + ": attained " +
             std::to_string(a) + (c_->o.gpu_time ? " GPU-s" : " s") +
             (q < static_cast<int>(c_->o.thresholds.size()) ? ", demoted at " + std::to_string(c_->o.thresholds[q])
                                                            : ", lowest queue");
    n.fields = {{"queue", q}, {"attained_service", static_cast<double>(a)}, {"total_attained_gpu_s",
                static_cast<double>(j.attained + (j.running ? (now - j.started) * static_cast<int64_t>(j.job->gpus) : 0))}};
    if (c_->o.gittins) n.fields.push_back({"gittins_index", c_->Index(a)});
    out->push_back(std::move(n));
  }

 private:
  static constexpr const char* kHeld = "higher-priority Tiresias jobs hold the VC's GPUs";
  static constexpr const char* kNoPlacement = "admitted by Tiresias but no placement (fragmentation)";
  static constexpr size_t kMaxExamined = 100000;

  // Restart protection: a job restarted after a preemption keeps its GPUs for `protect` ×
  // its restart overhead, so every restart buys net progress (else a job demoted or
  // out-ranked before it has recovered its restart cost can be preempted forever).
  Duration Protection(const SchedJob& j) const {
    if (j.preemptions == 0 || c_->o.protect <= 0) return 0;
    return static_cast<Duration>(std::ceil(c_->o.protect * static_cast<double>(LucidPreemptionOverhead(j.job->gpus))));
  }
  // GPUs (milli) running job `j` in `slot` would give back if preempted at the next
  // decision: its running order's weight (0 while protected; ExpireProtection restores it).
  int64_t Freeable(uint32_t slot, const SchedJob& j) const {
    return slot < prot_until_.size() && prot_until_[slot] != kNoTime ? 0 : static_cast<int64_t>(j.job->gpu_milli_total());
  }

  // The full walk's step over the running jobs from *it up to `bound` (nullptr: to the end):
  // each unprotected job is kept while its demand fits the budget, else preempted. Runs of
  // jobs that all fit are passed a block at a time (WeightedOrder::SkipFitting); protected
  // jobs weigh 0, so they are passed and never preempted.
  void ConsumeRunning(const RunningOrder& order, const RunEntry* bound, RunningOrder::Cursor* it, int64_t* budget,
                      int64_t* unvisited) {
    auto before_bound = [&] { return !order.at_end(*it) && (!bound || order.at(*it).key < *bound); };
    while (before_bound()) {
      // Every remaining job fits what is left (each takes d ≤ budget in turn): all are kept.
      if (!bound && *unvisited <= *budget) return;
      const int64_t kept = order.SkipFitting(it, bound, *budget);
      *budget -= kept;
      *unvisited -= kept;
      if (!before_bound()) return;
      const RunningOrder::Entry& e = order.at(*it);  // its demand exceeds the budget left
      *unvisited -= e.weight;
      preempt_.push_back(e.key.slot);
      order.Next(it);
    }
  }

  // Appends a protection end to the FIFO of its length (in order: see ProtectionFifo; a live
  // driver's Adopt may start a job in the past, which is inserted where it belongs).
  void Protect(const ProtectionEnd& e, Duration length) {
    auto f = std::find_if(protections_.begin(), protections_.end(), [&](const ProtectionFifo& x) { return x.length == length; });
    if (f == protections_.end()) f = protections_.insert(protections_.end(), ProtectionFifo{length, {}});
    auto& ends = f->ends;
    if (ends.empty() || ends.back().t <= e.t) {
      ends.push_back(e);
      return;
    }
    ends.insert(std::upper_bound(ends.begin(), ends.end(), e.t, [](Time t, const ProtectionEnd& x) { return t < x.t; }), e);
  }

  // The restart protections that ended by now (called first in Advance, so before every
  // decision): each job still protected gets its demand as weight again (it may be
  // preempted) and its VC decides again.
  void ExpireProtection(SchedulerHandle& h) {
    for (ProtectionFifo& f : protections_) {
      for (; !f.ends.empty() && f.ends.front().t <= h.now(); f.ends.pop_front()) {
        const ProtectionEnd& e = f.ends.front();
        if (prot_until_[e.slot] != e.t) continue;  // the job stopped (or restarted) since
        VcState& v = V(e.vc);
        const int64_t demand = static_cast<int64_t>(h.job(e.slot).job->gpu_milli_total());
        v.protected_milli -= demand;
        prot_until_[e.slot] = kNoTime;
        v.running.SetWeight(cur_[e.slot], demand);
        h.MarkDirty(e.vc);
      }
    }
  }

  // Called at every start, stop and decision: the growth is out of line so that this inlines.
  VcState& V(VcId vc) {
    if (vcs_.size() <= vc.v) [[unlikely]]
      Grow(vc);
    return vcs_[vc.v];
  }
  [[gnu::noinline]] void Grow(VcId vc) { vcs_.resize(vc.v + 1u); }

  // Inserts a running job of VC state `v` under its current key and arms its next demotion.
  void Insert(SchedulerHandle& h, VcState& v, uint32_t slot) {
    const SchedJob& j = h.job(slot);
    const Time now = h.now();
    const SortKey k = c_->KeyAt(j, now);
    if (cur_.size() <= slot) cur_.resize(slot + 1u);
    cur_[slot] = RunEntry::Of(k.k1, k.k2, j.seq, slot);
    v.running.Insert(cur_[slot], Freeable(slot, j));
    const int64_t rate = c_->o.gpu_time ? j.job->gpus : (j.job->gpus ? 1 : 0);
    const int q = static_cast<int>(k.k1);
    // Next key change: the queue's threshold, or (2D-Gittins) the end of the current quantum.
    const int64_t a = c_->Service(j, now);
    int64_t next = q < static_cast<int>(c_->o.thresholds.size()) ? c_->o.thresholds[q] : INT64_MAX;
    if (c_->o.gittins) next = std::min(next, a - a % c_->o.delta + c_->o.delta);
    if (rate > 0 && next != INT64_MAX) timers_.push(Timer{now + (next - a + rate - 1) / rate, slot, j.seq, j.started, true});
  }

  void Rekey(SchedulerHandle& h, uint32_t slot) {
    const SchedJob& j = h.job(slot);
    const int64_t old_q = cur_[slot].k1();
    VcState& v = V(j.vc);
    v.running.Erase(cur_[slot]);
    Insert(h, v, slot);
    if (cur_[slot].k1() != old_q && h.watched(slot))
      h.Note(slot, {h.now(), "tiresias", "demoted",
                    "demoted to Q" + std::to_string(cur_[slot].k1()) + " at attained service " +
                        std::to_string(c_->Service(j, h.now())),
                    {{"queue", static_cast<double>(cur_[slot].k1())}}});
  }

  std::shared_ptr<TiresiasCore> c_;
  std::vector<VcState> vcs_;
  std::vector<RunEntry> cur_;  // per slot: its key in the running set
  std::vector<Time> prot_until_;  // per slot: end of its restart protection, or kNoTime
  std::vector<ProtectionFifo> protections_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  std::vector<uint32_t> place_, preempt_;
  Allocation alloc_;
};

}  // namespace

void InstallTiresias(const TiresiasOptions& o, PolicyParts* parts) {
  auto core = std::make_shared<TiresiasCore>();
  core->o = o;
  parts->sort = std::make_unique<TiresiasSort>(core);
  parts->reschedule = std::make_unique<TiresiasResched>(core);
  parts->tick = o.interval;
  parts->preempt_overhead = &LucidPreemptionOverhead;
  parts->blocking = false;
}

}  // namespace orrery
