#include "sched/framework/scheduler.h"

#include <algorithm>

namespace orrery {

namespace {
constexpr const char* kTooLargeForVc = "job needs more GPUs than its VC has";
constexpr const char* kNoTypeInVc = "no node in the VC has an accepted GPU type";
constexpr const char* kTooLargeForNode = "fractional or per-node demand exceeds every node";
constexpr const char* kNoCpuMemNode = "no node in the VC has enough CPU/memory";
}  // namespace

Duration PreemptionOverhead(uint32_t gpus) { return gpus <= 1 ? 7 : (gpus <= 8 ? 30 : 60); }

Scheduler::Scheduler(const Cluster& cluster, bool track_gpus, bool model_cpu_mem, PolicyParts policy,
                     std::unique_ptr<PlacePlugin> placer, SchedulerOptions opts)
    : state_(cluster, track_gpus, model_cpu_mem),
      policy_(std::move(policy)),
      placer_(std::move(placer)),
      opts_(opts),
      vcs_(cluster.vcs.size()) {}

Result<uint32_t> Scheduler::Submit(const Job* job, VcId vc, GpuTypeMask types, uint32_t seq, Time now) {
  // Admission: may this job ever run in its VC?
  const auto& nodes = state_.vc_nodes(vc);
  uint64_t gpus_ok = 0;
  bool type_ok = types == 0, cpu_ok = job->cpu_milli == 0 || !state_.models_cpu_mem();
  uint16_t max_node = 0;
  for (NodeId n : nodes) {
    const Node& nd = state_.cluster().nodes[n.v];
    bool t = types == 0 || (nd.gpu_type.valid() && (types >> nd.gpu_type.v) & 1);
    if (!t) continue;
    type_ok = true;
    gpus_ok += nd.gpus;
    max_node = std::max(max_node, nd.gpus);
    if (!cpu_ok && (nd.cpu_milli == 0 || nd.cpu_milli >= job->cpu_milli / std::max<uint32_t>(1, job->nodes)))
      cpu_ok = true;
  }
  if (!type_ok) return MakeError(kNoTypeInVc);
  if (gpus_ok < job->gpus) return MakeError(kTooLargeForVc);
  if (job->gpus > 0 && job->nodes > 1 && job->gpus % job->nodes == 0 && job->gpus / job->nodes > max_node)
    return MakeError(kTooLargeForNode);
  if (job->gpus == 1 && max_node == 0) return MakeError(kTooLargeForNode);
  if (!cpu_ok) return MakeError(kNoCpuMemNode);

  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
    pool_[slot] = SchedJob{};
  } else {
    slot = static_cast<uint32_t>(pool_.size());
    pool_.emplace_back();
  }
  SchedJob& j = pool_[slot];
  j.job = job;
  j.vc = vc;
  j.types = types;
  j.seq = seq;
  j.remaining = job->duration;
  if (policy_.estimator) j.estimate = policy_.estimator->Estimate(*job, now);
  Enqueue(slot, now);
  return slot;
}

void Scheduler::Enqueue(uint32_t slot, Time now) {
  SchedJob& j = pool_[slot];
  SortKey k = policy_.sort->Key(j, now);
  j.key1 = k.k1;
  j.key2 = k.k2;
  j.enqueued = now;
  j.running = false;
  VcQueues& q = vcs_[j.vc.v];
  q.queue.insert(KeyOf(slot));
  q.fresh.push_back(slot);
  ++pending_total_;
  pending_milli_ += j.job->gpu_milli_total();
  if (!q.dirty) {
    q.dirty = true;
    dirty_list_.push_back(j.vc.v);
  }
}

void Scheduler::Finish(uint32_t slot, Time now) {
  SchedJob& j = pool_[slot];
  ORR_CHECK(j.running);
  VcQueues& q = vcs_[j.vc.v];
  state_.Release(j.alloc);
  q.running_est.erase(REntry{j.est_end, j.seq, slot});
  q.running_true.erase(REntry{j.true_end, j.seq, slot});
  ++q.version;
  --running_total_;
  j.running = false;
  j.remaining = 0;
  if (policy_.estimator) policy_.estimator->Observe(*j.job, now - j.started);
  if (!q.dirty) {
    q.dirty = true;
    dirty_list_.push_back(j.vc.v);
  }
}

void Scheduler::Release(uint32_t slot) {
  pool_[slot].alloc.clear();
  pool_[slot].alloc.shrink_to_fit();
  pool_[slot].job = nullptr;
  free_slots_.push_back(slot);
}

void Scheduler::Start(uint32_t slot, Allocation alloc) {
  SchedJob& j = pool_[slot];
  VcQueues& q = vcs_[j.vc.v];
  q.queue.erase(KeyOf(slot));
  --pending_total_;
  pending_milli_ -= j.job->gpu_milli_total();
  state_.Apply(alloc);
  ++q.version;
  j.alloc = std::move(alloc);
  j.running = true;
  j.started = now_;
  j.true_end = now_ + j.remaining;
  Duration est = j.estimate >= 0 ? j.estimate : j.remaining;
  if (j.preemptions > 0 && policy_.estimator && policy_.estimator->is_oracle()) est = j.remaining;
  j.est_end = now_ + std::max<Duration>(1, est);
  q.running_est.insert(REntry{j.est_end, j.seq, slot});
  q.running_true.insert(REntry{j.true_end, j.seq, slot});
  ++running_total_;
  out_->push_back(Decision{Decision::kStart, slot});
}

void Scheduler::Preempt(uint32_t slot) {
  SchedJob& j = pool_[slot];
  ORR_CHECK(j.running);
  VcQueues& q = vcs_[j.vc.v];
  state_.Release(j.alloc);
  ++q.version;
  q.running_est.erase(REntry{j.est_end, j.seq, slot});
  q.running_true.erase(REntry{j.true_end, j.seq, slot});
  --running_total_;
  j.alloc.clear();
  Duration ran = now_ - j.started;
  j.attained += ran * j.job->gpus;
  j.remaining = (j.true_end - now_) + PreemptionOverhead(j.job->gpus);
  ++j.preemptions;
  out_->push_back(Decision{Decision::kPreempt, slot});
  Enqueue(slot, now_);
}

void Scheduler::PendingAfter(VcId vc, uint32_t slot, size_t limit, std::vector<uint32_t>* out) {
  out->clear();
  const auto& queue = vcs_[vc.v].queue;
  auto it = queue.upper_bound(KeyOf(slot));
  for (; it != queue.end() && out->size() < limit; ++it) out->push_back(it->slot);
}

void Scheduler::RunningByEstEnd(VcId vc, std::vector<uint32_t>* out) {
  out->clear();
  for (const REntry& e : vcs_[vc.v].running_est) out->push_back(e.slot);
}

void Scheduler::RunningByTrueEndDesc(VcId vc, std::vector<uint32_t>* out) {
  out->clear();
  const auto& r = vcs_[vc.v].running_true;
  for (auto it = r.rbegin(); it != r.rend(); ++it) out->push_back(it->slot);
}

void Scheduler::Schedule(Time now, std::vector<Decision>* out) {
  now_ = now;
  out_ = out;
  // Deterministic VC order: ascending VC id.
  std::sort(dirty_list_.begin(), dirty_list_.end());
  std::vector<uint16_t> list;
  list.swap(dirty_list_);
  for (uint16_t v : list) {
    vcs_[v].dirty = false;
    CycleVc(VcId(v), now);
    vcs_[v].fresh.clear();
  }
  out_ = nullptr;
}

void Scheduler::CycleVc(VcId vc, Time now) {
  VcQueues& q = vcs_[vc.v];
  size_t examined = 0;
  q.last_block = PluginStatus::Ok();
  auto it = q.queue.begin();
  while (it != q.queue.end() && examined < opts_.max_examined) {
    ++examined;
    uint32_t slot = it->slot;
    SchedJob& j = pool_[slot];
    PluginStatus st = placer_->Place(j, state_, nullptr, &scratch_);
    if (st.ok()) {
      ++it;  // Start erases the current entry
      Start(slot, std::move(scratch_));
      scratch_.clear();
      continue;
    }
    st.plugin = placer_->name();
    q.last_block = st;
    if (policy_.post) {
      bool placed = false;
      QEntry here = *it;
      PostFilterPlugin::Next next = policy_.post->Run(*this, slot, &placed);
      if (next == PostFilterPlugin::Next::kStop) return;
      it = q.queue.upper_bound(here);  // the queue may have changed around `here`
      if (placed) continue;
    } else {
      ++it;
    }
    if (policy_.blocking) return;
  }
}

}  // namespace orrery
