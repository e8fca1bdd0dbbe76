#include "sim/failure_model.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "model/trace.h"
#include "sched/plugins/policies.h"
#include "sched/plugins/recovery.h"

namespace orrery {

namespace {

// Llama 3 405B: 419 unexpected interruptions over 54 days on 2,048 nodes (16,384 GPUs).
constexpr double kLlamaInterruptions = 419;
constexpr double kLlamaHours = 54 * 24;
constexpr double kLlamaNodes = 2048;

double NodeRate(double share) { return share * kLlamaInterruptions / (kLlamaNodes * kLlamaHours); }

Status SetNumber(const std::string& key, const std::string& value, double lo, double hi, double* out) {
  double v = 0;
  const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || p != value.data() + value.size() || !(v >= lo && v <= hi))
    return MakeError("failure model key '" + key + "': expected a number in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "], got \"" + value + "\"");
  *out = v;
  return Status::Ok();
}

void Scale(FailureModel* m, double f) {
  for (double& r : m->node_per_hour) r *= f;
  m->framework_per_node_hour *= f;
  m->hang_per_node_hour *= f;
  m->loss_spike_per_hour *= f;
  m->script_weight *= f;
}

}  // namespace

double FailureModel::NodePerHour() const {
  double s = 0;
  for (double r : node_per_hour) s += r;
  return s;
}

FailureModel Llama3Model() {
  FailureModel m;
  m.name = "llama3";
  // Shares of the 419 unexpected interruptions (docs/design/failures.md): GPU 30.1 %, HBM3 17.2 %
  // and network 8.4 % from the paper; the rest of the 78 % hardware split as documented there.
  m.node_per_hour[static_cast<int>(FaultCause::kGpu)] = NodeRate(0.301);
  m.node_per_hour[static_cast<int>(FaultCause::kHbm)] = NodeRate(0.172);
  m.node_per_hour[static_cast<int>(FaultCause::kNvlink)] = NodeRate(0.045);
  m.node_per_hour[static_cast<int>(FaultCause::kNic)] = NodeRate(0.084 + 0.017);
  m.node_per_hour[static_cast<int>(FaultCause::kHost)] = NodeRate(0.78 - 0.301 - 0.172 - 0.045 - 0.101);
  m.framework_per_node_hour = NodeRate(0.22 - 0.017);
  m.hang_per_node_hour = NodeRate(0.017);
  m.loss_spike_per_hour = 0;  // not an interruption in Llama 3's table
  m.persist_probability = 0.2;
  m.recur_factor = 20;
  m.repair = 3 * 86400;
  m.rollback = 1800;
  return m;
}

FailureModel AcmeModel() {
  FailureModel m;
  m.name = "acme";
  // Calibrated on Acme's aggregate (11 % of failed jobs / 82 % of failed GPU time are
  // infrastructure) with the acme-seren preset, checked on acme-kalos (docs/design/failures.md).
  // Fitted by a grid search over (node, software, script weight, script shape) on both presets
  // (seed 1), minimising the squared distance to (11 %, 82 %) on each.
  const double node = 5.623e-3;      // infrastructure per node-hour, split like Llama 3's hardware mix
  const double software = 1.0e-3;    // framework + hangs per node-hour, split like Llama 3's software mix
  const FailureModel l = Llama3Model();
  const double lsum = l.NodePerHour(), ssum = l.framework_per_node_hour + l.hang_per_node_hour;
  for (int c = 0; c < kNumNodeCauses; ++c) m.node_per_hour[c] = node * l.node_per_hour[c] / lsum;
  m.framework_per_node_hour = software * l.framework_per_node_hour / ssum;
  m.hang_per_node_hour = software * l.hang_per_node_hour / ssum;
  m.script_weight = 0.010772;  // x shape 0.2 / scale 1 h: hazard 0.0021544 t^-0.8 per hour
  m.script_shape = 0.2;
  m.script_scale_h = 1.0;
  // A cluster with spare parts on site: a part swap and its diagnostics take under a day
  // (docs/design/failures.md, "Repair or reboot").
  m.repair = 86400;
  return m;
}

Result<FailureModel> MakeFailureModel(const std::string& spec) {
  Result<PluginSpec> s = ParsePluginSpec(spec, "failure model");
  if (!s) return s.error();
  FailureModel m;
  if (s->name == "llama3") m = Llama3Model();
  else if (s->name == "acme") m = AcmeModel();
  else return MakeError("unknown failure model '" + s->name + "' (choices: llama3, acme)");
  for (const auto& [k, v] : s->params) {
    double x = 0;
    if (k == "scale") {
      ORR_RETURN_IF_ERROR(SetNumber(k, v, 0, 1000, &x));
      Scale(&m, x);
    } else if (k == "loss_spikes_per_day") {
      ORR_RETURN_IF_ERROR(SetNumber(k, v, 0, 1000, &x));
      m.loss_spike_per_hour = x / 24;
    } else if (k == "persist") {
      ORR_RETURN_IF_ERROR(SetNumber(k, v, 0, 1, &m.persist_probability));
    } else if (k == "recur") {
      ORR_RETURN_IF_ERROR(SetNumber(k, v, 1, 1e6, &m.recur_factor));
    } else if (k == "repair_share") {
      ORR_RETURN_IF_ERROR(SetNumber(k, v, 0, 1, &m.repair_share));
    } else if (k == "repair" || k == "rollback" || k == "reboot") {
      Result<Duration> d = ParseDurationText(v);
      if (!d) return d.error().With("failure model key '" + k + "'");
      (k == "repair" ? m.repair : k == "reboot" ? m.reboot : m.rollback) = *d;
    } else {
      return MakeError("failure model '" + s->name + "': unknown key '" + k +
                       "' (keys: scale, loss_spikes_per_day, persist, recur, repair, repair_share, reboot, rollback)");
    }
  }
  return m;
}

Duration CordonDuration(const FailureModel& m, Rng& rng) { return rng.Uniform() < m.repair_share ? m.repair : m.reboot; }

std::array<double, kNumFaultCauses> CauseHazards(const FailureModel& m, double nodes, double hours) {
  std::array<double, kNumFaultCauses> h{};
  for (int c = 0; c < kNumNodeCauses; ++c) h[c] = m.node_per_hour[c] * nodes;
  h[static_cast<int>(FaultCause::kFramework)] = m.framework_per_node_hour * nodes;
  h[static_cast<int>(FaultCause::kHang)] = m.hang_per_node_hour * nodes;
  h[static_cast<int>(FaultCause::kLossSpike)] = m.loss_spike_per_hour;
  if (m.script_weight > 0) {
    const double t = std::max(hours, 1.0 / 3600) / m.script_scale_h;  // at least one second in
    h[static_cast<int>(FaultCause::kScript)] =
        m.script_weight * m.script_shape / m.script_scale_h * std::pow(t, m.script_shape - 1);
  }
  return h;
}

std::array<double, kNumFailureCategories> CategoryPosterior(const FailureModel& m, const Job& job,
                                                           uint32_t gpus_per_node) {
  std::array<double, kNumFailureCategories> by{};
  if (job.state == JobState::kNodeFail) {
    by[static_cast<int>(FailureCategory::kInfrastructure)] = 1;
    return by;
  }
  const double per = std::max<uint32_t>(gpus_per_node, 1);
  const double nodes = std::max(1.0, std::ceil(static_cast<double>(job.gpus) / per));
  const double hours = static_cast<double>(std::max<Duration>(job.duration, 0)) / 3600.0;
  const std::array<double, kNumFaultCauses> h = CauseHazards(m, nodes, hours);
  for (int c = 0; c < kNumFaultCauses; ++c) by[static_cast<int>(CategoryOf(static_cast<FaultCause>(c)))] += h[c];
  const double total = by[0] + by[1] + by[2];
  if (total <= 0) return {0, 0, 1};  // a model without hazards: the job's own error
  for (double& p : by) p /= total;
  return by;
}

FailureCategory AttributeFailure(const FailureModel& m, const Job& job, uint32_t gpus_per_node, Rng& rng) {
  const std::array<double, kNumFailureCategories> p = CategoryPosterior(m, job, gpus_per_node);
  double u = rng.Uniform();
  for (int k = 0; k < kNumFailureCategories - 1; ++k) {
    if (u < p[k]) return static_cast<FailureCategory>(k);
    u -= p[k];
  }
  return FailureCategory::kScript;
}

FailureBreakdown AttributeTrace(const Trace& trace, const FailureModel& m, uint32_t gpus_per_node, uint64_t seed) {
  FailureBreakdown b;
  Rng rng(seed, "failures/attribution");
  for (const Job& j : trace.jobs) {
    if (j.gpus == 0) continue;
    const double gs = static_cast<double>(j.gpus) * static_cast<double>(std::max<Duration>(j.duration, 0));
    ++b.jobs;
    b.gpu_seconds += gs;
    if (j.state != JobState::kFailed && j.state != JobState::kNodeFail) continue;
    const std::array<double, kNumFailureCategories> p = CategoryPosterior(m, j, gpus_per_node);
    for (int k = 0; k < kNumFailureCategories; ++k) {
      b.expected_jobs[k] += p[k];
      b.expected_gpu_seconds[k] += p[k] * gs;
    }
    const int c = static_cast<int>(AttributeFailure(m, j, gpus_per_node, rng));
    ++b.failed;
    b.failed_gpu_seconds += gs;
    ++b.by_category[c];
    b.gpu_seconds_by_category[c] += gs;
  }
  return b;
}

}  // namespace orrery
