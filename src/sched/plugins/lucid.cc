#include "sched/plugins/lucid.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

#include "base/parse.h"
#include "predict/interference.h"
#include "sched/plugins/policies.h"

namespace orrery {

// ---------------- SubmissionForecaster

void SubmissionForecaster::Observe(Time submit) {
  int64_t b = BinOf(submit);
  if (first_bin_ == INT64_MIN) first_bin_ = b;
  if (b < first_bin_) return;  // out of order before the first bin: ignored
  size_t i = static_cast<size_t>(b - first_bin_);
  if (i >= counts_.size()) counts_.resize(i + 1, 0);
  ++counts_[i];
  ++tod_total_[i % kBinsPerDay];
}

double SubmissionForecaster::Level(Time now) const {
  if (first_bin_ == INT64_MIN) return 0;
  int64_t cur = BinOf(now) - first_bin_;  // bins before `cur` are complete
  int64_t from = std::max<int64_t>(0, cur - 6);
  if (cur <= 0) return counts_.empty() ? 0 : counts_[0];
  double s = 0;
  for (int64_t i = from; i < cur; ++i) s += static_cast<size_t>(i) < counts_.size() ? counts_[static_cast<size_t>(i)] : 0;
  return s / static_cast<double>(cur - from);
}

// The mean of the bins b − day, b − 2·day, … ≥ 0: the total of b's time-of-day slot less its
// bins from b on (at most the current one when b is now or later), so a forecast costs O(1)
// instead of a walk over every past day. The sums are integers, exact in a double.
double SubmissionForecaster::TimeOfDay(Time bin_start, bool* known) const {
  *known = false;
  if (first_bin_ == INT64_MIN) return 0;
  const int64_t b = BinOf(bin_start) - first_bin_;
  if (b < kBinsPerDay) return 0;
  uint64_t s = tod_total_[static_cast<size_t>(b % kBinsPerDay)];
  for (size_t i = static_cast<size_t>(b); i < counts_.size(); i += kBinsPerDay) s -= counts_[i];
  *known = true;
  return static_cast<double>(s) / static_cast<double>(b / kBinsPerDay);
}

double SubmissionForecaster::PredictMean(Time now, int bins) const {
  double level = Level(now), s = 0;
  for (int k = 0; k < bins; ++k) {
    bool known = false;
    double tod = TimeOfDay(now + k * kBin, &known);
    s += known ? 0.5 * level + 0.5 * tod : level;
  }
  return bins > 0 ? s / bins : 0;
}

double SubmissionForecaster::CountPercentile(Time now, double q) const {
  if (first_bin_ == INT64_MIN) return 0;
  int64_t cur = std::min<int64_t>(BinOf(now) - first_bin_, static_cast<int64_t>(counts_.size()));
  if (cur <= 0) return 0;
  std::vector<uint32_t> c(counts_.begin(), counts_.begin() + cur);
  size_t k = std::min(c.size() - 1, static_cast<size_t>(q * static_cast<double>(c.size())));
  std::nth_element(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(k), c.end());
  return c[k];
}

std::string DescribePackNote(const PackNote& n, double min_speed) {
  char buf[320];
  switch (n.outcome) {
    case PackNote::kNone:
      return "";
    case PackNote::kPacked:
      std::snprintf(buf, sizeof buf,
                    "packed with job %u: same GPU count, memory fits, sharing scores sum <= 2, priority within ratio; "
                    "interference model predicts speeds %.3f (this job) and %.3f (partner) >= %.2f",
                    n.partner_job, n.speed_self, n.speed_partner, min_speed);
      return buf;
    case PackNote::kTooLarge:
      return "not packed: more than 8 GPUs (multi-node jobs never share)";
    case PackNote::kPackingOff:
      return "not packed: packing was off (forecast submissions at or below the PAS threshold)";
    case PackNote::kNoCandidate:
      return "not packed: no running job of its VC was available to share with";
    case PackNote::kRejected: {
      std::string s = "not packed: every running candidate was rejected (";
      static const char* kRule[6] = {"already sharing", "different GPU count", "GPU memory over the limit",
                                     "sharing scores sum > 2", "priority more than ratio x partner's",
                                     "interference model predicts a speed below the limit"};
      bool first = true;
      for (int r = 0; r < 6; ++r) {
        if (!n.rejected[r]) continue;
        s += (first ? "" : ", ") + std::to_string(n.rejected[r]) + " " + kRule[r];
        first = false;
      }
      s += ")";
      if (n.rejected[5]) {
        std::snprintf(buf, sizeof buf, "; best rejected pair: predicted speeds %.3f / %.3f < %.2f", n.speed_self,
                      n.speed_partner, min_speed);
        s += buf;
      }
      return s;
    }
  }
  return "";
}

namespace {

constexpr Duration kNegativeEstimate = 1000;  // Lucid replaces non-positive predictions by 1000 s
// Lucid's duration model: XGBoost retrained weekly on the newest 10,000 finished jobs (a fixed
// cost per retraining; `estimator=xgboost` is the full retraining on up to 200,000 rows).

class LucidSort final : public QueueSortPlugin {
 public:
  std::string_view name() const override { return "lucid"; }
  SortKey Key(const SchedJob& j, Time) override {
    // In the profiler: least-GPU-first, then submit time.
    if (j.home_vc.valid()) return {static_cast<int64_t>(j.job->gpus), j.job->submit};
    Duration est = j.estimate > 0 ? j.estimate : kNegativeEstimate;
    return {est * static_cast<int64_t>(std::max<uint32_t>(1, j.job->gpus)), static_cast<int64_t>(j.job->gpus)};
  }
  void Describe(const SchedJob& j, Time now, std::vector<ExplainNote>* out) const override {
    if (j.home_vc.valid()) {
      out->push_back({now, "lucid", "profiler", "in the profiler: least-GPU-first, " + std::to_string(j.job->gpus) + " GPU(s)",
                      {{"gpus", j.job->gpus}}});
      return;
    }
    const Duration est = j.estimate > 0 ? j.estimate : kNegativeEstimate;
    out->push_back({now, "lucid", "priority",
                    "priority " + std::to_string(est * static_cast<int64_t>(std::max<uint32_t>(1, j.job->gpus))) +
                        " = estimated duration " + std::to_string(est) + " s" + (j.estimate > 0 ? "" : " (estimate <= 0: 1000 s)") +
                        " x " + std::to_string(j.job->gpus) + " GPU(s); smaller runs first",
                    {{"priority", static_cast<double>(j.key1)}, {"estimate_s", static_cast<double>(j.estimate)}}});
  }
};

struct LucidOptions {
  bool pack = true, pas = true, tune = true;
  ProfilerSpec profiler;
  double pas_threshold = 2, min_speed = 0.8, gpu_mem = 24576, ratio = 2;
  int64_t tune_days = 7;
};

class LucidShare final : public SharePlugin {
 public:
  LucidShare(std::shared_ptr<const ColocationContext> ctx, LucidOptions o, const Trace* trace)
      : ctx_(std::move(ctx)), o_(o), forecast_(trace ? trace->epoch_unix : 0), threshold_(o.pas_threshold) {
    notes_.resize(trace ? trace->jobs.size() : 0);
  }
  std::string_view name() const override { return "lucid-packing"; }

  void OnSubmit(const SchedJob& j, uint32_t slot, Time now) override {
    if (j.job->gpus > 0) forecast_.Observe(now);
    if (slot_jobs_.size() <= slot) slot_jobs_.resize(static_cast<size_t>(slot) + 1);
    const JobRequest& job = *j.job;
    const bool packable = job.gpus > 0 && job.gpus <= 8 && !job.is_fractional();
    slot_jobs_[slot] = {job.id.v, packable ? ctx_->workload(job.id) : uint16_t{0}, static_cast<uint8_t>(packable ? job.gpus : 0)};
  }

  bool Active(SchedulerHandle& h) override {
    if (!o_.pack) return false;
    if (!o_.pas) return true;
    const Time now = h.now();
    const bool was = active_;
    if (next_check_ == kNoTime || now >= next_check_) {
      if (o_.tune) {
        if (next_tune_ == kNoTime) next_tune_ = now + o_.tune_days * 86400;
        if (now >= next_tune_) {
          threshold_ = std::max(1.0, forecast_.CountPercentile(now, 0.2));
          next_tune_ = now + o_.tune_days * 86400;
        }
      }
      active_ = forecast_.PredictMean(now, 5) > threshold_;
      next_check_ = now - (now % 100) + 100;  // every 100 s
      if (active_ && !was) rescan_all_ = true;
    }
    if (active_ && rescan_all_) {  // packing just switched on: every pending job is new to it
      rescan_all_ = false;
      for (uint16_t v = 0; v < h.state().num_vcs(); ++v) {
        auto& a = added_[v];
        for (double& b : a) b = std::numeric_limits<double>::infinity();
      }
    }
    return active_;
  }

  // Packing pass. Lucid visits every pending job in priority order each tick and packs it
  // onto the first admissible running partner. A pending job that failed against every
  // candidate fails again as long as no candidate is added (the rules depend only on the two
  // jobs), so a pass visits, in priority order, (a) jobs new to the queue and (b) for each
  // size with a partner added since the last pass, the pending jobs of that size whose
  // priority the new partner admits (≤ ratio × its priority). All of them after PAS has
  // switched packing on.
  // visit_ holds the jobs' queue keys (PendingEntry) so that the sort compares in place
  // instead of reading every job record (thousands per pass at a long queue).
  void Pack(SchedulerHandle& h, VcId vc) override {
    visit_.clear();
    for (uint32_t s : h.fresh(vc)) {
      const SchedJob& j = h.job(s);
      if (j.job && !j.running && j.vc == vc) visit_.push_back({j.key1, j.key2, j.seq, s, 0});
    }
    auto it = added_.find(vc.v);
    if (it != added_.end()) {
      for (uint32_t g = 1; g <= 8; ++g) {
        const double bound = it->second[g];
        if (bound < 0) continue;
        h.ForEachPendingOfSize(vc, g, [&](const PendingEntry& e) {
          if (static_cast<double>(e.k1) > bound) return false;
          visit_.push_back(e);
          return true;
        });
      }
      added_.erase(it);
    }
    if (visit_.empty()) return;
    std::sort(visit_.begin(), visit_.end());  // queue order: key1, key2, seq
    visit_.erase(std::unique(visit_.begin(), visit_.end(),
                             [](const PendingEntry& a, const PendingEntry& b) { return a.slot == b.slot; }),
                 visit_.end());
    for (const PendingEntry& e : visit_) {
      if (h.job(e.slot).running) continue;
      uint32_t p = FindPartner(h, e.slot);
      if (p != kNoSlot) h.StartShared(e.slot, p);
    }
  }

  // Candidate sets hold the running, unsharing jobs of ≤ 8 GPUs per (VC, size), in start
  // order (a job keeps its start rank while it shares and when it runs alone again).
  void OnRunning(SchedulerHandle& h, uint32_t slot, bool running) override {
    const SchedJob& j = h.job(slot);
    ClearFailed();  // the candidate set changed
    if (j.home_vc.valid()) return;  // profiling runs are never partners
    const bool small = j.job->gpus > 0 && j.job->gpus <= 8 && !j.job->is_fractional();
    if (!small) return;
    auto& set = Candidates(j.vc, j.job->gpus);
    if (order_.size() <= slot) order_.resize(static_cast<size_t>(slot) + 1, 0);
    if (running) {
      order_[slot] = ++counter_;
      if (j.partner == kNoSlot) {
        set.insert({counter_, slot});
        Added(j);
      } else {  // packed: its partner is no longer available
        set.erase({order_[j.partner], j.partner});
      }
      return;
    }
    if (order_[slot] != 0) {
      if (j.partner == kNoSlot) set.erase({order_[slot], slot});
      order_[slot] = 0;
    }
    if (j.partner != kNoSlot) {  // the partner runs alone again
      set.insert({order_[j.partner], j.partner});
      Added(h.job(j.partner));
    }
  }


  // The first admissible running partner for pending `slot` (rules i–vi), or kNoSlot.
  uint32_t FindPartner(SchedulerHandle& h, uint32_t slot) {
    const SchedJob& j = h.job(slot);
    const SlotJob& info = slot_jobs_[slot];
    PackNote* note = info.job < notes_.size() ? &notes_[info.job] : nullptr;
    if (j.home_vc.valid()) return kNoSlot;  // in the profiler: exclusive, least-GPU-first
    if (info.gpus == 0) {  // not a whole-GPU job of 1..8 GPUs
      if (note) note->outcome = PackNote::kTooLarge;
      return kNoSlot;
    }
    const uint16_t wj = info.workload;
    // Within one cycle no candidate appears (the memo is cleared on every start/finish) and
    // jobs come in ascending priority: a workload that found no partner at a lower
    // priority finds none now (rules i-iv and vi depend only on the workloads, v only
    // gets harder).
    if (h.now() != memo_now_) {
      memo_now_ = h.now();
      ClearFailed();
    }
    Failed& memo = FailedEntry(j.vc, info.gpus, wj);
    if (memo.stamp == failed_stamp_) {
      if (note && note->outcome != PackNote::kPacked &&
          !(memo.note.outcome == PackNote::kNoCandidate && note->outcome == PackNote::kRejected))
        *note = memo.note;
      return kNoSlot;
    }
    const JobRequest& job = *j.job;
    const Workload& a = ctx_->table.workloads()[wj];
    const uint8_t ssj = ctx_->sharing_score[wj];
    PackNote local;
    local.outcome = PackNote::kNoCandidate;
    float best = -1;
    auto it = cand_.find(Key(j.vc, job.gpus));
    if (it != cand_.end()) {
      for (const auto& [order, ps] : it->second) {
        const SchedJob& p = h.job(ps);
        if (p.partner != kNoSlot) {
          ++local.rejected[0];
          continue;
        }
        if (p.job->gpus != job.gpus) {  // never: candidates are indexed by size
          ++local.rejected[1];
          continue;
        }
        const uint16_t wp = ctx_->workload(p.job->id);
        const Workload& b = ctx_->table.workloads()[wp];
        if (!(b.gmem < o_.gpu_mem - a.gmem)) {
          ++local.rejected[2];
          continue;
        }
        if (ssj + ctx_->sharing_score[wp] > 2) {
          ++local.rejected[3];
          continue;
        }
        if (!(static_cast<double>(j.key1) <= o_.ratio * static_cast<double>(p.key1))) {
          ++local.rejected[4];
          continue;
        }
        float sj = ctx_->PredictedSpeed(wj, wp), sp = ctx_->PredictedSpeed(wp, wj);
        if (sj < o_.min_speed || sp < o_.min_speed) {
          ++local.rejected[5];
          if (std::min(sj, sp) > best) {
            best = std::min(sj, sp);
            local.speed_self = sj;
            local.speed_partner = sp;
          }
          continue;
        }
        local.outcome = PackNote::kPacked;
        local.partner_job = p.job->id.v;
        local.speed_self = sj;
        local.speed_partner = sp;
        if (note) *note = local;
        if (h.watched(slot))
          h.Note(slot, {h.now(), "lucid-packing", "packed", DescribePackNote(local, o_.min_speed),
                        {{"partner_job", local.partner_job}, {"speed_self", sj}, {"speed_partner", sp}}});
        return ps;
      }
    }
    bool any = false;
    for (uint16_t r : local.rejected) any |= r > 0;
    if (any) local.outcome = PackNote::kRejected;
    // Keep the most informative attempt: a rejection by the rules is not overwritten by a
    // later attempt that found no candidate at all.
    if (note && note->outcome != PackNote::kPacked &&
        !(local.outcome == PackNote::kNoCandidate && note->outcome == PackNote::kRejected))
      *note = local;
    memo = {failed_stamp_, local};
    if (h.watched(slot))
      h.Note(slot, {h.now(), "lucid-packing", "not-packed", DescribePackNote(local, o_.min_speed),
                    {{"rejected_memory", local.rejected[2]}, {"rejected_score", local.rejected[3]},
                     {"rejected_priority", local.rejected[4]}, {"rejected_interference", local.rejected[5]}}});
    return kNoSlot;
  }

  std::string Explain(JobId id) const override {
    if (id.v >= notes_.size()) return "";
    std::string s = DescribePackNote(notes_[id.v], o_.min_speed);
    if (!ctx_->job_workload.empty() && id.v < ctx_->job_workload.size()) {
      const uint16_t w = ctx_->workload(id);
      const Workload& wl = ctx_->table.workloads()[w];
      char buf[200];
      std::snprintf(buf, sizeof buf, "%sworkload %s (assigned): gpu_util %.0f %%, gmem %.0f MiB, sharing score %u",
                    s.empty() ? "" : "; ", wl.Label().c_str(), wl.gpu_util, wl.gmem, ctx_->sharing_score[w]);
      s += buf;
    }
    return s;
  }

  void Describe(const SchedJob& j, Time now, std::vector<ExplainNote>* out) const override {
    if (ctx_->job_workload.size() <= j.job->id.v) return;
    const uint16_t w = ctx_->workload(j.job->id);
    const Workload& wl = ctx_->table.workloads()[w];
    out->push_back({now, "lucid-packing", "profile",
                    "workload " + wl.Label() + " (seeded assignment from the co-location table), sharing score " +
                        std::to_string(ctx_->sharing_score[w]),
                    {{"gpu_util", wl.gpu_util}, {"gmem_mib", wl.gmem}, {"sharing_score", ctx_->sharing_score[w]},
                     {"mean_predicted_speed", ctx_->mean_speed[w]}}});
    if (j.job->id.v < notes_.size() && notes_[j.job->id.v].outcome != PackNote::kNone) {
      const PackNote& n = notes_[j.job->id.v];
      out->push_back({now, "lucid-packing", "packing", DescribePackNote(n, o_.min_speed),
                      {{"outcome", n.outcome}, {"speed_self", n.speed_self}, {"speed_partner", n.speed_partner}}});
    }
    if (j.partner != kNoSlot) out->push_back({now, "lucid-packing", "sharing", "shares its GPUs with a partner", {}});
  }

 private:
  // A job became a possible partner: pending jobs of its size up to ratio × its priority
  // are worth another look.
  void Added(const SchedJob& p) {
    if (p.job->gpus == 0 || p.job->gpus > 8 || p.job->is_fractional() || p.home_vc.valid()) return;
    auto [it, fresh] = added_.try_emplace(p.vc.v);
    if (fresh) it->second.fill(-1);
    double& b = it->second[p.job->gpus];
    b = std::max(b, o_.ratio * static_cast<double>(p.key1));
  }
  static uint32_t Key(VcId vc, uint32_t gpus) { return (static_cast<uint32_t>(vc.v) << 4) | gpus; }
  std::set<std::pair<uint64_t, uint32_t>>& Candidates(VcId vc, uint32_t gpus) { return cand_[Key(vc, gpus)]; }

  std::shared_ptr<const ColocationContext> ctx_;
  LucidOptions o_;
  SubmissionForecaster forecast_;
  double threshold_;
  bool active_ = false;
  Time next_check_ = kNoTime, next_tune_ = kNoTime;
  std::map<uint32_t, std::set<std::pair<uint64_t, uint32_t>>> cand_;  // (vc, gpus) -> running, by start order
  std::vector<uint64_t> order_;  // slot -> start counter of its running job (from 1), 0 = none
  uint64_t counter_ = 0;
  // What FindPartner reads of a pending job, per scheduler slot, captured at OnSubmit: a pass
  // that answers thousands of visited jobs from the memo then reads no job record for them.
  struct SlotJob {
    uint32_t job = 0;       // trace job id
    uint16_t workload = 0;  // its co-location workload
    uint8_t gpus = 0;       // 1..8 for a whole-GPU job that may pack, else 0
  };
  std::vector<SlotJob> slot_jobs_;
  // This cycle's failed (vc, gpus, workload) lookups, indexed rather than searched (the pass
  // consults it for every job it visits): an entry holds while its stamp is failed_stamp_, so
  // clearing the memo is one increment.
  struct Failed {
    uint64_t stamp = 0;
    PackNote note;
  };
  Failed& FailedEntry(VcId vc, uint32_t gpus, uint16_t workload) {
    const size_t i = (static_cast<size_t>(vc.v) * 9 + gpus) * ctx_->n() + workload;
    if (failed_.size() <= i) failed_.resize(i + 1);
    return failed_[i];
  }
  void ClearFailed() { ++failed_stamp_; }
  Time memo_now_ = kNoTime;
  std::vector<Failed> failed_;
  uint64_t failed_stamp_ = 1;
  std::vector<PackNote> notes_;
  std::map<uint16_t, std::array<double, 9>> added_;  // vc -> per size: priority bound (-1 none)
  std::vector<PendingEntry> visit_;
  bool rescan_all_ = true;
};

constexpr OptionSpec kLucidOptions[] = {
    {"estimator", OptionType::kText, "xgboost:retrain=window",
     "duration estimator (any estimator spec; the default retrains weekly on the newest 10,000 jobs)"},
    {"pack", OptionType::kBool, "true", "indolent packing: at most two jobs per GPU, with a running partner of the same size"},
    {"pas", OptionType::kBool, "true", "Prescient Adaptive Sharing: packing off while the submission forecast is low"},
    {"pas_threshold", OptionType::kNumber, "2", "PAS: packing is off while the forecast submissions per 10 minutes are at most this", 0, 1e9},
    {"min_speed", OptionType::kNumber, "0.8", "both jobs of a pair must keep at least this predicted speed", 0, 1},
    {"gpu_mem", OptionType::kNumber, "24576", "one GPU's memory (MiB) that a pair's memory must stay under", 0, 1e7},
    {"ratio", OptionType::kNumber, "2", "a job packs only with a partner whose priority is at least its own / ratio", 0, 1e9},
    {"tune", OptionType::kBool, "true", "re-set pas_threshold every tune_days to the 20th percentile of 10-minute counts"},
    {"tune_days", OptionType::kNumber, "7", "days of simulated time between two re-tunings", 1, 3650},
    {"profiler", OptionType::kBool, "true", "run small jobs on a staging partition first (simulator only)"},
    {"profiler_nodes", OptionType::kNumber, "2", "nodes of the staging partition", 1, 10000},
    {"profiler_limit", OptionType::kNumber, "200", "seconds a job runs on the staging partition at most", 1, 1e9},
    {"profiler_max_gpus", OptionType::kNumber, "8", "jobs of at most this many GPUs are profiled", 1, 1e6},
    {"profiler_vcs", OptionType::kText, "", "'+'-separated VCs that give the staging nodes (default: the largest)"},
    {"colocation", OptionType::kText, "", "co-location table (default: the shared Lucid table)"},
};

}  // namespace

OptionSchema LucidOptionSchema() { return kLucidOptions; }

Result<PolicyParts> MakeLucidPolicy(const SpecArgs& args, uint64_t seed, const Trace* trace,
                                    std::shared_ptr<const ColocationContext> ctx) {
  PolicyParts parts;
  parts.name = args.spec();
  parts.sort = std::make_unique<LucidSort>();
  ORR_ASSIGN_OR_RETURN(parts.estimator, MakeEstimator(args.Text("estimator"), seed, trace));
  LucidOptions o;
  ORR_ASSIGN_OR_RETURN(o.pack, args.Bool("pack"));
  ORR_ASSIGN_OR_RETURN(o.pas, args.Bool("pas"));
  ORR_ASSIGN_OR_RETURN(o.tune, args.Bool("tune"));
  ORR_ASSIGN_OR_RETURN(o.pas_threshold, args.Number("pas_threshold"));
  ORR_ASSIGN_OR_RETURN(o.min_speed, args.Number("min_speed"));
  ORR_ASSIGN_OR_RETURN(o.gpu_mem, args.Number("gpu_mem"));
  ORR_ASSIGN_OR_RETURN(o.ratio, args.Number("ratio"));
  ORR_ASSIGN_OR_RETURN(const double days, args.Number("tune_days"));
  o.tune_days = static_cast<int64_t>(days);
  ORR_ASSIGN_OR_RETURN(o.profiler.enabled, args.Bool("profiler"));
  ORR_ASSIGN_OR_RETURN(const double pn, args.Number("profiler_nodes"));
  ORR_ASSIGN_OR_RETURN(const double pl, args.Number("profiler_limit"));
  ORR_ASSIGN_OR_RETURN(const double pg, args.Number("profiler_max_gpus"));
  o.profiler.nodes = static_cast<int>(pn);
  o.profiler.time_limit = static_cast<Duration>(pl);
  o.profiler.max_gpus = static_cast<uint32_t>(pg);
  for (std::string v = args.Text("profiler_vcs"); !v.empty();) {  // '+'-separated VC names
    size_t plus = v.find('+');
    o.profiler.donor_vcs.push_back(v.substr(0, plus));
    v = plus == std::string::npos ? "" : v.substr(plus + 1);
  }
  parts.profiler = o.profiler;
  std::string path = args.Text("colocation");
  if (path.empty()) path = DefaultColocationPath();
  parts.blocking = true;  // while packing is off (PAS), exclusive placement stops at the first failure
  if (o.pack) {
    if (!trace) return args.Fail("packing needs the trace (per-job workload assignment)");
    if (ctx) {
      if (ctx->job_workload.size() != trace->jobs.size()) return args.Fail("interference context does not cover the trace");
      parts.colocation = std::move(ctx);
    } else {
      ORR_ASSIGN_OR_RETURN(parts.colocation, BuildColocationContext(path, trace, seed));
    }
    parts.share = std::make_unique<LucidShare>(parts.colocation, o, trace);
  }
  return parts;
}

Result<PolicyParts> MakeLucidPolicy(const std::string& spec, uint64_t seed, const Trace* trace,
                                    std::shared_ptr<const ColocationContext> ctx) {
  if (spec.substr(0, spec.find(':')) != "lucid") return MakeError("not a lucid spec: '" + spec + "'");
  ORR_ASSIGN_OR_RETURN(SpecArgs args, SpecArgs::Parse(spec, "policy", {LucidOptionSchema()}));
  return MakeLucidPolicy(args, seed, trace, std::move(ctx));
}

}  // namespace orrery
