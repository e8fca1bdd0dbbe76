#include "rl/rollout.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <queue>
#include <utility>

namespace orrery::rl {
namespace {

struct Running {
  double finish_pos;
  uint32_t idx;
  bool operator>(const Running& o) const { return finish_pos != o.finish_pos ? finish_pos > o.finish_pos : idx > o.idx; }
};

struct Worker {
  std::deque<uint32_t> waiting;
  std::priority_queue<Running, std::vector<Running>, std::greater<Running>> running;
  double pos = 0;       // tokens each running sequence has advanced since the worker started
  double base_sum = 0;  // Σ (prompt + done − start position) over the running sequences
  double clock = 0;
  double step_end = 0;
  double advance = 0;
  bool busy = false;
};

class Rollout {
 public:
  Rollout(const std::vector<Sequence>& seqs, const RolloutConfig& cfg, const StepTimer& timer)
      : seqs_(seqs), cfg_(cfg), timer_(timer), workers_(cfg.workers), start_(seqs.size(), 0) {
    r_.generated.assign(seqs.size(), 0);
    r_.finished.assign(seqs.size(), false);
    r_.worker_busy_s.assign(cfg.workers, 0);
    uint32_t groups = 0;
    for (const Sequence& s : seqs) groups = std::max(groups, s.group + 1);
    group_left_.assign(groups, 0);
    for (const Sequence& s : seqs) ++group_left_[s.group];
  }

  RolloutResult Run() {
    const size_t n = seqs_.size();
    for (uint32_t w = 0; w < cfg_.workers; ++w)
      for (size_t i = w * n / cfg_.workers; i < (w + 1) * n / cfg_.workers; ++i) {
        if (seqs_[i].done >= seqs_[i].response) {
          Finish(static_cast<uint32_t>(i), 0);
        } else {
          workers_[w].waiting.push_back(static_cast<uint32_t>(i));
        }
      }
    double end = 0;
    if (!Stopped()) {
      for (uint32_t w = 0; w < cfg_.workers; ++w) StartStep(w);
      while (!events_.empty()) {
        const auto [t, w] = events_.top();
        events_.pop();
        FinishStep(w);
        end = t;
        if (Stopped()) break;
      }
    }
    for (uint32_t w = 0; w < cfg_.workers; ++w) {
      Worker& k = workers_[w];
      if (k.busy) r_.worker_busy_s[w] = end;  // stopped while it was still decoding
      while (!k.running.empty()) {
        const uint32_t i = k.running.top().idx;
        k.running.pop();
        r_.generated[i] = std::min<double>(seqs_[i].response, seqs_[i].done + k.pos - start_[i]);
      }
      for (uint32_t i : k.waiting) r_.generated[i] = seqs_[i].done;
    }
    r_.time_s = end;
    double min_busy = end;
    for (uint32_t w = 0; w < cfg_.workers; ++w) {
      r_.idle_gpu_s += cfg_.tp * (end - r_.worker_busy_s[w]);
      min_busy = std::min(min_busy, r_.worker_busy_s[w]);
    }
    r_.tail_s = end - min_busy;
    r_.timeline = BusyTimeline(r_.worker_busy_s, cfg_.tp, end);
    return std::move(r_);
  }

 private:
  bool Stopped() const { return cfg_.stop_after_groups > 0 && r_.complete_groups.size() >= cfg_.stop_after_groups; }

  void Finish(uint32_t i, double t) {
    r_.finished[i] = true;
    r_.generated[i] = seqs_[i].response;
    if (--group_left_[seqs_[i].group] == 0) {
      r_.complete_groups.push_back(seqs_[i].group);
      r_.group_done_s.push_back(t);
    }
  }

  // Admits waiting sequences, times the next step and queues its end; a worker with nothing
  // left is done at its clock.
  void StartStep(uint32_t w) {
    Worker& k = workers_[w];
    uint32_t admitted = 0;
    double prompt_sum = 0;
    while (!k.waiting.empty() && k.running.size() < cfg_.max_running) {
      const uint32_t i = k.waiting.front();
      k.waiting.pop_front();
      const Sequence& s = seqs_[i];
      start_[i] = k.pos;
      k.running.push({k.pos + (s.response - s.done), i});
      k.base_sum += s.prompt + s.done - k.pos;
      prompt_sum += s.prompt + s.done;
      ++admitted;
    }
    if (k.running.empty()) {
      k.busy = false;
      r_.worker_busy_s[w] = k.clock;
      return;
    }
    k.busy = true;
    const uint32_t b = static_cast<uint32_t>(k.running.size());
    const double context = k.base_sum / b + k.pos;
    double dt = admitted > 0 ? timer_.Prefill(admitted, prompt_sum / admitted) : 0.0;
    const SpecConfig& sp = cfg_.spec;
    if (sp.on && b <= sp.max_batch) {
      size_t bucket = 0;
      for (size_t j = 0; j < sp.bucket_lo.size(); ++j)
        if (b >= sp.bucket_lo[j]) bucket = j;
      dt += timer_.Speculative(b, context, sp.verify_tokens[bucket]);
      k.advance = sp.accept[bucket];
      ++r_.spec_steps;
    } else {
      dt += timer_.Decode(b, context);
      k.advance = 1;
    }
    ++r_.steps;
    k.step_end = k.clock + dt;
    events_.push({k.step_end, w});
  }

  void FinishStep(uint32_t w) {
    Worker& k = workers_[w];
    k.clock = k.step_end;
    k.pos += k.advance;
    while (!k.running.empty() && k.running.top().finish_pos <= k.pos + 1e-9) {
      const uint32_t i = k.running.top().idx;
      k.running.pop();
      k.base_sum -= seqs_[i].prompt + seqs_[i].done - start_[i];
      Finish(i, k.clock);
    }
    if (k.running.empty()) k.base_sum = 0;  // no rounding residue carried into the next admissions
    StartStep(w);
  }

  const std::vector<Sequence>& seqs_;
  const RolloutConfig& cfg_;
  const StepTimer& timer_;
  std::vector<Worker> workers_;
  std::vector<double> start_;
  std::vector<uint32_t> group_left_;
  std::priority_queue<std::pair<double, uint32_t>, std::vector<std::pair<double, uint32_t>>, std::greater<>> events_;
  RolloutResult r_;
};

}  // namespace

std::vector<BusySegment> BusyTimeline(const std::vector<double>& busy, uint32_t tp, double end) {
  std::vector<double> ends = busy;
  std::sort(ends.begin(), ends.end());
  std::vector<BusySegment> out;
  double t = 0;
  size_t done = 0;
  while (t < end) {
    while (done < ends.size() && ends[done] <= t) ++done;
    const double next = done < ends.size() ? std::min(ends[done], end) : end;
    out.push_back({t, next, static_cast<uint32_t>((ends.size() - done) * tp)});
    t = next;
  }
  return out;
}

Result<RolloutResult> SimulateRollout(const std::vector<Sequence>& seqs, const RolloutConfig& cfg,
                                      const StepTimer& timer) {
  if (cfg.workers == 0 || cfg.tp == 0 || cfg.max_running == 0)
    return MakeError("rollout: workers, tp and max running batch must be at least 1");
  const SpecConfig& sp = cfg.spec;
  if (sp.on && (sp.bucket_lo.empty() || sp.bucket_lo.size() != sp.verify_tokens.size() ||
                sp.bucket_lo.size() != sp.accept.size()))
    return MakeError("rollout: speculative buckets, verify tokens and acceptance need one entry per bucket");
  for (double a : sp.accept)
    if (sp.on && !(a >= 1)) return MakeError("rollout: a speculative step advances at least 1 token");
  return Rollout(seqs, cfg, timer).Run();
}

}  // namespace orrery::rl
