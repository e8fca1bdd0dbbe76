#include "sched/framework/release_profile.h"

#include <algorithm>
#include <bit>
#include <functional>

#include "base/result.h"

namespace orrery {

void ReleaseProfile::Reset(size_t nodes, uint16_t max_gpus) {
  n_ = nodes;
  g_ = std::max<uint16_t>(1, max_gpus);
  leaves_ = std::bit_ceil(std::max<size_t>(1, nodes));
  tree_.assign(2 * leaves_ * g_, kNoEnd);
  entries_.resize(nodes);
  is_dirty_.assign(nodes, 0);
  dirty_.clear();
  MarkAllDirty();
}

void ReleaseProfile::Mark(uint32_t local) {
  if (is_dirty_[local]) return;
  is_dirty_[local] = 1;
  dirty_.push_back(local);
}

void ReleaseProfile::MarkAllDirty() {
  for (uint32_t li = 0; li < n_; ++li) Mark(li);
}

void ReleaseProfile::Add(uint32_t local, Time end, uint32_t slot, uint16_t gpus, bool whole) {
  if (!whole && gpus > 0) ++partial_;
  entries_[local].push_back(Entry{end, slot, whole ? gpus : uint16_t{0}});
  Mark(local);
}

void ReleaseProfile::Remove(uint32_t local, uint32_t slot, uint16_t gpus, bool whole) {
  if (!whole && gpus > 0) --partial_;
  std::vector<Entry>& es = entries_[local];
  auto it = std::find_if(es.begin(), es.end(), [&](const Entry& e) { return e.slot == slot; });
  ORR_CHECK(it != es.end());
  *it = es.back();
  es.pop_back();
  Mark(local);
}

// Row of a leaf: k ≤ free now → kFreeNow; then each entry in end order adds its GPUs, and the
// k it reaches get its end; k beyond every release → kNoEnd.
void ReleaseProfile::RefreshLeaf(uint32_t local, uint16_t free_now) {
  sorted_ = entries_[local];
  std::sort(sorted_.begin(), sorted_.end(), [](const Entry& a, const Entry& b) { return a.end < b.end; });
  Time* row = Row(leaves_ + local);
  uint32_t have = std::min<uint32_t>(free_now, g_);
  std::fill(row, row + have, kFreeNow);
  for (const Entry& e : sorted_) {
    const uint32_t next = std::min<uint32_t>(have + e.gpus, g_);
    std::fill(row + have, row + next, e.end);
    have = next;
  }
  std::fill(row + have, row + g_, kNoEnd);
}

void ReleaseProfile::Pull(size_t node) {
  Time* row = Row(node);
  const Time* l = Row(2 * node);
  const Time* r = Row(2 * node + 1);
  for (uint16_t k = 0; k < g_; ++k) row[k] = std::min(l[k], r[k]);
}

void ReleaseProfile::Flush(const ClusterState& st, VcId vc) {
  const std::vector<NodeId>& nodes = st.vc_nodes(vc);
  ORR_CHECK(nodes.size() == n_);
  for (uint32_t li : dirty_) {
    RefreshLeaf(li, st.free_gpus(nodes[li]));
    is_dirty_[li] = 0;
  }
  for (uint32_t li : dirty_)
    for (size_t i = (leaves_ + li) / 2; i >= 1; i /= 2) Pull(i);
  dirty_.clear();
}

// Best-first over the tree by row[per - 1]: the count-th leaf popped is the count-th smallest.
Time ReleaseProfile::KthSmallest(uint16_t per, uint32_t count) {
  const size_t k = per - 1;
  if (count == 1) return Row(1)[k];
  auto later = [](const std::pair<Time, size_t>& a, const std::pair<Time, size_t>& b) { return a.first > b.first; };
  heap_.clear();
  heap_.emplace_back(Row(1)[k], 1);
  uint32_t popped = 0;
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    const auto [t, i] = heap_.back();
    heap_.pop_back();
    if (t == kNoEnd) return kNoEnd;
    if (i >= leaves_) {
      if (++popped == count) return t;
      continue;
    }
    for (size_t c : {2 * i, 2 * i + 1}) {
      heap_.emplace_back(Row(c)[k], c);
      std::push_heap(heap_.begin(), heap_.end(), later);
    }
  }
  return kNoEnd;
}

void ReleaseProfile::Collect(size_t node, uint16_t per, Time at, std::vector<uint32_t>* nodes) const {
  if (tree_[node * g_ + per - 1] > at) return;
  if (node >= leaves_) {
    nodes->push_back(static_cast<uint32_t>(node - leaves_));
    return;
  }
  Collect(2 * node, per, at, nodes);
  Collect(2 * node + 1, per, at, nodes);
}

ReleaseProfile::Fit ReleaseProfile::Earliest(const ClusterState& st, VcId vc, uint16_t per, uint32_t count,
                                             std::vector<uint32_t>* nodes) {
  ORR_CHECK(per >= 1 && per <= g_ && count >= 1);
  Flush(st, vc);
  nodes->clear();
  const Time at = KthSmallest(per, count);
  if (at == kNoEnd) return Fit{FitKind::kNever, 0};
  if (at == kFreeNow) return Fit{FitKind::kNow, 0};
  Collect(1, per, at, nodes);
  return Fit{FitKind::kAt, at};
}

}  // namespace orrery
