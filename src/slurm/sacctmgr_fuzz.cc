// libFuzzer target: the sacctmgr reader must never crash, whatever the input (errors are
// fine), and what it accepts must be a consistent tree: every user association's account and
// every account's parent has an association, limits are "none" or non-negative.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "slurm/accounts.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery::slurm;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto a = ParseSacctmgr(text, "fuzz");
  if (!a.ok()) return 0;
  std::set<std::string> accounts;
  for (const Assoc& x : a->assocs)
    if (x.user.empty()) accounts.insert(x.account);
  for (const Assoc& x : a->assocs) {
    if (!x.user.empty() && (x.parent != x.account || !accounts.count(x.account))) __builtin_trap();
    if (x.user.empty() && !x.parent.empty() && !accounts.count(x.parent)) __builtin_trap();
    if (x.max_jobs < kNoLimit || x.max_submit < kNoLimit || x.grp_jobs < kNoLimit) __builtin_trap();
  }
  for (const Qos& q : a->qos)
    if (q.max_jobs_pu < kNoLimit || q.max_submit_pu < kNoLimit || !(q.usage_factor >= 0)) __builtin_trap();
  return 0;
}
