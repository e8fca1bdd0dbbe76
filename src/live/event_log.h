// The daemon's event log: node and job events for the API (the newest 100, in memory) and the
// journal's event table. A failed journal write is counted (orrery_journal_errors_total) and
// kept in memory as an error event; it never stops a cycle.
#pragma once

#include <cstdint>
#include <deque>
#include <string>

#include "base/time.h"
#include "live/journal.h"

namespace orrery::live {

class EventLog {
 public:
  explicit EventLog(Journal* journal) : journal_(journal) {}

  void Note(Time now, const std::string& kind, const std::string& detail);
  // A journal write that failed elsewhere (counted with the log's own failures).
  void JournalFailed() { ++journal_errors_; }

  const std::deque<std::string>& recent() const { return recent_; }  // oldest first
  uint64_t journal_errors() const { return journal_errors_; }

 private:
  static constexpr size_t kKept = 100;
  Journal* journal_;
  std::deque<std::string> recent_;
  uint64_t journal_errors_ = 0;
};

}  // namespace orrery::live
