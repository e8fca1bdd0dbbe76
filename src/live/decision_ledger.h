// What the daemon keeps in memory of its journaled decisions: those planned and not yet
// confirmed (by key), the newest ones for the API, and each job's generation. Shared by the
// reconciler (which settles decisions from what Slurm shows) and the apply path (which plans
// and confirms them); the journal is their record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>

#include "live/journal.h"

namespace orrery::live {

// The key of a job generation's start decision ("start/<job>/<gen>").
std::string StartKey(uint32_t job, uint32_t gen);

struct DecisionLedger {
  explicit DecisionLedger(size_t keep_recent) : keep(keep_recent) {}

  std::map<std::string, JournalDecision> unapplied;  // planned, not confirmed
  std::unordered_map<uint32_t, uint32_t> gens;        // job -> generation (from the journal)
  std::deque<JournalDecision> recent;                 // for the API, oldest first
  size_t keep;

  bool StartOpen(uint32_t job, uint32_t gen) const { return unapplied.count(StartKey(job, gen)) > 0; }
  uint32_t GenOf(uint32_t job) const {
    auto g = gens.find(job);
    return g == gens.end() ? 0 : g->second;
  }
  void Remember(const JournalDecision& d) {
    recent.push_back(d);
    while (recent.size() > keep) recent.pop_front();
  }
};

}  // namespace orrery::live
