#include "analysis/sim_output.h"

#include <cmath>
#include <cstdio>

#include "base/io.h"

namespace orrery {

namespace {

void AppendInt(std::string& b, int64_t v) {
  char buf[24];
  int n = std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  b.append(buf, static_cast<size_t>(n));
}
void AppendFixed(std::string& b, double v, int digits) {
  char buf[64];
  int n = std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  b.append(buf, static_cast<size_t>(n));
}
const char* StatusName(OutcomeStatus s) {
  switch (s) {
    case OutcomeStatus::kFinished: return "finished";
    case OutcomeStatus::kUnfinished: return "unfinished";
    case OutcomeStatus::kRejected: return "rejected";
    case OutcomeStatus::kSkipped: return "skipped";
    case OutcomeStatus::kFailed: return "failed";
    case OutcomeStatus::kWithdrawn: return "withdrawn";
    case OutcomeStatus::kPreempted: return "preempted";
  }
  return "?";
}
double Round(double v, int digits) {
  double m = std::pow(10.0, digits);
  return std::round(v * m) / m;
}
void AppendCsvField(std::string& b, std::string_view s) {
  if (s.find_first_of(",\"\n") == std::string_view::npos) {
    b.append(s);
    return;
  }
  b.push_back('"');
  for (char c : s) {
    if (c == '"') b.push_back('"');
    b.push_back(c);
  }
  b.push_back('"');
}

}  // namespace

std::string_view OutcomeStatusName(OutcomeStatus s) { return StatusName(s); }

Status WriteJobsCsv(const std::string& path, const Trace& trace, const std::vector<JobOutcome>& outcomes,
                    const std::vector<std::string>& vc_names, const std::vector<std::string>& reasons) {
  ORR_ASSIGN_OR_RETURN(auto f, AtomicFile::Create(path));
  std::string& b = f->buffer();
  b += "job_id,source_id,vc,gpus,gpu_milli,submit,start,end,queue_delay,jct,bounded_slowdown,run,preemptions,status,reason\n";
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const JobOutcome& o = outcomes[i];
    AppendInt(b, static_cast<int64_t>(i));
    b.push_back(',');
    if (i < trace.source_ids.size()) AppendCsvField(b, trace.source_ids[i]);
    b.push_back(',');
    if (o.vc.valid() && o.vc.v < vc_names.size()) {
      AppendCsvField(b, vc_names[o.vc.v]);
    } else if (i < trace.jobs.size() && trace.jobs[i].vc.valid() && trace.jobs[i].vc.v < trace.vcs.size()) {
      AppendCsvField(b, trace.vcs.Get(trace.jobs[i].vc.v));  // not run: the trace's own VC label
    }
    b.push_back(',');
    AppendInt(b, o.gpus);
    b.push_back(',');
    AppendInt(b, o.gpu_milli);
    b.push_back(',');
    const Time submit = i < trace.jobs.size() ? trace.jobs[i].submit : 0;
    AppendInt(b, submit);
    b.push_back(',');
    if (o.status == OutcomeStatus::kFinished) {
      AppendInt(b, o.start);
      b.push_back(',');
      AppendInt(b, o.end);
      b.push_back(',');
      AppendInt(b, o.wait);
      b.push_back(',');
      AppendInt(b, o.end - submit);
      b.push_back(',');
      AppendFixed(b, std::max(1.0, static_cast<double>(o.end - submit) /
                                       static_cast<double>(std::max<Duration>(o.run, kSlowdownTau))),
                  4);
      b.push_back(',');
      AppendInt(b, o.run);
    } else if (o.status == OutcomeStatus::kWithdrawn || o.status == OutcomeStatus::kPreempted) {
      // Cancelled while pending (start = end = the cancel; no run) or ended by a preemption
      // (the time it ran): no JCT, no slowdown.
      AppendInt(b, o.start);
      b.push_back(',');
      AppendInt(b, o.end);
      b.push_back(',');
      AppendInt(b, o.wait);
      b += ",,,";
      if (o.status == OutcomeStatus::kPreempted) AppendInt(b, o.run);
    } else {
      b += ",,,,,";
    }
    b.push_back(',');
    AppendInt(b, o.preemptions);
    b.push_back(',');
    b += StatusName(o.status);
    b.push_back(',');
    if (o.status == OutcomeStatus::kRejected || o.status == OutcomeStatus::kSkipped)
      AppendCsvField(b, o.reject_reason < reasons.size() ? reasons[o.reject_reason] : "");
    b.push_back('\n');
    f->MaybeFlush();
  }
  return f->Commit();
}

Status WriteAttemptsCsv(const std::string& path, const Trace& trace, const AttemptLog& log, const Cluster& cluster) {
  ORR_ASSIGN_OR_RETURN(auto f, AtomicFile::Create(path));
  std::string& b = f->buffer();
  b += "job_id,source_id,attempt,start,end,run,gpus,nodes,steps_done,steps_durable,cause,failure,restartable\n";
  for (const Attempt& a : log.attempts) {
    AppendInt(b, a.job.v);
    b.push_back(',');
    if (a.job.v < trace.source_ids.size()) AppendCsvField(b, trace.source_ids[a.job.v]);
    for (int64_t v : {static_cast<int64_t>(a.index), a.start, a.end, a.end - a.start, static_cast<int64_t>(a.gpus)}) {
      b.push_back(',');
      AppendInt(b, v);
    }
    b.push_back(',');
    std::string nodes;
    for (uint32_t i = 0; i < a.node_count; ++i) {
      const NodeId n = log.nodes[a.nodes_at + i];
      if (i) nodes.push_back(' ');
      nodes += n.v < cluster.nodes.size() && !cluster.nodes[n.v].name.empty() ? cluster.nodes[n.v].name
                                                                               : std::to_string(n.v);
    }
    AppendCsvField(b, nodes);
    b.push_back(',');
    AppendInt(b, a.steps_done);
    b.push_back(',');
    AppendInt(b, a.steps_durable);
    b.push_back(',');
    b += EndCauseName(a.cause);
    b.push_back(',');
    b += FailureKindName(a.failure);
    b.push_back(',');
    b += a.cause == EndCause::kFailed ? (a.restartable ? "true" : "false") : "";
    b.push_back('\n');
    f->MaybeFlush();
  }
  return f->Commit();
}

Status WriteTimeSeriesCsv(const std::string& path, const std::vector<TimeSample>& samples, uint64_t total_gpus,
                          const std::vector<uint32_t>* powered_nodes) {
  ORR_ASSIGN_OR_RETURN(auto f, AtomicFile::Create(path));
  std::string& b = f->buffer();
  b += powered_nodes ? "time,busy_gpus,utilization,running_jobs,pending_jobs,pending_gpus,powered_nodes\n"
                     : "time,busy_gpus,utilization,running_jobs,pending_jobs,pending_gpus\n";
  for (size_t i = 0; i < samples.size(); ++i) {
    const TimeSample& s = samples[i];
    AppendInt(b, s.t);
    b.push_back(',');
    AppendFixed(b, static_cast<double>(s.busy_gpu_milli) / 1000.0, 3);
    b.push_back(',');
    AppendFixed(b, total_gpus ? static_cast<double>(s.busy_gpu_milli) / 1000.0 / static_cast<double>(total_gpus) : 0.0, 4);
    b.push_back(',');
    AppendInt(b, s.running);
    b.push_back(',');
    AppendInt(b, s.pending);
    b.push_back(',');
    AppendFixed(b, static_cast<double>(s.pending_gpu_milli) / 1000.0, 3);
    if (powered_nodes) {
      b.push_back(',');
      AppendInt(b, i < powered_nodes->size() ? (*powered_nodes)[i] : 0);
    }
    b.push_back('\n');
    f->MaybeFlush();
  }
  return f->Commit();
}

namespace {
nlohmann::ordered_json DistJson(const Distribution& d) {
  nlohmann::ordered_json j;
  j["mean"] = Round(d.mean, 3);
  j["median"] = Round(d.median, 3);
  j["p95"] = Round(d.p95, 3);
  j["p99"] = Round(d.p99, 3);
  j["p99.9"] = Round(d.p999, 3);
  j["max"] = Round(d.max, 3);
  return j;
}
nlohmann::ordered_json GroupJson(const GroupStats& g) {
  nlohmann::ordered_json j;
  j["name"] = g.name;
  j["jobs"] = g.jobs;
  j["jct_s"] = DistJson(g.jct);
  j["queue_delay_s"] = DistJson(g.wait);
  j["bounded_slowdown"] = DistJson(g.slowdown);
  j["gpu_hours"] = Round(g.gpu_hours, 3);
  return j;
}
}  // namespace

nlohmann::ordered_json EnergyToJson(const EnergyStats& e) {
  nlohmann::ordered_json j;
  j["spec"] = e.spec;
  j["wake_latency_s"] = e.wake_latency;
  j["resume_failure"] = e.resume_failure;
  j["nodes"] = e.nodes;
  j["seconds"] = Round(e.seconds, 3);
  j["node_hours"] = {{"on", Round(e.node_s_on / 3600, 3)},
                     {"booting", Round(e.node_s_booting / 3600, 3)},
                     {"off", Round(e.node_s_off / 3600, 3)},
                     {"used", Round(e.node_s_used / 3600, 3)}};
  j["powered_nodes"] = {{"min", e.min_powered},
                        {"max", e.max_powered},
                        {"mean", Round(e.seconds > 0 ? (e.node_s_on + e.node_s_booting) / e.seconds : 0, 3)}};
  j["node_utilization"] = {{"powered", Round(e.node_util_powered(), 6)}, {"all", Round(e.node_util_all(), 6)}};
  j["gpu_utilization"] = {{"powered", Round(e.gpu_util_powered(), 6)}, {"all", Round(e.gpu_util_all(), 6)}};
  if (e.power_known) {
    j["energy_kwh"] = {{"used", Round(e.energy_kwh(), 3)},
                       {"all_on", Round(e.baseline_kwh(), 3)},
                       {"saved", Round(e.saved_kwh(), 3)},
                       {"saved_share", Round(e.saved_share(), 6)}};
  } else {
    j["energy_kwh"] = nullptr;  // some node has no power model
  }
  j["power_changes"] = {{"power_ups", e.power_ups},       {"power_downs", e.power_downs},
                        {"demand_wakes", e.demand_wakes}, {"failed_resumes", e.failed_resumes},
                        {"refused_power_downs", e.refused_downs}};
  j["wake_delays"] = {{"jobs_started", e.jobs_started},
                      {"jobs_delayed", e.jobs_delayed},
                      {"delayed_share", Round(e.delayed_share(), 6)},
                      {"extra_queue_s_total", Round(e.delay_sum_s, 3)},
                      {"extra_queue_s_mean_delayed", Round(e.jobs_delayed ? e.delay_sum_s / e.jobs_delayed : 0, 3)},
                      {"extra_queue_s_max", Round(e.delay_max_s, 3)}};
  j["forecast"] = {{"forecaster", e.forecaster},
                   {"trainings", e.forecaster_trainings},
                   {"points", e.forecast_n},
                   {"mae_nodes", Round(e.forecast_mae, 4)},
                   {"rmse_nodes", Round(e.forecast_rmse, 4)},
                   {"mape_pct", Round(e.forecast_mape_pct, 3)},
                   {"smape_pct", Round(e.forecast_smape_pct, 3)}};
  return j;
}

nlohmann::ordered_json SummaryToJson(const RunSummary& s) {
  nlohmann::ordered_json j;
  j["policy"] = s.policy;
  j["placer"] = s.placer;
  j["uses_oracle_durations"] = s.oracle;
  j["jobs"] = {{"total", s.jobs}, {"finished", s.finished}, {"rejected", s.rejected}, {"skipped", s.skipped},
               {"unfinished", s.unfinished}};
  if (s.failed > 0) j["jobs"]["failed"] = s.failed;  // only runs with failures have the key
  if (s.withdrawn > 0) j["jobs"]["withdrawn"] = s.withdrawn;  // only runs with --renege
  if (s.preempted > 0) j["jobs"]["preempted"] = s.preempted;  // only policies that cancel by preemption
  j["preemptions"] = s.preemptions;
  j["jct_s"] = DistJson(s.jct);
  j["queue_delay_s"] = DistJson(s.wait);
  j["bounded_slowdown"] = DistJson(s.slowdown);
  j["makespan_s"] = s.makespan;
  j["gpu_utilization"] = Round(s.gpu_utilization, 6);
  j["gpu_hours"] = Round(s.gpu_hours, 3);
  j["cluster_gpus"] = s.total_gpus;
  j["small_jobs"] = GroupJson(s.small);
  j["large_jobs"] = GroupJson(s.large);
  nlohmann::ordered_json vcs = nlohmann::ordered_json::array();
  for (const auto& g : s.per_vc) vcs.push_back(GroupJson(g));
  j["per_vc"] = vcs;
  if (!s.per_account.empty()) {  // only traces that record accounts have the key
    nlohmann::ordered_json accounts = nlohmann::ordered_json::array();
    for (const auto& g : s.per_account) accounts.push_back(GroupJson(g));
    j["per_account"] = accounts;
  }
  nlohmann::ordered_json reasons = nlohmann::ordered_json::object();
  for (const auto& [why, n] : s.not_run_reasons) reasons[why] = n;
  j["not_run_reasons"] = reasons;
  if (s.has_energy) j["energy"] = EnergyToJson(s.energy);
  return j;
}

namespace {
std::string Human(double seconds) {
  char buf[32];
  if (seconds < 100) std::snprintf(buf, sizeof buf, "%.1f s", seconds);
  else if (seconds < 100 * 60) std::snprintf(buf, sizeof buf, "%.1f min", seconds / 60);
  else if (seconds < 48 * 3600) std::snprintf(buf, sizeof buf, "%.2f h", seconds / 3600);
  else std::snprintf(buf, sizeof buf, "%.2f d", seconds / 86400);
  return buf;
}
}  // namespace

std::string FormatSummaryTable(const std::vector<RunSummary>& runs) {
  std::vector<std::pair<std::string, std::vector<std::string>>> rows;
  auto row = [&](const std::string& name, auto f) {
    std::vector<std::string> cells;
    for (const auto& r : runs) cells.push_back(f(r));
    rows.emplace_back(name, cells);
  };
  auto num = [](double v, const char* fmt) {
    char buf[48];
    std::snprintf(buf, sizeof buf, fmt, v);
    return std::string(buf);
  };
  row("policy", [](const RunSummary& r) { return r.policy + (r.oracle ? " *" : ""); });
  row("jobs finished", [&](const RunSummary& r) { return num(static_cast<double>(r.finished), "%.0f"); });
  row("not run (rejected/skipped)", [&](const RunSummary& r) {
    return num(static_cast<double>(r.rejected), "%.0f") + "/" + num(static_cast<double>(r.skipped), "%.0f");
  });
  row("avg JCT", [&](const RunSummary& r) { return Human(r.jct.mean); });
  row("median JCT", [&](const RunSummary& r) { return Human(r.jct.median); });
  row("p99 JCT", [&](const RunSummary& r) { return Human(r.jct.p99); });
  row("avg queueing delay", [&](const RunSummary& r) { return Human(r.wait.mean); });
  row("p99 queueing delay", [&](const RunSummary& r) { return Human(r.wait.p99); });
  row("p99.9 queueing delay", [&](const RunSummary& r) { return Human(r.wait.p999); });
  row("avg bounded slowdown", [&](const RunSummary& r) { return num(r.slowdown.mean, "%.2f"); });
  row("avg queue small (<=8 GPU)", [&](const RunSummary& r) { return Human(r.small.wait.mean); });
  row("avg queue large (>8 GPU)", [&](const RunSummary& r) { return Human(r.large.wait.mean); });
  row("preemptions", [&](const RunSummary& r) { return num(static_cast<double>(r.preemptions), "%.0f"); });
  bool any_preempted = false;
  for (const auto& r : runs) any_preempted |= r.preempted > 0;
  if (any_preempted)
    row("jobs cancelled by preemption", [&](const RunSummary& r) { return num(static_cast<double>(r.preempted), "%.0f"); });
  bool any_failures = false;
  for (const auto& r : runs) any_failures |= r.has_failures;
  if (any_failures) {
    row("jobs failed / cancelled", [&](const RunSummary& r) {
      return r.has_failures ? num(static_cast<double>(r.failed), "%.0f") + " / " + num(static_cast<double>(r.cancelled), "%.0f")
                            : std::string("-");
    });
    row("cordoned node-hours", [&](const RunSummary& r) {
      return r.has_failures ? num(r.cordoned_node_hours, "%.0f") + num(100 * r.cordoned_capacity_share, " (%.1f %%)")
                            : std::string("-");
    });
  }
  row("GPU utilization", [&](const RunSummary& r) { return num(100 * r.gpu_utilization, "%.1f %%"); });
  row("makespan", [&](const RunSummary& r) { return Human(static_cast<double>(r.makespan)); });
  bool any_energy = false;
  for (const auto& r : runs) any_energy |= r.has_energy;
  if (any_energy) {
    auto e = [&](const char* name, auto f) {
      row(name, [&](const RunSummary& r) { return r.has_energy ? f(r.energy) : std::string("-"); });
    };
    e("node util powered / all", [&](const EnergyStats& x) {
      return num(100 * x.node_util_powered(), "%.1f") + " / " + num(100 * x.node_util_all(), "%.1f %%");
    });
    e("GPU util powered / all", [&](const EnergyStats& x) {
      return num(100 * x.gpu_util_powered(), "%.1f") + " / " + num(100 * x.gpu_util_all(), "%.1f %%");
    });
    e("powered-off node-hours", [&](const EnergyStats& x) { return num(x.node_hours_off(), "%.0f"); });
    e("energy used / saved", [&](const EnergyStats& x) {
      return x.power_known ? num(x.energy_kwh(), "%.0f") + " / " + num(x.saved_kwh(), "%.0f kWh") +
                                 num(100 * x.saved_share(), " (%.1f %%)")
                           : std::string("no power model");
    });
    e("jobs delayed by wake-ups", [&](const EnergyStats& x) {
      return num(static_cast<double>(x.jobs_delayed), "%.0f") + num(100 * x.delayed_share(), " (%.2f %%)");
    });
    e("extra queue per delayed job", [&](const EnergyStats& x) {
      return Human(x.jobs_delayed ? x.delay_sum_s / static_cast<double>(x.jobs_delayed) : 0);
    });
    e("power-state changes", [&](const EnergyStats& x) {
      return num(static_cast<double>(x.power_ups + x.power_downs), "%.0f") +
             num(static_cast<double>(x.demand_wakes), " (%.0f on demand)");
    });
    e("forecast MAE / SMAPE", [&](const EnergyStats& x) {
      return num(x.forecast_mae, "%.2f nodes") + num(x.forecast_smape_pct, " / %.1f %%");
    });
  }
  size_t w0 = 0;
  for (auto& [n, c] : rows) w0 = std::max(w0, n.size());
  std::vector<size_t> w(runs.size(), 0);
  for (auto& [n, c] : rows)
    for (size_t i = 0; i < c.size(); ++i) w[i] = std::max(w[i], c[i].size());
  std::string out;
  for (size_t r = 0; r < rows.size(); ++r) {
    auto& [n, c] = rows[r];
    out += n + std::string(w0 - n.size() + 2, ' ');
    for (size_t i = 0; i < c.size(); ++i) out += std::string(w[i] - c[i].size() + 2, ' ') + c[i];
    out += "\n";
    if (r == 0) {
      size_t total = w0 + 2;
      for (size_t x : w) total += x + 2;
      out += std::string(total, '-') + "\n";
    }
  }
  bool any_oracle = false;
  for (const auto& r : runs) any_oracle |= r.oracle;
  if (any_oracle) out += "* reads true job durations (oracle)\n";
  return out;
}

std::string FormatVcTable(const RunSummary& run) {
  std::string out = "VC            jobs   avg JCT      avg queue    p99 queue\n";
  char buf[160];
  for (const auto& g : run.per_vc) {
    std::snprintf(buf, sizeof buf, "%-12s %6llu  %-11s  %-11s  %-11s\n", g.name.c_str(),
                  static_cast<unsigned long long>(g.jobs), Human(g.jct.mean).c_str(), Human(g.wait.mean).c_str(),
                  Human(g.wait.p99).c_str());
    out += buf;
  }
  return out;
}

}  // namespace orrery
