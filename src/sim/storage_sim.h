// The simulator's storage model: checkpoint reads of evaluation trials (PhaseKind::kLoad)
// sharing the cluster's shared-storage bandwidth, and node-local caches.
//
//  * A trial's read joins at `at` (its start + the seconds of its phases before the load).
//  * Shared storage is fluid: every reader gets SharedReadRate (model/storage.h), re-computed
//    whenever a read joins or ends; a read ends at the first whole second its bytes are read.
//  * Cacheable reads (Acme's per-node preload): the first read of checkpoint C on node N comes
//    from shared storage and fills N's cache; a trial on N that joins while that read is under
//    way waits for it, then reads from the cache at cache_bytes_per_s, as does every later
//    trial of C on N. A cached checkpoint stays on its node for the rest of the run (caches
//    are assumed large enough for the checkpoints of the requests of one run).
//  * A trial that stops (preempted, failed) leaves: its read is dropped; if it was filling a
//    cache, the first trial waiting for that fill (in join order) reads from shared storage
//    instead.
// Deterministic: reads that end at one instant are reported in join order.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "base/time.h"
#include "model/storage.h"

namespace orrery {

struct ReadDone {
  uint32_t slot = 0;
  Time joined = 0;  // when the read joined (the load phase began); it ended at Advance's t
};

class StorageSim {
 public:
  explicit StorageSim(StorageSpec spec) : spec_(spec) {}
  // A read of `bytes` of checkpoint `checkpoint` by the trial in `slot` on `node`, starting at
  // `at` (≥ the last Advance time).
  void Join(uint32_t slot, uint32_t node, uint32_t checkpoint, double bytes, bool cacheable, Time at);
  // The trial in `slot` stopped at t: its pending join or read is dropped. Returns when its
  // load phase began (its read, or its wait for a cache fill, joined), kNoTime if it had not.
  Time Cancel(uint32_t slot, Time t);
  // Processes everything due at t (reads that end, joins that begin); appends the reads that
  // ended to *done.
  void Advance(Time t, std::vector<ReadDone>* done);
  // When Advance next has something to do (kNoTime: nothing pending).
  Time NextEvent() const;
  bool busy() const { return !joins_.empty() || !reads_.empty() || !waiting_.empty(); }
  // Totals (for the run's summary): bytes read from shared storage, and the most reads at once.
  double shared_bytes() const { return shared_bytes_; }
  uint32_t max_concurrent() const { return max_concurrent_; }

 private:
  enum class Source : uint8_t { kShared, kCache };
  struct Request {
    uint32_t node = 0, checkpoint = 0;
    double bytes = 0;
    bool cacheable = false;
    Time joined = 0;
    uint64_t order = 0;  // join order (ties)
  };
  struct Read {
    Request req;
    Source source = Source::kShared;
    double left = 0, rate = 0;
  };
  using Key = std::pair<uint32_t, uint32_t>;  // (node, checkpoint)
  void Sync(Time t);                 // bytes read up to t, nothing ended
  void Begin(uint32_t slot, const Request& r);
  void StartRead(uint32_t slot, const Request& r, Source s);
  void SetRates();
  void EndRead(uint32_t slot, std::vector<ReadDone>* done);

  StorageSpec spec_;
  Time now_ = 0;
  uint64_t next_order_ = 0;
  std::set<std::tuple<Time, uint64_t, uint32_t>> joins_;  // (at, join order, slot)
  std::map<uint32_t, Request> pending_;         // slot -> its join, until it begins
  std::map<uint32_t, Read> reads_;              // slot -> its read
  std::map<Key, uint32_t> filling_;             // (node, checkpoint) -> the slot filling the cache
  std::map<Key, std::vector<std::pair<uint32_t, Request>>> waiting_;  // trials waiting for that fill
  std::set<Key> cached_;
  double shared_bytes_ = 0;
  uint32_t max_concurrent_ = 0;
};

}  // namespace orrery
