// Helpers for the predict tests: a small hand-made trace.
#pragma once

#include <string>

#include "model/trace.h"

namespace orrery::predict_test {

inline Job MakeJob(Trace& t, const std::string& user, const std::string& name, uint32_t gpus, Duration dur,
                   Time submit = 0) {
  Job j;
  j.id = JobId(static_cast<uint32_t>(t.jobs.size()));
  if (!user.empty()) j.user = UserId(t.users.Intern(user));
  if (!name.empty()) j.name = NameId(t.names.Intern(name));
  j.gpus = gpus;
  j.duration = dur;
  j.submit = submit;
  t.jobs.push_back(j);
  return j;
}

}  // namespace orrery::predict_test
