// Fair share by Slurm's Fair Tree algorithm (slurm.schedmd.com/fair_tree.html), over the
// association tree of a sacctmgr listing (accounts.h).
//
// Each association's Level Fairshare is LF = S / U, where S = its shares / the shares of it
// and its siblings, and U = its (decayed) usage / its parent's usage (an account's usage is the
// sum of its children's). S = 0 gives LF = 0; U = 0 with S > 0 gives LF = infinity.
// Starting at root, siblings are sorted by LF (highest first, users before accounts on equal
// LF) and visited in that order: a user takes the next rank, counting down from the number of
// user associations; an account is descended into. Its fair share factor is rank / users.
// Ties: sibling users with equal LF share one rank (the next distinct value skips as many
// ranks as were shared); sibling accounts with equal LF have their children merged and sorted
// as one level; the highest user below an account tied with a sibling user takes that user's
// rank. So every user of an account with a higher LF ranks above every user of a sibling
// account with a lower one.
//
// Usage is what the caller charges for running jobs (CPU-seconds, Slurm's default billing);
// Decay multiplies all of it by 2^(-elapsed / PriorityDecayHalfLife) and Compute ranks again
// (every PriorityCalcPeriod).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "slurm/accounts.h"

namespace orrery::slurm {

class FairTree {
 public:
  // One node per association of `a` (same indices), under the association whose parent is
  // empty (root); several such tops hang under an unnamed root of their own.
  static Result<FairTree> Build(const Accounts& a);

  size_t size() const { return nodes_.size(); }
  uint32_t user_count() const { return users_; }
  bool is_user(size_t assoc) const { return nodes_[assoc].user; }
  // The user association of (account, user, partition); a partition-specific association
  // is preferred, else the one for every partition.
  std::optional<size_t> Find(std::string_view account, std::string_view user, std::string_view partition) const;

  // Charges `usage` (billing-seconds) to a user association.
  void AddUsage(size_t assoc, double usage);
  // Multiplies every association's usage by `factor` (0..1).
  void Decay(double factor);
  // Level Fairshare and ranks from the current usage.
  void Compute();

  double usage(size_t assoc) const;       // own usage (accounts: the sum below them), after Compute
  double level_fs(size_t assoc) const { return nodes_[assoc].level_fs; }
  double factor(size_t assoc) const { return nodes_[assoc].factor; }  // 0 for accounts
  uint32_t rank(size_t assoc) const { return nodes_[assoc].rank; }

 private:
  struct Node {
    bool user = false;
    uint32_t shares = 1;
    int64_t parent = -1;  // -1: under the root
    std::vector<size_t> children;
    double own_usage = 0;   // charged to a user association
    double usage_sum = 0;   // own + children's, set by Compute
    double level_fs = 0;
    double factor = 0;
    uint32_t rank = 0;
  };
  void RankLevel(std::vector<size_t> siblings, bool tied_at_start, uint32_t* rank, uint32_t* next);

  std::vector<Node> nodes_;
  std::unordered_map<std::string, size_t> user_index_;  // "account\x1fuser\x1fpartition"
  std::vector<size_t> top_;    // children of the root
  std::vector<size_t> order_;  // parents before children
  uint32_t users_ = 0;
};

// The decay of usage over `elapsed_s` seconds: 2^(-elapsed / half_life); 1 when half_life is 0
// (PriorityDecayHalfLife=0: no decay).
double DecayFactor(int64_t elapsed_s, int64_t half_life_s);

}  // namespace orrery::slurm
