// `orrery sweep collect`: one CSV row per group of cells (all parameters but the seed), each
// metric's mean across the group's seeds and its 95 % Student-t confidence half-width.
#include <cmath>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

#include "base/io.h"
#include "analysis/report_html.h"
#include "base/json_text.h"
#include "sweep/sweep.h"

namespace orrery::sweep {

namespace {

// The summary.json numbers the table averages: column stem and JSON pointer into the cell's file.
struct SweepMetric {
  const char* column;
  const char* pointer;
};
constexpr SweepMetric kSweepMetrics[] = {
    {"jct_mean_s", "/run/jct_s/mean"},
    {"jct_p95_s", "/run/jct_s/p95"},
    {"queue_delay_mean_s", "/run/queue_delay_s/mean"},
    {"queue_delay_p95_s", "/run/queue_delay_s/p95"},
    {"bounded_slowdown_mean", "/run/bounded_slowdown/mean"},
    {"makespan_s", "/run/makespan_s"},
    {"gpu_utilization", "/run/gpu_utilization"},
    {"gpu_hours", "/run/gpu_hours"},
    {"finished_jobs", "/run/jobs/finished"},
    {"preemptions", "/run/preemptions"},
};
constexpr size_t kSweepMetricCount = sizeof kSweepMetrics / sizeof kSweepMetrics[0];

// t(0.975, df) for df = 1..30 (standard tables, 3 decimals).
constexpr double kT975[30] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                              2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                              2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};

std::string SweepFixed(double x) {
  char b[48];
  std::snprintf(b, sizeof b, "%.4f", x);
  return b;
}

struct SweepGroup {
  std::string policy, cluster, placer, load, workload;
  std::vector<std::vector<double>> values = std::vector<std::vector<double>>(kSweepMetricCount);
};

// Adds one complete cell's metrics to its group; a cell without outputs adds nothing.
Status SweepAddCellMetrics(const std::string& dir, const nlohmann::json& c, std::vector<SweepGroup>* groups,
                      std::map<std::string, size_t>* index) {
  return ReadJsonGuarded(dir + "/grid.json", [&]() -> Status {
    char load[32];
    std::snprintf(load, sizeof load, "%.10g", c.at("load").get<double>());
    SweepGroup g{c.at("policy").get<std::string>(), c.at("cluster").get<std::string>(), c.at("placer").get<std::string>(),
                 load, c.value("workload", std::string())};
    const std::string key = g.policy + '\n' + g.cluster + '\n' + g.placer + '\n' + g.load + '\n' + g.workload;
    auto [it, fresh] = index->emplace(key, groups->size());
    if (fresh) groups->push_back(std::move(g));
    const std::string path = dir + "/cells/" + c.at("id").get<std::string>() + "/summary.json";
    Result<std::string> text = ReadFile(path);
    if (!text.ok()) return Status::Ok();  // not complete: left out, and the seed count says so
    ORR_ASSIGN_OR_RETURN(nlohmann::json s, ParseJson(*text, path));
    std::vector<double> row(kSweepMetricCount);
    for (size_t m = 0; m < kSweepMetricCount; ++m) {
      const nlohmann::json::json_pointer p(kSweepMetrics[m].pointer);
      if (!s.contains(p) || !s.at(p).is_number())
        return MakeError(path + ": expected a number at " + kSweepMetrics[m].pointer + ", got none");
      row[m] = s.at(p).get<double>();
    }
    for (size_t m = 0; m < kSweepMetricCount; ++m) (*groups)[it->second].values[m].push_back(row[m]);
    return Status::Ok();
  });
}

}  // namespace

double TQuantile975(size_t df) {
  if (df == 0) return 0;
  if (df <= 30) return kT975[df - 1];
  // Cornish-Fisher expansion of t around z = 1.959964 (error below 1e-4 for df > 30).
  const double z = 1.959964, n = static_cast<double>(df);
  return z + (z * z * z + z) / (4 * n) + (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * n * n);
}

MeanCi MeanWithCi(const std::vector<double>& v) {
  MeanCi r;
  r.n = v.size();
  if (v.empty()) return r;
  double sum = 0;
  for (double x : v) sum += x;
  r.mean = sum / static_cast<double>(r.n);
  if (r.n < 2) return r;
  double ss = 0;
  for (double x : v) ss += (x - r.mean) * (x - r.mean);
  const double s = std::sqrt(ss / static_cast<double>(r.n - 1));
  r.half = TQuantile975(r.n - 1) * s / std::sqrt(static_cast<double>(r.n));
  return r;
}

namespace {

// The groups of DIR's grid.json in grid order, each with its complete cells' metrics.
Result<std::vector<SweepGroup>> SweepGroups(const std::string& dir) {
  const std::string grid_path = dir + "/grid.json";
  ORR_ASSIGN_OR_RETURN(std::string text, ReadFile(grid_path));
  ORR_ASSIGN_OR_RETURN(nlohmann::json grid, ParseJson(text, grid_path));
  if (!grid.contains("cells") || !grid["cells"].is_array())
    return MakeError(grid_path + ": expected a \"cells\" array, got none");
  std::vector<SweepGroup> groups;
  std::map<std::string, size_t> index;
  for (const nlohmann::json& c : grid["cells"]) ORR_RETURN_IF_ERROR(SweepAddCellMetrics(dir, c, &groups, &index));
  return groups;
}

// A group's name in the report: its parameters that are set ("fifo · first-fit · load 1.5").
std::string SweepGroupLabel(const SweepGroup& g) {
  std::string s = g.policy;
  if (!g.cluster.empty()) s += " · " + std::filesystem::path(g.cluster).stem().string();
  if (g.placer != "consolidate") s += " · " + g.placer;
  if (g.load != "0") s += " · load " + g.load;
  if (!g.workload.empty()) s += " · " + g.workload;
  return s;
}

// One metric's bars: the mean of each group, its 95 % interval as a rule.
report::Chart SweepMetricChart(const std::vector<SweepGroup>& groups, size_t m, const std::vector<std::string>& domain) {
  report::Chart c;
  c.id = kSweepMetrics[m].column;
  c.title = std::string(kSweepMetrics[m].column) + ": mean across seeds, 95 % interval";
  c.caption = "One bar per group of cells (all parameters but the seed); the line spans mean ± ci95.";
  nlohmann::ordered_json order = nlohmann::ordered_json::array();
  for (const SweepGroup& g : groups) {
    const MeanCi mc = MeanWithCi(g.values[m]);
    if (mc.n == 0) continue;
    order.push_back(SweepGroupLabel(g));
    c.data.push_back({{"group", SweepGroupLabel(g)}, {"policy", g.policy}, {"seeds", mc.n}, {"mean", mc.mean},
                      {"lo", mc.mean - mc.half}, {"hi", mc.mean + mc.half}});
  }
  const nlohmann::ordered_json x = {{"field", "group"}, {"type", "nominal"}, {"sort", order}, {"title", nullptr},
                                    {"axis", {{"labelAngle", -30}}}};
  c.spec = {{"width", std::max<int>(360, static_cast<int>(order.size() * 40))},
            {"height", 240},
            {"layer",
             {{{"mark", {{"type", "bar"}}},
               {"encoding",
                {{"x", x},
                 {"y", {{"field", "mean"}, {"type", "quantitative"}, {"title", kSweepMetrics[m].column}}},
                 {"color", report::SeriesColorEncoding(domain, c.data, "policy", "policy")},
                 {"tooltip", nlohmann::ordered_json::array({{{"field", "group"}}, {{"field", "seeds"}},
                                                            {{"field", "mean"}, {"format", ",.4f"}},
                                                            {{"field", "lo"}, {"format", ",.4f"}},
                                                            {{"field", "hi"}, {"format", ",.4f"}}})}}}},
              {{"mark", {{"type", "rule"}, {"color", "#3d3d3d"}}},
               {"encoding", {{"x", x}, {"y", {{"field", "lo"}, {"type", "quantitative"}}}, {"y2", {{"field", "hi"}}}}}}}}};
  return c;
}

}  // namespace

Result<std::string> CollectTable(const std::string& dir) {
  ORR_ASSIGN_OR_RETURN(std::vector<SweepGroup> groups, SweepGroups(dir));
  std::string out = "policy,cluster,placer,load,workload,seeds";
  for (const SweepMetric& m : kSweepMetrics) out += std::string(",") + m.column + "_mean," + m.column + "_ci95";
  out += '\n';
  for (const SweepGroup& g : groups) {
    out += report::CsvEscape(g.policy) + ',' + report::CsvEscape(g.cluster) + ',' + report::CsvEscape(g.placer) + ',' + g.load + ',' +
           report::CsvEscape(g.workload) + ',' + std::to_string(g.values[0].size());
    for (const std::vector<double>& v : g.values) {
      const MeanCi mc = MeanWithCi(v);
      out += ',' + (mc.n ? SweepFixed(mc.mean) : std::string()) + ',' + (mc.n ? SweepFixed(mc.half) : std::string());
    }
    out += '\n';
  }
  return out;
}

Status WriteCollectReport(const std::string& dir, const std::string& report_dir) {
  ORR_ASSIGN_OR_RETURN(std::vector<SweepGroup> groups, SweepGroups(dir));
  report::Page page;
  page.title = "Sweep " + std::filesystem::path(dir).lexically_normal().filename().string();
  size_t cells = 0;
  for (const SweepGroup& g : groups) {
    cells += g.values[0].size();
    if (std::find(page.series.begin(), page.series.end(), g.policy) == page.series.end()) page.series.push_back(g.policy);
  }
  page.facts = {{"folder", dir}, {"groups", std::to_string(groups.size())}, {"complete cells", std::to_string(cells)}};
  report::Section charts{"Metrics by group", "Each metric's mean across the group's seeds and the half-width of its "
                         "95 % Student-t confidence interval (docs/formats/sweep.md).", {}, {}, {}};
  for (size_t m = 0; m < kSweepMetricCount; ++m) charts.charts.push_back(SweepMetricChart(groups, m, page.series));
  report::Table t{"sweep", "Collected table", {"group", "seeds"}, {}};
  for (const SweepMetric& m : kSweepMetrics) t.header.push_back(std::string(m.column) + " (mean ± ci95)");
  for (const SweepGroup& g : groups) {
    std::vector<std::string> row = {SweepGroupLabel(g), std::to_string(g.values[0].size())};
    for (const std::vector<double>& v : g.values) {
      const MeanCi mc = MeanWithCi(v);
      row.push_back(mc.n ? SweepFixed(mc.mean) + " ± " + SweepFixed(mc.half) : std::string("—"));
    }
    t.rows.push_back(std::move(row));
  }
  charts.tables.push_back(std::move(t));
  if (cells == 0) charts.missing.push_back("no cell is complete yet");
  page.sections.push_back(std::move(charts));
  return report::WriteReport(page, report_dir);
}

}  // namespace orrery::sweep
