// The rolling resync and the rows reconciled again (docs/design/live-resync.md). Listings are
// deltas (only the rows whose bytes changed); what a full listing every cycle did besides is
// done here at the cost of what can differ:
// - a row whose last reconcile left work undone (a hold or release Slurm refused; a running job
//   the snapshot had no room for) is reconciled again at the next cycle from its stored row;
// - every listed row is read and reconciled again within `full_resync_cycles` cycles (one slice
//   of the rows each cycle), and the jobs and nodes of that slice Slurm no longer lists leave.
#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "live/daemon.h"

namespace orrery::live {

// A full listing only when there is no cursor: the first listing, after a restart, or after a
// listing that was not wholly parsed or reconciled.
bool Daemon::FullListingDue(uint64_t cursor) const { return cursor == 0; }

// Cycle c sweeps slice c mod N.
Sweep Daemon::SweepDue() const {
  if (opts_.full_resync_cycles <= 0) return Sweep{};
  const auto of = static_cast<uint32_t>(opts_.full_resync_cycles);
  return Sweep{static_cast<uint32_t>(cycle_ % of), of};
}

// In job id order, the listing's rows merged with the rows to reconcile again (the listing's
// row of a job replaces its stored one). FakeSlurm and the tests' squeue list by id, so that
// the delta path sends Slurm the calls of a full listing in the same order; any order is
// correct.
Status Daemon::ReconcileListing(const JobListing& listing, Time now, CycleStats* st) {
  std::map<uint32_t, SlurmJob> again;
  again.swap(relist_);
  if (listing.full) again.clear();  // every row is in it
  for (uint32_t id : listing.gone) again.erase(id);
  for (const SlurmJob& sj : listing.jobs) again.erase(sj.id);
  st->relisted = again.size();
  st->job_rows = listing.jobs.size() + again.size();
  auto next = again.begin();
  for (const SlurmJob& sj : listing.jobs) {
    for (; next != again.end() && next->first < sj.id; ++next) ORR_RETURN_IF_ERROR(ReconcileRow(next->second, now));
    ORR_RETURN_IF_ERROR(ReconcileRow(sj, now));
  }
  for (; next != again.end(); ++next) ORR_RETURN_IF_ERROR(ReconcileRow(next->second, now));
  return Status::Ok();
}

// One row; kept for the next cycle when its reconcile left work undone.
Status Daemon::ReconcileRow(const SlurmJob& sj, Time now) {
  reconciler_.ClearRetry();
  ORR_RETURN_IF_ERROR(Reconcile(sj, now));
  const LiveJob* lj = book_.Find(sj.id);
  if (lj && (reconciler_.retry_row() || WaitsForRoom(*lj))) relist_.insert_or_assign(sj.id, sj);
  return Status::Ok();
}

// Runs in Slurm where the snapshot has no room for it yet (Attach: Where::kNoRoom).
bool Daemon::WaitsForRoom(const LiveJob& lj) const {
  const bool active = lj.state() == JobState::kStarting || lj.state() == JobState::kRunning;
  return active && lj.slot == kNoSlot && sched_ && !need_rebuild_;
}

void Daemon::AddJob(std::unique_ptr<LiveJob> lj) {
  const uint32_t id = lj->id;
  const Sweep s = SweepDue();
  if (s.any()) {
    slice_jobs_.resize(s.of, 0);
    if (!book_.Has(id)) ++slice_jobs_[JobSlice(id, s.of)];
  }
  book_.Add(std::move(lj));
}

void Daemon::EraseJob(uint32_t id) {
  const Sweep s = SweepDue();
  if (s.any()) --slice_jobs_[JobSlice(id, s.of)];
  relist_.erase(id);
  book_.Erase(id);
}

void Daemon::CountListedNode(const std::string& name, int delta) {
  const Sweep s = SweepDue();
  if (!s.any()) return;
  slice_nodes_.resize(s.of, 0);
  slice_nodes_[NodeSlice(name, s.of)] += static_cast<uint32_t>(delta);
}

// The listing names every listed job of its swept slice: a job of the slice the daemon holds
// and the listing lacks is no longer listed (as DropVanished for a full listing). Counted first,
// so that the daemon's jobs are walked only when one is missing.
Status Daemon::DropVanishedInSlice(const JobListing& listing, Time now) {
  if (!listing.swept.any() || listing.swept.of != slice_jobs_.size()) return Status::Ok();
  const Sweep s = listing.swept;
  size_t held = 0;
  for (const SlurmJob& sj : listing.jobs) held += JobSlice(sj.id, s.of) == s.slice && book_.Has(sj.id);
  if (held == slice_jobs_[s.slice]) return Status::Ok();
  std::unordered_set<uint32_t> seen;
  for (const SlurmJob& sj : listing.jobs) seen.insert(sj.id);
  std::vector<uint32_t> gone;
  for (const auto& [id, lj] : book_)
    if (JobSlice(id, s.of) == s.slice && !seen.count(id)) gone.push_back(id);
  std::sort(gone.begin(), gone.end());
  return DropGone(gone, now);
}

// The same for the node rows the daemon models (listed_), as DropUnlisted for a full listing.
void Daemon::DropUnlistedInSlice(const NodeListing& listing, Time now) {
  if (!listing.swept.any() || listing.swept.of != slice_nodes_.size()) return;
  const Sweep s = listing.swept;
  size_t seen = 0;
  for (const SlurmNode& n : listing.nodes) {
    if (NodeSlice(n.name, s.of) != s.slice) continue;
    auto it = listed_.find(n.name);
    seen += it != listed_.end() && it->second.partition == n.partition;
  }
  if (seen == slice_nodes_[s.slice]) return;
  std::set<std::pair<std::string_view, std::string_view>> rows;
  for (const SlurmNode& n : listing.nodes) rows.emplace(n.name, n.partition);
  std::vector<NodeRow> gone;
  for (const auto& [name, n] : listed_)
    if (NodeSlice(name, s.of) == s.slice && !rows.count({n.name, n.partition})) gone.push_back(NodeRow{n.name, n.partition});
  std::sort(gone.begin(), gone.end(), [](const NodeRow& a, const NodeRow& b) { return a.name < b.name; });
  for (const NodeRow& row : gone) NodeGone(row, now);
}

}  // namespace orrery::live
