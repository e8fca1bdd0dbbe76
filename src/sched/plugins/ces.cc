#include "sched/plugins/ces.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>

#include "base/parse.h"
#include "predict/node_demand.h"
#include "sched/plugins/policies.h"

namespace orrery {

namespace {

class CesController final : public PowerPlugin {
 public:
  CesController(const CesParams& p, std::unique_ptr<NodeDemandForecaster> f, int64_t epoch_unix)
      : p_(p), forecaster_(std::move(f)), epoch_(epoch_unix) {}
  std::string_view name() const override { return "ces"; }
  Duration period() const override { return p_.period; }
  ForecastError forecast_error() const override {
    ForecastError e = err_;
    e.forecaster = std::string(forecaster_->name());
    e.trainings = forecaster_->trainings();
    return e;
  }

  void Decide(const PowerSnapshot& s, std::vector<PowerDecision>* out) override {
    const Cluster& c = *s.cluster;
    const size_t nv = c.vcs.size();
    if (hist_.empty()) {
      hist_.resize(nv);
      keep_until_.assign(nv, 0);
      cap_.resize(nv);
      for (size_t v = 0; v < nv; ++v) cap_[v] = static_cast<float>(c.vcs[v].nodes.size());
      t0_ = s.now - p_.period;  // the bin that just ended
    }
    for (size_t v = 0; v < nv; ++v) hist_[v].push_back(static_cast<float>(s.used_peak[v]));
    const size_t L = hist_[0].size();
    const int64_t i = static_cast<int64_t>(L) - 1;
    Score(L);
    const size_t H = static_cast<size_t>(std::max(2 * p_.future, p_.lead));
    forecaster_->Forecast(hist_, cap_, epoch_ + t0_, p_.period, H, &pred_);
    // Demand is whole nodes: the controller (and the forecast error) use rounded forecasts, so
    // that a model's 0.05-node noise on an idle VC neither blocks a decrease nor adds a node.
    for (auto& v : pred_)
      for (float& x : v) x = std::round(x);
    past_.push_back({L, pred_});
    while (past_.size() > static_cast<size_t>(p_.future)) past_.pop_front();

    for (size_t v = 0; v < nv; ++v) {
      const auto& nodes = c.vcs[v].nodes;
      const int total = static_cast<int>(nodes.size());
      int active = 0;
      for (NodeId n : nodes) active += s.nodes[n.v].state != PowerState::kOff;
      const int buffer = std::max(p_.buffer, static_cast<int>(std::ceil(p_.buffer_frac * total - 1e-9)));
      const int used = static_cast<int>(s.used_peak[v]);
      const auto& pr = pred_[v];
      auto mean_pred = [&](int k) {
        double m = 0;
        for (int h = 0; h < k; ++h) m += pr[static_cast<size_t>(h)];
        return k ? m / k : 0.0;
      };
      double pred_max = 0;
      for (int h = 0; h < p_.lead; ++h) pred_max = std::max(pred_max, static_cast<double>(pr[static_cast<size_t>(h)]));
      const int need = std::max(used, static_cast<int>(std::ceil(pred_max - 1e-9)));
      int target = active;
      if (i < p_.history) {
        target = used + buffer;
      } else {
        if (s.demand_wakes[v] > 0 || active - need < p_.min_spare) {
          target = std::max(active, need + buffer);
          keep_until_[v] = i + p_.keep;
        }
        double hmean = 0;
        for (int k = 1; k <= p_.history; ++k) hmean += hist_[v][static_cast<size_t>(i - k)];
        hmean /= p_.history;
        const double hist_drop = hmean - used;
        const double fut_drop = used - mean_pred(p_.future);
        const bool rising = mean_pred(p_.future) < mean_pred(2 * p_.future);
        // Never take capacity from a VC whose queue waits (its jobs wait for those nodes).
        if (hist_drop >= p_.his_thr && fut_drop >= p_.fut_thr && i >= keep_until_[v] && !rising &&
            s.pending[v] == 0) {
          int cand = std::min(target, used + buffer);
          if (target - cand >= p_.de_thr) target = cand;
        }
      }
      target = std::clamp(target, 0, total);
      if (target > active) {
        int up = target - active;
        for (NodeId n : nodes) {
          if (up == 0) break;
          if (s.nodes[n.v].state == PowerState::kOff) {
            out->push_back({PowerDecision::kPowerUp, n});
            --up;
          }
        }
      } else if (target < active) {
        int down = active - target;
        for (auto it = nodes.rbegin(); it != nodes.rend() && down > 0; ++it) {
          const NodePowerView& nv2 = s.nodes[it->v];
          if (nv2.state == PowerState::kOn && !nv2.busy && s.now - nv2.idle_since >= p_.idle) {
            out->push_back({PowerDecision::kPowerDown, *it});
            --down;
          }
        }
      }
    }
  }

 private:
  // Scores every stored forecast that covered the bin just observed (index L − 1).
  void Score(size_t L) {
    const size_t target = L - 1;
    for (const auto& f : past_) {
      if (target < f.origin) continue;
      size_t h = target - f.origin;
      if (h >= static_cast<size_t>(p_.future)) continue;
      for (size_t v = 0; v < hist_.size(); ++v) {
        double p = f.pred[v][h], y = hist_[v][target];
        double e = std::abs(p - y);
        ++err_.n;
        err_.abs_sum += e;
        err_.sq_sum += e * e;
        if (p + y > 0) err_.smape_sum += 2 * e / (std::abs(p) + std::abs(y));
        if (y > 0) {
          ++err_.n_ape;
          err_.ape_sum += e / y;
        }
      }
    }
  }

  struct Past {
    size_t origin;  // first forecast bin index
    std::vector<std::vector<float>> pred;
  };
  CesParams p_;
  std::unique_ptr<NodeDemandForecaster> forecaster_;
  int64_t epoch_;
  Time t0_ = 0;
  std::vector<std::vector<float>> hist_, pred_;
  std::vector<float> cap_;
  std::vector<int64_t> keep_until_;
  std::deque<Past> past_;
  ForecastError err_;
};

}  // namespace

Result<CesParams> ParseCesSpec(const std::string& spec) {
  CesParams p;
  ORR_ASSIGN_OR_RETURN(PluginSpec ps, ParsePluginSpec(spec, "energy policy"));
  if (ps.name != "ces") return MakeError("unknown energy policy '" + ps.name + "' (expected ces)");
  auto bad = [&](const std::string& key, const std::string& what, const std::string& v) {
    return MakeError("energy policy '" + spec + "': parameter '" + key + "': expected " + what + ", got \"" + v + "\"");
  };
  for (const auto& param : ps.params) {
    const std::string& k = param.first;
    const std::string& v = param.second;
    int64_t iv = 0;
    double dv = 0;
    auto int_in = [&](int64_t lo, int64_t hi, auto* dst) -> Status {
      if (!ParseI64(v, &iv) || iv < lo || iv > hi)
        return bad(k, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]", v);
      *dst = static_cast<std::remove_pointer_t<decltype(dst)>>(iv);
      return Status::Ok();
    };
    auto dbl_in = [&](double lo, double hi, double* dst) -> Status {
      if (!ParseF64(v, &dv) || !(dv >= lo && dv <= hi))
        return bad(k, "a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]", v);
      *dst = dv;
      return Status::Ok();
    };
    if (k == "period") ORR_RETURN_IF_ERROR(int_in(1, 86400, &p.period));  // seconds for live test clusters
    else if (k == "history") ORR_RETURN_IF_ERROR(int_in(1, 1000, &p.history));
    else if (k == "future") ORR_RETURN_IF_ERROR(int_in(1, 1000, &p.future));
    else if (k == "his_thr") ORR_RETURN_IF_ERROR(dbl_in(-1e9, 1e9, &p.his_thr));
    else if (k == "fut_thr") ORR_RETURN_IF_ERROR(dbl_in(-1e9, 1e9, &p.fut_thr));
    else if (k == "de_thr") ORR_RETURN_IF_ERROR(dbl_in(0, 1e9, &p.de_thr));
    else if (k == "buffer") ORR_RETURN_IF_ERROR(int_in(0, 1000000, &p.buffer));
    else if (k == "buffer_frac") ORR_RETURN_IF_ERROR(dbl_in(0, 1, &p.buffer_frac));
    else if (k == "min_spare") ORR_RETURN_IF_ERROR(int_in(0, 1000000, &p.min_spare));
    else if (k == "lead") ORR_RETURN_IF_ERROR(int_in(1, 1000, &p.lead));
    else if (k == "keep") ORR_RETURN_IF_ERROR(int_in(0, 100000, &p.keep));
    else if (k == "idle") ORR_RETURN_IF_ERROR(int_in(0, 30 * 86400, &p.idle));
    else if (k == "forecaster") p.forecaster = v;
    else
      return MakeError("energy policy '" + spec + "': unknown parameter '" + k +
                       "' (expected period, history, future, his_thr, fut_thr, de_thr, buffer, buffer_frac, "
                       "min_spare, lead, keep, idle, forecaster)");
  }
  if (p.forecaster != "last" && p.forecaster != "seasonal-daily" && p.forecaster != "seasonal-weekly" &&
      p.forecaster != "xgboost")
    return bad("forecaster", "one of last, seasonal-daily, seasonal-weekly, xgboost", p.forecaster);
  return p;
}

Result<std::unique_ptr<PowerPlugin>> MakePowerPlugin(const std::string& spec, uint64_t seed, int64_t epoch_unix) {
  ORR_ASSIGN_OR_RETURN(CesParams p, ParseCesSpec(spec));
  ORR_ASSIGN_OR_RETURN(auto f, MakeNodeDemandForecaster(p.forecaster, seed));
  return std::unique_ptr<PowerPlugin>(new CesController(p, std::move(f), epoch_unix));
}

}  // namespace orrery
