#include "sched/plugins/ces.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>

#include "base/parse.h"
#include "predict/node_demand.h"
#include "sched/plugins/policies.h"
#include "sched/plugins/spec_args.h"

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

namespace {

// Defaults as in CesParams (the Helios artifact's, Venus' thresholds aside).
constexpr OptionSpec kCesOptions[] = {
    {"period", OptionType::kInt, "600", "control step and forecast bin (s)", 1, 86400},
    {"history", OptionType::kInt, "3", "steps in the \"demand is falling\" mean", 1, 1000},
    {"future", OptionType::kInt, "18", "forecast steps of the decrease rule", 1, 1000},
    {"his_thr", OptionType::kNumber, "0", "nodes: how much demand must have fallen before a decrease", -1e9, 1e9},
    {"fut_thr", OptionType::kNumber, "0", "nodes: how much lower the forecast must be before a decrease", -1e9, 1e9},
    {"de_thr", OptionType::kNumber, "2", "smallest decrease worth making (nodes)", 0, 1e9},
    {"buffer", OptionType::kInt, "1", "spare powered nodes per VC, at least", 0, 1000000},
    {"buffer_frac", OptionType::kNumber, "0.3", "... or this share of the VC's nodes, whichever is larger", 0, 1},
    {"min_spare", OptionType::kInt, "6", "power nodes up when fewer spare powered nodes remain", 0, 1000000},
    {"lead", OptionType::kInt, "6", "forecast bins the increase rule covers (at least the wake-up latency)", 1, 1000},
    {"keep", OptionType::kInt, "12", "steps without a decrease after an increase", 0, 100000},
    {"idle", OptionType::kInt, "0", "power down only nodes idle for at least this (s)", 0, 30 * 86400},
    {"forecaster", OptionType::kChoice, "seasonal-daily", "demand forecaster", 0, 0,
     "last|seasonal-daily|seasonal-weekly|xgboost"},
};

}  // namespace

Result<CesParams> ParseCesSpec(const std::string& spec) {
  const std::string name = spec.substr(0, spec.find(':'));
  if (name != "ces") return MakeError("unknown energy policy '" + name + "' (expected ces)");
  ORR_ASSIGN_OR_RETURN(SpecArgs a, SpecArgs::Parse(spec, "energy policy", {kCesOptions}));
  CesParams p;
  ORR_ASSIGN_OR_RETURN(p.period, a.Int("period"));
  ORR_ASSIGN_OR_RETURN(const int64_t history, a.Int("history"));
  ORR_ASSIGN_OR_RETURN(const int64_t future, a.Int("future"));
  ORR_ASSIGN_OR_RETURN(p.his_thr, a.Number("his_thr"));
  ORR_ASSIGN_OR_RETURN(p.fut_thr, a.Number("fut_thr"));
  ORR_ASSIGN_OR_RETURN(p.de_thr, a.Number("de_thr"));
  ORR_ASSIGN_OR_RETURN(const int64_t buffer, a.Int("buffer"));
  ORR_ASSIGN_OR_RETURN(p.buffer_frac, a.Number("buffer_frac"));
  ORR_ASSIGN_OR_RETURN(const int64_t min_spare, a.Int("min_spare"));
  ORR_ASSIGN_OR_RETURN(const int64_t lead, a.Int("lead"));
  ORR_ASSIGN_OR_RETURN(const int64_t keep, a.Int("keep"));
  ORR_ASSIGN_OR_RETURN(p.idle, a.Int("idle"));
  ORR_ASSIGN_OR_RETURN(p.forecaster, a.Choice("forecaster"));
  p.history = static_cast<int>(history);
  p.future = static_cast<int>(future);
  p.buffer = static_cast<int>(buffer);
  p.min_spare = static_cast<int>(min_spare);
  p.lead = static_cast<int>(lead);
  p.keep = static_cast<int>(keep);
  return p;
}

Result<std::unique_ptr<PowerPlugin>> MakePowerPlugin(const std::string& spec, uint64_t seed, int64_t epoch_unix) {
  ORR_ASSIGN_OR_RETURN(CesParams p, ParseCesSpec(spec));
  ORR_ASSIGN_OR_RETURN(auto f, MakeNodeDemandForecaster(p.forecaster, seed));
  return std::unique_ptr<PowerPlugin>(new CesController(p, std::move(f), epoch_unix));
}

}  // namespace orrery
