// Time is integral: seconds as int64. Simulated and live drivers inject a Clock;
// nothing below cli/ and live/ reads the wall clock.
#pragma once

#include <cstdint>

namespace orrery {

using Time = int64_t;      // seconds; in a trace, relative to Trace::epoch_unix
using Duration = int64_t;  // seconds
inline constexpr Time kNoTime = INT64_MIN;  // "unknown" / "never"

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Time Now() const = 0;
};

// A clock that moves only when told to (simulation, tests).
class SimClock final : public Clock {
 public:
  explicit SimClock(Time start = 0) : now_(start) {}
  Time Now() const override { return now_; }
  void Set(Time t) { now_ = t; }

 private:
  Time now_;
};

}  // namespace orrery
