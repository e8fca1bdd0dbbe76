// The strategy table and the step of each strategy (docs/design/rl.md, "Strategies").
#include <algorithm>
#include <cmath>
#include <string>

#include "base/rng.h"
#include "rl/strategy.h"

namespace orrery::rl {
namespace {

// One prompt's samples: the prompt factor, lengths, tokens generated so far, the step it began.
struct Group {
  double z = 0;
  std::vector<uint32_t> lengths;
  std::vector<uint32_t> done;
  uint32_t born = 0;
};

// Fresh prompts in order: sampled from the job's length distribution (one stream, so every
// strategy sees the same first prompts), or the job's fixed lengths in turn.
class Prompts {
 public:
  explicit Prompts(const RlJob& job) : job_(job), rng_(job.seed, "rl/lengths") {}
  Group Fresh(uint32_t step) {
    Group g;
    g.z = rng_.Normal();
    g.lengths = Draw(g.z);
    g.done.assign(job_.samples, 0);
    g.born = step;
    return g;
  }
  // New samples of a deferred prompt (fixed lengths: the same).
  Group Again(const Group& old) {
    Group g = old;
    if (job_.fixed_lengths.empty()) g.lengths = SampleGroup(job_.lengths, g.z, job_.samples, rng_);
    g.done.assign(job_.samples, 0);
    return g;
  }

 private:
  std::vector<uint32_t> Draw(double z) {
    if (job_.fixed_lengths.empty()) return SampleGroup(job_.lengths, z, job_.samples, rng_);
    std::vector<uint32_t> out;
    for (uint32_t i = 0; i < job_.samples; ++i) out.push_back(job_.fixed_lengths[next_++ % job_.fixed_lengths.size()]);
    return out;
  }
  const RlJob& job_;
  Rng rng_;
  size_t next_ = 0;
};

// The first `n` complete groups.
std::vector<uint32_t> FirstComplete(const RolloutResult& roll, uint32_t n) {
  std::vector<uint32_t> v = roll.complete_groups;
  if (v.size() > n) v.resize(n);
  return v;
}

std::vector<Sequence> ToSequences(const RlJob& job, const std::vector<Group>& groups) {
  std::vector<Sequence> out;
  for (uint32_t g = 0; g < groups.size(); ++g)
    for (uint32_t s = 0; s < groups[g].lengths.size(); ++s)
      out.push_back({job.prompt_len, groups[g].lengths[s], groups[g].done[s], g});
  return out;
}

RolloutConfig BaseConfig(const RlJob& job, uint32_t gpus) {
  RolloutConfig c;
  c.workers = std::max<uint32_t>(1, gpus / job.tp);
  c.tp = job.tp;
  c.max_running = job.max_running;
  return c;
}

struct Tokens {
  double tokens = 0, sq = 0, generated = 0;
};
Tokens CountGroups(const RlJob& job, const std::vector<Group>& groups, const std::vector<uint32_t>& which) {
  Tokens t;
  for (uint32_t g : which)
    for (uint32_t len : groups[g].lengths) {
      const double s = static_cast<double>(job.prompt_len) + len;
      t.tokens += s;
      t.sq += s * s;
      t.generated += len;
    }
  return t;
}
std::vector<uint32_t> AllGroups(size_t n) {
  std::vector<uint32_t> v(n);
  for (uint32_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

// A colocated step: rollout on all GPUs, then reward and log-probs, training, weight sync.
StepResult Colocated(std::string_view name, const RlJob& job, const RlEnv& env, const RolloutResult& roll,
                     const Tokens& t) {
  StepResult r;
  r.name = std::string(name);
  r.rollout_s = roll.time_s;
  r.tail_s = roll.tail_s;
  r.reward_s = env.phases->Reference(t.tokens, t.sq, job.gpus);
  r.train_s = env.phases->Train(t.tokens, t.sq, job.gpus);
  r.sync_s = env.phases->Sync();
  r.step_time_s = r.rollout_s + r.reward_s + r.train_s + r.sync_s;
  r.idle_gpu_frac = r.step_time_s > 0 ? roll.idle_gpu_s / (job.gpus * r.step_time_s) : 0;
  r.timeline = roll.timeline;
  return r;
}

// The mean of several steps' results (the first step's timeline).
StepResult MeanOf(std::string_view name, const std::vector<StepResult>& steps) {
  StepResult m;
  m.name = std::string(name);
  const double n = static_cast<double>(steps.size());
  for (const StepResult& s : steps) {
    m.step_time_s += s.step_time_s / n;
    m.rollout_s += s.rollout_s / n;
    m.tail_s += s.tail_s / n;
    m.reward_s += s.reward_s / n;
    m.train_s += s.train_s / n;
    m.sync_s += s.sync_s / n;
    m.other_s += s.other_s / n;
    m.idle_gpu_frac += s.idle_gpu_frac * s.step_time_s;
    m.policy_lag += s.policy_lag / n;
  }
  m.idle_gpu_frac = m.step_time_s > 0 ? m.idle_gpu_frac / (n * m.step_time_s) : 0;
  if (!steps.empty()) m.timeline = steps.front().timeline;
  return m;
}

class SyncStrategy final : public Strategy {
 public:
  Result<StepResult> Step(const RlJob& job, const RlEnv& env) const override {
    Prompts src(job);
    std::vector<Group> groups;
    for (uint32_t p = 0; p < job.prompts; ++p) groups.push_back(src.Fresh(0));
    ORR_ASSIGN_OR_RETURN(RolloutResult roll, SimulateRollout(ToSequences(job, groups), BaseConfig(job, job.gpus), *env.timer));
    return Colocated("sync", job, env, roll, CountGroups(job, groups, AllGroups(groups.size())));
  }
};

// TLT: the sync step's rollout with speculative decoding while the running batch is ≤ 32.
// The drafter trains on the released workers' idle GPU-seconds; when they cannot hold one
// update, the drafter serves one policy version older (staleness 2).
class TltStrategy final : public Strategy {
 public:
  Result<StepResult> Step(const RlJob& job, const RlEnv& env) const override {
    Prompts src(job);
    std::vector<Group> groups;
    for (uint32_t p = 0; p < job.prompts; ++p) groups.push_back(src.Fresh(0));
    const std::vector<Sequence> seqs = ToSequences(job, groups);
    const Tokens t = CountGroups(job, groups, AllGroups(groups.size()));
    RolloutConfig cfg = BaseConfig(job, job.gpus);
    cfg.max_running = job.tlt_max_running;
    cfg.spec.on = true;
    StepResult r;
    for (uint32_t staleness = 1; staleness <= 2; ++staleness) {
      cfg.spec.accept.clear();
      for (uint32_t k : cfg.spec.verify_tokens)
        cfg.spec.accept.push_back(AcceptLength(env.accept, k, env.draft_steps, staleness));
      ORR_ASSIGN_OR_RETURN(RolloutResult roll, SimulateRollout(seqs, cfg, *env.timer));
      r = Colocated("tlt", job, env, roll, t);
      r.accept_length = cfg.spec.accept.front();
      const double need = env.phases->DrafterTrainGpuS(t.generated);
      r.drafter_trained = need > 0 ? std::min(1.0, roll.idle_gpu_s / need) : 1.0;
      if (r.drafter_trained >= 1) break;
    }
    return r;
  }
};

// RollPacker's tail batching: short rounds launch P·(1 + over) prompts and stop when P
// prompts have all their responses; the unfinished prompts are deferred and, once P have
// gathered, run (with fresh samples) in a tail round to completion. Every round trains P
// prompts; the result is the mean over one cycle of short rounds and its tail round.
class TailBatchStrategy final : public Strategy {
 public:
  static constexpr double kOver = 0.25;  // prompt over-provisioning (docs/design/rl.md)
  Result<StepResult> Step(const RlJob& job, const RlEnv& env) const override {
    Prompts src(job);
    const uint32_t launched = job.prompts + static_cast<uint32_t>(std::ceil(job.prompts * kOver));
    std::vector<Group> deferred;
    std::vector<StepResult> rounds;
    while (deferred.size() < job.prompts && rounds.size() < 64) {
      std::vector<Group> groups;
      for (uint32_t p = 0; p < launched; ++p) groups.push_back(src.Fresh(0));
      RolloutConfig cfg = BaseConfig(job, job.gpus);
      cfg.stop_after_groups = job.prompts;
      ORR_ASSIGN_OR_RETURN(RolloutResult roll, SimulateRollout(ToSequences(job, groups), cfg, *env.timer));
      std::vector<bool> complete(groups.size(), false);
      for (uint32_t g : roll.complete_groups) complete[g] = true;
      const size_t before = deferred.size();
      for (uint32_t g = 0; g < groups.size(); ++g)
        if (!complete[g]) deferred.push_back(groups[g]);
      rounds.push_back(Colocated("tail-batch", job, env, roll, CountGroups(job, groups, FirstComplete(roll, job.prompts))));
      if (deferred.size() == before) break;  // nothing long enough to defer: no tail round
    }
    const size_t short_rounds = rounds.size();
    std::vector<Group> tail;
    for (size_t i = 0; i < deferred.size() && i < job.prompts; ++i) tail.push_back(src.Again(deferred[i]));
    double tail_rollout = 0;
    if (deferred.size() >= job.prompts) {
      ORR_ASSIGN_OR_RETURN(RolloutResult roll, SimulateRollout(ToSequences(job, tail), BaseConfig(job, job.gpus), *env.timer));
      tail_rollout = roll.time_s;
      rounds.push_back(Colocated("tail-batch", job, env, roll, CountGroups(job, tail, AllGroups(tail.size()))));
    }
    StepResult m = MeanOf("tail-batch", rounds);
    double short_tail = 0;
    for (size_t i = 0; i < short_rounds; ++i) short_tail += rounds[i].tail_s;
    m.tail_s = (tail_rollout + short_tail) / rounds.size();
    return m;
  }
};

// APRIL's partial rollouts: each step launches P·(1 + over) prompts (the unfinished ones of
// the previous step first, with the tokens they already have), stops when P prompts are
// complete, and carries the rest; a trained response's policy lag is the number of steps
// since its prompt began. Mean over steps 2..8 (step 1 starts cold).
class PartialStrategy final : public Strategy {
 public:
  static constexpr double kOver = 0.25;
  explicit PartialStrategy(uint32_t steps = 8) : steps_(steps) {}
  Result<StepResult> Step(const RlJob& job, const RlEnv& env) const override {
    Prompts src(job);
    const uint32_t launched = job.prompts + static_cast<uint32_t>(std::ceil(job.prompts * kOver));
    std::vector<Group> carried;
    std::vector<StepResult> steps;
    for (uint32_t s = 0; s < steps_; ++s) {
      std::vector<Group> groups = carried;
      while (groups.size() < launched) groups.push_back(src.Fresh(s));
      RolloutConfig cfg = BaseConfig(job, job.gpus);
      cfg.stop_after_groups = job.prompts;
      ORR_ASSIGN_OR_RETURN(RolloutResult roll, SimulateRollout(ToSequences(job, groups), cfg, *env.timer));
      const std::vector<uint32_t> trained = FirstComplete(roll, job.prompts);
      StepResult r = Colocated("partial", job, env, roll, CountGroups(job, groups, trained));
      std::vector<bool> complete(groups.size(), false);
      double lag = 0;
      for (uint32_t g : trained) {
        complete[g] = true;
        lag += s - groups[g].born;
      }
      r.policy_lag = trained.empty() ? 0 : lag / trained.size();
      carried.clear();
      size_t at = 0;
      for (uint32_t g = 0; g < groups.size(); ++g)
        for (uint32_t k = 0; k < groups[g].lengths.size(); ++k, ++at)
          if (!complete[g]) groups[g].done[k] = static_cast<uint32_t>(std::floor(roll.generated[at] + 1e-9));
      for (uint32_t g = 0; g < groups.size(); ++g)
        if (!complete[g]) carried.push_back(groups[g]);
      if (s > 0) steps.push_back(r);
    }
    return MeanOf("partial", steps);
  }

 private:
  uint32_t steps_;
};

// AReaL's asynchronous RL: a rollout pool generates continuously, at most eta policy
// versions ahead of the trainer, which runs reward, log-probs and the update on the other
// GPUs. Per step: max(rollout of (eta + 1) steps' prompts streamed through the pool /
// (eta + 1), reward + train on the training pool) + weight sync. The pool split is the best
// of 1/2, 5/8, 3/4, 7/8 of the GPUs for rollout (a deployment choice).
class AsyncStrategy final : public Strategy {
 public:
  explicit AsyncStrategy(uint32_t eta = 4) : eta_(eta) {}
  Result<StepResult> Step(const RlJob& job, const RlEnv& env) const override {
    Prompts src(job);
    std::vector<Group> groups;
    for (uint32_t p = 0; p < (eta_ + 1) * job.prompts; ++p) groups.push_back(src.Fresh(0));
    const std::vector<Sequence> seqs = ToSequences(job, groups);
    const Tokens all = CountGroups(job, groups, AllGroups(groups.size()));
    const double per = 1.0 / (eta_ + 1);
    StepResult best;
    uint32_t last = 0;
    for (uint32_t eighths : {4u, 5u, 6u, 7u}) {
      const uint32_t rgpus = job.gpus * eighths / 8 / job.tp * job.tp;
      if (rgpus == 0 || rgpus >= job.gpus || rgpus == last) continue;
      last = rgpus;
      ORR_ASSIGN_OR_RETURN(RolloutResult roll, SimulateRollout(seqs, BaseConfig(job, rgpus), *env.timer));
      StepResult r;
      r.name = "async";
      r.rollout_gpus = rgpus;
      r.rollout_s = roll.time_s * per;
      r.tail_s = roll.tail_s * per;
      const uint32_t tgpus = job.gpus - rgpus;
      r.reward_s = env.phases->Reference(all.tokens * per, all.sq * per, tgpus);
      r.train_s = env.phases->Train(all.tokens * per, all.sq * per, tgpus);
      r.sync_s = env.phases->Sync();
      const double busy = std::max(r.rollout_s, r.reward_s + r.train_s);
      r.step_time_s = busy + r.sync_s;
      const double idle = roll.idle_gpu_s * per + rgpus * (busy - r.rollout_s) + tgpus * (busy - r.reward_s - r.train_s);
      r.idle_gpu_frac = idle / (job.gpus * r.step_time_s);
      double lag = 0;
      for (size_t i = 0; i < roll.complete_groups.size(); ++i) {
        const double batch = std::floor(roll.complete_groups[i] / static_cast<double>(job.prompts));
        lag += std::clamp(roll.group_done_s[i] / r.step_time_s - batch, 0.0, static_cast<double>(eta_));
      }
      r.policy_lag = roll.complete_groups.empty() ? 0 : lag / roll.complete_groups.size();
      r.timeline = roll.timeline;
      if (best.name.empty() || r.step_time_s < best.step_time_s) best = r;
    }
    if (best.name.empty()) return MakeError("async: needs at least two rollout workers' worth of GPUs (2·tp)");
    return best;
  }

 private:
  uint32_t eta_;
};

// Harvest: the sync step, with every rollout worker that goes idle lent to preemptible jobs
// and taken back at the end of the rollout. A borrower pays its restart cost out of the lent
// time (Helios' preemption overhead: 7 s for 1 GPU, 30 s up to 8, 60 s above); the RL job
// waits for the return (Slurm's default KillWait, 30 s) when anything was lent, so GPUs are
// lent only when the lendable GPU-seconds exceed the job's GPUs × that wait.
class HarvestStrategy final : public Strategy {
 public:
  Result<StepResult> Step(const RlJob& job, const RlEnv& env) const override {
    ORR_ASSIGN_OR_RETURN(StepResult r, SyncStrategy().Step(job, env));
    r.name = "harvest";
    const double lent = HarvestableGpuS(r.timeline, job.gpus, r.rollout_s, HarvestRestoreS(job.tp));
    // Lending pays only when the borrowers gain more GPU-seconds than the RL job loses
    // waiting for the return; otherwise nothing is lent.
    if (lent <= job.gpus * kHarvestReturnS) return r;
    r.harvestable_gpu_s = lent;
    {
      r.other_s = kHarvestReturnS;
      const double idle_gpu_s = r.idle_gpu_frac * job.gpus * r.step_time_s;
      r.step_time_s += kHarvestReturnS;
      r.idle_gpu_frac = idle_gpu_s / (job.gpus * r.step_time_s);
    }
    return r;
  }
};

template <class S>
std::unique_ptr<Strategy> Make() {
  return std::make_unique<S>();
}

}  // namespace

std::unique_ptr<Strategy> MakePartial(uint32_t steps) { return std::make_unique<PartialStrategy>(steps); }
std::unique_ptr<Strategy> MakeAsync(uint32_t eta) { return std::make_unique<AsyncStrategy>(eta); }

double HarvestRestoreS(uint32_t tp) { return tp <= 1 ? 7 : (tp <= 8 ? 30 : 60); }

std::vector<HarvestRelease> HarvestReleases(const StepResult& step, uint32_t gpus, uint32_t tp) {
  std::vector<HarvestRelease> out;
  if (step.harvestable_gpu_s <= 0) return out;  // lending does not pay for this job: nothing lent
  uint32_t prev = gpus;
  for (const BusySegment& s : step.timeline) {
    const uint32_t released = prev > s.busy_gpus ? prev - s.busy_gpus : 0;
    if (released > 0 && step.rollout_s - s.t0 - HarvestRestoreS(tp) > 0) out.push_back(HarvestRelease{s.t0, released});
    prev = s.busy_gpus;
  }
  return out;
}

double HarvestableGpuS(const std::vector<BusySegment>& timeline, uint32_t gpus, double rollout_s, double restore_s) {
  double lent = 0;
  uint32_t prev = gpus;
  for (const BusySegment& s : timeline) {
    const uint32_t released = prev > s.busy_gpus ? prev - s.busy_gpus : 0;
    lent += released * std::max(0.0, rollout_s - s.t0 - restore_s);
    prev = s.busy_gpus;
  }
  return lent;
}

const std::vector<StrategyInfo>& Strategies() {
  static const std::vector<StrategyInfo> kTable = {
      {"sync", "verl's colocated step: rollout, reward and log-probs, training, weight sync on the same GPUs",
       "engine max_num_seqs 1024 (verl), rollout memory 0.4 of the GPU (TLT's script)", &Make<SyncStrategy>},
      {"tlt", "speculative decoding while the running batch is at most 32, drafter trained on released workers",
       "bs_threshold 32; batch buckets 1/2/5/21 -> 48/32/16/8 verify tokens; 8 draft steps, top-k 4; "
       "max_running_requests 512",
       &Make<TltStrategy>},
      {"tail-batch", "RollPacker: short rounds stop at P complete prompts, long prompts deferred to a tail round",
       "prompt over-provisioning 0.25", &Make<TailBatchStrategy>},
      {"partial", "APRIL: over-provisioned rollout stops at P complete prompts, the rest continue next step",
       "over-provisioning 0.25; mean over steps 2-8", &Make<PartialStrategy>},
      {"async", "AReaL: separate rollout and training pools, rollout at most eta versions ahead",
       "eta 4; rollout pool 1/2..7/8 of the GPUs, the best", &Make<AsyncStrategy>},
      {"harvest", "sync, with idle rollout GPUs lent to preemptible jobs and returned at the phase boundary",
       "return 30 s (Slurm KillWait); borrower restart 7/30/60 s (Helios)", &Make<HarvestStrategy>},
  };
  return kTable;
}

Result<std::vector<StepResult>> RunStrategies(const std::vector<std::string>& names, const RlJob& job,
                                              const RlEnv& env) {
  std::vector<const StrategyInfo*> chosen;
  for (const std::string& n : names) {
    const StrategyInfo* found = nullptr;
    for (const StrategyInfo& s : Strategies())
      if (s.name == n) found = &s;
    if (found == nullptr) {
      std::string all;
      for (const StrategyInfo& s : Strategies()) all += (all.empty() ? "" : ", ") + std::string(s.name);
      return MakeError("--strategy: unknown strategy \"" + n + "\"; expected one of " + all);
    }
    chosen.push_back(found);
  }
  ORR_ASSIGN_OR_RETURN(StepResult base, SyncStrategy().Step(job, env));
  std::vector<StepResult> out;
  for (const StrategyInfo* s : chosen) {
    ORR_ASSIGN_OR_RETURN(StepResult r, s->make()->Step(job, env));
    r.speedup_vs_sync = r.step_time_s > 0 ? base.step_time_s / r.step_time_s : 0;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace orrery::rl
