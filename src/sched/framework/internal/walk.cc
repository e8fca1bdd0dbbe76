// What a cycle's queue walk means, and the check that the optimised walk keeps that meaning
// (docs/design/components.md, "The cycle's contract").
//
// PlainWalk is the reference: the VC's pending jobs in queue order, Place, on failure the
// PostFilter, then stop or go on, with no shortcut. CycleExclusive (scheduler.cc) is the walk
// the drivers run: the same walk with pruners (Pruner, scheduler.h) that each skip only work
// the plain walk would do without effect, under the plugin contract they name. With walk checks
// on (CheckWalks; every walk in a build with ORRERY_DEV_CHECKS), a walk first runs the plain
// walk on a copy of the scheduler, then the optimised walk, and compares their decisions.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>

#include "sched/framework/internal/scheduler.h"

namespace orrery {

std::string_view PrunerName(Pruner p) {
  switch (p) {
    case Pruner::kBlockedHead: return "blocked-head";
    case Pruner::kFittingClasses: return "fitting-classes";
    case Pruner::kUnfitKeyBound: return "unfit-key-bound";
    case Pruner::kRejects: return "rejects";
    case Pruner::kRejectsAlongClass: return "rejects-along-class";
    case Pruner::kSettledWalk: return "settled-walk";
  }
  return "unknown";
}

std::string PrunerNames(PrunerSet set) {
  std::string names;
  for (uint32_t i = 0; i < kPrunerCount; ++i) {
    const Pruner p = static_cast<Pruner>(i);
    if (!HasPruner(set, p)) continue;
    if (!names.empty()) names += ", ";
    names += PrunerName(p);
  }
  return names.empty() ? "none" : names;
}

// Mirrors the conditions under which CycleExclusive applies each pruner.
PrunerSet Scheduler::ActivePruners(bool blocking) const {
  PrunerSet set = 0;
  auto add = [&](Pruner p, bool on) {
    if (on && HasPruner(opts_.pruners, p)) set |= PrunerBit(p);
  };
  if (PlainBlockingWalk(blocking)) {
    add(Pruner::kBlockedHead, memo_blocked_);
    return set;
  }
  add(Pruner::kFittingClasses, !blocking);
  const bool by_fit = HasPruner(set, Pruner::kFittingClasses);
  add(Pruner::kUnfitKeyBound, by_fit && policy_.post);
  add(Pruner::kRejects, by_fit && policy_.post && !policy_.shape);
  const bool rejects = HasPruner(set, Pruner::kRejects);
  add(Pruner::kRejectsAlongClass, rejects && policy_.post->rejects_along_class());
  add(Pruner::kSettledWalk, rejects && SettlingWalks());
  return set;
}

namespace {
using Classes = std::vector<std::pmr::set<PendingEntry>>;

// A plain walk's cursor of one size class: from the class's first entry until it has a
// position, then at `at` (after it: the class of the job visited last), or done.
struct PlainCursor {
  std::optional<PendingEntry> at;
  bool after = false;
  bool done = false;
};

const PendingEntry* PlainNext(const Classes& classes, const std::vector<PlainCursor>& cur, size_t c) {
  const PlainCursor& u = cur[c];
  if (u.done) return nullptr;
  const auto& cls = classes[c];
  const auto it = !u.at ? cls.begin() : (u.after ? cls.upper_bound(*u.at) : cls.lower_bound(*u.at));
  return it == cls.end() ? nullptr : &*it;
}

// The class whose cursor holds the smallest key; SIZE_MAX: none.
size_t PlainPick(const Classes& classes, const std::vector<PlainCursor>& cur) {
  size_t pick = SIZE_MAX;
  const PendingEntry* best = nullptr;
  for (size_t c = 0; c < cur.size(); ++c) {
    const PendingEntry* e = PlainNext(classes, cur, c);
    if (e && (best == nullptr || *e < *best)) {
      best = e;
      pick = c;
    }
  }
  return pick;
}
}  // namespace

// The reference walk of `vc`. Pending jobs are kept per size class (ClassOf); the walk keeps one
// cursor per class, at the next job of that class to visit, and visits the smallest-keyed job at
// the cursors: the queue order. A job the PostFilter requeues (a preemption) ahead of its
// class's cursor waits for the next cycle; one behind it is visited; a class whose jobs were
// all visited is done. Each visit: Place; on success Start; on failure record the blocking
// reason and run the PostFilter, which may place the job (preemption) or start others
// (backfill); kStop ends the walk unless it placed nothing and the evaluation lane opens.
// Without a PostFilter a blocking walk stops at its first failure. The evaluation lane
// (reserve.h): once a blocking walk's head (an other job) waits and the reserve has room, only
// evaluation jobs are visited, placed inside the reserve, until one fails or the reserve is
// full. At most max_examined visits; returns whether it stopped there (the optimised walk does
// not count the jobs its pruners pass, so a capped walk is not compared).
bool Scheduler::PlainWalk(VcId vc, bool blocking) {
  VcQueues& q = vcs_[vc.v];
  bool lane = false;
  struct LaneOff {
    ReservingPlacer* p;
    ~LaneOff() {
      if (p) p->set_lane_only(false);
    }
  } lane_off{reserving_};
  std::vector<PlainCursor> cur(q.classes.size());
  for (size_t examined = 0;; ++examined) {
    const size_t pick = PlainPick(q.classes, cur);
    if (pick == SIZE_MAX) return false;
    if (examined == opts_.max_examined) return true;
    const QEntry here = *PlainNext(q.classes, cur, pick);
    cur[pick] = PlainCursor{here, true, false};
    const uint32_t slot = here.slot;
    SchedJob& j = pool_[slot];
    if (lane && !IsEvaluation(*j.job)) continue;
    PluginStatus st = policy_.shape ? PlaceShaped(slot) : placer_->Place(j, state_, nullptr, &scratch_);
    if (st.ok()) {
      Start(slot, std::move(scratch_));
      scratch_.clear();
      if (lane && ledger_->reserve_full(vc)) return false;
      continue;
    }
    if (lane) return false;
    st.plugin = placer_->name();
    q.last_block = st;
    const bool to_lane = blocking && reserving_ && !IsEvaluation(*j.job) && !ledger_->reserve_full(vc);
    if (policy_.post) {
      for (size_t c = 0; c < cur.size(); ++c) {  // the other cursors stay at their next jobs
        if (c == pick || cur[c].done) continue;
        const QEntry* e = PlainNext(q.classes, cur, c);
        cur[c] = e ? PlainCursor{*e, false, false} : PlainCursor{std::nullopt, false, true};
      }
      bool placed = false;
      const PostFilterPlugin::Next after = policy_.post->Run(*this, slot, &placed);
      if (after == PostFilterPlugin::Next::kStop && (placed || !to_lane)) return false;
      if (placed) continue;
    }
    if (!blocking) continue;
    if (!to_lane) return false;
    lane = true;
    reserving_->set_lane_only(true);
  }
}

void Scheduler::CheckWalks(WalkCheck check) {
  walk_check_ = std::make_unique<WalkCheckState>();
  walk_check_->check = check;
}

// The copies a checked walk's plain walk runs on: the policy's plugins, the placer (inside the
// evaluation reservation's wrapper) and the truth. False when one cannot be copied.
bool Scheduler::CopyForCheck(PolicyParts* parts, std::unique_ptr<PlacePlugin>* placer,
                             std::unique_ptr<TruthModel>* truth) const {
  if (truth_ && !(*truth = truth_->Clone())) return false;
  std::string_view who;
  if (!CopyPlugins(parts, placer, &who, /*inner_placer=*/true)) return false;
  parts->reserve = policy_.reserve;
  parts->estimator = nullptr;  // the walk asks none (estimates are made at submission)
  return true;
}

// The part of a walk-check copy that a forecast's copy leaves out: the truth (a copy, bound to
// the oracle sort), the orders by true end, and the evaluation reservation's ledger.
void Scheduler::CopyCheckState(const Scheduler& o, std::unique_ptr<TruthModel> truth) {
  own_truth_ = std::move(truth);
  truth_ = own_truth_.get();
  if (truth_) policy_.sort->BindOracle(truth_);
  true_end_order_ = o.true_end_order_;
  track_node_ends_ = o.track_node_ends_;
  node_ends_ = o.node_ends_;
  true_end_ = o.true_end_;
  true_pos_.assign(o.true_pos_.size(), {});
  for (VcQueues& q : vcs_)
    for (auto it = q.running_true.begin(); it != q.running_true.end(); ++it) true_pos_[it->slot] = it;
  if (o.ledger_) {
    ledger_ = std::make_unique<ReservationLedger>(*o.ledger_);
    auto wrapped = std::make_unique<ReservingPlacer>(std::move(placer_), ledger_.get());
    reserving_ = wrapped.get();
    placer_ = std::move(wrapped);
  }
}

std::string Scheduler::DescribeDecision(const Decision& d) const {
  auto job = [&](uint32_t slot) {
    const SchedJob& j = pool_[slot];
    return "slot " + std::to_string(slot) + (j.job ? " (job " + std::to_string(j.job->id.v) + ")" : "");
  };
  return std::visit(Overloaded{[&](const StartDecision& s) { return "start " + job(s.slot); },
                               [&](const PreemptDecision& p) {
                                 return std::string(p.cancel ? "preempt-and-cancel " : "preempt ") + job(p.slot);
                               }},
                    d);
}

namespace {
bool SameDecision(const Decision& a, const Decision& b) {
  if (a.index() != b.index()) return false;
  return std::visit(Overloaded{[&](const StartDecision& s) { return s.slot == std::get<StartDecision>(b).slot; },
                               [&](const PreemptDecision& p) {
                                 const PreemptDecision& o = std::get<PreemptDecision>(b);
                                 return p.slot == o.slot && p.cancel == o.cancel;
                               }},
                    a);
}
}  // namespace

// The first difference between the optimised walk's decisions (out_ from `from`) and the plain
// walk's (`plain`), in words; empty when they agree.
std::string Scheduler::FirstDifference(VcId vc, bool blocking, size_t from, const std::vector<Decision>& plain) const {
  const std::vector<Decision>& optimised = *out_;
  const size_t n = optimised.size() - from;
  size_t i = 0;
  while (i < n && i < plain.size() && SameDecision(optimised[from + i], plain[i])) ++i;
  if (i == n && i == plain.size()) return {};
  auto at = [&](const std::vector<Decision>& v, size_t k) { return k < v.size() ? DescribeDecision(v[k]) : "none"; };
  return "walk check: VC " + std::to_string(vc.v) + " at t=" + std::to_string(now_) + ": decision " +
         std::to_string(i + 1) + " differs: optimised walk " + at(optimised, from + i) + ", plain walk " +
         at(plain, i) + " (" + std::to_string(n) + " vs " + std::to_string(plain.size()) +
         " decisions); pruners active: " + PrunerNames(ActivePruners(blocking));
}

// A walk with the check (CheckWalks): the plain walk on a copy taken now, then the optimised
// walk, then the comparison. Walks not due (WalkCheck::every), on a state that cannot be copied,
// or whose plain walk reached max_examined, run unchecked and are counted.
void Scheduler::CheckedWalk(VcId vc, bool blocking) {
  WalkCheckState& c = *walk_check_;
  if (c.walks++ % c.check.every != 0) return CycleExclusive(vc, blocking);
  PolicyParts parts;
  std::unique_ptr<PlacePlugin> placer;
  std::unique_ptr<TruthModel> truth;
  if (!CopyForCheck(&parts, &placer, &truth)) {
    ++c.counts.not_copyable;
    return CycleExclusive(vc, blocking);
  }
  Scheduler copy(*this, std::move(parts), std::move(placer), CopyFor::kWalkCheck, std::move(truth));
  std::vector<Decision> plain;
  copy.out_ = &plain;
  const bool capped = copy.PlainWalk(vc, blocking);
  const size_t from = out_->size();
  CycleExclusive(vc, blocking);
  if (capped) {
    ++c.counts.capped;
    return;
  }
  ++c.counts.compared;
  std::string diff = FirstDifference(vc, blocking, from, plain);
  if (diff.empty()) return;
  if (c.check.abort) {
    std::fprintf(stderr, "%s\n", diff.c_str());
    std::abort();
  }
  if (c.difference.empty()) c.difference = std::move(diff);
}

}  // namespace orrery
