#include "slurm/limits.h"

#include <algorithm>
#include <string>

namespace orrery::slurm {

std::string_view ReasonName(Reason r) {
  switch (r) {
    case Reason::kNone: return "None";
    case Reason::kPriority: return "Priority";
    case Reason::kResources: return "Resources";
    case Reason::kPartitionTimeLimit: return "PartitionTimeLimit";
    case Reason::kQOSMaxWallDurationPerJobLimit: return "QOSMaxWallDurationPerJobLimit";
    case Reason::kQOSMaxCpuPerJobLimit: return "QOSMaxCpuPerJobLimit";
    case Reason::kQOSMaxMemoryPerJob: return "QOSMaxMemoryPerJob";
    case Reason::kQOSMaxNodePerJobLimit: return "QOSMaxNodePerJobLimit";
    case Reason::kQOSMaxGRESPerJob: return "QOSMaxGRESPerJob";
    case Reason::kAssocMaxCpuPerJobLimit: return "AssocMaxCpuPerJobLimit";
    case Reason::kAssocMaxMemPerJob: return "AssocMaxMemPerJob";
    case Reason::kAssocMaxNodePerJobLimit: return "AssocMaxNodePerJobLimit";
    case Reason::kAssocMaxGRESPerJob: return "AssocMaxGRESPerJob";
    case Reason::kQOSGrpJobsLimit: return "QOSGrpJobsLimit";
    case Reason::kAssocGrpJobsLimit: return "AssocGrpJobsLimit";
    case Reason::kQOSMaxJobsPerUserLimit: return "QOSMaxJobsPerUserLimit";
    case Reason::kAssocMaxJobsLimit: return "AssocMaxJobsLimit";
    case Reason::kQOSGrpCpuLimit: return "QOSGrpCpuLimit";
    case Reason::kQOSGrpMemLimit: return "QOSGrpMemLimit";
    case Reason::kQOSGrpNodeLimit: return "QOSGrpNodeLimit";
    case Reason::kQOSGrpGRES: return "QOSGrpGRES";
    case Reason::kAssocGrpCpuLimit: return "AssocGrpCpuLimit";
    case Reason::kAssocGrpMemLimit: return "AssocGrpMemLimit";
    case Reason::kAssocGrpNodeLimit: return "AssocGrpNodeLimit";
    case Reason::kAssocGrpGRES: return "AssocGrpGRES";
    case Reason::kQOSMaxCpuPerUserLimit: return "QOSMaxCpuPerUserLimit";
    case Reason::kQOSMaxMemoryPerUser: return "QOSMaxMemoryPerUser";
    case Reason::kQOSMaxNodePerUserLimit: return "QOSMaxNodePerUserLimit";
    case Reason::kQOSMaxGRESPerUser: return "QOSMaxGRESPerUser";
    case Reason::kQOSGrpSubmitJobsLimit: return "QOSGrpSubmitJobsLimit";
    case Reason::kAssocGrpSubmitJobsLimit: return "AssocGrpSubmitJobsLimit";
    case Reason::kQOSMaxSubmitJobPerUserLimit: return "QOSMaxSubmitJobPerUserLimit";
    case Reason::kAssocMaxSubmitJobLimit: return "AssocMaxSubmitJobLimit";
    case Reason::kInvalidQOS: return "InvalidQOS";
    case Reason::kInvalidAccount: return "InvalidAccount";
  }
  return "None";
}

namespace {

constexpr std::string_view kTresNames[kTresKinds] = {"cpu", "mem", "node", "gres/gpu"};

// The limit of TRES `k` in `m`, or kNoLimit.
int64_t LimitOf(const TresMap& m, size_t k) {
  auto it = m.find(std::string(kTresNames[k]));
  return it == m.end() ? kNoLimit : it->second;
}

constexpr Reason kQosPerJob[kTresKinds] = {Reason::kQOSMaxCpuPerJobLimit, Reason::kQOSMaxMemoryPerJob,
                                           Reason::kQOSMaxNodePerJobLimit, Reason::kQOSMaxGRESPerJob};
constexpr Reason kAssocPerJob[kTresKinds] = {Reason::kAssocMaxCpuPerJobLimit, Reason::kAssocMaxMemPerJob,
                                             Reason::kAssocMaxNodePerJobLimit, Reason::kAssocMaxGRESPerJob};
constexpr Reason kQosGrp[kTresKinds] = {Reason::kQOSGrpCpuLimit, Reason::kQOSGrpMemLimit, Reason::kQOSGrpNodeLimit,
                                        Reason::kQOSGrpGRES};
constexpr Reason kAssocGrp[kTresKinds] = {Reason::kAssocGrpCpuLimit, Reason::kAssocGrpMemLimit,
                                          Reason::kAssocGrpNodeLimit, Reason::kAssocGrpGRES};
constexpr Reason kQosPerUser[kTresKinds] = {Reason::kQOSMaxCpuPerUserLimit, Reason::kQOSMaxMemoryPerUser,
                                            Reason::kQOSMaxNodePerUserLimit, Reason::kQOSMaxGRESPerUser};

}  // namespace

Limits::Limits(const SlurmConf& conf, const Accounts& accounts)
    : conf_(conf), accounts_(accounts), assoc_use_(accounts.assocs.size()), qos_use_(accounts.qos.size()) {
  std::unordered_map<std::string, size_t> account_index, user_index;
  for (size_t i = 0; i < accounts.assocs.size(); ++i)
    if (accounts.assocs[i].user.empty()) account_index.emplace(accounts.assocs[i].account, i);
  for (const Assoc& a : accounts.assocs) {
    auto it = account_index.find(a.parent);
    parent_.push_back(a.parent.empty() || it == account_index.end() ? -1 : static_cast<int64_t>(it->second));
    user_id_.push_back(static_cast<uint32_t>(user_index.emplace(a.user, user_index.size()).first->second));
  }
}

std::vector<size_t> Limits::Chain(const LimitJob& job) const {
  std::vector<size_t> chain;
  for (int64_t a = job.assoc; a >= 0 && chain.size() <= parent_.size(); a = parent_[static_cast<size_t>(a)])
    chain.push_back(static_cast<size_t>(a));
  return chain;
}

const Limits::Use* Limits::UserUse(const LimitJob& job) const {
  if (job.qos < 0 || job.assoc < 0) return nullptr;
  auto it = qos_user_use_.find((uint64_t{static_cast<uint32_t>(job.qos)} << 32) | user_id_[job.assoc]);
  return it == qos_user_use_.end() ? nullptr : &it->second;
}

Limits::Use& Limits::UserUseMut(const LimitJob& job) {
  return qos_user_use_[(uint64_t{static_cast<uint32_t>(job.qos)} << 32) | user_id_[job.assoc]];
}

Reason Limits::CheckSubmit(const LimitJob& job) const {
  const Qos* q = job.qos >= 0 ? &accounts_.qos[job.qos] : nullptr;
  if (q != nullptr && job.assoc >= 0) {
    const std::vector<std::string>& allowed = accounts_.assocs[job.assoc].qos;
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), q->name) == allowed.end())
      return Reason::kInvalidQOS;
  }
  if (q != nullptr && q->grp_submit != kNoLimit) {
    if (qos_use_[job.qos].submitted >= q->grp_submit) return Reason::kQOSGrpSubmitJobsLimit;
  } else {
    for (size_t a : Chain(job)) {
      const int64_t lim = accounts_.assocs[a].grp_submit;
      if (lim != kNoLimit && assoc_use_[a].submitted >= lim) return Reason::kAssocGrpSubmitJobsLimit;
    }
  }
  if (q != nullptr && q->max_submit_pu != kNoLimit) {
    const Use* u = UserUse(job);
    if ((u == nullptr ? 0 : u->submitted) >= q->max_submit_pu) return Reason::kQOSMaxSubmitJobPerUserLimit;
  } else if (job.assoc >= 0) {
    const int64_t lim = accounts_.assocs[job.assoc].max_submit;
    if (lim != kNoLimit && assoc_use_[job.assoc].submitted >= lim) return Reason::kAssocMaxSubmitJobLimit;
  }
  return Reason::kNone;
}

// Limits on the job alone: they hold whatever else runs.
Reason Limits::JobLimits(const LimitJob& job) const {
  if (job.partition < conf_.partitions.size()) {
    const int64_t max = conf_.partitions[job.partition].max_time_s;
    if (max != kUnlimited && (job.time_limit_s == kUnlimited || job.time_limit_s > max))
      return Reason::kPartitionTimeLimit;
  }
  const Qos* q = job.qos >= 0 ? &accounts_.qos[job.qos] : nullptr;
  if (q != nullptr && q->max_wall_s != kUnlimited &&
      (job.time_limit_s == kUnlimited || job.time_limit_s > q->max_wall_s))
    return Reason::kQOSMaxWallDurationPerJobLimit;
  for (size_t k = 0; k < kTresKinds; ++k) {
    const int64_t qlim = q == nullptr ? kNoLimit : LimitOf(q->max_tres, k);
    if (qlim != kNoLimit) {
      if (job.tres[k] > qlim) return kQosPerJob[k];
      continue;  // the QOS's limit overrides the association's
    }
    const int64_t alim = job.assoc >= 0 ? LimitOf(accounts_.assocs[job.assoc].max_tres, k) : kNoLimit;
    if (alim != kNoLimit && job.tres[k] > alim) return kAssocPerJob[k];
  }
  return Reason::kNone;
}

Reason Limits::CountLimits(const LimitJob& job) const {
  const Qos* q = job.qos >= 0 ? &accounts_.qos[job.qos] : nullptr;
  if (q != nullptr && q->grp_jobs != kNoLimit) {
    if (qos_use_[job.qos].running >= q->grp_jobs) return Reason::kQOSGrpJobsLimit;
  } else {
    for (size_t a : Chain(job)) {
      const int64_t lim = accounts_.assocs[a].grp_jobs;
      if (lim != kNoLimit && assoc_use_[a].running >= lim) return Reason::kAssocGrpJobsLimit;
    }
  }
  if (q != nullptr && q->max_jobs_pu != kNoLimit) {
    const Use* u = UserUse(job);
    if ((u == nullptr ? 0 : u->running) >= q->max_jobs_pu) return Reason::kQOSMaxJobsPerUserLimit;
  } else if (job.assoc >= 0) {
    const int64_t lim = accounts_.assocs[job.assoc].max_jobs;
    if (lim != kNoLimit && assoc_use_[job.assoc].running >= lim) return Reason::kAssocMaxJobsLimit;
  }
  return Reason::kNone;
}

Reason Limits::TresLimits(const LimitJob& job) const {
  const Qos* q = job.qos >= 0 ? &accounts_.qos[job.qos] : nullptr;
  const std::vector<size_t> chain = Chain(job);
  for (size_t k = 0; k < kTresKinds; ++k) {
    const int64_t qlim = q == nullptr ? kNoLimit : LimitOf(q->grp_tres, k);
    if (qlim != kNoLimit) {
      if (qos_use_[job.qos].tres[k] + job.tres[k] > qlim) return kQosGrp[k];
      continue;
    }
    for (size_t a : chain) {
      const int64_t lim = LimitOf(accounts_.assocs[a].grp_tres, k);
      if (lim != kNoLimit && assoc_use_[a].tres[k] + job.tres[k] > lim) return kAssocGrp[k];
    }
  }
  if (q == nullptr || job.assoc < 0) return Reason::kNone;
  const Use* u = UserUse(job);
  for (size_t k = 0; k < kTresKinds; ++k) {
    const int64_t lim = LimitOf(q->max_tres_pu, k);
    if (lim != kNoLimit && (u == nullptr ? 0 : u->tres[k]) + job.tres[k] > lim) return kQosPerUser[k];
  }
  return Reason::kNone;
}

Reason Limits::CheckStart(const LimitJob& job) const {
  Reason r = JobLimits(job);
  if (r == Reason::kNone) r = CountLimits(job);
  if (r == Reason::kNone) r = TresLimits(job);
  return r;
}

void Limits::Add(const LimitJob& job, int sign, bool running, bool submitted) {
  auto apply = [&](Use& u) {
    if (submitted) u.submitted += sign;
    if (!running) return;
    u.running += sign;
    for (size_t k = 0; k < kTresKinds; ++k) u.tres[k] += sign * job.tres[k];
  };
  for (size_t a : Chain(job)) apply(assoc_use_[a]);
  if (job.qos >= 0) apply(qos_use_[job.qos]);
  if (job.qos >= 0 && job.assoc >= 0) apply(UserUseMut(job));
}

void Limits::Submit(const LimitJob& job) { Add(job, +1, false, true); }
void Limits::Start(const LimitJob& job) { Add(job, +1, true, false); }
void Limits::End(const LimitJob& job, bool running) { Add(job, -1, running, true); }

}  // namespace orrery::slurm
