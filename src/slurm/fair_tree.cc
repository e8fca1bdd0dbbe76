#include "slurm/fair_tree.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace orrery::slurm {

namespace {
std::string UserKey(std::string_view account, std::string_view user, std::string_view partition) {
  std::string k(account);
  k += '\x1f';
  k += user;
  k += '\x1f';
  k += partition;
  return k;
}
}  // namespace

double DecayFactor(int64_t elapsed_s, int64_t half_life_s) {
  if (half_life_s <= 0 || elapsed_s <= 0) return 1.0;
  return std::exp2(-static_cast<double>(elapsed_s) / static_cast<double>(half_life_s));
}

Result<FairTree> FairTree::Build(const Accounts& a) {
  FairTree t;
  std::unordered_map<std::string, size_t> account_index;
  t.nodes_.resize(a.assocs.size());
  for (size_t i = 0; i < a.assocs.size(); ++i) {
    const Assoc& x = a.assocs[i];
    t.nodes_[i].user = !x.user.empty();
    t.nodes_[i].shares = x.shares;
    if (x.user.empty()) account_index.emplace(x.account, i);
    else t.user_index_.emplace(UserKey(x.account, x.user, x.partition), i), ++t.users_;
  }
  std::vector<size_t> tops;
  for (size_t i = 0; i < a.assocs.size(); ++i) {
    const std::string& parent = a.assocs[i].parent;
    if (parent.empty()) {
      tops.push_back(i);
      continue;
    }
    auto it = account_index.find(parent);
    if (it == account_index.end())
      return MakeError("association of " + a.assocs[i].account + ": parent account " + parent + " has no association");
    t.nodes_[i].parent = static_cast<int64_t>(it->second);
    t.nodes_[it->second].children.push_back(i);
  }
  // One account at the top is the root: its children are the first level.
  if (tops.size() == 1 && !t.nodes_[tops[0]].user) t.top_ = t.nodes_[tops[0]].children;
  else t.top_ = tops;
  // Parents before children; an association never reached sits on a cycle of parents.
  std::vector<size_t> stack(tops.rbegin(), tops.rend());
  while (!stack.empty()) {
    const size_t i = stack.back();
    stack.pop_back();
    t.order_.push_back(i);
    for (auto c = t.nodes_[i].children.rbegin(); c != t.nodes_[i].children.rend(); ++c) stack.push_back(*c);
  }
  if (t.order_.size() != t.nodes_.size())
    return MakeError("the association tree has a cycle of parent accounts (no path from some account to root)");
  return t;
}

std::optional<size_t> FairTree::Find(std::string_view account, std::string_view user,
                                     std::string_view partition) const {
  if (!partition.empty()) {
    auto it = user_index_.find(UserKey(account, user, partition));
    if (it != user_index_.end()) return it->second;
  }
  auto it = user_index_.find(UserKey(account, user, ""));
  if (it == user_index_.end()) return std::nullopt;
  return it->second;
}

void FairTree::AddUsage(size_t assoc, double usage) { nodes_[assoc].own_usage += usage; }

void FairTree::Decay(double factor) {
  for (Node& n : nodes_) n.own_usage *= factor;
}

double FairTree::usage(size_t assoc) const { return nodes_[assoc].usage_sum; }

void FairTree::Compute() {
  // Usage sums, children first.
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
    Node& n = nodes_[*it];
    n.usage_sum = n.own_usage;
    for (size_t c : n.children) n.usage_sum += nodes_[c].usage_sum;
  }
  // Level Fairshare of each association among its own siblings.
  auto level = [&](const std::vector<size_t>& sibs) {
    double shares = 0, usage = 0;
    for (size_t s : sibs) shares += nodes_[s].shares, usage += nodes_[s].usage_sum;
    for (size_t s : sibs) {
      Node& n = nodes_[s];
      const double S = shares > 0 ? n.shares / shares : 0.0;
      const double U = usage > 0 ? n.usage_sum / usage : 0.0;
      n.level_fs = S == 0 ? 0.0 : (U == 0 ? std::numeric_limits<double>::infinity() : S / U);
    }
  };
  level(top_);
  for (const Node& n : nodes_) level(n.children);
  for (Node& n : nodes_) n.factor = 0, n.rank = 0;
  uint32_t rank = users_, next = users_;
  RankLevel(top_, false, &rank, &next);
}

// Visits one level (siblings, or the merged children of tied accounts) in LF order.
// `rank` is the rank last given (shared by ties); `next` the rank the next user takes when
// not tied.
void FairTree::RankLevel(std::vector<size_t> sibs, bool tied_at_start, uint32_t* rank, uint32_t* next) {
  std::stable_sort(sibs.begin(), sibs.end(), [&](size_t a, size_t b) {
    if (nodes_[a].level_fs != nodes_[b].level_fs) return nodes_[a].level_fs > nodes_[b].level_fs;
    return nodes_[a].user && !nodes_[b].user;
  });
  for (size_t i = 0; i < sibs.size(); ++i) {
    Node& n = nodes_[sibs[i]];
    const bool tied = i == 0 ? tied_at_start : nodes_[sibs[i - 1]].level_fs == n.level_fs;
    if (n.user) {
      if (!tied) *rank = *next;
      n.rank = *rank;
      n.factor = users_ == 0 ? 0.0 : static_cast<double>(*rank) / users_;
      --*next;
      continue;
    }
    // Accounts tied with this one (adjacent after the sort) are descended into together.
    std::vector<size_t> merged = n.children;
    size_t j = i + 1;
    for (; j < sibs.size() && !nodes_[sibs[j]].user && nodes_[sibs[j]].level_fs == n.level_fs; ++j)
      merged.insert(merged.end(), nodes_[sibs[j]].children.begin(), nodes_[sibs[j]].children.end());
    RankLevel(std::move(merged), tied, rank, next);
    i = j - 1;
  }
}

}  // namespace orrery::slurm
