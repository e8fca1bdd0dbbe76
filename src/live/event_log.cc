#include "live/event_log.h"

#include <fmt/format.h>

namespace orrery::live {

void EventLog::Note(Time now, const std::string& kind, const std::string& detail) {
  recent_.push_back(fmt::format("{} {}: {}", now, kind, detail));
  Status st = journal_->Event(now, kind, detail);
  if (!st.ok()) {
    ++journal_errors_;
    recent_.push_back(fmt::format("{} error: journal: {}", now, st.error().message));
  }
  while (recent_.size() > kKept) recent_.pop_front();
}

}  // namespace orrery::live
