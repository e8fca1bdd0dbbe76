#include "plan/search.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace orrery::plan {

namespace {

constexpr double kFloatBytes = 2.0;       // fp16/bf16 activations and gradients on the wire
constexpr double kBucketBytes = 5e8;      // DeepSpeed's all-reduce bucket
constexpr double kOverheadTp1 = 2e9;      // framework memory (Sailor: 2 GB at TP 1, 3 GB at TP > 1)
constexpr double kOverheadTpN = 3e9;
constexpr double kTpSpeedup = 1.5;        // H2: double TP while the stage gets >= 1.5x faster
constexpr int kPatience = 1;                // H3: worse data-parallel degrees in a row before stopping

// Uniform split of `layers` into `pp` stages: the first pp - layers%pp stages get the floor.
std::vector<std::pair<int, int>> Split(int layers, int pp) {
  std::vector<std::pair<int, int>> out;
  const int chunk = layers / pp, extra = layers % pp;
  int at = 0;
  for (int s = 0; s < pp; ++s) {
    const int n = chunk + (s >= pp - extra ? 1 : 0);
    out.push_back({at, at + n});
    at += n;
  }
  return out;
}

// Prefix sums of per-layer costs and sizes for one (GPU, micro-batch, TP): O(1) stage queries.
struct StageTable {
  std::vector<double> comp, update, params, act;
  bool ok = false;
  double Range(const std::vector<double>& v, int b, int e) const { return v[e] - v[b]; }
};

class Tables {
 public:
  explicit Tables(const SearchRequest& r) : r_(r) {}
  const StageTable& Get(int gpu, int mbs, int tp) {
    auto key = std::make_tuple(gpu, mbs, tp);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    StageTable t;
    const SailorGpu& g = *r_.pool[gpu].gpu;
    auto times = g.times.find({mbs, tp});
    auto sizes = r_.model->sizes.find(tp);
    if (times != g.times.end() && sizes != r_.model->sizes.end() && times->second.size() == sizes->second.size()) {
      const size_t n = times->second.size();
      t.comp.assign(n + 1, 0), t.update.assign(n + 1, 0), t.params.assign(n + 1, 0), t.act.assign(n + 1, 0);
      for (size_t l = 0; l < n; ++l) {
        t.comp[l + 1] = t.comp[l] + times->second[l].fwd_s + times->second[l].bwd_s;
        t.update[l + 1] = t.update[l] + times->second[l].update_s;
        t.params[l + 1] = t.params[l] + sizes->second[l].params;
        t.act[l + 1] = t.act[l] + sizes->second[l].act_mem;
      }
      t.ok = true;
    }
    return cache_.emplace(key, std::move(t)).first->second;
  }

 private:
  const SearchRequest& r_;
  std::map<std::tuple<int, int, int>, StageTable> cache_;
};

double AllReduceTime(const SailorGpu& g, double bytes, int dp, int tp) {
  if (dp <= 1) return 0;
  const bool intra = dp * tp <= g.gpus_per_node;
  const std::map<int, BandwidthFit>& fits = intra ? g.intra : g.inter;
  if (fits.empty()) return 0;
  auto it = fits.lower_bound(intra ? dp : std::min(g.gpus_per_node / tp, fits.rbegin()->first));
  const BandwidthFit& f = it == fits.end() ? fits.rbegin()->second : it->second;
  double t = 0;
  for (double left = bytes; left > 0; left -= kBucketBytes) {
    const double b = std::min(left, kBucketBytes);
    const double chunk = b / dp;
    t += 2.0 * (dp - 1) * chunk / f.Bps(chunk);
  }
  return t;
}

double P2pTime(const SailorGpu& a, double bytes) {
  if (a.inter.empty()) return 0;
  const BandwidthFit& f = a.inter.begin()->second;
  return bytes / f.Bps(bytes);
}

double StageMemory(const SearchRequest& r, const StageTable& t, const StagePlan& s, int mbs, int pp, int idx) {
  const double params = t.Range(t.params, s.layer_begin, s.layer_end);
  const double act = t.Range(t.act, s.layer_begin, s.layer_end) * mbs * kFloatBytes * (pp - idx);
  return params * r.bytes_per_param + act + (s.tp > 1 ? kOverheadTpN : kOverheadTp1);
}

// Sailor's 1F1B iteration time and the cost of one candidate, with the memoized stage tables.
// The zone network's fit for stage-to-stage traffic between two pool entries, when they are in
// different zones.
const BandwidthFit* CrossZone(const SearchRequest& r, const PoolEntry& from, const PoolEntry& to) {
  if (r.zones == nullptr || from.zone.empty() || to.zone.empty() || from.zone == to.zone) return nullptr;
  return r.zones->Fit(from.zone, from.gpu->name, to.zone);
}

void Evaluate(const SearchRequest& r, Tables& tables, PlanCandidate* c) {
  double slowest = 0, pass = 0, sync = 0, update = 0, egress_dollars = 0;
  std::vector<int> used(r.pool.size(), 0);
  for (size_t i = 0; i < c->stages.size(); ++i) {
    StagePlan& s = c->stages[i];
    const SailorGpu& g = *r.pool[s.gpu_index].gpu;
    const StageTable& t = tables.Get(s.gpu_index, c->micro_batch, s.tp);
    const double comp = t.Range(t.comp, s.layer_begin, s.layer_end);
    const double out_floats = r.model->sizes.at(s.tp)[s.layer_end - 1].act_output;
    const double act_bytes = out_floats * c->micro_batch * kFloatBytes;
    double p2p = 0;
    if (i + 1 < c->stages.size()) {
      const PoolEntry& from = r.pool[s.gpu_index];
      const PoolEntry& to = r.pool[c->stages[i + 1].gpu_index];
      const BandwidthFit* zf = CrossZone(r, from, to);
      p2p = zf != nullptr ? act_bytes / zf->Bps(act_bytes) : P2pTime(g, act_bytes);
      if (zf != nullptr) {  // activations forward and gradients back, every micro-batch, every replica
        egress_dollars += 2.0 * act_bytes * c->num_micro * c->dp / 1e9 * r.zones->DollarsPerGb(from.zone, to.zone);
      }
    }
    slowest = std::max(slowest, comp + p2p);
    pass += comp + 2 * p2p;
    sync = std::max(sync, AllReduceTime(g, t.Range(t.params, s.layer_begin, s.layer_end) * kFloatBytes, c->dp, s.tp));
    update = std::max(update, t.Range(t.update, s.layer_begin, s.layer_end));
    s.peak_bytes = StageMemory(r, t, s, c->micro_batch, c->pp, static_cast<int>(i));
    used[s.gpu_index] += c->dp * s.tp;
  }
  c->iter_s = (c->num_micro - 1) * slowest + pass + sync + update;
  double dollars_per_s = 0;
  c->gpus = 0;
  for (size_t k = 0; k < used.size(); ++k) {
    dollars_per_s += used[k] * r.pool[k].gpu->price_per_hour / 3600.0;
    c->gpus += used[k];
  }
  c->cost_per_iter = dollars_per_s * c->iter_s + egress_dollars;
}

class Searcher {
 public:
  explicit Searcher(const SearchRequest& r) : r_(r), tables_(r) {}

  SearchResult Run() {
    const int layers = r_.model->Layers();
    for (int pp = 1; pp <= layers; ++pp) {
      for (int mbs : MicroBatches()) ScanDp(pp, mbs);
    }
    return result_;
  }

 private:
  std::vector<int> MicroBatches() const {
    std::vector<int> out = r_.pool[0].gpu->MicroBatches();
    for (const PoolEntry& e : r_.pool) {
      std::vector<int> m = e.gpu->MicroBatches(), keep;
      std::set_intersection(out.begin(), out.end(), m.begin(), m.end(), std::back_inserter(keep));
      out = keep;
    }
    return out;
  }

  bool Fits(int gpu, int mbs, int tp, const std::vector<std::pair<int, int>>& split, int pp) {
    const StageTable& t = tables_.Get(gpu, mbs, tp);
    if (!t.ok) return false;
    for (int i = 0; i < pp; ++i) {
      StagePlan s{gpu, tp, split[i].first, split[i].second};
      if (StageMemory(r_, t, s, mbs, pp, i) > r_.pool[gpu].gpu->memory_bytes) return false;
    }
    return true;
  }

  // H1 + H2: TP inside a node, from the smallest TP whose stages fit up to the TP reached by
  // doubling while the last stage still gets >= 1.5x faster. Exhaustive mode: every TP that fits.
  std::vector<int> TpChoices(int gpu, int mbs, const std::vector<std::pair<int, int>>& split, int pp) {
    const SailorGpu& g = *r_.pool[gpu].gpu;
    std::vector<int> fit;
    for (int tp : g.TpDegrees(mbs)) {
      if (tp <= g.gpus_per_node && Fits(gpu, mbs, tp, split, pp)) fit.push_back(tp);
    }
    if (fit.empty() || r_.exhaustive) return fit;
    auto stage_time = [&](int tp) {
      const StageTable& t = tables_.Get(gpu, mbs, tp);
      return t.Range(t.comp, split.back().first, split.back().second);
    };
    int chosen = fit.front();
    for (size_t i = 1; i < fit.size(); ++i) {
      if (stage_time(chosen) / stage_time(fit[i]) >= kTpSpeedup) chosen = fit[i];
      else break;
    }
    // The memory-feasible range [smallest TP that fits, chosen]: Sailor keeps only `chosen`, which
    // loses 5-20 % throughput on its own profiles when smaller TP with deeper pipelines wins
    // (docs/benchmarks.md, "Planner search").
    return {fit.begin(), std::find(fit.begin(), fit.end(), chosen) + 1};
  }

  // H3: data-parallel degrees at which the number of micro-batches changes, largest first;
  // stop as soon as the objective gets worse.
  void ScanDp(int pp, int mbs) {
    const auto split = Split(r_.model->Layers(), pp);
    std::vector<std::vector<int>> tps(r_.pool.size());
    int gpus = 0;
    for (size_t k = 0; k < r_.pool.size(); ++k) {
      tps[k] = TpChoices(static_cast<int>(k), mbs, split, pp);
      gpus += r_.pool[k].count;
    }
    const int max_dp = std::min(gpus / pp, r_.global_batch / mbs);
    double best_here = -1;
    int last_nb = -1, worse = 0;
    for (int dp = max_dp; dp >= 1; --dp) {
      const int nb = (r_.global_batch + mbs * dp - 1) / (mbs * dp);
      if (!r_.exhaustive && nb == last_nb) continue;
      last_nb = nb;
      const double score = BestAssignment(pp, mbs, dp, nb, split, tps);
      // Sailor stops at the first degree that is worse. With several GPU types the resource
      // limits make the objective non-monotonic in dp (stopping early lost 6.7 % on 128 A100 +
      // 384 V100), so the early stop applies to homogeneous pools only.
      worse = score >= 0 && best_here >= 0 && score < best_here ? worse + 1 : 0;
      if (!r_.exhaustive && r_.pool.size() == 1 && worse >= kPatience) break;
      best_here = std::max(best_here, score);
    }
  }

  // Homogeneous: every stage on the one type. Several types: stages 0..k-1 on type a and the
  // rest on type b, for every ordered pair a != b and 1 <= k <= pp (k = pp: all on a).
  double BestAssignment(int pp, int mbs, int dp, int nb, const std::vector<std::pair<int, int>>& split,
                        const std::vector<std::vector<int>>& tps) {
    double best = -1;
    const int types = static_cast<int>(r_.pool.size());
    if (types == 1) {
      for (int t : tps[0]) best = std::max(best, Try(pp, mbs, dp, nb, split, 0, t, 0, t, pp));
      return best;
    }
    for (int a = 0; a < types; ++a) {
      for (int b = 0; b < types; ++b) {
        if (a == b) continue;
        for (int ta : tps[a]) {
          for (int tb : tps[b]) {
            for (int k = 1; k <= pp; ++k) best = std::max(best, Try(pp, mbs, dp, nb, split, a, ta, b, tb, k));
          }
        }
      }
    }
    return best;
  }

  double Try(int pp, int mbs, int dp, int nb, const std::vector<std::pair<int, int>>& split, int a, int ta, int b,
             int tb, int k) {
    std::vector<int> need(r_.pool.size(), 0);
    need[a] += k * dp * ta;
    need[b] += (pp - k) * dp * tb;
    for (size_t i = 0; i < need.size(); ++i) {
      if (need[i] > r_.pool[i].count) return -1;
    }
    PlanCandidate c;
    c.pp = pp, c.micro_batch = mbs, c.dp = dp, c.num_micro = nb;
    for (int s = 0; s < pp; ++s) {
      const bool first = s < k;
      c.stages.push_back({first ? a : b, first ? ta : tb, split[s].first, split[s].second});
    }
    Evaluate(r_, tables_, &c);
    ++result_.evaluated;
    const double thr = 1.0 / c.iter_s;
    if (c.cost_per_iter > r_.max_cost_per_iter || thr < r_.min_iters_per_s) return -1;
    const double score = r_.objective == Objective::kThroughput ? thr : 1.0 / c.cost_per_iter;
    if (!result_.found || score > best_score_) {
      result_.found = true;
      result_.best = c;
      best_score_ = score;
    }
    return score;
  }

  const SearchRequest& r_;
  Tables tables_;
  SearchResult result_;
  double best_score_ = 0;
};

}  // namespace

void EvaluateCandidate(const SearchRequest& r, PlanCandidate* c) {
  Tables tables(r);
  Evaluate(r, tables, c);
}

Result<SearchResult> SearchPlans(const SearchRequest& r) {
  if (r.model == nullptr || r.pool.empty()) return MakeError("search: no model or empty GPU pool");
  if (r.global_batch <= 0) return MakeError("search: --global-batch must be positive");
  for (const PoolEntry& e : r.pool) {
    if (e.count <= 0) return MakeError("search: pool entry " + e.gpu->name + " has no GPUs");
    if (!e.zone.empty() && r.zones == nullptr) return MakeError("search: pool entries with zones need the zone network");
  }
  Searcher s(r);
  SearchResult res = s.Run();
  if (!res.found) {
    return MakeError(fmt::format("search: no plan fits the pool's memory and the constraints (global batch {}, "
                                 "budget {} $/iter, min {} iter/s)",
                                 r.global_batch, r.max_cost_per_iter, r.min_iters_per_s));
  }
  return res;
}

}  // namespace orrery::plan
