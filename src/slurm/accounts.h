// The associations and QOS of a Slurm site, read from the `-P` (parsable2: '|'-separated, a
// header line, no trailing '|'; `-p`'s trailing '|' is accepted too) output of
//   sacctmgr -P show assoc [tree] [format=...]   and   sacctmgr -P show qos [format=...]
// in one file: each table starts with its header line and tables are separated by blank lines
// (docs/formats/sacctmgr.md). Columns are found by their header names in any order and case.
// The account tree comes from a `Par Name` column, else from the indentation of `tree`
// listings, else every account hangs under root. A limit column Orrery does not enforce is a
// located error when set; other columns it does not model are one warning each when set.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "slurm/conf.h"

namespace orrery::slurm {

using TresMap = std::map<std::string, int64_t>;  // "cpu", "mem" (MiB), "node", "gres/gpu"
inline constexpr int64_t kNoLimit = -1;

struct Assoc {
  std::string account;
  std::string user;       // empty: the account's own association
  std::string partition;  // empty: every partition
  std::string parent;     // parent account; empty for the root of the tree
  uint32_t shares = 1;    // Share (Fairshare)
  TresMap grp_tres;       // GrpTRES: all running jobs of the association and those below it
  TresMap max_tres;       // MaxTRES: per job
  int64_t grp_jobs = kNoLimit, grp_submit = kNoLimit;
  int64_t max_jobs = kNoLimit, max_submit = kNoLimit;  // this association's running / queued jobs
  std::vector<std::string> qos;  // the QOS it may use (empty: any)
  std::string def_qos;
  uint64_t line = 0;
};

struct Qos {
  std::string name;
  uint32_t priority = 0;
  std::vector<std::string> preempt;         // QOS this one may preempt
  std::optional<PreemptMode> preempt_mode;  // unset: the cluster's
  double usage_factor = 1.0;                // multiplies the usage its jobs charge to fair share
  TresMap grp_tres, max_tres, max_tres_pu;  // all jobs of the QOS; per job; per user
  int64_t grp_jobs = kNoLimit, grp_submit = kNoLimit;
  int64_t max_jobs_pu = kNoLimit, max_submit_pu = kNoLimit;
  int64_t max_wall_s = kUnlimited;
  uint64_t line = 0;
};

struct Accounts {
  std::vector<Assoc> assocs;  // in file order
  std::vector<Qos> qos;
  std::vector<std::string> warnings;  // "file:line:col: column 'GraceTime' is not modelled; ignored"
};

Result<Accounts> ParseSacctmgr(std::string_view text, std::string_view file);
Result<Accounts> ReadSacctmgr(const std::string& path);

}  // namespace orrery::slurm
