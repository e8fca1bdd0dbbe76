#include "sched/plugins/elastic.h"

#include <algorithm>
#include <bit>

namespace orrery {

ReschedulePlugin::Next ElasticResize::Run(SchedulerHandle& h, VcId vc, PluginStatus* /*block*/) {
  // The first two pending jobs: one alone may grow when it starts (nothing else waits for
  // the free GPUs); with more, starts keep to their requests and grown jobs may be shrunk.
  uint32_t first = UINT32_MAX, count = 0;
  h.ForEachPending(vc, [&](const PendingEntry& e) -> int64_t {
    if (count++ == 0) first = e.slot;
    return count >= 2 ? -1 : INT64_MAX;
  });
  bool shrank = false;
  if (vc.v < running_.size() && !running_[vc.v].empty()) {
    if (count > 0)
      shrank = Shrink(h, vc, first);
    else
      Grow(h, vc);
  }
  // A job just shrunk for a waiting one waits beside it: it restarts at most at its request.
  shape_->SetCrowded(vc, count >= 2 || shrank);
  return Next::kWalk;
}

void ElasticResize::JobStarted(SchedulerHandle& h, uint32_t slot) {
  const VcId vc = h.job(slot).vc;
  if (running_.size() <= vc.v) running_.resize(vc.v + 1);
  running_[vc.v].push_back(slot);
}

void ElasticResize::JobStopped(SchedulerHandle& h, uint32_t slot, EndCause, bool) {
  const VcId vc = h.job(slot).vc;
  if (vc.v >= running_.size()) return;
  auto& r = running_[vc.v];
  r.erase(std::remove(r.begin(), r.end(), slot), r.end());
}

uint64_t ElasticResize::NeedOf(const JobRequest& job) const {
  if (shape_->ModelOf(job) == nullptr) return job.gpus;
  // GoodputShape starts it on as few as request / shrink.
  return std::max<uint64_t>(1, std::bit_ceil(std::max<uint64_t>(1, job.gpus / shape_->options().shrink)));
}

bool ElasticResize::Shrink(SchedulerHandle& h, VcId vc, uint32_t first) {
  const uint64_t need = NeedOf(*h.job(first).job);
  uint64_t free = h.state().vc_free_gpus(vc);
  if (need == 0 || free >= need) return false;  // it waits for another reason (fragmentation, its order)
  std::vector<std::pair<uint64_t, uint32_t>> grown;  // (surplus, slot)
  uint64_t surplus = 0;
  for (uint32_t slot : running_[vc.v]) {
    const SchedJob& j = h.job(slot);
    const uint32_t asked = Request(j).gpus;
    if (j.job->gpus > asked && j.started < h.now()) {  // never twice in one instant
      grown.emplace_back(j.job->gpus - asked, slot);
      surplus += j.job->gpus - asked;
    }
  }
  if (free + surplus < need) return false;  // shrinking every grown job would not start it
  std::stable_sort(grown.begin(), grown.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [s, slot] : grown) {
    if (free >= need) break;
    free += s;
    h.Preempt(slot);  // restarts at most at its request (SetCrowded)
  }
  return true;
}

void ElasticResize::Grow(SchedulerHandle& h, VcId vc) {
  const Cluster& cluster = h.state().cluster();
  double best_gain = shape_->options().min_gain;
  uint32_t best = UINT32_MAX;
  for (uint32_t slot : running_[vc.v]) {
    SchedJob& j = h.job(slot);
    if (h.now() - j.started < o_.cooldown || j.started == h.now() || j.partner != kNoSlot) continue;
    const TrainModel* m = shape_->ModelOf(*j.job);
    if (m == nullptr) continue;
    Result<PlannedStep> now_step = shape_->cost().Best(*m, GroupsOf(j.alloc, cluster));
    if (!now_step.ok()) continue;
    // Its own GPUs count as free for the choice (tentatively released, then put back).
    h.state().Release(j.alloc);
    std::optional<ShapeChoice> c = shape_->ChooseFor(Request(j), vc, j.types, h.state(), true);
    h.state().Apply(j.alloc);
    if (!c || c->shape.gpus <= j.job->gpus) continue;
    const double gain = now_step->seconds / c->step_s;
    if (gain >= best_gain && (best == UINT32_MAX || gain > best_gain)) best_gain = gain, best = slot;
  }
  if (best == UINT32_MAX) return;
  h.Preempt(best);  // restarts in this cycle's walk at the larger count (nothing else waits)
}

}  // namespace orrery
