#include "analysis/report.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "base/io.h"
#include "base/json_text.h"

namespace orrery {
namespace {

using json = nlohmann::ordered_json;

std::vector<std::string> SplitCsv(std::string_view line) {
  std::vector<std::string> out;
  std::string cur;
  bool q = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (q) {
      if (ch == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          cur += '"';
          ++i;
        } else {
          q = false;
        }
      } else {
        cur += ch;
      }
    } else if (ch == '"') {
      q = true;
    } else if (ch == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (ch != '\r') {
      cur += ch;
    }
  }
  out.push_back(cur);
  return out;
}

// Reads a CSV file with a header; calls row(fields) with columns found by name.
Status ReadCsv(const std::string& path, const std::vector<std::string>& want,
               const std::function<Status(const std::vector<std::string>&)>& row) {
  auto text = ReadFile(path);
  if (!text) return text.error();
  std::string_view s = *text;
  size_t pos = 0, line_no = 0;
  std::vector<int> idx;
  while (pos < s.size()) {
    size_t nl = s.find('\n', pos);
    if (nl == std::string_view::npos) nl = s.size();
    std::string_view line = s.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (line.empty()) continue;
    auto f = SplitCsv(line);
    if (idx.empty()) {
      for (const auto& w : want) {
        auto it = std::find(f.begin(), f.end(), w);
        if (it == f.end()) return Error{path + ": header has no column '" + w + "'"};
        idx.push_back(static_cast<int>(it - f.begin()));
      }
      continue;
    }
    std::vector<std::string> v;
    for (int i : idx) {
      if (static_cast<size_t>(i) >= f.size()) return Error{path + ":" + std::to_string(line_no) + ": too few fields"};
      v.push_back(f[i]);
    }
    if (Status st = row(v); !st.ok()) return Error{path + ":" + std::to_string(line_no) + ": " + st.error().message};
  }
  if (idx.empty()) return Error{path + ": empty file"};
  return Status::Ok();
}

bool ToDouble(const std::string& s, double* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end && *end == '\0';
}

std::string Base(const std::string& dir) {
  std::filesystem::path p(dir);
  if (p.filename().empty()) p = p.parent_path();
  return p.filename().string();
}

}  // namespace

std::string PolicySlug(const std::string& policy) {
  std::string out;
  for (char ch : policy) {
    if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_')
      out += ch;
    else if (ch == ':' || ch == ',' || ch == '=')
      out += '_';
    if (out.size() == 60) break;
  }
  return out;
}

static Result<std::vector<LoadedRun>> LoadRunsUnguarded(const std::vector<std::string>& dirs, const RunReportOptions& opt) {
  std::vector<LoadedRun> runs;
  for (const auto& dir : dirs) {
    auto text = ReadFile(dir + "/summary.json");
    if (!text) return Error{dir + ": not a simulation output folder (no readable summary.json): " + text.error().message};
    ORR_ASSIGN_OR_RETURN(json sum, ParseJson(*text, dir + "/summary.json"));
    if (!sum.contains("runs") || !sum["runs"].is_array()) return Error{dir + "/summary.json: no \"runs\" array"};
    for (const auto& r : sum["runs"]) {
      LoadedRun run;
      run.summary = r;
      run.scenario = sum.value("scenario", "");
      run.cluster = sum.value("cluster", "");
      std::string policy = r.value("policy", "");
      run.label = dirs.size() > 1 ? Base(dir) + ": " + policy : policy;
      std::string spec = policy;
      const std::string compat = " (helios-compat)";
      if (spec.size() > compat.size() && spec.compare(spec.size() - compat.size(), compat.size(), compat) == 0)
        spec.resize(spec.size() - compat.size());
      run.dir = dir + "/" + PolicySlug(spec);
      Status st = ReadCsv(run.dir + "/jobs.csv", {"gpus", "jct", "queue_delay", "status"},
                          [&](const std::vector<std::string>& f) -> Status {
                            if (f[3] != "finished") return Status::Ok();
                            double g, jct, q;
                            if (!ToDouble(f[0], &g) || !ToDouble(f[1], &jct) || !ToDouble(f[2], &q))
                              return Error{"bad number in a finished job's row"};
                            run.jct.push_back(jct);
                            run.queue.push_back(q);
                            (g > 8 ? run.jct_large : run.jct_small).push_back(jct);
                            return Status::Ok();
                          });
      if (!st.ok()) return st.error();
      std::vector<RunTimePoint> raw;
      st = ReadCsv(run.dir + "/timeseries.csv", {"time", "busy_gpus", "utilization", "pending_jobs", "pending_gpus"},
                   [&](const std::vector<std::string>& f) -> Status {
                     RunTimePoint p;
                     if (!ToDouble(f[0], &p.time) || !ToDouble(f[1], &p.busy_gpus) || !ToDouble(f[2], &p.utilization) ||
                         !ToDouble(f[3], &p.pending_jobs) || !ToDouble(f[4], &p.pending_gpus))
                       return Error{"bad number"};
                     raw.push_back(p);
                     return Status::Ok();
                   });
      if (!st.ok()) return st.error();
      // Downsample: average consecutive samples into at most max_time_points bins.
      const size_t per = std::max<size_t>(1, (raw.size() + opt.max_time_points - 1) / std::max<size_t>(1, opt.max_time_points));
      for (size_t i = 0; i < raw.size(); i += per) {
        RunTimePoint a;
        a.time = raw[i].time;
        const size_t n = std::min(per, raw.size() - i);
        for (size_t k = i; k < i + n; ++k) {
          a.busy_gpus += raw[k].busy_gpus / static_cast<double>(n);
          a.utilization += raw[k].utilization / static_cast<double>(n);
          a.pending_gpus += raw[k].pending_gpus / static_cast<double>(n);
          a.pending_jobs += raw[k].pending_jobs / static_cast<double>(n);
        }
        run.series.push_back(a);
      }
      if (r.contains("energy")) {
        std::vector<std::pair<double, double>> pw;
        st = ReadCsv(run.dir + "/timeseries.csv", {"time", "powered_nodes"}, [&](const std::vector<std::string>& f) -> Status {
          double t, p;
          if (!ToDouble(f[0], &t) || !ToDouble(f[1], &p)) return Error{"bad number"};
          pw.emplace_back(t, p);
          return Status::Ok();
        });
        if (!st.ok()) return st.error();
        for (size_t i = 0; i < pw.size(); i += per) {
          const size_t n = std::min(per, pw.size() - i);
          double m = 0;
          for (size_t k = i; k < i + n; ++k) m += pw[k].second / static_cast<double>(n);
          run.powered.emplace_back(pw[i].first, m);
        }
      }
      for (auto* v : {&run.jct, &run.queue, &run.jct_small, &run.jct_large}) std::sort(v->begin(), v->end());
      runs.push_back(std::move(run));
    }
  }
  if (runs.empty()) return Error{"no runs found in the given folders"};
  return runs;
}

// A summary.json value of the wrong JSON type is an error of that folder, never an exception.
Result<std::vector<LoadedRun>> LoadRuns(const std::vector<std::string>& dirs, const RunReportOptions& opt) {
  return ReadJsonGuarded("summary.json", [&] { return LoadRunsUnguarded(dirs, opt); });
}

namespace {

// Runs with failures (summary.json "failures", `simulate --failures`): GPU-hours lost by cause
// per run (stacked bars) and the failure counts; absent when no run had failures.
void AddFailuresSection(const std::vector<LoadedRun>& runs, report::Page* page) {
  const json order = page->series;
  report::Section s;
  s.title = "Failures and recovery";
  s.text = "Runs with injected failures (simulate --failures; docs/design/failures.md): GPU time lost per "
           "cause, from the failed attempts (attempts.csv). Lost work: steps since the last durable checkpoint; "
           "restart overhead: running that did no new work (held from the fault to the recovery's decision, "
           "checkpoint restore, stalls); waiting: pending between a failure and the next start.";
  report::Chart c;
  c.id = "failure_gpu_hours";
  c.title = "GPU-hours lost to failures, by cause";
  report::Table t{"failures", "Failures and recovery", {"metric"}, {}};
  std::vector<const LoadedRun*> with;
  for (const auto& r : runs)
    if (r.summary.contains("failures") && r.summary["failures"].is_object()) with.push_back(&r);
  if (with.empty()) return;
  const char* causes[][2] = {{"lost_work_gpu_hours", "lost work"},
                             {"overhead_gpu_hours", "restart overhead"},
                             {"waiting_gpu_hours", "waiting for nodes"}};
  for (const LoadedRun* r : with) {
    t.header.push_back(r->label);
    const json& f = r->summary["failures"];
    if (!f.contains("metrics")) continue;
    for (const auto& [key, name] : causes)
      c.data.push_back(json{{"policy", r->label}, {"cause", name}, {"gpu_hours", f["metrics"].value(key, 0.0)}});
  }
  const auto row = [&](const std::string& name, auto fn) {
    std::vector<std::string> cells{name};
    for (const LoadedRun* r : with) cells.push_back(fn(r->summary["failures"]));
    t.rows.push_back(cells);
  };
  const auto count = [](const json& f, const char* k) { return std::to_string(f.value(k, 0ull)); };
  const auto metric = [](const json& f, const char* k) { return f.contains("metrics") ? f["metrics"].value(k, 0.0) : 0.0; };
  row("failure source / recovery", [](const json& f) { return f.value("spec", "") + " / " + f.value("recovery", ""); });
  row("failures injected", [&](const json& f) { return count(f, "injected"); });
  row("retried automatically", [&](const json& f) { return count(f, "retried"); });
  row("not retried", [&](const json& f) { return count(f, "not_retried"); });
  for (const char* cat : {"infrastructure", "framework", "script"})
    row(std::string("  ") + cat, [&](const json& f) {
      return f.contains("by_category") ? std::to_string(f["by_category"].value(cat, 0ull)) : std::string("—");
    });
  row("nodes cordoned", [&](const json& f) { return count(f, "cordoned_nodes"); });
  for (const auto& cause : causes) {
    const char* key = cause[0];  // (a structured binding cannot be captured before clang 16)
    row(std::string("GPU-hours: ") + cause[1], [&](const json& f) { return report::FormatFixed(metric(f, key), 1); });
  }
  std::vector<double> mttr;
  for (const LoadedRun* r : with) mttr.push_back(metric(r->summary["failures"], "mttr_s"));
  const report::TimeUnit mttr_unit = report::PickTimeUnit(mttr);
  row(std::string("mean time to recover (") + mttr_unit.name + ")",
      [&](const json& f) { return report::FormatIn(metric(f, "mttr_s"), mttr_unit); });
  row("ETTR of the jobs that failed", [&](const json& f) { return report::FormatPercent(metric(f, "ettr_failed_jobs")); });
  c.spec = {{"mark", {{"type", "bar"}}},
            {"width", std::max<int>(360, static_cast<int>(with.size() * 90))},
            {"height", 260},
            {"encoding",
             {{"x", {{"field", "policy"}, {"type", "nominal"}, {"sort", order}, {"title", nullptr}, {"axis", {{"labelAngle", 0}}}}},
              {"y", {{"field", "gpu_hours"}, {"type", "quantitative"}, {"stack", "zero"}, {"title", "GPU-hours"}}},
              {"color", report::PartColorEncoding("cause", "cause", {"lost work", "restart overhead", "waiting for nodes"})},
              {"tooltip", json::array({json{{"field", "policy"}}, json{{"field", "cause"}},
                                       json{{"field", "gpu_hours"}, {"format", ",.1f"}}})}}}};
  c.caption = "One bar per run; the stack is the GPU time the failures cost it.";
  if (!c.data.empty()) s.charts.push_back(c);
  else s.missing.push_back("no run recorded attempts: the GPU-hours by cause need attempts.csv");
  s.tables.push_back(t);
  page->sections.push_back(s);
}

// Runs with RL jobs (summary.json "rl", `simulate --rl-jobs/--rl-share`): the mean RL step per
// run as stacked phases, and the RL figures; absent when no run had RL jobs.
void AddRlSection(const std::vector<LoadedRun>& runs, report::Page* page) {
  const json order = page->series;
  std::vector<const LoadedRun*> with;
  for (const auto& r : runs)
    if (r.summary.contains("rl") && r.summary["rl"].is_object()) with.push_back(&r);
  if (with.empty()) return;
  report::Section s;
  s.title = "RL post-training jobs";
  s.text = "RL jobs added to the workload (docs/design/rl.md, \"In the simulator\"): the mean RL step under the run's "
           "strategy, split into its phases, against sync's step for the same jobs; the rollout GPUs the long tail "
           "leaves idle; and what the other jobs saw.";
  report::Chart c;
  c.id = "rl_step_breakdown";
  c.title = "Mean RL step, by phase";
  const char* phases[] = {"rollout", "reward", "train", "sync"};
  report::Table t{"rl", "RL post-training jobs", {"metric"}, {}};
  for (const LoadedRun* r : with) {
    t.header.push_back(r->label);
    const json& b = r->summary["rl"].value("breakdown_s", json::object());
    for (const char* ph : phases) c.data.push_back(json{{"policy", r->label}, {"phase", ph}, {"seconds", b.value(ph, 0.0)}});
  }
  const auto row = [&](const std::string& name, auto fn) {
    std::vector<std::string> cells{name};
    for (const LoadedRun* r : with) cells.push_back(fn(r->summary["rl"]));
    t.rows.push_back(cells);
  };
  const auto num = [](const json& j, const char* k) { return j.value(k, 0.0); };
  row("strategy", [](const json& j) { return j.value("strategy", ""); });
  row("RL jobs (finished)", [](const json& j) {
    return std::to_string(j.value("jobs", 0ull)) + " (" + std::to_string(j.value("finished", 0ull)) + ")";
  });
  std::vector<double> steps;
  for (const LoadedRun* r : with)
    for (const char* k : {"step_time_s", "sync_step_time_s"}) steps.push_back(num(r->summary["rl"], k));
  const report::TimeUnit step_unit = report::PickTimeUnit(steps);
  row(std::string("mean step (") + step_unit.name + ")",
      [&](const json& j) { return report::FormatIn(num(j, "step_time_s"), step_unit); });
  row(std::string("sync's step (") + step_unit.name + ")",
      [&](const json& j) { return report::FormatIn(num(j, "sync_step_time_s"), step_unit); });
  row("speedup over sync", [&](const json& j) {
    return num(j, "step_time_s") > 0 ? report::FormatFixed(num(j, "sync_step_time_s") / num(j, "step_time_s"), 2) + "x" : "—";
  });
  row("RL GPU-hours", [&](const json& j) { return report::FormatFixed(num(j, "gpu_hours"), 1); });
  row("idle rollout GPU-hours", [&](const json& j) { return report::FormatFixed(num(j, "idle_gpu_hours"), 1); });
  const auto other_jct = [](const json& j) { return j.value("other_jobs", json::object()).value("avg_jct_s", 0.0); };
  std::vector<double> jcts;
  for (const LoadedRun* r : with) jcts.push_back(other_jct(r->summary["rl"]));
  const report::TimeUnit jct_unit = report::PickTimeUnit(jcts);
  row(std::string("other jobs: mean JCT (") + jct_unit.name + ")",
      [&](const json& j) { return report::FormatIn(other_jct(j), jct_unit); });
  row("other jobs: preemptions", [](const json& j) {
    return std::to_string(j.value("other_jobs", json::object()).value("preemptions", 0ull));
  });
  // --rl-strategy harvest: the lending of idle rollout GPUs (rows only when a run has it).
  bool harvest = false;
  for (const LoadedRun* r : with) harvest |= r->summary["rl"].contains("harvest");
  const auto lent = [](const char* k) {
    return [k](const json& j) { return j.contains("harvest") ? report::FormatFixed(j["harvest"].value(k, 0.0), 1) : "—"; };
  };
  if (harvest) {
    row("harvest: lent GPU-hours", lent("lent_gpu_hours"));
    row("harvest: harvested GPU-hours", lent("harvested_gpu_hours"));
    row("harvest: borrowers preempted", [](const json& j) {
      return j.contains("harvest") ? std::to_string(j["harvest"].value("borrower_preemptions", 0ull)) : std::string("—");
    });
  }
  c.spec = {{"mark", {{"type", "bar"}}},
            {"width", std::max<int>(360, static_cast<int>(with.size() * 90))},
            {"height", 260},
            {"encoding",
             {{"x", {{"field", "policy"}, {"type", "nominal"}, {"sort", order}, {"title", nullptr}, {"axis", {{"labelAngle", 0}}}}},
              {"y", {{"field", "seconds"}, {"type", "quantitative"}, {"stack", "zero"}, {"title", "seconds per RL step"}}},
              {"color", report::PartColorEncoding("phase", "phase", {"rollout", "reward", "train", "sync"})},
              {"tooltip", json::array({json{{"field", "policy"}}, json{{"field", "phase"}},
                                       json{{"field", "seconds"}, {"format", ",.1f"}}})}}}};
  c.caption = "One bar per run; the stack is the mean RL step's phases (reward includes the two log-prob forwards).";
  s.charts.push_back(c);
  s.tables.push_back(t);
  page->sections.push_back(s);
}

// A statistic of a summary.json distribution (jct_s, queue_delay_s, ...); 0 when absent.
double DistStat(const json& run, const char* key, const char* stat) {
  return run.contains(key) && run[key].contains(stat) ? run[key][stat].get<double>() : 0.0;
}

// The distinct values, in order, joined by "; ".
std::string JoinDistinct(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : "; ") + x;
  return out;
}

void AddFacts(const std::vector<LoadedRun>& runs, report::Page* page) {
  std::set<std::string> scen, clus;
  for (const auto& r : runs) {
    scen.insert(r.scenario);
    clus.insert(r.cluster);
  }
  page->facts.push_back({"workload", JoinDistinct(scen)});
  page->facts.push_back({"cluster", JoinDistinct(clus)});
  page->facts.push_back({"runs", std::to_string(runs.size())});
}

// Headline metrics from summary.json, one column per run.
report::Section SummarySection(const std::vector<LoadedRun>& runs) {
  using report::FormatPercent;
  using report::Section;
  using report::Table;
  Section s;
  s.title = "Summary";
  s.text = "From summary.json. Statistics over finished jobs; * = the policy read true job durations (oracle).";
  Table t{"summary", "Headline metrics", {"metric"}, {}};
  for (const auto& r : runs) t.header.push_back(r.label + (r.summary.value("uses_oracle_durations", false) ? " *" : ""));
  auto add = [&](const std::string& name, auto fn) {
    std::vector<std::string> row{name};
    for (const auto& r : runs) row.push_back(fn(r.summary));
    t.rows.push_back(row);
  };
  add("jobs finished", [](const json& j) { return std::to_string(j["jobs"].value("finished", 0ull)); });
  add("not run (rejected + skipped)", [](const json& j) {
    return std::to_string(j["jobs"].value("rejected", 0ull) + j["jobs"].value("skipped", 0ull));
  });
  // A duration row: one unit for the whole row (its largest value picks it), named in the label.
  const auto add_time = [&](const std::string& name, auto seconds) {
    std::vector<double> v;
    for (const auto& r : runs) v.push_back(seconds(r.summary));
    const report::TimeUnit unit = report::PickTimeUnit(v);
    add(name + " (" + unit.name + ")", [&](const json& j) { return report::FormatIn(seconds(j), unit); });
  };
  add_time("avg JCT", [](const json& j) { return DistStat(j, "jct_s", "mean"); });
  add_time("median JCT", [](const json& j) { return DistStat(j, "jct_s", "median"); });
  add_time("p99 JCT", [](const json& j) { return DistStat(j, "jct_s", "p99"); });
  add_time("avg queueing delay", [](const json& j) { return DistStat(j, "queue_delay_s", "mean"); });
  add_time("p99 queueing delay", [](const json& j) { return DistStat(j, "queue_delay_s", "p99"); });
  add("avg bounded slowdown", [&](const json& j) { return report::FormatFixed(DistStat(j, "bounded_slowdown", "mean"), 2); });
  add("GPU utilization", [](const json& j) { return FormatPercent(j.value("gpu_utilization", 0.0)); });
  add_time("makespan", [](const json& j) { return j.value("makespan_s", 0.0); });
  add("preemptions", [](const json& j) { return std::to_string(j.value("preemptions", 0ull)); });
  s.tables.push_back(t);
  return s;
}

// JCT CDFs of small and large jobs: one color per run, solid small, dashed large.
report::Chart SmallLargeCdfChart(const std::vector<LoadedRun>& runs, const std::vector<std::string>& domain,
                                 const RunReportOptions& opt) {
  std::vector<std::pair<std::string, std::vector<report::CdfPoint>>> sl;
  for (const auto& r : runs) {
    if (!r.jct_small.empty()) sl.push_back({r.label + " · ≤8 GPUs", report::Cdf(r.jct_small, opt.max_points)});
    if (!r.jct_large.empty()) sl.push_back({r.label + " · >8 GPUs", report::Cdf(r.jct_large, opt.max_points)});
  }
  report::Chart c = report::CdfChart("jct_cdf_small_large", "JCT CDF: small (≤ 8 GPUs) vs large (> 8 GPUs) jobs",
                                     "job completion time (s, log scale)", true, sl, "policy · size",
                                     "Colour: policy. Solid: small jobs (≤ 8 GPUs); dashed: large jobs (> 8 GPUs).",
                                     domain);
  for (auto& row : c.data) {
    const std::string sname = row["series"];
    row["policy"] = sname.substr(0, sname.rfind(" · "));
    row["size"] = sname.find(">8") != std::string::npos ? "large (> 8 GPUs)" : "small (≤ 8 GPUs)";
  }
  c.spec["encoding"]["color"] = report::SeriesColorEncoding(domain, c.data, "policy", "policy");
  // The dash of each size is fixed (not left to the scale's alphabetical order), as the caption says.
  const json sizes = {"small (≤ 8 GPUs)", "large (> 8 GPUs)"};
  c.spec["encoding"]["strokeDash"] = {{"field", "size"}, {"type", "nominal"}, {"title", "job size"}, {"sort", sizes},
                                      {"scale", {{"domain", sizes}, {"range", {json{1, 0}, json{6, 4}}}}}};
  c.spec["encoding"]["detail"] = {{"field", "series"}};
  return c;
}

report::Section CdfSection(const std::vector<LoadedRun>& runs, const std::vector<std::string>& domain,
                           const RunReportOptions& opt) {
  report::Section s;
  s.title = "Job completion time and queueing delay";
  s.text = "Empirical CDFs over finished jobs (read from each run's jobs.csv); further left and higher is better. "
           "Next to each CDF, its tail: the fraction of jobs above x from p90 to p99.9; further left and lower is "
           "better.";
  report::CdfSeries jct, q;
  report::TailSeries jct_tail, q_tail;
  for (const auto& r : runs) {
    jct.push_back({r.label, report::Cdf(r.jct, opt.max_points)});
    q.push_back({r.label, report::Cdf(r.queue, opt.max_points)});
    jct_tail.push_back({r.label, report::Tail(r.jct)});
    q_tail.push_back({r.label, report::Tail(r.queue)});
  }
  s.charts.push_back(report::CdfChart("jct_cdf", "JCT CDF", "job completion time (s, log scale)", true, jct, "policy",
                                      "JCT = end − submit.", domain));
  s.charts.push_back(report::TailChart("jct_tail", "JCT tail (p90–p99.9)", "job completion time (s, log scale)",
                                       jct_tail, "policy", "1 − CDF of the JCT on log-log axes: the slowest 10 % of jobs.",
                                       domain));
  s.charts.push_back(report::CdfChart("queue_cdf", "Queueing delay CDF", "queueing delay (s, log scale)", true, q,
                                      "policy", "Delays below 1 s (including 0) are drawn at 1 s.", domain));
  s.charts.push_back(report::TailChart("queue_tail", "Queueing delay tail (p90–p99.9)", "queueing delay (s, log scale)",
                                       q_tail, "policy",
                                       "1 − CDF of the queueing delay on log-log axes; delays below 1 s are drawn at 1 s.",
                                       domain));
  s.charts.push_back(SmallLargeCdfChart(runs, domain, opt));
  return s;
}

report::Section SmallLargeSection(const std::vector<LoadedRun>& runs, const std::vector<std::string>& domain) {
  const json order = domain;
  report::Section s;
  s.title = "Small vs large jobs";
  report::Chart c;
  c.id = "small_large";
  c.title = "Average queueing delay and JCT by job size";
  c.caption = "Left: average queueing delay; right: average JCT (hours, each panel its own scale). One bar per "
              "policy within each job size.";
  for (const auto& r : runs)
    for (const char* g : {"small_jobs", "large_jobs"}) {
      if (!r.summary.contains(g)) continue;
      const json& grp = r.summary[g];
      const std::string size = std::string(g) == "small_jobs" ? "small (≤ 8 GPUs)" : "large (> 8 GPUs)";
      c.data.push_back(json{{"policy", r.label}, {"size", size}, {"metric", "avg queueing delay (h)"},
                            {"hours", DistStat(grp, "queue_delay_s", "mean") / 3600.0}, {"jobs", grp.value("jobs", 0ull)}});
      c.data.push_back(json{{"policy", r.label}, {"size", size}, {"metric", "avg JCT (h)"},
                            {"hours", DistStat(grp, "jct_s", "mean") / 3600.0}, {"jobs", grp.value("jobs", 0ull)}});
    }
  c.spec = {{"mark", {{"type", "bar"}}},
            {"width", 300},
            {"height", 240},
            {"encoding",
             {{"column", {{"field", "metric"}, {"type", "nominal"}, {"title", nullptr}, {"sort", {"avg queueing delay (h)", "avg JCT (h)"}}}},
              {"x", {{"field", "size"}, {"type", "nominal"}, {"title", nullptr}, {"axis", {{"labelAngle", 0}}},
                     {"sort", {"small (≤ 8 GPUs)", "large (> 8 GPUs)"}}}},
              {"xOffset", {{"field", "policy"}, {"sort", order}}},
              {"y", {{"field", "hours"}, {"type", "quantitative"}, {"title", "hours"}}},
              {"color", report::SeriesColorEncoding(domain, c.data, "policy", "policy")},
              {"tooltip", json::array({json{{"field", "policy"}}, json{{"field", "size"}}, json{{"field", "metric"}},
                                       json{{"field", "hours"}, {"format", ",.2f"}}, json{{"field", "jobs"}}})}}},
            {"resolve", {{"scale", {{"y", "independent"}}}}}};
  s.charts.push_back(c);
  return s;
}

// A step-line chart spec over days of the trace clock, one line per run.
json TimeLineSpec(const std::vector<std::string>& domain, const json& data, const char* field, json ytitle, json axis) {
  json y = {{"field", field}, {"type", "quantitative"}, {"title", ytitle}};
  if (!axis.is_null()) y["axis"] = axis;
  return json{{"mark", {{"type", "line"}, {"strokeWidth", 1.3}, {"interpolate", "step-after"}}},
              {"width", 1100},
              {"height", 260},
              {"encoding",
               {{"x", {{"field", "day"}, {"type", "quantitative"}, {"title", "time (days, trace clock)"}}},
                {"y", y},
                {"color", report::SeriesColorEncoding(domain, data, "policy", "policy")},
                {"tooltip", json::array({json{{"field", "policy"}}, json{{"field", "day"}, {"format", ".2f"}},
                                         json{{"field", field}, {"format", ",.3f"}}})}}}};
}

report::Section TimeSeriesSection(const std::vector<LoadedRun>& runs, const std::vector<std::string>& domain,
                                  const RunReportOptions& opt) {
  using report::Chart;
  report::Section s;
  s.title = "Cluster state over time";
  s.text = "From timeseries.csv, averaged into at most " + std::to_string(opt.max_time_points) + " points per run.";
  Chart u, p;
  u.id = "utilization_over_time";
  u.title = "GPU utilization over time";
  p.id = "pending_over_time";
  p.title = "Pending GPU demand over time";
  for (const auto& r : runs)
    for (const auto& t : r.series) {
      u.data.push_back(json{{"policy", r.label}, {"day", t.time / 86400.0}, {"utilization", t.utilization},
                            {"busy_gpus", t.busy_gpus}});
      p.data.push_back(json{{"policy", r.label}, {"day", t.time / 86400.0}, {"pending_gpus", t.pending_gpus},
                            {"pending_jobs", t.pending_jobs}});
    }
  u.spec = TimeLineSpec(domain, u.data, "utilization", "GPU utilization (busy / cluster GPUs)", json{{"format", ".0%"}});
  p.spec = TimeLineSpec(domain, p.data, "pending_gpus", "GPUs requested by pending jobs", nullptr);
  s.charts.push_back(u);
  s.charts.push_back(p);
  // Energy-saving runs: powered (on + booting) nodes.
  Chart w;
  w.id = "powered_nodes_over_time";
  w.title = "Powered nodes over time (energy saving)";
  for (const auto& r : runs)
    for (const auto& [t, n] : r.powered)
      w.data.push_back(json{{"policy", r.label}, {"day", t / 86400.0}, {"powered_nodes", n}});
  if (!w.data.empty()) {
    w.spec = TimeLineSpec(domain, w.data, "powered_nodes", "nodes on or booting", nullptr);
    s.charts.push_back(w);
  }
  return s;
}

// A per-group breakdown of summary.json: per_vc (one group per virtual cluster) or per_account
// (one per Slurm account, traces that record accounts).
struct GroupKind {
  const char* key;        // summary.json array
  const char* id;         // chart and table ids
  const char* singular;   // "VC", "account"
  const char* axis;       // the chart's x-axis title
  const char* title;      // the section's title
};
constexpr GroupKind kVcGroups{"per_vc", "vc", "VC", "virtual cluster", "Per virtual cluster"};
constexpr GroupKind kAccountGroups{"per_account", "account", "account", "Slurm account", "Per account"};

// The summary.json group named `name` of kind `k` in a run, or null.
const json* FindGroup(const LoadedRun& r, const GroupKind& k, const std::string& name) {
  if (!r.summary.contains(k.key)) return nullptr;
  for (const auto& g : r.summary[k.key])
    if (g.value("name", "") == name) return &g;
  return nullptr;
}

// Per-group table: for each group (in first-seen order), its job count and each run's average JCT
// and average queueing delay; each metric in one unit for all runs (named in the column headers).
report::Table PerGroupTable(const std::vector<LoadedRun>& runs, const GroupKind& k, const std::vector<std::string>& names) {
  report::Table t{std::string(k.key), std::string("Per-") + k.singular + " average JCT and average queueing delay (finished jobs)",
                  {k.singular, "jobs"}, {}};
  const std::pair<const char*, const char*> metrics[] = {{"jct_s", "avg JCT"}, {"queue_delay_s", "avg queueing"}};
  report::TimeUnit units[2];
  for (size_t m = 0; m < 2; ++m) {
    std::vector<double> v;
    for (const auto& r : runs)
      for (const auto& name : names)
        if (const json* g = FindGroup(r, k, name)) v.push_back(DistStat(*g, metrics[m].first, "mean"));
    units[m] = report::PickTimeUnit(v);
  }
  std::vector<std::vector<std::string>> cols;  // per run and metric: a column of cells
  for (const auto& r : runs)
    for (size_t m = 0; m < 2; ++m) {
      const auto& [key, what] = metrics[m];
      const report::TimeUnit unit = units[m];
      t.header.push_back(r.label + ": " + what + " (" + unit.name + ")");
      std::vector<std::string> col;
      for (const auto& name : names) {
        const json* g = FindGroup(r, k, name);
        col.push_back(g ? report::FormatIn(DistStat(*g, key, "mean"), unit) : "—");
      }
      cols.push_back(col);
    }
  for (size_t i = 0; i < names.size(); ++i) {
    std::vector<std::string> row{names[i], ""};
    for (const auto& r : runs)
      if (const json* g = FindGroup(r, k, names[i])) row[1] = std::to_string(g->value("jobs", 0ull));
    for (const auto& col : cols) row.push_back(col[i]);
    t.rows.push_back(row);
  }
  return t;
}

// The groups' names in first-seen order over the runs, and the chart's rows.
std::vector<std::string> GroupRows(const std::vector<LoadedRun>& runs, const GroupKind& k, json* data) {
  std::vector<std::string> names;
  for (const auto& r : runs)
    if (r.summary.contains(k.key))
      for (const auto& g : r.summary[k.key]) {
        const std::string name = g.value("name", "");
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
        data->push_back(json{{"group", name}, {"policy", r.label}, {"avg_queue_h", DistStat(g, "queue_delay_s", "mean") / 3600.0},
                             {"avg_jct_h", DistStat(g, "jct_s", "mean") / 3600.0}, {"jobs", g.value("jobs", 0ull)},
                             {"gpu_hours", g.value("gpu_hours", 0.0)}});
      }
  return names;
}

report::Section PerGroupSection(const std::vector<LoadedRun>& runs, const std::vector<std::string>& domain, const GroupKind& k) {
  const json order = domain;
  report::Section s;
  s.title = k.title;
  report::Chart c;
  c.id = std::string(k.id) + "_queue";
  c.title = std::string("Average queueing delay per ") + k.singular;
  c.data = json::array();
  const std::vector<std::string> names = GroupRows(runs, k, &c.data);
  c.spec = {{"mark", {{"type", "bar"}}},
            {"width", std::max<int>(520, static_cast<int>(names.size() * runs.size() * 9))},
            {"encoding",
             {{"x", {{"field", "group"}, {"type", "nominal"}, {"title", k.axis}, {"sort", names}}},
              {"xOffset", {{"field", "policy"}, {"sort", order}}},
              {"y", {{"field", "avg_queue_h"}, {"type", "quantitative"}, {"title", "average queueing delay (h)"}}},
              {"color", report::SeriesColorEncoding(domain, c.data, "policy", "policy")},
              {"tooltip", json::array({json{{"field", "group"}, {"title", k.singular}}, json{{"field", "policy"}},
                                       json{{"field", "avg_queue_h"}, {"format", ",.2f"}},
                                       json{{"field", "avg_jct_h"}, {"format", ",.2f"}}, json{{"field", "jobs"}},
                                       json{{"field", "gpu_hours"}, {"format", ",.1f"}}})}}}};
  s.charts.push_back(c);
  s.tables.push_back(PerGroupTable(runs, k, names));
  return s;
}

bool AnyRunHas(const std::vector<LoadedRun>& runs, const char* key) {
  for (const auto& r : runs)
    if (r.summary.contains(key)) return true;
  return false;
}

}  // namespace

report::Page RunReportPage(const std::vector<LoadedRun>& runs, const RunReportOptions& opt) {
  report::Page page;
  page.title = "Scheduling policy comparison";
  AddFacts(runs, &page);
  for (const auto& r : runs) page.series.push_back(r.label);  // in the order given: every chart's colours and legends
  page.sections.push_back(SummarySection(runs));
  page.sections.push_back(CdfSection(runs, page.series, opt));
  page.sections.push_back(SmallLargeSection(runs, page.series));
  page.sections.push_back(TimeSeriesSection(runs, page.series, opt));
  AddFailuresSection(runs, &page);
  AddRlSection(runs, &page);
  page.sections.push_back(PerGroupSection(runs, page.series, kVcGroups));
  if (AnyRunHas(runs, kAccountGroups.key)) page.sections.push_back(PerGroupSection(runs, page.series, kAccountGroups));
  return page;
}

}  // namespace orrery
