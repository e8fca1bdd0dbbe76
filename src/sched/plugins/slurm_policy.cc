#include "sched/plugins/slurm_policy.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <vector>

#include "model/cluster.h"
#include "model/trace.h"
#include "slurm/accounts.h"
#include "slurm/conf.h"
#include "slurm/fair_tree.h"
#include "slurm/limits.h"
#include "slurm/priority.h"

namespace orrery {

namespace {

using slurm::Reason;

constexpr OptionSpec kSlurmOptions[] = {
    {"conf", OptionType::kText, "", "the site's slurm.conf (required; docs/formats/slurm-conf.md)"},
    {"accounts", OptionType::kText, "",
     "`sacctmgr -P show assoc` and `show qos` listings, one file (docs/formats/sacctmgr.md); none: no fair share, "
     "no limits"},
};

// What the policy keeps of one job (by slot; rebuilt when the slot holds another job).
struct SlotInfo {
  uint32_t seq = UINT32_MAX;
  slurm::PriorityJob pj;
  slurm::LimitJob lj;
  uint32_t user = 0;        // trace user id (bf_max_job_user)
  double usage_factor = 1;  // the QOS's UsageFactor
  uint32_t priority = 0;
  Reason reason = Reason::kNone;
  Reason invalid = Reason::kNone;  // InvalidAccount / InvalidQOS: refused at submission
  bool in_system = false;  // counted by the limits as submitted
  Time release = kNoTime;  // while running with a time limit: start + limit (SlurmCore::releases)
};

// The state the sort and the reschedule plugin share. The configuration is immutable and
// shared by copies (the predicted start's dry run copies the rest).
struct SlurmCore {
  std::shared_ptr<const slurm::SlurmConf> conf;
  std::shared_ptr<const slurm::Accounts> acc;
  std::shared_ptr<const slurm::PriorityModel> model;  // without fair share (read from `tree`)
  slurm::FairTree tree;
  bool has_tree = false;
  slurm::Limits limits;
  const Trace* trace = nullptr;
  std::vector<uint32_t> vc_partition;        // cluster VC -> partition
  std::vector<double> cpus_per_gpu;          // per partition
  std::vector<uint32_t> gpus_per_node;       // per partition
  std::unordered_map<uint32_t, int32_t> user_assoc;  // trace user id -> association
  std::unordered_map<std::string, int32_t> assoc_index;  // "account\x1fuser\x1fpartition" -> association
  std::unordered_map<std::string, int32_t> qos_index;
  std::vector<SlotInfo> slots;
  std::set<uint32_t> pending;
  std::vector<std::set<uint32_t>> running;   // by cluster VC
  // By cluster VC: the GPUs that running jobs with a time limit free at start + limit, in time
  // order (the backfill pass's profile reads them without sorting).
  std::vector<std::map<Time, int64_t>> releases;
  std::vector<std::pair<int32_t, double>> ended_usage;  // charged at the next calculation
  Time last_calc = kNoTime, next_calc = kNoTime;
  // The backfill scheduler's cadence, by cluster VC: it runs at most every bf_interval. next_bf
  // is the earliest time of its next pass (kNoTime: the next cycle); bf_deferred marks a VC
  // whose cycle left jobs for a pass that was not yet due, so that a wakeup runs it then.
  std::vector<Time> next_bf;
  std::vector<char> bf_deferred;
  // The main scheduler's periodic pass over the whole queue, every sched_interval from the
  // first cycle (0: never): next_full is the next one; full_at the time of a cycle that is one;
  // full_deferred marks a VC whose last pass left jobs past default_queue_depth untested.
  Time next_full = kNoTime, full_at = kNoTime;
  std::vector<char> full_deferred;
  // Preemption (PreemptType other than preempt/none): per QOS, the QOS it may preempt; per
  // partition and per QOS the PreemptMode its jobs are preempted with (OFF: never).
  std::vector<std::vector<char>> qos_preempts;
  std::vector<slurm::PreemptMode> partition_mode, qos_mode;
  // Per trace VC, its partition when the cluster is one pool whose partitions overlap (-1:
  // none; the job takes the pool's partition).
  std::vector<int32_t> trace_vc_partition;

  SlurmCore(std::shared_ptr<const slurm::SlurmConf> c, std::shared_ptr<const slurm::Accounts> a)
      : conf(std::move(c)), acc(std::move(a)), limits(*conf, *acc) {}

  SlotInfo& Info(const SchedJob& j);
  SlotInfo Build(const JobRequest& r, VcId vc, uint32_t seq) const;
  void ChargeTo(const JobRequest& r, uint32_t part, SlotInfo* s) const;
  uint32_t PriorityOf(SlotInfo& s, Time now) {
    slurm::PriorityFactors f = model->Factors(s.pj, now);
    f.fairshare = has_tree && s.pj.assoc >= 0 ? tree.factor(static_cast<size_t>(s.pj.assoc)) : 0.0;
    s.priority = model->FromFactors(f, s.pj.nice);
    return s.priority;
  }
  double Charge(const SlotInfo& s, Time from, Time to) const {
    return std::max<Time>(0, to - from) * static_cast<double>(s.pj.cpus) * s.usage_factor;
  }
  // Whether the backfill pass of `vc` may run at `now`; when it may, its next one is a
  // bf_interval later, else the VC waits for it (NextWakeup).
  bool BackfillDue(VcId vc, Time now) const {
    return next_bf.size() <= vc.v || next_bf[vc.v] == kNoTime || now >= next_bf[vc.v];
  }
  bool TakeBackfillTurn(VcId vc, Time now) {
    if (next_bf.size() <= vc.v) next_bf.resize(vc.v + 1u, kNoTime), bf_deferred.resize(vc.v + 1u, 0);
    if (!BackfillDue(vc, now)) {
      bf_deferred[vc.v] = 1;
      return false;
    }
    next_bf[vc.v] = now + conf->sched.bf_interval_s;
    bf_deferred[vc.v] = 0;
    return true;
  }
  bool FullPassDeferred() const {
    return std::any_of(full_deferred.begin(), full_deferred.end(), [](char d) { return d != 0; });
  }
  void DeferFullPass(VcId vc, bool deferred) {
    if (full_deferred.size() <= vc.v) full_deferred.resize(vc.v + 1u, 0);
    full_deferred[vc.v] = deferred ? 1 : 0;
  }
  // Whether running job `victim` may be preempted by pending job `by`, and how.
  slurm::PreemptMode PreemptModeOf(const SlotInfo& by, const SlotInfo& victim) const;
  Time NextDeferredBackfill() const {
    Time t = kNoTime;
    for (size_t v = 0; v < next_bf.size(); ++v)
      if (bf_deferred[v] && (t == kNoTime || next_bf[v] < t)) t = next_bf[v];
    return t;
  }
};

SlotInfo& SlurmCore::Info(const SchedJob& j) {
  if (slots.size() <= j.slot) slots.resize(j.slot + 1u);
  SlotInfo& s = slots[j.slot];
  if (s.seq != j.seq) s = Build(*j.job, j.vc, j.seq);
  return s;
}

SlotInfo SlurmCore::Build(const JobRequest& r, VcId vc, uint32_t seq) const {
  SlotInfo s;
  s.seq = seq;
  uint32_t part = vc.v < vc_partition.size() ? vc_partition[vc.v] : conf->default_partition;
  if (r.vc.valid() && r.vc.v < trace_vc_partition.size() && trace_vc_partition[r.vc.v] >= 0)
    part = static_cast<uint32_t>(trace_vc_partition[r.vc.v]);
  s.pj.submit = s.pj.eligible = r.submit;
  s.pj.partition = s.lj.partition = part;
  s.pj.gpus = r.gpus;
  s.pj.mem_mib = r.mem_mib;
  const double per_gpu = part < cpus_per_gpu.size() ? cpus_per_gpu[part] : 1.0;
  s.pj.cpus = r.cpu_milli > 0 ? (r.cpu_milli + 999) / 1000
                              : std::max<uint32_t>(1, static_cast<uint32_t>(std::lround(per_gpu * r.gpus)));
  const uint32_t gpn = part < gpus_per_node.size() ? std::max<uint32_t>(1, gpus_per_node[part]) : 1;
  s.pj.nodes = r.nodes > 0 ? r.nodes : std::max<uint32_t>(1, (r.gpus + gpn - 1) / gpn);
  s.user = r.user.v;
  ChargeTo(r, part, &s);
  s.lj.qos = s.pj.qos;
  if (s.pj.qos >= 0) s.usage_factor = acc->qos[s.pj.qos].usage_factor;
  s.lj.tres = {static_cast<int64_t>(s.pj.cpus), static_cast<int64_t>(r.mem_mib), static_cast<int64_t>(s.pj.nodes),
               static_cast<int64_t>(r.gpus)};
  const int64_t max_time = part < conf->partitions.size() ? conf->partitions[part].max_time_s : slurm::kUnlimited;
  s.lj.time_limit_s = r.walltime > 0 ? r.walltime : max_time;
  return s;
}

// The association, QOS and nice value of a job: the trace's account and QOS where recorded
// (an account without an association for the user, or a QOS the QOS table lacks, is refused
// at submission, as sbatch refuses it; without listings nothing is checked), else the user's
// first association and its default QOS.
void SlurmCore::ChargeTo(const JobRequest& r, uint32_t part, SlotInfo* s) const {
  const JobAccount& a = trace->account_of(r.id.value());
  s->pj.nice = a.nice;
  if (!a.account.empty() && !acc->assocs.empty()) {  // without a listing, accounts are not checked
    const std::string user = r.user.valid() && r.user.value() < trace->users.size() ? trace->users.Get(r.user.value()) : "";
    const std::string pname = part < conf->partitions.size() ? conf->partitions[part].name : "";
    auto it = assoc_index.find(a.account + '\x1f' + user + '\x1f' + pname);
    if (it == assoc_index.end()) it = assoc_index.find(a.account + '\x1f' + user + '\x1f');
    if (it == assoc_index.end()) s->invalid = Reason::kInvalidAccount;
    else s->pj.assoc = it->second;
  } else if (auto it = user_assoc.find(r.user.v); it != user_assoc.end()) {
    s->pj.assoc = it->second;
  }
  s->lj.assoc = s->pj.assoc;
  const std::string& qname = !a.qos.empty() ? a.qos : s->pj.assoc >= 0 ? acc->assocs[s->pj.assoc].def_qos : a.qos;
  if (qname.empty()) return;
  auto q = qos_index.find(qname);
  if (q != qos_index.end()) s->pj.qos = q->second;
  else if (!a.qos.empty() && !acc->qos.empty() && s->invalid == Reason::kNone) s->invalid = Reason::kInvalidQOS;
}

// preempt/partition_prio: a job of a partition of higher PriorityTier preempts, with the
// victim's partition's PreemptMode; preempt/qos: a job whose QOS lists the victim's QOS in
// its Preempt list preempts, with the victim's QOS's PreemptMode. kOff: it may not.
slurm::PreemptMode SlurmCore::PreemptModeOf(const SlotInfo& by, const SlotInfo& victim) const {
  switch (conf->preempt_type) {
    case slurm::PreemptType::kNone:
      return slurm::PreemptMode::kOff;
    case slurm::PreemptType::kPartitionPrio:
      if (conf->partitions[by.pj.partition].priority_tier <= conf->partitions[victim.pj.partition].priority_tier)
        return slurm::PreemptMode::kOff;
      return partition_mode[victim.pj.partition];
    case slurm::PreemptType::kQos:
      if (by.pj.qos < 0 || victim.pj.qos < 0 || !qos_preempts[by.pj.qos][victim.pj.qos]) return slurm::PreemptMode::kOff;
      return qos_mode[victim.pj.qos];
  }
  return slurm::PreemptMode::kOff;
}

class SlurmSort final : public QueueSortPlugin {
 public:
  explicit SlurmSort(std::shared_ptr<SlurmCore> c) : c_(std::move(c)) {}
  std::string_view name() const override { return "slurm-priority"; }
  // PriorityTier, then priority (both highest first), then submission (a preemption's requeue
  // resets it); ties by trace order.
  SortKey Key(const SchedJob& j, Time now) override {
    SlotInfo& s = c_->Info(j);
    if (!s.in_system) {
      c_->limits.Submit(s.lj);
      s.in_system = true;
    }
    c_->pending.insert(j.slot);
    const uint32_t tier = c_->conf->partitions.empty() ? 0 : c_->conf->partitions[s.pj.partition].priority_tier;
    const int64_t rank = (static_cast<int64_t>(tier) << 32) | c_->PriorityOf(s, now);
    return {-rank, s.pj.submit};
  }
  std::unique_ptr<QueueSortPlugin> Clone(PluginCopies& copies) const override {
    return std::make_unique<SlurmSort>(copies.Of(c_));
  }

 private:
  std::shared_ptr<SlurmCore> c_;
};


// Free GPUs of one VC over time, as steps (from t on, `free`), for the backfill pass.
class Profile {
 public:
  static constexpr Time kForever = INT64_MAX / 4;
  // The profile at `now`: `free` GPUs, and GPUs back at each release time (`releases` in
  // time order).
  void Reset(Time now, int64_t free, const std::vector<std::pair<Time, int64_t>>& releases) {
    steps_.assign(1, {now, free});
    for (const auto& [t, gpus] : releases) {
      if (t <= steps_.back().first) steps_.back().second += gpus;
      else steps_.emplace_back(t, steps_.back().second + gpus);
    }
    ++pass_;
  }
  void Take(Time from, Time to, int64_t gpus) {
    const size_t b = Split(from);
    const size_t e = to >= kForever ? steps_.size() : Split(to);
    for (size_t i = b; i < e; ++i) steps_[i].second -= gpus;
  }
  // The earliest step start t <= latest with at least `need` free over [t, t + dur), or kNoTime.
  // Only the start of a run of steps with `need` free can be it (a later start in the run
  // meets the same short step), so one pass over the steps finds it; it stops at the first
  // short step at or past `latest`, as every later run starts after it.
  Time Earliest(int64_t need, Duration dur, Time latest) {
    size_t start = steps_.size();  // the current run's first step (none)
    bool first_run = true;
    for (size_t j = FirstFitFrom(need); j < steps_.size(); ++j) {
      if (steps_[j].second < need) {
        if (steps_[j].first >= latest) return kNoTime;  // any later run would start past latest
        start = steps_.size();
        continue;
      }
      if (start == steps_.size()) {
        if (first_run) NoteFit(need, steps_[j].first);
        first_run = false;
        if (steps_[j].first > latest) return kNoTime;
        start = j;
      }
      const bool last = j + 1 == steps_.size();  // the last step lasts forever
      if (last || (dur < kForever && steps_[j + 1].first - steps_[start].first >= dur)) return steps_[start].first;
    }
    return kNoTime;
  }

 private:
  // Index of the step starting at t (inserted when t falls inside a step).
  size_t Split(Time t) {
    auto it = std::lower_bound(steps_.begin(), steps_.end(), t,
                               [](const std::pair<Time, int64_t>& s, Time v) { return s.first < v; });
    if (it != steps_.end() && it->first == t) return static_cast<size_t>(it - steps_.begin());
    const int64_t free = it == steps_.begin() ? 0 : std::prev(it)->second;
    const auto at = steps_.insert(it, {t, free});  // begin() only after the insert reallocated
    return static_cast<size_t>(at - steps_.begin());
  }
  // Take only lowers the steps, so within one pass the first step with `need` free never moves
  // earlier: the search for the same need starts where the last one found it.
  size_t FirstFitFrom(int64_t need) const {
    if (need < 0 || static_cast<size_t>(need) >= first_fit_.size() || first_fit_[need].first != pass_) return 0;
    const Time t = first_fit_[need].second;
    return static_cast<size_t>(std::lower_bound(steps_.begin(), steps_.end(), t,
                                                [](const std::pair<Time, int64_t>& s, Time v) { return s.first < v; }) -
                               steps_.begin());
  }
  void NoteFit(int64_t need, Time t) {
    if (need < 0 || need > kMaxCachedNeed) return;
    if (static_cast<size_t>(need) >= first_fit_.size()) first_fit_.resize(static_cast<size_t>(need) + 1, {0, 0});
    first_fit_[need] = {pass_, t};
  }
  static constexpr int64_t kMaxCachedNeed = 1 << 16;
  std::vector<std::pair<Time, int64_t>> steps_;
  uint64_t pass_ = 0;
  std::vector<std::pair<uint64_t, Time>> first_fit_;  // by need: (pass, first step with need free)
};

// Static strings for PluginStatus (never allocated per call): the reason's name after `prefix`.
const char* ReasonText(Reason r, int prefix = 0) {
  static const char* const kPrefixes[] = {"", "refused at submission by Slurm's limit ",
                                          "kept pending forever by Slurm's per-job limit "};
  static const std::vector<std::string>* names = [] {
    auto* v = new std::vector<std::string>();
    for (const char* p : kPrefixes)
      for (int i = 0; i < slurm::kReasonCount; ++i) v->push_back(p + std::string(slurm::ReasonName(static_cast<Reason>(i))));
    return v;
  }();
  return (*names)[static_cast<size_t>(prefix) * slurm::kReasonCount + static_cast<size_t>(r)].c_str();
}

// At submission: Slurm's submission limits refuse the job; a per-job limit that would keep it
// pending whatever runs (partition MaxTime, QOS MaxWall, per-job TRES) counts it as not run,
// so that a simulation ends (Slurm itself would show it pending with that reason forever).
class SlurmAdmit final : public AdmitPlugin {
 public:
  explicit SlurmAdmit(std::shared_ptr<SlurmCore> c) : c_(std::move(c)) {}
  std::string_view name() const override { return "slurm-limits"; }
  PluginStatus Admit(const SchedJob& j, const ClusterState&) override {
    const SlotInfo s = c_->Build(*j.job, j.vc, j.seq);
    if (s.invalid != Reason::kNone) return PluginStatus::Never(ReasonText(s.invalid, 1));
    const Reason submit = c_->limits.CheckSubmit(s.lj);
    if (submit != Reason::kNone) return PluginStatus::Never(ReasonText(submit, 1));
    const Reason forever = c_->limits.CheckJob(s.lj);
    if (forever != Reason::kNone) return PluginStatus::Never(ReasonText(forever, 2));
    return PluginStatus::Ok();
  }

 private:
  std::shared_ptr<SlurmCore> c_;
};

class SlurmSched final : public ReschedulePlugin {
 public:
  explicit SlurmSched(std::shared_ptr<SlurmCore> c) : c_(std::move(c)) {}
  std::string_view name() const override { return "slurm"; }
  std::unique_ptr<ReschedulePlugin> Clone(PluginCopies& copies) const override {
    auto r = std::make_unique<SlurmSched>(*this);
    r->c_ = copies.Of(c_);
    return r;
  }

  void Advance(SchedulerHandle& h) override;
  Time NextWakeup() const override {
    Time t = c_->next_calc;
    for (const Time w : {c_->NextDeferredBackfill(), c_->FullPassDeferred() ? c_->next_full : kNoTime})
      if (w != kNoTime && (t == kNoTime || w < t)) t = w;
    return t;
  }
  void JobStarted(SchedulerHandle& h, uint32_t slot) override {
    SlotInfo& s = c_->Info(h.job(slot));
    c_->pending.erase(slot);
    if (c_->running.size() <= h.job(slot).vc.v) c_->running.resize(h.job(slot).vc.v + 1u);
    c_->running[h.job(slot).vc.v].insert(slot);
    c_->limits.Start(s.lj);
    s.reason = Reason::kNone;
    if (s.lj.time_limit_s != slurm::kUnlimited) {
      if (c_->releases.size() <= h.job(slot).vc.v) c_->releases.resize(h.job(slot).vc.v + 1u);
      s.release = h.job(slot).started + s.lj.time_limit_s;
      c_->releases[h.job(slot).vc.v][s.release] += h.job(slot).job->gpus;
    }
  }
  void JobStopped(SchedulerHandle& h, uint32_t slot, EndCause cause, bool requeued) override {
    const SchedJob& j = h.job(slot);
    SlotInfo& s = c_->Info(j);
    c_->running[j.vc.v].erase(slot);
    const Time from = c_->last_calc == kNoTime ? j.started : std::max(j.started, c_->last_calc);
    if (s.pj.assoc >= 0) c_->ended_usage.emplace_back(s.pj.assoc, c_->Charge(s, from, h.now()));
    c_->limits.End(s.lj, true);
    s.in_system = false;
    if (s.release != kNoTime) {
      auto it = c_->releases[j.vc.v].find(s.release);
      if ((it->second -= j.job->gpus) == 0) c_->releases[j.vc.v].erase(it);
      s.release = kNoTime;
    }
    if (requeued) {
      c_->limits.Submit(s.lj);
      s.in_system = true;
    }
    // Slurm resets a requeued job's submit time: its age restarts and it goes after the jobs of
    // its priority submitted before.
    if (requeued && cause == EndCause::kPreempted) s.pj.submit = s.pj.eligible = h.now();
  }
  Next Run(SchedulerHandle& h, VcId vc, PluginStatus* block) override;
  void Describe(const SchedJob& j, Time now, std::vector<ExplainNote>* out) const override {
    if (j.slot >= c_->slots.size() || c_->slots[j.slot].seq != j.seq || j.running) return;
    const SlotInfo& s = c_->slots[j.slot];
    const std::string reason = s.reason == Reason::kNone ? "not yet considered by a scheduling pass"
                                                         : "reason " + std::string(slurm::ReasonName(s.reason));
    out->push_back({now, "slurm", "reason", "pending, " + reason + ", priority " + std::to_string(s.priority),
                    {{"priority", static_cast<double>(s.priority)}}});
  }

 private:
  bool MainPass(SchedulerHandle& h, VcId vc, bool full, PluginStatus* block);
  void BackfillPass(SchedulerHandle& h, VcId vc);
  void TimeFullPass(Time now);
  bool TryPreempt(SchedulerHandle& h, VcId vc, uint32_t slot);
  bool VictimFits(const ClusterState& st, const Allocation& a) const;
  bool TryStart(SchedulerHandle& h, uint32_t slot) {
    if (!h.placer().Place(h.job(slot), h.state(), nullptr, &alloc_).ok()) {
      alloc_.clear();
      return false;
    }
    h.Start(slot, std::move(alloc_));
    alloc_.clear();
    return true;
  }

  std::shared_ptr<SlurmCore> c_;
  std::vector<uint32_t> order_, left_;
  Allocation alloc_;
  struct Victim {
    int64_t rank;  // the partition's PriorityTier or the QOS's priority (preempt_type)
    uint32_t priority;
    Time started;
    uint32_t id;  // the job's trace id (ties)
    uint32_t slot;
    slurm::PreemptMode mode;
  };
  std::vector<Victim> victims_;
  std::vector<size_t> taken_;
  std::vector<char> stopped_parts_;  // by partition, during a main pass
  std::vector<std::pair<Time, int64_t>> releases_;
  Profile profile_;
};

// Every PriorityCalcPeriod: usage decays by the half-life, the running jobs (and those that
// ended since) charge CPUs × seconds × their QOS's UsageFactor, Fair Tree ranks again and
// every pending job's priority is recomputed.
void SlurmSched::Advance(SchedulerHandle& h) {
  SlurmCore& c = *c_;
  const Time now = h.now();
  for (size_t v = 0; v < c.next_bf.size(); ++v)
    if (c.bf_deferred[v] && now >= c.next_bf[v]) h.MarkDirty(VcId(static_cast<uint16_t>(v)));
  TimeFullPass(now);
  if (c.full_at == now)
    for (size_t v = 0; v < c.full_deferred.size(); ++v)
      if (c.full_deferred[v]) h.MarkDirty(VcId(static_cast<uint16_t>(v)));
  const int64_t period = c.conf->priority.calc_period_s;
  if (c.next_calc == kNoTime) {
    c.last_calc = now;
    c.next_calc = now + period;
    return;
  }
  if (now < c.next_calc) return;
  while (c.next_calc <= now) {
    const Time t = c.next_calc;
    if (c.has_tree) {
      c.tree.Decay(slurm::DecayFactor(t - c.last_calc, c.conf->priority.decay_half_life_s));
      for (const auto& [assoc, usage] : c.ended_usage) c.tree.AddUsage(static_cast<size_t>(assoc), usage);
      for (const std::set<uint32_t>& vc_running : c.running)
        for (uint32_t slot : vc_running) {
          const SlotInfo& s = c.slots[slot];
          if (s.pj.assoc >= 0)
            c.tree.AddUsage(static_cast<size_t>(s.pj.assoc), c.Charge(s, std::max(h.job(slot).started, c.last_calc), t));
        }
    }
    c.ended_usage.clear();
    c.last_calc = t;
    c.next_calc = t + period;
  }
  if (c.has_tree) c.tree.Compute();
  const std::vector<uint32_t> pending(c.pending.begin(), c.pending.end());
  for (uint32_t slot : pending) {
    const SchedJob& j = h.job(slot);
    if (j.job == nullptr || j.running || slot >= c.slots.size() || c.slots[slot].seq != j.seq) {
      c.pending.erase(slot);
      continue;
    }
    h.Rekey(slot);
    h.MarkDirty(j.vc);
  }
}

// The periodic main pass: the first cycle fixes the origin; a cycle at or after next_full is
// one (full_at), and the next is the first multiple of sched_interval from the origin after it.
void SlurmSched::TimeFullPass(Time now) {
  SlurmCore& c = *c_;
  const int64_t interval = c.conf->sched.sched_interval_s;
  if (interval <= 0) return;  // sched_interval=0: no periodic pass
  if (c.next_full == kNoTime) {
    c.next_full = now + interval;
    return;
  }
  if (now < c.next_full) return;
  c.full_at = now;
  c.next_full += ((now - c.next_full) / interval + 1) * interval;
}

// The main scheduler: in queue order, over the first default_queue_depth jobs (all of them in
// a periodic pass), a job held by a limit is passed; a job that cannot start preempts where
// the configuration lets it; the first job that still cannot start stops the partition (the
// jobs of the partition after it, and those beyond the depth, wait with reason Priority; in a
// pool that partitions share, the other partitions' jobs go on). True when every partition of
// the VC stopped.
bool SlurmSched::MainPass(SchedulerHandle& h, VcId vc, bool full, PluginStatus* block) {
  stopped_parts_.assign(c_->conf->partitions.size(), 0);
  size_t stopped = 0;
  const size_t parts = c_->trace_vc_partition.empty() ? 1 : c_->conf->partitions.size();
  left_.clear();
  const size_t depth = full ? SIZE_MAX : static_cast<size_t>(c_->conf->sched.default_queue_depth);
  const bool preempts = c_->conf->preempt_type != slurm::PreemptType::kNone;
  c_->DeferFullPass(vc, false);
  for (size_t k = 0; k < order_.size(); ++k) {
    const uint32_t slot = order_[k];
    SlotInfo& s = c_->Info(h.job(slot));
    if (stopped_parts_[s.pj.partition] || k >= depth) {
      if (k == depth && stopped < parts) c_->DeferFullPass(vc, true);
      s.reason = Reason::kPriority;
      left_.push_back(slot);
      continue;
    }
    const Reason limit = c_->limits.CheckStart(s.lj);
    if (limit != Reason::kNone) {
      s.reason = limit;
      if (block->ok()) *block = PluginStatus::Unschedulable(ReasonText(limit));
      continue;
    }
    if (TryStart(h, slot) || (preempts && TryPreempt(h, vc, slot))) continue;
    s.reason = Reason::kResources;
    if (block->ok()) *block = PluginStatus::Unschedulable(ReasonText(Reason::kResources));
    stopped_parts_[s.pj.partition] = 1;
    ++stopped;
    left_.push_back(slot);
  }
  return stopped >= parts;
}

// Preemption for pending job `slot`, which the free GPUs cannot hold: the running jobs of its
// VC that it may preempt (SlurmCore::PreemptModeOf) and that have run PreemptExemptTime,
// lowest preemption rank first (the partition's PriorityTier, or the QOS's priority), then
// lowest priority, then youngest (latest start), then job id, are set aside one by one until the placer finds the job nodes; of those, the
// ones the new allocation leaves room for keep running (the last set aside first), the others
// are preempted (requeued or cancelled by their PreemptMode) and the job starts. Nothing
// changes when setting aside every candidate is not enough.
bool SlurmSched::TryPreempt(SchedulerHandle& h, VcId vc, uint32_t slot) {
  SlurmCore& c = *c_;
  const SlotInfo& by = c.Info(h.job(slot));
  victims_.clear();
  for (uint32_t r : c.running[vc.v]) {
    const SchedJob& rj = h.job(r);
    const SlotInfo& v = c.slots[r];
    const slurm::PreemptMode mode = c.PreemptModeOf(by, v);
    if (mode == slurm::PreemptMode::kOff || rj.partner != kNoSlot) continue;
    if (h.now() - rj.started < c.conf->preempt_exempt_s) continue;  // PreemptExemptTime
    const int64_t rank = c.conf->preempt_type == slurm::PreemptType::kQos
                             ? static_cast<int64_t>(c.acc->qos[v.pj.qos].priority)
                             : static_cast<int64_t>(c.conf->partitions[v.pj.partition].priority_tier);
    victims_.push_back({rank, v.priority, rj.started, rj.job->id.value(), r, mode});
  }
  if (victims_.empty()) return false;
  std::sort(victims_.begin(), victims_.end(), [](const Victim& a, const Victim& b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    if (a.priority != b.priority) return a.priority < b.priority;
    if (a.started != b.started) return a.started > b.started;
    return a.id < b.id;
  });
  ClusterState& st = h.state();
  size_t aside = 0;
  bool placed = false;
  while (aside < victims_.size() && !placed) {
    st.Release(h.job(victims_[aside++].slot).alloc);
    placed = h.placer().Place(h.job(slot), st, nullptr, &alloc_).ok();
    if (!placed) alloc_.clear();
  }
  if (!placed) {
    for (size_t i = aside; i-- > 0;) st.Apply(h.job(victims_[i].slot).alloc);
    return false;
  }
  // The state becomes the original less the victims plus the job's allocation; the handle's
  // Preempt and Start release and apply those themselves, so they are undone first.
  st.Apply(alloc_);
  taken_.clear();
  for (size_t i = aside; i-- > 0;) {
    const Allocation& a = h.job(victims_[i].slot).alloc;
    if (VictimFits(st, a)) st.Apply(a);
    else taken_.push_back(i);
  }
  st.Release(alloc_);
  for (size_t i : taken_) st.Apply(h.job(victims_[i].slot).alloc);
  for (auto it = taken_.rbegin(); it != taken_.rend(); ++it) {
    const Victim& v = victims_[*it];
    const bool cancel = v.mode == slurm::PreemptMode::kCancel;
    if (h.watched(v.slot))
      h.Note(v.slot, {h.now(), "slurm", "preempt",
                      "preempted (PreemptMode=" + std::string(slurm::Name(v.mode)) + ") by job " +
                          std::to_string(h.job(slot).job->id.value()) + ", priority " + std::to_string(by.priority),
                      {{"priority", static_cast<double>(c.slots[v.slot].priority)}}});
    if (cancel) h.PreemptAndCancel(v.slot);
    else h.Preempt(v.slot);
  }
  h.Start(slot, std::move(alloc_));
  alloc_.clear();
  return true;
}

// Whether allocation `a` (a victim's) still fits the state beside the preemptor's allocation.
bool SlurmSched::VictimFits(const ClusterState& st, const Allocation& a) const {
  for (const Slot& s : a) {
    if (st.tracks_gpus()) {
      for (uint32_t m = s.gpu_mask; m; m &= m - 1)
        if (st.gpu_free_milli(s.node, std::countr_zero(m)) < s.milli) return false;
    } else if (st.free_gpus(s.node) < s.gpus) {
      return false;
    }
    if (!st.CpuMemFits(s.node, s.cpu_milli, s.mem_mib)) return false;
  }
  return true;
}

// The backfill scheduler: at most bf_max_job_test of the jobs the main pass left (at most
// bf_max_job_user per user), in queue order, each reserved at its earliest start within
// bf_window on the GPU counts the running jobs free at their time limits (rounded up to
// bf_resolution); a job whose earliest start is now starts if the placer finds it nodes.
void SlurmSched::BackfillPass(SchedulerHandle& h, VcId vc) {
  const slurm::SchedulerParams& sp = c_->conf->sched;
  const Time now = h.now();
  const int64_t res = std::max<int64_t>(1, sp.bf_resolution_s);
  auto round_up = [&](Duration d) { return (std::max<Duration>(d, 1) + res - 1) / res * res; };
  // Rounding up keeps the time order; a job without a time limit is never freed, as far as
  // limits tell.
  releases_.clear();
  if (vc.v < c_->releases.size())
    for (const auto& [end, gpus] : c_->releases[vc.v]) releases_.emplace_back(now + round_up(end - now), gpus);
  profile_.Reset(now, static_cast<int64_t>(h.state().vc_free_gpus(vc)), releases_);
  const Time latest = now + sp.bf_window_s;
  std::unordered_map<uint32_t, int64_t> per_user;
  int64_t tested = 0;
  for (uint32_t slot : left_) {
    if (tested >= sp.bf_max_job_test) break;
    SchedJob& j = h.job(slot);
    if (j.running) continue;
    SlotInfo& s = c_->Info(j);
    if (sp.bf_max_job_user > 0 && per_user[s.user] >= sp.bf_max_job_user) continue;
    ++tested;
    ++per_user[s.user];
    const Reason limit = c_->limits.CheckStart(s.lj);
    if (limit != Reason::kNone) {
      s.reason = limit;
      continue;
    }
    const Duration dur = s.lj.time_limit_s == slurm::kUnlimited ? Profile::kForever : round_up(s.lj.time_limit_s);
    const int64_t need = j.job->gpus;
    const Time t = profile_.Earliest(need, dur, latest);
    if (t == kNoTime) continue;  // no start within the window: no reservation
    if (t == now && !TryStart(h, slot)) continue;
    profile_.Take(t, dur >= Profile::kForever ? Profile::kForever : t + dur, need);
  }
}

ReschedulePlugin::Next SlurmSched::Run(SchedulerHandle& h, VcId vc, PluginStatus* block) {
  if (c_->running.size() <= vc.v) c_->running.resize(vc.v + 1u);
  // The main pass tests default_queue_depth jobs (Slurm's event-triggered pass), the backfill
  // pass bf_max_job_test of the rest: no more are read from the queue. When no backfill pass is
  // due, one job past the depth is enough to tell whether one will be.
  // A periodic pass reads the queue in growing prefixes until the pass stops with enough jobs
  // left for the backfill pass (or the queue ends): a job that started is out of the queue and
  // one held by a limit is held again, so the pass over a longer prefix decides the same.
  const slurm::SchedulerParams& sp = c_->conf->sched;
  const bool backfill = c_->conf->scheduler == slurm::SchedulerType::kBackfill;
  const size_t tail = backfill && c_->BackfillDue(vc, h.now()) ? static_cast<size_t>(sp.bf_max_job_test) : 1u;
  const bool full = c_->full_at == h.now();
  for (size_t cap = static_cast<size_t>(sp.default_queue_depth) + tail;; cap *= 2) {
    order_.clear();
    h.ForEachPending(vc, [this, cap](const PendingEntry& e) -> int64_t {
      order_.push_back(e.slot);
      return order_.size() >= cap ? -1 : INT64_MAX;
    });
    const bool stopped = MainPass(h, vc, full, block);
    if (!full || order_.size() < cap || (stopped && left_.size() >= tail)) break;
  }
  switch (c_->conf->scheduler) {
    case slurm::SchedulerType::kBackfill:
      if (!left_.empty() && c_->TakeBackfillTurn(vc, h.now())) BackfillPass(h, vc);
      break;
    case slurm::SchedulerType::kBuiltin:
      break;
  }
  return Next::kStop;
}

std::string At(const std::string& path, uint64_t line) { return path + ":" + std::to_string(line) + ":1: "; }

// What the files set that the simulator cannot do yet: refused where it is written. With
// preemption on, every PreemptMode that applies must be CANCEL or REQUEUE: SUSPEND needs gang
// scheduling (GANG and WITHIN are refused by the reader), OFF for the cluster is Slurm's own
// error (it goes with preempt/none only).
Status CheckSimulated(const slurm::SlurmConf& conf, const std::string& path) {
  if (conf.partitions.empty()) return MakeError(path + ": expected at least one PartitionName line, got none");
  auto mode_error = [&](uint64_t line, slurm::PreemptMode m, const std::string& what) {
    return MakeError(At(path, line) + what + ": expected PreemptMode CANCEL or REQUEUE, found " + std::string(slurm::Name(m)) +
                     (m == slurm::PreemptMode::kSuspend ? " (suspension needs gang scheduling: not simulated)"
                                                        : " (OFF goes with PreemptType=preempt/none only)"));
  };
  auto line_of = [&](const char* key) {
    auto it = conf.key_lines.find(key);
    return it == conf.key_lines.end() ? uint64_t{1} : it->second;
  };
  switch (conf.preempt_type) {
    case slurm::PreemptType::kNone:
      return Status::Ok();
    case slurm::PreemptType::kPartitionPrio:
      for (const slurm::PartitionDef& p : conf.partitions)
        if (p.preempt_mode == slurm::PreemptMode::kSuspend)
          return mode_error(p.line, *p.preempt_mode, "partition " + p.name);
      break;
    case slurm::PreemptType::kQos:
      break;
  }
  switch (conf.preempt_mode) {
    case slurm::PreemptMode::kCancel:
    case slurm::PreemptMode::kRequeue:
      return Status::Ok();
    case slurm::PreemptMode::kOff:
    case slurm::PreemptMode::kSuspend:
      break;
  }
  const bool written = conf.key_lines.count("preemptmode") != 0;
  return mode_error(line_of(written ? "preemptmode" : "preempttype"), conf.preempt_mode,
                    written ? "key 'PreemptMode'" : "key 'PreemptType' (PreemptMode unset)");
}

// A QOS's PreemptMode matters under preempt/qos only; Slurm reads a Preempt list under
// preempt/qos only, so elsewhere it is a note.
Status CheckSimulated(const slurm::Accounts& acc, const slurm::SlurmConf& conf, const std::string& path,
                      std::vector<std::string>* notes) {
  const bool qos_preemption = conf.preempt_type == slurm::PreemptType::kQos;
  for (const slurm::Qos& q : acc.qos) {
    if (qos_preemption && q.preempt_mode == slurm::PreemptMode::kSuspend)
      return MakeError(At(path, q.line) + "QOS " + q.name +
                       ": expected PreemptMode CANCEL or REQUEUE, found SUSPEND (suspension needs gang scheduling: not "
                       "simulated)");
    if (!qos_preemption && !q.preempt.empty())
      notes->push_back(At(path, q.line) + "QOS " + q.name +
                       ": Preempt list has no effect without PreemptType=preempt/qos; ignored");
  }
  return Status::Ok();
}

// The preemption tables of the core: per QOS the QOS it may preempt, per partition and QOS the
// PreemptMode (their own, else the cluster's). Whether any job can be cancelled by one.
bool PreemptionTables(SlurmCore& c) {
  const slurm::PreemptMode cluster = c.conf->preempt_mode;
  bool cancels = false;
  for (const slurm::PartitionDef& p : c.conf->partitions) c.partition_mode.push_back(p.preempt_mode.value_or(cluster));
  c.qos_preempts.assign(c.acc->qos.size(), std::vector<char>(c.acc->qos.size(), 0));
  for (size_t q = 0; q < c.acc->qos.size(); ++q) {
    const slurm::Qos& qos = c.acc->qos[q];
    c.qos_mode.push_back(qos.preempt_mode.value_or(cluster));
    for (const std::string& name : qos.preempt)
      if (auto it = c.qos_index.find(name); it != c.qos_index.end()) c.qos_preempts[q][static_cast<size_t>(it->second)] = 1;
  }
  switch (c.conf->preempt_type) {
    case slurm::PreemptType::kNone:
      return false;
    case slurm::PreemptType::kPartitionPrio:
      for (slurm::PreemptMode m : c.partition_mode) cancels |= m == slurm::PreemptMode::kCancel;
      return cancels;
    case slurm::PreemptType::kQos:
      for (size_t q = 0; q < c.qos_mode.size(); ++q) {
        bool preemptable = false;  // some QOS lists it
        for (const std::vector<char>& row : c.qos_preempts) preemptable |= row[q] != 0;
        cancels |= preemptable && c.qos_mode[q] == slurm::PreemptMode::kCancel;
      }
      return cancels;
  }
  return false;
}

// In a cluster of one pool, the partitions overlap on its nodes: a job whose trace VC names a
// partition is in that partition.
void OverlappingPartitions(SlurmCore& c, const Cluster* cluster) {
  if (cluster == nullptr || !(cluster->single_pool || cluster->vcs.size() == 1)) return;
  c.trace_vc_partition.assign(c.trace->vcs.size(), -1);
  for (uint32_t v = 0; v < c.trace->vcs.size(); ++v)
    for (uint32_t p = 0; p < c.conf->partitions.size(); ++p)
      if (c.conf->partitions[p].name == c.trace->vcs.Get(v)) c.trace_vc_partition[v] = static_cast<int32_t>(p);
}

// Per partition: CPUs per GPU and GPUs per node of its first GPU node (a job's CPUs and nodes
// when it names none).
void NodeShapes(SlurmCore& c) {
  for (const slurm::PartitionDef& p : c.conf->partitions) {
    double per_gpu = 1;
    uint32_t gpn = 1;
    for (uint32_t n : p.nodes) {
      const slurm::NodeDef& node = c.conf->nodes[n];
      if (node.gpus == 0) continue;
      per_gpu = static_cast<double>(node.cpus) / node.gpus;
      gpn = node.gpus;
      break;
    }
    c.cpus_per_gpu.push_back(per_gpu);
    c.gpus_per_node.push_back(gpn);
  }
}

}  // namespace

OptionSchema SlurmOptionSchema() { return kSlurmOptions; }

Status BuildSlurmPolicy(const SpecArgs& args, const Trace* trace, const Cluster* cluster, PolicyParts* parts) {
  const std::string conf_path = args.Text("conf");
  if (conf_path.empty()) return args.Fail("parameter 'conf': expected the path of a slurm.conf (slurm:conf=FILE)");
  if (trace == nullptr) return args.Fail("policy 'slurm' needs a trace: its jobs' users name their associations");
  ORR_ASSIGN_OR_RETURN(slurm::SlurmConf conf, slurm::ReadSlurmConf(conf_path));
  ORR_RETURN_IF_ERROR(CheckSimulated(conf, conf_path));
  slurm::Accounts acc;
  const std::string acc_path = args.Text("accounts");
  parts->notes = conf.warnings;
  if (!acc_path.empty()) {
    ORR_ASSIGN_OR_RETURN(acc, slurm::ReadSacctmgr(acc_path));
    parts->notes.insert(parts->notes.end(), acc.warnings.begin(), acc.warnings.end());
    ORR_RETURN_IF_ERROR(CheckSimulated(acc, conf, acc_path, &parts->notes));
  }
  auto core = std::make_shared<SlurmCore>(std::make_shared<const slurm::SlurmConf>(std::move(conf)),
                                          std::make_shared<const slurm::Accounts>(std::move(acc)));
  core->model = std::make_shared<const slurm::PriorityModel>(*core->conf, *core->acc, nullptr);
  if (!core->acc->assocs.empty()) {
    ORR_ASSIGN_OR_RETURN(core->tree, slurm::FairTree::Build(*core->acc));
    core->has_tree = true;
    core->tree.Compute();
  }
  core->trace = trace;
  if (cluster != nullptr) {
    for (const VirtualCluster& vc : cluster->vcs) {
      uint32_t part = core->conf->default_partition;
      for (uint32_t p = 0; p < core->conf->partitions.size(); ++p)
        if (core->conf->partitions[p].name == vc.name) part = p;
      if (core->vc_partition.size() <= vc.id.v) core->vc_partition.resize(vc.id.v + 1u, core->conf->default_partition);
      core->vc_partition[vc.id.v] = part;
    }
  }
  NodeShapes(*core);
  std::unordered_map<std::string, int32_t> first_assoc;  // a user's default account: its first association
  for (size_t i = 0; i < core->acc->assocs.size(); ++i)
    if (!core->acc->assocs[i].user.empty()) first_assoc.emplace(core->acc->assocs[i].user, static_cast<int32_t>(i));
  for (size_t i = 0; i < core->acc->assocs.size(); ++i) {
    const slurm::Assoc& a = core->acc->assocs[i];
    if (!a.user.empty()) core->assoc_index.emplace(a.account + '\x1f' + a.user + '\x1f' + a.partition, static_cast<int32_t>(i));
  }
  for (size_t q = 0; q < core->acc->qos.size(); ++q) core->qos_index.emplace(core->acc->qos[q].name, static_cast<int32_t>(q));
  for (uint32_t u = 0; u < trace->users.size(); ++u) {
    auto it = first_assoc.find(trace->users.Get(u));
    if (it != first_assoc.end()) core->user_assoc.emplace(u, it->second);
  }
  OverlappingPartitions(*core, cluster);
  parts->cancels = PreemptionTables(*core);
  parts->preemptive = core->conf->preempt_type != slurm::PreemptType::kNone;
  parts->admit = std::make_unique<SlurmAdmit>(core);
  parts->sort = std::make_unique<SlurmSort>(core);
  parts->reschedule = std::make_unique<SlurmSched>(core);
  parts->blocking = false;
  return Status::Ok();
}

}  // namespace orrery
