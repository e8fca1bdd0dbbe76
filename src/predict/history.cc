#include "predict/history.h"

#include <cmath>

namespace orrery {

std::string_view HeliosHistoryEstimator::BranchName(Branch b) {
  switch (b) {
    case Branch::kExactUser: return "exact-user";
    case Branch::kExactAll: return "exact-all-users";
    case Branch::kSimilarUser: return "similar-user";
    case Branch::kSimilarAll: return "similar-all-users";
    case Branch::kUserMean: return "user-mean";
    case Branch::kGlobalMean: return "global-mean";
    case Branch::kEmpty: return "empty-history";
  }
  return "?";
}

HeliosHistoryEstimator::HeliosHistoryEstimator(const Trace* trace, Duration fallback)
    : trace_(trace), fallback_(fallback) {}

void HeliosHistoryEstimator::Observe(const Job& job, Duration actual) {
  global_.Add(actual);
  if (job.user.valid()) by_user_[job.user.v].Add(actual);
  if (!job.name.valid() || trace_ == nullptr || job.name.v >= trace_->names.size()) return;
  auto [it, fresh] = name_index_.try_emplace(job.name.v, 0);
  if (fresh) {
    it->second = matcher_.Add(trace_->names.Get(job.name.v));
    by_name_.emplace_back();
  }
  const uint32_t idx = it->second;
  by_name_[idx].Add(actual);
  if (!job.user.valid()) return;
  UserName& un = by_user_name_[Key(job.user, idx)];
  un.all.Add(actual);
  for (auto& [g, agg] : un.by_gpus) {
    if (g == job.gpus) {
      agg.Add(actual);
      return;
    }
  }
  un.by_gpus.emplace_back(job.gpus, Agg{});
  un.by_gpus.back().second.Add(actual);
}

bool HeliosHistoryEstimator::Lookup(const Job& job, double* mean, bool* truncate) {
  *truncate = false;
  auto finish = [&](Branch b, const Agg& a) {
    last_branch_ = b;
    ++branch_counts_[static_cast<int>(b)];
    *mean = static_cast<double>(a.sum) / static_cast<double>(a.count);
    return true;
  };
  // check_history over the union of the user's (user, name) aggregates for `names`.
  auto check_history = [&](const uint32_t* names, size_t k, Agg* all, Agg* same_gpus) {
    for (size_t i = 0; i < k; ++i) {
      auto it = by_user_name_.find(Key(job.user, names[i]));
      if (it == by_user_name_.end()) continue;
      all->Add(it->second.all);
      for (const auto& [g, agg] : it->second.by_gpus) {
        if (g == job.gpus) same_gpus->Add(agg);
      }
    }
  };
  if (global_.count == 0) {
    last_branch_ = Branch::kEmpty;
    ++branch_counts_[static_cast<int>(Branch::kEmpty)];
    return false;
  }
  if (job.name.valid() && trace_ != nullptr && job.name.v < trace_->names.size() && matcher_.size() > 0) {
    const auto& hits = matcher_.Query(job.name.v, trace_->names.Get(job.name.v));
    if (!hits.empty()) {
      auto own = name_index_.find(job.name.v);
      const bool exact = own != name_index_.end() && hits[0].index == own->second;
      uint32_t names[2];
      size_t k = 0;
      if (exact) {
        names[k++] = own->second;
      } else {
        for (const auto& h : hits) names[k++] = h.index;
      }
      Agg all, same;
      if (job.user.valid()) check_history(names, k, &all, &same);
      if (all.count == 0) {
        Agg by_names;
        for (size_t i = 0; i < k; ++i) by_names.Add(by_name_[names[i]]);
        return finish(exact ? Branch::kExactAll : Branch::kSimilarAll, by_names);
      }
      *truncate = true;
      return finish(exact ? Branch::kExactUser : Branch::kSimilarUser, same.count > 0 ? same : all);
    }
  }
  if (job.user.valid()) {
    auto it = by_user_.find(job.user.v);
    if (it != by_user_.end() && it->second.count > 0) return finish(Branch::kUserMean, it->second);
  }
  return finish(Branch::kGlobalMean, global_);
}

Duration HeliosHistoryEstimator::Estimate(const Job& job, Time) {
  double mean = 0;
  bool truncate = false;
  if (!Lookup(job, &mean, &truncate)) return fallback_;
  return truncate ? static_cast<Duration>(std::trunc(mean)) : static_cast<Duration>(std::llround(mean));
}

double HeliosHistoryEstimator::HeliosPriority(const Job& job) {
  double mean = 0;
  bool truncate = false;
  if (!Lookup(job, &mean, &truncate)) return static_cast<double>(fallback_) * job.gpus;
  double p = mean * static_cast<double>(job.gpus);
  return truncate ? std::trunc(p) : p;
}

}  // namespace orrery
