// libFuzzer target: the parsers of Slurm's command-line output (squeue, sinfo, hostlists,
// GRES strings, times, time limits, duration hints, `scontrol show job` files, recovery's
// comment keys, the #ORRERY shape opt-in line of a batch script) must return a value or an error for
// every input, never crash, hang or allocate without bound; and ListingDelta (which sinfo or
// squeue rows changed between two listings) must name exactly the rows that differ. The first
// byte picks the parser; seeds: tests/fixtures/fuzz/slurm_parse_fuzz (scripts/test.sh).
// Node lists are bounded by a cluster's size (kClusterNodes), as the daemon bounds them once
// sinfo has named the nodes, so that inputs spend their time in the grammar rather than in
// making a million names (live_test checks the default bounds, of one
// list and of a listing, and the bound in bytes).
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "base/parse.h"
#include "live/flex_shape.h"
#include "live/listing_delta.h"
#include "live/recovery.h"
#include "live/slurm_client.h"

using namespace orrery::live;

namespace {

constexpr size_t kClusterNodes = 4096;

// Rows of a listing by key (lines as ListingDelta reads them); false when a key repeats.
bool RowsByKey(const ListingDelta& d, std::string_view text, std::map<std::string, std::string>* out) {
  size_t pos = 0;
  std::string_view line;
  while (orrery::NextLine(text, &pos, &line))
    if (!line.empty() && !out->emplace(std::string(d.KeyOf(line)), std::string(line)).second) return false;
  return true;
}

// Two listings separated by the first '\n\n\n': the second's diff against the first names
// exactly the new or changed rows and the gone keys (inputs with a repeated key are skipped).
// key_fields 2: sinfo rows (node, partition); 1: squeue rows (job id), each changed row then
// parsed as ExecSlurmClient::Jobs parses it (a job or a located error).
void CheckDelta(std::string_view text, size_t key_fields) {
  const size_t cut = text.find("\n\n\n");
  const std::string_view a = text.substr(0, cut), b = cut == std::string_view::npos ? a : text.substr(cut + 3);
  ListingDelta d(kFieldSep, key_fields, key_fields == 1 ? &SqueueKeySlice : &SinfoKeySlice);
  std::map<std::string, std::string> ra, rb;
  if (!RowsByKey(d, a, &ra) || !RowsByKey(d, b, &rb)) return;
  d.Next(std::string(a));
  const ListingDelta::Diff diff = d.Next(std::string(b));
  std::set<std::string> changed, gone;
  for (const auto& l : diff.changed) changed.emplace(l.text);
  for (std::string_view k : diff.gone) gone.emplace(k);
  if (changed.size() != diff.changed.size() || gone.size() != diff.gone.size()) __builtin_trap();  // each once
  std::set<std::string> want_changed, want_gone;
  for (const auto& [k, row] : rb)
    if (auto it = ra.find(k); it == ra.end() || it->second != row) want_changed.insert(row);
  for (const auto& [k, row] : ra)
    if (!rb.count(k)) want_gone.insert(k);
  if (changed != want_changed || gone != want_gone) __builtin_trap();
  if (key_fields != 1) return;
  HostlistBudget listing;  // one bound for the rows of the listing, as ExecSlurmClient::JobDiff
  for (const auto& l : diff.changed) {
    auto j = ParseSqueueLine(l.text, l.lineno, kClusterNodes, &listing);
    if (j.ok() && j->has_value() && (*j)->id == 0) __builtin_trap();
    if (!j.ok() && j.error().message.rfind("squeue output line " + std::to_string(l.lineno) + ": ", 0) != 0)
      __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 9) {
    case 0: {
      auto r = ParseSqueue(text, kClusterNodes);
      if (r.ok()) {
        for (const SlurmJob& j : *r)
          if (j.id == 0) __builtin_trap();  // job ids are positive
      } else if (r.error().message.rfind("squeue output line ", 0) != 0) {
        __builtin_trap();  // every error names its line
      }
      break;
    }
    case 1: {
      auto r = ParseSinfo(text);
      if (r.ok()) {
        for (const SlurmNode& n : *r)
          if (n.name.empty()) __builtin_trap();
      } else if (r.error().message.rfind("sinfo output line ", 0) != 0) {
        __builtin_trap();
      }
      break;
    }
    case 2: {
      auto r = ExpandHostlist(text, kClusterNodes);
      if (r.ok() && r->size() > kClusterNodes) __builtin_trap();
      break;
    }
    case 3:
      (void)ParseGpuCount(text);
      break;
    case 4:
      (void)ParseSlurmTime(text);
      (void)ParseTimeLimit(text);
      break;
    case 5: {
      auto r = ParseJobFiles(text);
      if (r.ok() && r->stdout_path.size() > text.size() + r->workdir.size() + 1) __builtin_trap();  // from the input only
      break;
    }
    case 7: {
      auto r = ParseFlexLine(text, "job.sh");
      if (r.ok() && r->has_value() && ((*r)->min_gpus == 0 || (*r)->min_gpus > (*r)->max_gpus)) __builtin_trap();
      if (!r.ok() && r.error().message.rfind("job.sh:", 0) != 0) __builtin_trap();  // every error is located
      break;
    }
    case 8:
      CheckDelta(text, 2);
      CheckDelta(text, 1);
      break;
    default: {
      (void)DurationHint(text);
      // Recovery's readers of the restart contract's comment keys.
      if (HeartbeatPath(text, 4294967295u).size() > 5 * text.size()) __builtin_trap();  // "%j" -> 10 digits
      (void)HangAfter(text);
      break;
    }
  }
  return 0;
}
