#include "sched/plugins/policies.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "base/parse.h"
#include "sched/plugins/elastic.h"
#include "sched/plugins/lucid.h"
#include "sched/plugins/placers.h"
#include "sched/plugins/policy_registry.h"
#include "sched/plugins/slurm_policy.h"
#include "sched/plugins/tiresias.h"

namespace orrery {

namespace {

// ---------------- QueueSort plugins

class FifoSort final : public QueueSortPlugin {
 public:
  std::string_view name() const override { return "fifo"; }
  SortKey Key(const SchedJob& j, Time) override { return {j.job->submit, 0}; }
  std::unique_ptr<QueueSortPlugin> Clone(PluginCopies&) const override { return std::make_unique<FifoSort>(*this); }
};

// Oracle orders: read the truth through the OracleView the simulator binds.
class OracleSort : public QueueSortPlugin {
 public:
  bool wants_oracle() const override { return true; }
  void BindOracle(const OracleView* oracle) override { oracle_ = oracle; }

 protected:
  Duration TrueRemaining(const SchedJob& j) const {
    ORR_CHECK(oracle_);
    return oracle_->Remaining(j.slot);
  }

 private:
  const OracleView* oracle_ = nullptr;
};

// True duration: SJF is not preemptive, so a job's key is computed once, at submit, when
// its remaining work is all of it.
class SjfSort final : public OracleSort {
 public:
  std::unique_ptr<QueueSortPlugin> Clone(PluginCopies&) const override { return std::make_unique<SjfSort>(*this); }
  std::string_view name() const override { return "sjf"; }
  SortKey Key(const SchedJob& j, Time) override { return {TrueRemaining(j), j.job->submit}; }
};

class SrtfSort final : public OracleSort {
 public:
  std::unique_ptr<QueueSortPlugin> Clone(PluginCopies&) const override { return std::make_unique<SrtfSort>(*this); }
  std::string_view name() const override { return "srtf"; }
  SortKey Key(const SchedJob& j, Time) override { return {TrueRemaining(j), j.job->submit}; }
};

// SRTF on belief (srtf:estimator=...): a pending job's believed remaining time is its
// estimate (the estimator's at submit; after a preemption what was believed left; a progress
// report's ETA re-keys it through UpdateEstimate).
class BeliefSrtfSort final : public QueueSortPlugin {
 public:
  std::string_view name() const override { return "srtf-believed"; }
  SortKey Key(const SchedJob& j, Time) override { return {std::max<Duration>(0, j.estimate), j.job->submit}; }
  std::unique_ptr<QueueSortPlugin> Clone(PluginCopies&) const override {
    return std::make_unique<BeliefSrtfSort>(*this);
  }
};

// Estimated GPU-time; ties by GPU count (Helios sorts by GPUs first, stably).
class QssfSort final : public QueueSortPlugin {
 public:
  std::string_view name() const override { return "qssf"; }
  SortKey Key(const SchedJob& j, Time) override {
    return {j.estimate * static_cast<int64_t>(j.job->gpus), static_cast<int64_t>(j.job->gpus)};
  }
  std::unique_ptr<QueueSortPlugin> Clone(PluginCopies&) const override { return std::make_unique<QssfSort>(*this); }
};

// ---------------- PostFilter: EASY backfill

class EasyBackfill final : public PostFilterPlugin {
 public:
  explicit EasyBackfill(size_t max_test) : max_test_(max_test) {}
  std::string_view name() const override { return "easy-backfill"; }
  bool reads_believed_durations() const override { return true; }
  // The reservation cache too: it is valid for the copied state (same VC versions).
  std::unique_ptr<PostFilterPlugin> Clone(PluginCopies&) const override {
    return std::make_unique<EasyBackfill>(*this);
  }

  Next Run(SchedulerHandle& h, uint32_t head_slot, bool* placed) override {
    *placed = false;
    SchedJob& head = h.job(head_slot);
    const VcId vc = head.vc;
    // 1. Reservation for the head: shadow time and the nodes it would take then.
    //    Cached while the head and the VC's resources are unchanged.
    bool same_state = cache_valid_ && cached_head_ == head_slot && cached_vc_ == vc && cached_version_ == h.version(vc);
    if (!same_state) {
      ComputeShadow(h, head_slot);
      cached_head_ = head_slot;
      cached_vc_ = vc;
      cached_version_ = h.version(vc);
      cache_valid_ = true;
      candidates_from_fresh_ = false;
    } else {
      candidates_from_fresh_ = true;  // only jobs that arrived since can newly fit
    }
    // 2. Backfill: later jobs that fit now without delaying the head.
    if (candidates_from_fresh_) {
      cand_.clear();
      for (uint32_t s : h.fresh(vc))
        if (s != head_slot && !h.job(s).running && h.job(s).job) cand_.push_back(s);
    } else {
      h.PendingAfter(vc, head_slot, max_test_, &cand_);
    }
    ClusterState& st = h.state();
    const uint16_t maxg = st.vc_max_node_gpus(vc);
    uint16_t max_free = MaxFree(st, vc);
    unreserved_valid_ = false;
    for (uint32_t s : cand_) {
      SchedJob& j = h.job(s);
      if (j.running) continue;
      // Cheap necessary conditions before a placement attempt (whole-GPU jobs).
      if (!j.job->is_fractional() && j.job->gpus > 0) {
        if (st.vc_free_gpus(vc) == 0) break;
        if (j.job->gpus <= maxg ? j.job->gpus > max_free
                                : (j.job->gpus > st.vc_free_gpus(vc) || Idle(st, vc) < j.job->gpus / maxg))
          continue;
      }
      Duration est = h.BelievedDuration(j);
      bool ends_before_shadow = shadow_ != kNoTime && h.now() + std::max<Duration>(1, est) <= shadow_;
      const NodeMask* blocked = (shadow_ == kNoTime || ends_before_shadow) ? nullptr : &reserved_;
      if (shadow_ == kNoTime) continue;  // head can never start with current knowledge: do not backfill
      if (blocked && !MayFitUnreserved(*j.job, st, vc)) continue;
      if (!h.placer().Place(j, st, blocked, &alloc_).ok()) continue;
      h.Start(s, std::move(alloc_));
      alloc_.clear();
      cached_version_ = h.version(vc);  // our own starts keep the reservation valid
      max_free = MaxFree(st, vc);
      unreserved_valid_ = false;
    }
    return Next::kStop;
  }

 private:
  static uint16_t MaxFree(const ClusterState& st, VcId vc) {
    for (int k = st.vc_max_node_gpus(vc); k > 0; --k)
      if (st.bucket(vc, static_cast<uint16_t>(k)).Any()) return static_cast<uint16_t>(k);
    return 0;
  }
  static uint64_t Idle(const ClusterState& st, VcId vc) {
    return st.nodes_with_free(vc, st.vc_max_node_gpus(vc));
  }

  // Whether a job that must avoid the reserved nodes could be placed (whole-GPU jobs placed
  // node by node: Placer::Place's PickSingle and PlaceNodes): enough unreserved nodes with
  // enough wholly free GPUs. A necessary condition of the placer's success, and where it
  // fails the placer draws no random number either, so skipping the attempt changes nothing.
  bool MayFitUnreserved(const JobRequest& job, const ClusterState& st, VcId vc) {
    const std::optional<NodeDemand> d = NodeByNodeDemand(job, st.vc_max_node_gpus(vc));
    if (!d) return true;  // CPU-only, fractional, PlaceMulti: no shortcut
    if (d->per > st.vc_max_node_gpus(vc)) return false;
    if (!unreserved_valid_) CountUnreserved(st, vc);
    return unreserved_[d->per] >= d->count;
  }
  // unreserved_[k]: nodes outside reserved_ with at least k wholly free GPUs.
  void CountUnreserved(const ClusterState& st, VcId vc) {
    const uint16_t g = st.vc_max_node_gpus(vc);
    unreserved_.assign(static_cast<size_t>(g) + 2, 0);
    const std::vector<uint64_t>& r = reserved_.words();
    for (int k = g; k >= 1; --k) {
      const std::vector<uint64_t>& w = st.bucket(vc, static_cast<uint16_t>(k)).words();
      uint64_t c = 0;
      for (size_t i = 0; i < w.size(); ++i) c += static_cast<uint64_t>(std::popcount(w[i] & ~r[i]));
      unreserved_[k] = unreserved_[k + 1] + c;
    }
    unreserved_valid_ = true;
  }

  void ComputeShadow(SchedulerHandle& h, uint32_t head_slot) {
    reserved_ = NodeMask(h.state().vc_nodes(h.job(head_slot).vc).size());
    shadow_ = kNoTime;
    if (!ShadowByCounts(h, h.job(head_slot))) ShadowByWalk(h, head_slot);
  }

  // The walk below, on counters: for a whole-GPU head that Placer::Place places node by node
  // (PickSingle: one node of `gpus`; PlaceNodes: `nodes` nodes of gpus / nodes each), "the
  // head fits" is exactly "`count` nodes have `per` wholly free GPUs" where a node's free GPUs
  // after a release are its free GPUs plus the released slot's (whole-GPU slots, no drained
  // node, CPU and memory not modelled). So the running jobs are visited in the walk's order
  // with a per-node count instead of ClusterState releases and a fit test per end; only the
  // placement at the first fitting end touches the state (ReserveAt). False where the walk
  // must decide; the shadow time and reserved nodes are the walk's otherwise.
  bool ShadowByCounts(SchedulerHandle& h, SchedJob& head) {
    const JobRequest& job = *head.job;
    ClusterState& st = h.state();
    const VcId vc = head.vc;
    const uint16_t g = st.vc_max_node_gpus(vc);
    const std::optional<NodeDemand> d = NodeByNodeDemand(job, g);
    if (!d || d->per > g || st.models_cpu_mem() || st.vc_drained_nodes(vc) != 0 || st.TypeFilter(vc, head.types))
      return false;
    const uint32_t count = d->count, per = d->per;
    uint64_t have = st.nodes_with_free(vc, static_cast<uint16_t>(per));  // QuickFit's count
    if (have >= count) return false;  // fits now: the walk's first end decides
    if (free_after_.size() < st.cluster().nodes.size()) {
      free_after_.resize(st.cluster().nodes.size());
      stamp_.resize(st.cluster().nodes.size(), 0);
    }
    ++epoch_;
    running_.clear();
    Time pending_end = kNoTime, at = kNoTime;
    bool exact = true;
    auto release = [&](uint32_t s) {
      const SchedJob& r = h.job(s);
      if (pending_end != kNoTime && r.est_end != pending_end && have >= count) {
        at = pending_end;
        return false;
      }
      for (const Slot& sl : r.alloc) {
        if (!r.owns_gpus || sl.milli != 1000) {
          exact = false;
          return false;
        }
        uint16_t& f = FreeAfter(st, sl.node);
        const bool below = f < per;
        f = static_cast<uint16_t>(f + sl.gpus);
        if (below && f >= per) ++have;
      }
      running_.push_back(s);
      pending_end = r.est_end;
      return true;
    };
    h.ForEachRunningByEstEnd(vc, std::ref(release));  // std::ref: the std::function is not allocated
    if (!exact) return false;
    if (at == kNoTime && pending_end != kNoTime && have >= count) at = pending_end;
    if (at == kNoTime) return true;  // never fits with what is known: no reservation
    return ReserveAt(h, head, per, at);
  }

  // A node's free GPUs after the releases of this dry walk (its free GPUs until touched).
  uint16_t& FreeAfter(const ClusterState& st, NodeId n) {
    if (stamp_[n.v] != epoch_) {
      stamp_[n.v] = epoch_;
      free_after_[n.v] = st.free_gpus(n);
    }
    return free_after_[n.v];
  }

  // The head's placement at `at`: the dry walk's released jobs (running_) are those ending by
  // then. Only nodes with ≥ per free GPUs then can take the head; the released slots on them
  // are released for real, and every other node is below `per` whether released or not, so
  // the placer sees the choice the walk's full release shows it (the same nodes in the same
  // order: random draws alike).
  bool ReserveAt(SchedulerHandle& h, SchedJob& head, uint32_t per, Time at) {
    ClusterState& st = h.state();
    released_.clear();
    for (uint32_t s : running_)
      for (const Slot& sl : h.job(s).alloc)
        if (free_after_[sl.node.v] >= per) released_.push_back(Allocation{sl});
    for (const Allocation& a : released_) st.Release(a);
    const bool ok = h.placer().Place(head, st, nullptr, &alloc_).ok();
    if (ok) {
      shadow_ = std::max(at, h.now() + 1);
      for (const Slot& sl : alloc_) reserved_.Set(st.local_index(sl.node));
    }
    alloc_.clear();
    for (size_t i = released_.size(); i-- > 0;) st.Apply(released_[i]);
    return ok;
  }

  // The reservation by releasing running jobs in est_end order until the head fits.
  void ShadowByWalk(SchedulerHandle& h, uint32_t head_slot) {
    SchedJob& head = h.job(head_slot);
    const VcId vc = head.vc;
    ClusterState& st = h.state();
    running_.clear();
    Time pending_end = kNoTime;  // release every job ending at the same time before testing
    auto try_place = [&](Time at) {
      if (!QuickFit(head, st) || !h.placer().Place(head, st, nullptr, &alloc_).ok()) return false;
      shadow_ = std::max(at, h.now() + 1);
      for (const Slot& sl : alloc_) reserved_.Set(st.local_index(sl.node));
      alloc_.clear();
      return true;
    };
    bool found = false;
    auto release = [&](uint32_t s) {
      SchedJob& r = h.job(s);
      if (pending_end != kNoTime && r.est_end != pending_end && try_place(pending_end)) {
        found = true;
        return false;
      }
      st.Release(r.alloc);
      running_.push_back(s);
      pending_end = r.est_end;
      return true;
    };
    h.ForEachRunningByEstEnd(vc, std::ref(release));  // std::ref: the std::function is not allocated
    if (!found && pending_end != kNoTime) try_place(pending_end);
    for (size_t i = running_.size(); i-- > 0;) st.Apply(h.job(running_[i]).alloc);
  }

  size_t max_test_;
  bool cache_valid_ = false, candidates_from_fresh_ = false;
  uint32_t cached_head_ = 0;
  VcId cached_vc_;
  uint64_t cached_version_ = 0;
  Time shadow_ = kNoTime;
  NodeMask reserved_;
  std::vector<uint32_t> running_, cand_;
  Allocation alloc_;
  // ShadowByCounts: free GPUs after the dry walk's releases, by node id, valid where
  // stamp_ == epoch_; ReserveAt's released slots.
  std::vector<uint16_t> free_after_;
  std::vector<uint64_t> stamp_;
  uint64_t epoch_ = 0;
  std::vector<Allocation> released_;
  std::vector<uint64_t> unreserved_;  // CountUnreserved
  bool unreserved_valid_ = false;
};

// ---------------- PostFilter: preemption by remaining time (SRTF)

// What SRTF compares: the true remaining time (oracle) or the believed one (a pending job's
// BelievedDuration, a running job's est_end − now: the estimate at submit, re-keyed by
// progress reports).
class RemainingView {
 public:
  virtual ~RemainingView() = default;
  virtual bool oracle() const = 0;
  virtual Duration Pending(SchedulerHandle& h, uint32_t slot) const = 0;
  // Running jobs of `vc` by (true or believed) end descending until fn(slot, end) returns false.
  virtual void ForEachByEndDesc(SchedulerHandle& h, VcId vc, const std::function<bool(uint32_t, Time)>& fn) const = 0;
  virtual std::unique_ptr<RemainingView> Clone() const = 0;
};

class TrueRemaining final : public RemainingView {
 public:
  bool oracle() const override { return true; }
  Duration Pending(SchedulerHandle& h, uint32_t slot) const override { return h.oracle()->Remaining(slot); }
  void ForEachByEndDesc(SchedulerHandle& h, VcId vc, const std::function<bool(uint32_t, Time)>& fn) const override {
    h.ForEachRunningByTrueEndDesc(vc, fn);
  }
  std::unique_ptr<RemainingView> Clone() const override { return std::make_unique<TrueRemaining>(); }
};

class BelievedRemaining final : public RemainingView {
 public:
  bool oracle() const override { return false; }
  Duration Pending(SchedulerHandle& h, uint32_t slot) const override { return h.BelievedDuration(h.job(slot)); }
  void ForEachByEndDesc(SchedulerHandle& h, VcId vc, const std::function<bool(uint32_t, Time)>& fn) const override {
    h.ForEachRunningByEstEndDesc(vc, fn);
  }
  std::unique_ptr<RemainingView> Clone() const override { return std::make_unique<BelievedRemaining>(); }
};

class PreemptLonger final : public PostFilterPlugin {
 public:
  explicit PreemptLonger(std::unique_ptr<RemainingView> view) : view_(std::move(view)) {}
  // The per-state caches (latest_, idle_, emptied_, enough_) are not copied: a copy serves another scheduler.
  PreemptLonger(const PreemptLonger& o)
      : victims_(o.victims_), really_(o.really_), touched_(o.touched_), extra_(o.extra_), memo_now_(o.memo_now_),
        memo_vc_(o.memo_vc_), memo_failed_(o.memo_failed_), alloc_(o.alloc_), view_(o.view_->Clone()) {}
  std::string_view name() const override { return "preempt-longer-remaining"; }
  bool needs_true_end_order() const override { return view_->oracle(); }
  bool reads_running_by_est_end() const override { return !view_->oracle(); }
  // The oracle's queue order is by true remaining time, what Rejects compares (see
  // EnoughIfAllPreempted); a believed order need not be (jobs without an estimate).
  bool rejects_along_class() const override { return view_->oracle(); }
  // A waiting job's remaining time is fixed (truth or belief), a running job's end too, so
  // over time the victims (end − now > remaining) only shrink; a plain start turns free GPUs
  // into GPUs of a running job, which preempting frees at most (EnoughIfAllPreempted, Run's
  // walk over fewer free resources).
  bool failures_persist() const override { return true; }
  std::unique_ptr<PostFilterPlugin> Clone(PluginCopies&) const override {
    return std::make_unique<PreemptLonger>(*this);
  }

  // Only the longest-remaining running job matters.
  bool MayPlaceUnfitting(SchedulerHandle& h, uint32_t slot) override {
    const SchedJob& j = h.job(slot);
    const Time last = LatestEnd(h, j.vc);
    return last != kNoTime && last - h.now() > view_->Pending(h, slot);
  }

  // The oracle's queue key is (true remaining time, submit) (SrtfSort): MayPlaceUnfitting's
  // "shorter than the longest running job" is a key bound.
  std::optional<SortKey> UnfitKeyBound(SchedulerHandle& h, VcId vc) override {
    if (!view_->oracle()) return std::nullopt;
    const Time last = LatestEnd(h, vc);
    if (last == kNoTime) return SortKey{INT64_MIN, INT64_MIN};  // nothing runs: no key is below
    return SortKey{last - h.now(), INT64_MIN};
  }

  bool Rejects(SchedulerHandle& h, uint32_t slot) override {
    const SchedJob& j = h.job(slot);
    const bool enough = EnoughIfAllPreempted(h, j);
    enough_.Set(slot, j.vc, h.version(j.vc), h.now(), enough);
    return !enough;
  }

  Next Run(SchedulerHandle& h, uint32_t slot, bool* placed) override {
    *placed = false;
    SchedJob& j = h.job(slot);
    const VcId vc = j.vc;
    ClusterState& st = h.state();
    const Time now = h.now();
    const Duration remaining = view_->Pending(h, slot);
    if (!Enough(h, j)) return Next::kContinue;
    // Victims: running jobs whose remaining time exceeds j's, longest first.
    victims_.clear();
    uint64_t freed = st.vc_free_gpus(vc);
    bool ok = false;
    auto release = [&](uint32_t r, Time end) {
      SchedJob& rj = h.job(r);
      if (end - now <= remaining) return false;
      victims_.push_back(r);
      st.Release(rj.alloc);
      freed += rj.job->gpus;
      if (freed < j.job->gpus || !QuickFit(j, st)) return true;
      if (h.placer().Place(j, st, nullptr, &alloc_).ok()) {
        ok = true;
        return false;
      }
      return true;
    };
    view_->ForEachByEndDesc(h, vc, std::ref(release));
    if (!ok) {
      for (size_t i = victims_.size(); i-- > 0;) st.Apply(h.job(victims_[i]).alloc);
      return Next::kContinue;
    }
    // Put back victims that do not overlap the new allocation (shortest remaining first).
    st.Apply(alloc_);
    really_.clear();
    for (size_t i = victims_.size(); i-- > 0;) {
      SchedJob& v = h.job(victims_[i]);
      if (CanApply(st, v.alloc)) {
        st.Apply(v.alloc);
      } else {
        really_.push_back(victims_[i]);
      }
    }
    // The state is now the outcome (the original, less the victims that overlap, plus j's
    // allocation), but the handle's Preempt and Start release and apply those themselves:
    // undo just them (the state is a sum of allocations, so the order does not matter; a
    // walk puts back ~20 victims for each one it preempts).
    st.Release(alloc_);
    for (uint32_t v : really_) st.Apply(h.job(v).alloc);
    for (uint32_t v : really_) h.Preempt(v);
    // Preempted victims may free more than j takes: earlier failures no longer bound later jobs.
    memo_failed_.clear();
    h.Start(slot, std::move(alloc_));
    alloc_.clear();
    *placed = true;
    return Next::kContinue;
  }

 private:
  // The whole-GPU demand as (free GPUs needed per node, nodes needed), on nodes of g GPUs:
  // a single-node job needs one node with `gpus`; an explicit node count splits evenly; a
  // larger job needs ⌊gpus/g⌋ idle nodes (its remainder node is not counted: a necessary
  // condition only).
  static std::pair<uint32_t, uint64_t> NodeShape(const JobRequest& job, uint16_t g) {
    if (job.nodes > 1 && job.gpus == static_cast<uint32_t>(job.nodes) * g) return {g, job.nodes};  // no division
    if (job.nodes > 1 && job.gpus % job.nodes == 0) return {job.gpus / job.nodes, job.nodes};
    if (job.gpus > g) return {g, job.gpus / g};
    return {job.gpus, 1};
  }

  // EnoughIfAllPreempted(j), from Rejects when it just asked on the same state.
  bool Enough(SchedulerHandle& h, const SchedJob& j) {
    const EnoughAnswer asked = enough_;
    enough_ = {};
    if (asked.slot == j.slot && asked.vc == j.vc && asked.version == h.version(j.vc) && asked.now == h.now())
      return asked.enough;
    return EnoughIfAllPreempted(h, j);
  }

  // Dry run without touching the cluster state: would preempting every candidate victim
  // free enough whole GPUs on the right nodes? (Necessary condition, O(victims).)
  bool EnoughIfAllPreempted(SchedulerHandle& h, const SchedJob& j) {
    const JobRequest& job = *j.job;
    if (job.gpus == 0 || job.is_fractional()) return true;
    const ClusterState& st = h.state();
    const VcId vc = j.vc;
    const uint16_t g = st.vc_max_node_gpus(vc);
    // Whole-node demands: exact in O(log n) from the busy-nodes-by-earliest-true-end index
    // (kept only for the oracle view).
    const Time after = view_->oracle() ? h.now() + view_->Pending(h, j.slot) : kNoTime;  // the victims' ends
    if (view_->oracle() && job.gpus >= g && job.nodes <= 1) {
      const bool enough = NodesIdleAtLeast(h, vc, after, job.gpus / g);
      if (job.gpus % g == 0) return enough;
      if (!enough) return false;
    }
    // Within one cycle (same instant and VC), jobs are visited in ascending remaining time
    // and, until a preemption succeeds, resources only shrink: a later job has fewer
    // candidate victims. A demand of `need` nodes with `per` free GPUs each that failed
    // therefore bounds every later demand that needs at least as many nodes with at least
    // as many GPUs (the dry run's own (per, need) shape).
    const auto [per, need] = NodeShape(job, g);
    if (memo_now_ != h.now() || memo_vc_ != vc) {
      memo_now_ = h.now();
      memo_vc_ = vc;
      memo_failed_.clear();
    }
    for (const auto& [fp, fn, fg] : memo_failed_)
      if (per >= fp && need >= fn && job.gpus >= fg) return false;
    const std::optional<bool> whole = WholeNodesFit(h, j, g, after);
    const bool ok = whole ? *whole : DryRun(h, j, g);
    if (!ok && memo_failed_.size() < 64) memo_failed_.push_back({per, need, job.gpus});
    return ok;
  }

  // DryRun's answer without its walk, for demands of whole nodes (`need` nodes of g free
  // GPUs, need × g = gpus) where the handle's index counts the busy nodes that preempting
  // would empty: DryRun finds `have` = the wholly free nodes plus those, and `freed` ≥
  // have × g (no drained node holds free GPUs outside the VC's count), so it says
  // have ≥ need. nullopt where the index cannot tell (DryRun decides). `after`: now + the
  // job's remaining time (oracle view only).
  std::optional<bool> WholeNodesFit(SchedulerHandle& h, const SchedJob& j, uint16_t g, Time after) {
    const JobRequest& job = *j.job;
    const auto [per, need] = NodeShape(job, g);
    if (!view_->oracle() || per != g || per * need != job.gpus) return std::nullopt;
    const VcId vc = j.vc;
    auto have = [&](Time t) -> std::optional<uint64_t> {
      const std::optional<uint64_t> emptied = h.BusyNodesEmptiedIfPreemptedAfter(vc, t);
      if (!emptied) return std::nullopt;
      return h.state().nodes_with_free(vc, g) + *emptied;
    };
    return emptied_.AtLeast(vc, h.version(vc), after, need, have);
  }

  // The end of `vc`'s longest-remaining running job (kNoTime: none), once per VC version
  // (every start, stop and estimate change bumps it).
  Time LatestEnd(SchedulerHandle& h, VcId vc) {
    if (latest_.vc == vc && latest_.version == h.version(vc)) return latest_.end;
    Time end = kNoTime;
    auto first = [&](uint32_t, Time e) {
      end = e;
      return false;
    };
    view_->ForEachByEndDesc(h, vc, std::ref(first));
    latest_ = {vc, h.version(vc), end};
    return end;
  }

  // Whether NodesIdleIfPreemptedAfter(vc, t) >= need (a FallingCount).
  bool NodesIdleAtLeast(SchedulerHandle& h, VcId vc, Time t, uint64_t need) {
    auto idle = [&](Time at) -> std::optional<uint64_t> { return h.NodesIdleIfPreemptedAfter(vc, at); };
    return *idle_.AtLeast(vc, h.version(vc), t, need, idle);
  }

  bool DryRun(SchedulerHandle& h, const SchedJob& j, uint16_t g) {
    const JobRequest& job = *j.job;
    const ClusterState& st = h.state();
    const VcId vc = j.vc;
    if (extra_.size() < st.cluster().nodes.size()) extra_.assign(st.cluster().nodes.size(), 0);
    touched_.clear();
    const bool single = job.gpus <= g && job.nodes <= 1;
    bool early = false;
    uint64_t freed = st.vc_free_gpus(vc);
    const Time now = h.now();
    const Duration remaining = view_->Pending(h, j.slot);
    auto victim = [&](uint32_t r, Time end) {
      const SchedJob& rj = h.job(r);
      if (end - now <= remaining) return false;
      for (const Slot& sl : rj.alloc) {
        if (sl.milli != 1000) continue;  // a shared GPU frees no whole GPU by itself
        if (extra_[sl.node.v] == 0) touched_.push_back(sl.node.v);
        extra_[sl.node.v] = static_cast<uint16_t>(extra_[sl.node.v] + sl.gpus);
        freed += sl.gpus;
        if (single && st.free_gpus(sl.node) + extra_[sl.node.v] >= job.gpus) early = true;
      }
      return !early;  // a single-node job needs just one node with room
    };
    view_->ForEachByEndDesc(h, vc, std::ref(victim));
    if (early) {
      for (uint32_t n : touched_) extra_[n] = 0;
      return true;
    }
    bool ok = freed >= job.gpus;
    if (ok) {
      const auto [per, need] = NodeShape(job, g);
      // Nodes that would have ≥ per free GPUs: touched ones, plus untouched ones already there.
      uint64_t have = st.nodes_with_free(vc, static_cast<uint16_t>(per));
      for (uint32_t n : touched_) {
        NodeId id(n);
        if (st.free_gpus(id) < per && st.free_gpus(id) + extra_[n] >= per) ++have;
      }
      ok = have >= need;
    }
    for (uint32_t n : touched_) extra_[n] = 0;
    return ok;
  }

  static bool CanApply(const ClusterState& st, const Allocation& a) {
    for (const Slot& s : a) {
      if (st.tracks_gpus()) {
        uint32_t m = s.gpu_mask;
        while (m) {
          int g = std::countr_zero(m);
          m &= m - 1;
          if (st.gpu_free_milli(s.node, g) < s.milli) return false;
        }
      } else if (st.free_gpus(s.node) < s.gpus) {
        return false;
      }
      if (!st.CpuMemFits(s.node, s.cpu_milli, s.mem_mib)) return false;
    }
    return true;
  }
  std::vector<uint32_t> victims_, really_, touched_;
  std::vector<uint16_t> extra_;
  Time memo_now_ = kNoTime;
  VcId memo_vc_;
  std::vector<std::tuple<uint32_t, uint64_t, uint32_t>> memo_failed_;  // failed (per, need, gpus)
  struct LatestCache {
    VcId vc;
    uint64_t version = 0;
    Time end = kNoTime;
  } latest_;
  // A count of nodes that preempting every job ending after t would leave idle (or wholly
  // free), at one VC version: it only falls as t grows, so the last query bounds later ones.
  // A walk visits jobs by ascending remaining time, and each large job that cannot start
  // costs no index query. `count` is nullopt where the index cannot tell (at that version).
  struct FallingCount {
    VcId vc;
    uint64_t version = 0;
    Time t = kNoTime;
    std::optional<uint64_t> count;
    // count(at) >= need, asking query(at) only when the last count does not settle it.
    template <typename Query>
    std::optional<bool> AtLeast(VcId v, uint64_t ver, Time at, uint64_t need, Query& query) {
      if (!(vc == v && version == ver && t <= at)) Store(v, ver, at, query(at));
      if (!count) return std::nullopt;
      if (*count < need) return false;
      if (t != at) Store(v, ver, at, query(at));
      if (!count) return std::nullopt;
      return *count >= need;
    }
    void Store(VcId v, uint64_t ver, Time at, std::optional<uint64_t> c) {  // member by member (EnoughAnswer)
      vc = v;
      version = ver;
      t = at;
      count = c;
    }
  };
  FallingCount idle_;     // NodesIdleIfPreemptedAfter
  FallingCount emptied_;  // wholly free nodes + BusyNodesEmptiedIfPreemptedAfter
  struct EnoughAnswer {  // Rejects' answer, for the Run that follows it
    uint32_t slot = kNoSlot;
    VcId vc;
    uint64_t version = 0;
    Time now = kNoTime;
    bool enough = false;
    // Member by member, after the handle's calls: a braced temporary built across them was
    // stored field by field and copied back with wide loads (a store-forwarding stall on
    // every rejection: 4 % of the 1M srtf run).
    void Set(uint32_t s, VcId v, uint64_t ver, Time t, bool e) {
      slot = s;
      vc = v;
      version = ver;
      now = t;
      enough = e;
    }
  } enough_;
  Allocation alloc_;
  std::unique_ptr<RemainingView> view_;
};

// ---------------- Options (the schemas of the registry below)

// Every policy's common keys; a policy's own schema may override one (easy: backfill=easy).
constexpr OptionSpec kCommonOptions[] = {
    {"backfill", OptionType::kChoice, "none", "EASY backfill behind the policy's own order (non-preemptive policies)", 0, 0,
     "easy|none"},
    {"bf_max_job_test", OptionType::kInt, "1000", "with backfill=easy: jobs examined per backfill pass", 1, 10000000},
    {"blocking", OptionType::kBool, "", "stop at the first job that cannot be placed (default: the policy's own)"},
    {"eval_share", OptionType::kNumber, "0", "share of each VC's GPUs reserved for evaluation jobs", 0, 1, {}, true,
     "a share of the GPUs in [0, 1)"},
    {"shape", OptionType::kChoice, "none",
     "goodput: the planner chooses each described job's GPU count, layout and GPU type", 0, 0, "goodput|none"},
    {"shape_shrink", OptionType::kNumber, "4", "with shape=goodput: the smallest GPU count tried is the request / shape_shrink", 1, 64},
    {"shape_grow", OptionType::kNumber, "2", "with shape=goodput: the largest GPU count tried is the request x shape_grow", 1, 64},
    {"shape_gain", OptionType::kNumber, "1.6", "with shape=goodput: a doubling of GPUs is taken only if the step is this much faster", 1, 2},
    {"elastic", OptionType::kBool, "false",
     "with shape=goodput: grow and shrink running jobs by checkpoint and restart"},
    {"elastic_cooldown", OptionType::kNumber, "1800", "with elastic=true: seconds a job runs (since its start) before it may be resized", 0,
     30 * 86400.0},
};

constexpr OptionSpec kSrtfOptions[] = {
    {"estimator", OptionType::kText, "",
     "unset: true remaining time (an oracle); an estimator spec (predict/estimator.h): believed remaining time"},
};
constexpr OptionSpec kQssfOptions[] = {
    {"estimator", OptionType::kText, "noisy-oracle",
     "duration estimator: noisy-oracle, oracle, walltime, history, user-stats, xgboost, blend, semantic, table:<csv>"},
};
constexpr OptionSpec kEasyOptions[] = {
    {"estimator", OptionType::kText, "walltime", "the estimates reservations are made from (any estimator spec)"},
    {"backfill", OptionType::kChoice, "easy", "EASY backfill behind submit order", 0, 0, "easy|none"},
};
constexpr OptionSpec kTiresiasOptions[] = {
    {"preset", OptionType::kChoice, "original",
     "original (the paper's thresholds) or lucid (one threshold of 18,000 GPU-s, decisions every 60 s)", 0, 0,
     "original|lucid"},
    {"thresholds", OptionType::kText, "", "queue thresholds of attained service, '/'-separated (default: the preset's)",
     0, 0, {}, false, "increasing positive integers separated by '/' (e.g. 3250/7200)"},
    {"interval", OptionType::kInt, "", "seconds between periodic decisions, 0 = event-driven (default: the preset's)", 0,
     86400, {}, false, "seconds in [0, 86400]"},
    {"knob", OptionType::kNumber, "0", "starvation: a job waiting knob x its executed time returns to the first queue (0 = off)", 0, 1e6,
     {}, false, "a number in [0, 1e6]"},
    {"gittins", OptionType::kBool, "false", "2D-Gittins index within a queue instead of LAS"},
    {"delta", OptionType::kInt, "3250", "Gittins service quantum (GPU-s)", 1, 1e15, {}, false,
     "a positive integer (GPU-s)"},
    {"protect", OptionType::kNumber, "2", "a restarted job keeps its GPUs for protect x its restart overhead (0 = off)", 0, 1000},
    {"service", OptionType::kChoice, "gpu", "attained service counts GPU-seconds (gpu) or seconds (time)", 0, 0,
     "gpu|time"},
};

// ---------------- Factories (each sets the parts its policy owns)

Status BuildFifo(const SpecArgs&, PolicyBuild&, PolicyParts* parts) {
  parts->sort = std::make_unique<FifoSort>();
  return Status::Ok();
}

Status BuildSjf(const SpecArgs&, PolicyBuild&, PolicyParts* parts) {
  parts->sort = std::make_unique<SjfSort>();
  return Status::Ok();
}

// Oracle by default; estimator=... orders and preempts by believed remaining time.
Status BuildSrtf(const SpecArgs& args, PolicyBuild& b, PolicyParts* parts) {
  const std::string est = args.Text("estimator");
  if (est.empty()) {
    parts->sort = std::make_unique<SrtfSort>();
    parts->post = std::make_unique<PreemptLonger>(std::make_unique<TrueRemaining>());
  } else {
    ORR_ASSIGN_OR_RETURN(parts->estimator, MakeEstimator(est, b.seed, b.env->trace));
    parts->sort = std::make_unique<BeliefSrtfSort>();
    parts->post = std::make_unique<PreemptLonger>(std::make_unique<BelievedRemaining>());
  }
  parts->blocking = false;
  parts->preemptive = true;
  return Status::Ok();
}

Status BuildQssf(const SpecArgs& args, PolicyBuild& b, PolicyParts* parts) {
  parts->sort = std::make_unique<QssfSort>();
  ORR_ASSIGN_OR_RETURN(parts->estimator, MakeEstimator(args.Text("estimator"), b.seed, b.env->trace));
  return Status::Ok();
}

// fifo with backfill=easy and walltime estimates (its schema's defaults).
Status BuildEasy(const SpecArgs& args, PolicyBuild& b, PolicyParts* parts) {
  parts->sort = std::make_unique<FifoSort>();
  ORR_ASSIGN_OR_RETURN(parts->estimator, MakeEstimator(args.Text("estimator"), b.seed, b.env->trace));
  return Status::Ok();
}

// "3250/7200" -> {3250, 7200}: increasing positive integers.
Result<std::vector<int64_t>> ParseThresholds(const SpecArgs& args) {
  const std::string th = args.Text("thresholds");
  std::vector<int64_t> out;
  for (size_t pos = 0; pos <= th.size();) {
    const size_t slash = th.find('/', pos);
    const std::string item = th.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos);
    int64_t v = 0;
    if (!ParseI64(item, &v) || v < 1 || (!out.empty() && v <= out.back()))
      return args.Bad("thresholds", th);
    out.push_back(v);
    if (slash == std::string::npos) break;
    pos = slash + 1;
  }
  return out;
}

Status BuildTiresias(const SpecArgs& args, PolicyBuild&, PolicyParts* parts) {
  TiresiasOptions o;
  ORR_ASSIGN_OR_RETURN(const std::string preset, args.Choice("preset"));
  if (preset == "lucid") {
    o.thresholds = {18000};
    o.interval = 60;
  }
  if (args.Given("thresholds") && !args.Text("thresholds").empty()) {
    ORR_ASSIGN_OR_RETURN(o.thresholds, ParseThresholds(args));
  }
  if (args.Given("interval")) {
    ORR_ASSIGN_OR_RETURN(o.interval, args.Int("interval"));
  }
  ORR_ASSIGN_OR_RETURN(o.knob, args.Number("knob"));
  ORR_ASSIGN_OR_RETURN(o.gittins, args.Bool("gittins"));
  ORR_ASSIGN_OR_RETURN(o.delta, args.Int("delta"));
  ORR_ASSIGN_OR_RETURN(o.protect, args.Number("protect"));
  ORR_ASSIGN_OR_RETURN(const std::string service, args.Choice("service"));
  o.gpu_time = service == "gpu";
  InstallTiresias(o, parts);
  return Status::Ok();
}

Status BuildSlurm(const SpecArgs& args, PolicyBuild& b, PolicyParts* parts) {
  return BuildSlurmPolicy(args, b.env->trace, b.env->cluster, parts);
}

Status BuildLucid(const SpecArgs& args, PolicyBuild& b, PolicyParts* parts) {
  ORR_ASSIGN_OR_RETURN(*parts, MakeLucidPolicy(args, b.seed, b.env->trace, nullptr));
  return Status::Ok();
}

// ---------------- The options every policy takes

// backfill=easy[,bf_max_job_test=N]: EASY backfill behind any non-preemptive order. The head
// of each VC's queue gets a reservation from the running jobs' estimated ends (the policy's
// estimator, else the true remaining time); later jobs start if they do not delay it.
Status ApplyBackfill(const SpecArgs& args, PolicyParts* parts) {
  ORR_ASSIGN_OR_RETURN(const std::string backfill, args.Choice("backfill"));
  if (backfill == "none") {
    if (args.Given("bf_max_job_test")) return args.Fail("parameter 'bf_max_job_test' needs backfill=easy");
    return Status::Ok();
  }
  if (parts->preemptive || parts->reschedule || parts->share)
    return args.Fail("parameter 'backfill': not available for the preemptive, rescheduling or GPU-sharing policy '" +
                     args.name() + "'");
  ORR_ASSIGN_OR_RETURN(const int64_t n, args.Int("bf_max_job_test"));
  parts->post = std::make_unique<EasyBackfill>(static_cast<size_t>(n));
  return Status::Ok();
}

// blocking=..., eval_share=S (GPUs reserved for evaluation jobs, sched/framework/api/reserve.h).
Status ApplyQueueOptions(const SpecArgs& args, PolicyParts* parts) {
  if (args.Given("blocking")) {
    ORR_ASSIGN_OR_RETURN(parts->blocking, args.Bool("blocking"));
  }
  if (args.Given("eval_share")) {
    ORR_ASSIGN_OR_RETURN(const double share, args.Number("eval_share"));
    if (parts->share && share > 0)
      return args.Fail("parameter 'eval_share': not available for the GPU-sharing policy '" + args.name() + "'");
    parts->reserve.share = share;
  }
  return Status::Ok();
}

// shape=goodput[,shape_shrink=N,shape_grow=N,shape_gain=X][,elastic=true,elastic_cooldown=S].
Status ApplyShape(const SpecArgs& args, PolicyEnv* env, PolicyParts* parts) {
  ORR_ASSIGN_OR_RETURN(const std::string shape, args.Choice("shape"));
  if (shape == "none") {
    for (const char* k : {"shape_shrink", "shape_grow", "shape_gain", "elastic", "elastic_cooldown"})
      if (args.Given(k) && !args.Text(k).empty()) return args.Fail(std::string("parameter '") + k + "' needs shape=goodput");
    return Status::Ok();
  }
  if (parts->share)
    return args.Fail("parameter 'shape': the planner's shapes cannot be combined with GPU sharing ('" + args.name() + "')");
  GoodputShapeOptions o;
  ORR_ASSIGN_OR_RETURN(const double shrink, args.Number("shape_shrink"));
  ORR_ASSIGN_OR_RETURN(const double grow, args.Number("shape_grow"));
  ORR_ASSIGN_OR_RETURN(o.min_gain, args.Number("shape_gain"));
  o.shrink = static_cast<uint32_t>(shrink);
  o.grow = static_cast<uint32_t>(grow);
  if (o.shrink != shrink || o.grow != grow)
    return args.Fail("parameters 'shape_shrink' and 'shape_grow': expected whole numbers");
  ORR_ASSIGN_OR_RETURN(const bool elastic, args.Bool("elastic"));
  ORR_ASSIGN_OR_RETURN(const double cooldown, args.Number("elastic_cooldown"));
  if (elastic && parts->reschedule)
    return args.Fail("parameter 'elastic': policy '" + args.name() +
                     "' already re-decides its running jobs (a Reschedule plugin); use elastic with fifo, qssf or easy");
  if ((env->trace == nullptr && !env->shape_info) || env->cluster == nullptr)
    return args.Fail(
        "parameter 'shape': needs the jobs' models (a trace's phases, or the live daemon's opt-in jobs) and the "
        "cluster's GPU types");
  if (!env->planner) {
    ORR_ASSIGN_OR_RETURN(env->planner, PlannerCostFor(*env->cluster));
  }
  ShapeInfoFn info = env->shape_info ? env->shape_info : TraceShapeInfo(&env->trace->work);
  auto goodput = std::make_unique<GoodputShape>(env->planner, std::move(info), o);
  if (elastic) {
    ElasticOptions eo;
    eo.cooldown = static_cast<Duration>(cooldown);
    parts->reschedule = std::make_unique<ElasticResize>(goodput.get(), env->trace ? &env->trace->jobs : nullptr, eo);
  }
  parts->shape = std::move(goodput);
  return Status::Ok();
}

}  // namespace

// ---------------- The registry: the one place a policy is declared

const std::vector<PolicyInfo>& Policies() {
  static const std::vector<PolicyInfo> kPolicies = {
      {"fifo", "submit order; head-of-line blocking", LiveSupport::kLive, "", {}, &BuildFifo},
      {"sjf", "shortest true duration first (an oracle); blocking", LiveSupport::kSimulatorOnly,
       "its order reads true durations, which only the simulator knows", {}, &BuildSjf},
      {"srtf", "shortest remaining time first, preempting longer running jobs; greedy", LiveSupport::kSomeSettings,
       "with an estimator=..., which orders by believed remaining time", kSrtfOptions,
       &BuildSrtf},
      {"qssf", "smallest estimated GPU-time first (estimate x GPUs); blocking", LiveSupport::kSomeSettings,
       "with an estimator that is not an oracle, e.g. estimator=walltime", kQssfOptions, &BuildQssf},
      {"easy", "submit order with EASY backfill on walltime estimates", LiveSupport::kLive, "", kEasyOptions,
       &BuildEasy},
      {"tiresias", "discretized 2D-LAS / 2D-Gittins on attained GPU service, with preemption", LiveSupport::kLive, "",
       kTiresiasOptions, &BuildTiresias},
      {"lucid", "estimated GPU-time order, indolent packing with an interference model, a profiler stage",
       LiveSupport::kSimulatorOnly, "orrery serve does not share GPUs", LucidOptionSchema(), &BuildLucid},
      {"slurm",
       "Slurm as a site configures it: multifactor priority with Fair Tree, association and QOS limits, backfill "
       "(slurm.conf and sacctmgr files)",
       LiveSupport::kSimulatorOnly, "under orrery serve the site's own Slurm makes these decisions",
       SlurmOptionSchema(), &BuildSlurm},
  };
  return kPolicies;
}

OptionSchema CommonPolicyOptions() { return kCommonOptions; }

std::vector<std::string> PolicyNames() {
  std::vector<std::string> names;
  for (const PolicyInfo& p : Policies()) names.emplace_back(p.name);
  return names;
}

Result<PolicyParts> MakePolicy(const std::string& spec, uint64_t seed, const Trace* trace) {
  PolicyEnv env;
  env.trace = trace;
  return MakePolicyFor(spec, seed, &env);
}

namespace {
ExternalPolicyFactory& PythonPolicyFactory() {
  static ExternalPolicyFactory f;
  return f;
}
}  // namespace

void SetPythonPolicyFactory(ExternalPolicyFactory f) { PythonPolicyFactory() = std::move(f); }

Result<PolicyParts> MakePolicyFor(const std::string& spec, uint64_t seed, PolicyEnv* env) {
  if (spec.rfind(kPythonPolicyPrefix, 0) == 0) {
    if (!PythonPolicyFactory())
      return MakeError("policy '" + spec +
                       "': Python policies need an orrery built with Python (cmake -DORRERY_PYTHON=ON, as "
                       "scripts/test.sh builds it; docs/python.md)");
    ORR_ASSIGN_OR_RETURN(PolicyParts parts, PythonPolicyFactory()(spec, seed, env));
    parts.name = spec;
    return parts;
  }
  const std::string name = spec.substr(0, spec.find(':'));
  const PolicyInfo* info = FindPolicy(name);
  if (info == nullptr) return MakeError("unknown policy '" + name + "' (expected one of " + PolicyNameList() + ")");
  ORR_ASSIGN_OR_RETURN(SpecArgs args, SpecArgs::Parse(spec, "policy", {info->options, CommonPolicyOptions()}));
  PolicyParts parts;
  PolicyBuild b{seed, env};
  ORR_RETURN_IF_ERROR(info->build(args, b, &parts));
  parts.name = spec;
  ORR_RETURN_IF_ERROR(ApplyBackfill(args, &parts));
  ORR_RETURN_IF_ERROR(ApplyQueueOptions(args, &parts));
  ORR_RETURN_IF_ERROR(ApplyShape(args, env, &parts));
  return parts;
}

}  // namespace orrery
