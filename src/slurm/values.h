// Slurm's value syntax, shared by the slurm.conf and sacctmgr readers: durations as Slurm writes
// them ("2-00:00:00", "90", "UNLIMITED"), booleans, host lists ("gpu[001-016],cpu1") and TRES
// lists ("cpu=64,gres/gpu=8,mem=512G"). Each parser returns false, or an expectation, on text
// Slurm would refuse; the readers turn that into a located error.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace orrery::slurm {

// A duration that has no bound (UNLIMITED, INFINITE, -1).
inline constexpr int64_t kUnlimited = -1;

// How a bare number is read: slurm.conf's time keys count minutes ("PriorityCalcPeriod=5").
// Forms (Slurm's time_str): M, M:S, H:M:S, D-H, D-H:M, D-H:M:S; UNLIMITED, INFINITE and -1
// are kUnlimited. Seconds, or nullopt when the text is none of these.
std::optional<int64_t> ParseDuration(std::string_view s);

// YES/NO, TRUE/FALSE, 1/0 in any case.
std::optional<bool> ParseBool(std::string_view s);

// Lower-case ASCII copy (Slurm's keys and most of its words are case-insensitive).
std::string Lower(std::string_view s);

// The names of a host list: comma-separated names, each with any number of bracketed ranges
// and lists ("gpu[001-004,010]", "r[1-2]n[1-3]"); a range keeps its lower bound's zero padding.
// At most `limit` names of at most kMaxHostNameBytes each (host names), so that the
// expansion is bounded in bytes as well; an error text says what was expected.
inline constexpr size_t kMaxHostNameBytes = 255;
Result<std::vector<std::string>> ExpandHostList(std::string_view s, size_t limit);

// A TRES list "cpu=64,gres/gpu=8,mem=512G,node=2": names lower-cased; mem in MiB (K, M, G, T
// suffixes; a bare number is MiB); other counts plain non-negative integers.
Result<std::map<std::string, int64_t>> ParseTres(std::string_view s);

}  // namespace orrery::slurm
