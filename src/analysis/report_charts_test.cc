// The chart specs of both reports (orrery report, orrery analyze): one colour per series across
// every chart of a page, legends in page order, non-series categories never in a series colour,
// captions that match their encodings, tail views, one time unit per table row or column.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "analysis/characterize.h"
#include "analysis/report.h"
#include "analysis/report_html.h"
#include "trace/import.h"

namespace orrery {
namespace {

using json = nlohmann::ordered_json;

bool IsSeriesColor(const std::string& c) {
  return std::find(report::kSeriesPalette, report::kSeriesPalette + report::kSeriesPaletteSize, c) !=
         report::kSeriesPalette + report::kSeriesPaletteSize;
}
bool IsPartColor(const std::string& c) {
  return std::find(report::kPartPalette, report::kPartPalette + report::kPartPaletteSize, c) !=
         report::kPartPalette + report::kPartPaletteSize;
}

// True when `sub` lists some of `all`, in the order of `all`.
bool InPageOrder(const std::vector<std::string>& sub, const std::vector<std::string>& all) {
  size_t i = 0;
  for (const auto& s : sub) {
    while (i < all.size() && all[i] != s) ++i;
    if (i == all.size()) return false;
    ++i;
  }
  return true;
}

// Checks one colour encoding of a chart; returns whether it colours by the page's series.
bool CheckColorEncoding(const report::Page& page, const report::Chart& c, const json& enc) {
  const std::string where = c.id + " colour";
  EXPECT_TRUE(enc.contains("scale") && enc["scale"].contains("domain") && enc["scale"].contains("range"))
      << where << ": the colours are left to the default scheme";
  if (!enc.contains("scale")) return false;
  const auto domain = enc["scale"]["domain"].get<std::vector<std::string>>();
  const auto range = enc["scale"]["range"].get<std::vector<std::string>>();
  EXPECT_EQ(domain.size(), range.size()) << where;
  EXPECT_EQ(enc["sort"], enc["scale"]["domain"]) << where << ": the legend order is not the domain's";
  std::set<std::string> in_data;
  for (const auto& row : c.data) in_data.insert(row[enc["field"].get<std::string>()].get<std::string>());
  EXPECT_EQ(in_data, std::set<std::string>(domain.begin(), domain.end())) << where << ": domain is not the data's values";
  const bool series = !range.empty() && IsSeriesColor(range[0]);
  for (size_t i = 0; i < range.size() && i < domain.size(); ++i) {
    if (series) {
      EXPECT_EQ(range[i], report::SeriesColor(page.series, domain[i])) << where << ": " << domain[i];
    } else {
      EXPECT_TRUE(IsPartColor(range[i])) << where << ": " << domain[i] << " has colour " << range[i];
    }
  }
  if (series) EXPECT_TRUE(InPageOrder(domain, page.series)) << where << ": legend not in page order";
  return series;
}

// Checks every chart of a page; returns the ids of the charts coloured by the page's series.
std::vector<std::string> CheckPageColours(const report::Page& page) {
  std::vector<std::string> series_charts;
  for (const auto& s : page.sections)
    for (const auto& c : s.charts) {
      const json& enc = c.spec["encoding"];
      if (enc.contains("color") && CheckColorEncoding(page, c, enc["color"])) series_charts.push_back(c.id);
      if (c.spec["mark"].contains("color")) {
        EXPECT_FALSE(IsSeriesColor(c.spec["mark"]["color"].get<std::string>())) << c.id << ": a series colour on a mark";
      }
      for (const char* axis : {"x", "xOffset"})  // runs along an axis: page order too
        if (enc.contains(axis) && enc[axis].value("field", "") == "policy") {
          EXPECT_TRUE(InPageOrder(enc[axis]["sort"].get<std::vector<std::string>>(), page.series)) << c.id << " " << axis;
        }
    }
  return series_charts;
}

const report::Chart* FindChart(const report::Page& page, const std::string& id) {
  for (const auto& s : page.sections)
    for (const auto& c : s.charts)
      if (c.id == id) return &c;
  return nullptr;
}

const report::Table* FindTable(const report::Page& page, const std::string& id) {
  for (const auto& s : page.sections)
    for (const auto& t : s.tables)
      if (t.id == id) return &t;
  return nullptr;
}

LoadedRun MakeRun(const std::string& label, double jct_mean, bool extras) {
  LoadedRun r;
  r.label = label;
  r.summary = {{"policy", label},
               {"jobs", {{"finished", 4}}},
               {"jct_s", {{"mean", jct_mean}, {"median", 600.0}, {"p99", 200000.0}}},
               {"queue_delay_s", {{"mean", 30.0}, {"p99", 90.0}}},
               {"makespan_s", 86400.0},
               {"small_jobs", {{"jobs", 3}, {"jct_s", {{"mean", 3600.0}}}, {"queue_delay_s", {{"mean", 0.0}}}}},
               {"large_jobs", {{"jobs", 1}, {"jct_s", {{"mean", 7200.0}}}, {"queue_delay_s", {{"mean", 60.0}}}}},
               {"per_vc", json::array({json{{"name", "vc1"}, {"jobs", 4}, {"jct_s", {{"mean", jct_mean}}},
                                            {"queue_delay_s", {{"mean", 45.0}}}}})}};
  r.jct = {10, 20, 30, 1000};
  r.queue = {0, 0, 5, 50};
  r.jct_small = {10, 20, 30};
  r.jct_large = {1000};
  r.series = {RunTimePoint{0, 0.5, 4, 2, 1}, RunTimePoint{3600, 0.75, 6, 0, 0}};
  if (extras) {
    r.powered = {{0, 3}, {3600, 2}};
    r.summary["failures"] = {{"spec", "trace"}, {"recovery", "requeue"},
                             {"metrics", {{"lost_work_gpu_hours", 1.0}, {"mttr_s", 90.0}}}};
    r.summary["rl"] = {{"strategy", "sync"}, {"step_time_s", 300.0}, {"sync_step_time_s", 300.0},
                       {"breakdown_s", {{"rollout", 200.0}, {"reward", 50.0}, {"train", 40.0}, {"sync", 10.0}}}};
  }
  return r;
}

// Three runs given as sjf, fifo, easy; only fifo has energy, failures and RL figures, so those
// charts show one run, in fifo's colour (the second of the palette), not the first colour.
TEST(ReportCharts, RunReportColoursEveryRunOnceAcrossThePage) {
  const report::Page page = RunReportPage({MakeRun("sjf", 1800, false), MakeRun("fifo", 7200, true),
                                           MakeRun("easy", 5400, false)});
  EXPECT_EQ(page.series, (std::vector<std::string>{"sjf", "fifo", "easy"}));
  const auto charts = CheckPageColours(page);
  EXPECT_EQ(charts, (std::vector<std::string>{"jct_cdf", "jct_tail", "queue_cdf", "queue_tail", "jct_cdf_small_large",
                                              "small_large", "utilization_over_time", "pending_over_time",
                                              "powered_nodes_over_time", "vc_queue"}));
  const json& jct = FindChart(page, "jct_cdf")->spec["encoding"]["color"]["scale"];
  EXPECT_EQ(jct["domain"], json({"sjf", "fifo", "easy"}));
  EXPECT_EQ(jct["range"], json({"#4c78a8", "#f58518", "#54a24b"}));
  const json& powered = FindChart(page, "powered_nodes_over_time")->spec["encoding"]["color"]["scale"];
  EXPECT_EQ(powered["domain"], json({"fifo"}));
  EXPECT_EQ(powered["range"], json({"#f58518"}));
  // Failure causes and RL phases: part colours (greys, browns), the runs along x in page order.
  EXPECT_EQ(FindChart(page, "failure_gpu_hours")->spec["encoding"]["color"]["scale"]["range"][0], "#3d3d3d");
  EXPECT_EQ(FindChart(page, "rl_step_breakdown")->spec["encoding"]["x"]["sort"], json({"sjf", "fifo", "easy"}));
  const json js = report::PageToJson(page);
  EXPECT_EQ(js["series"][1], json({{"label", "fifo"}, {"color", "#f58518"}}));
}

// The caption says solid = small, dashed = large: the dash scale must map them so (left to
// Vega-Lite, "large" sorts first and gets the solid line).
TEST(ReportCharts, SmallLargeDashesMatchTheCaption) {
  const report::Page page = RunReportPage({MakeRun("fifo", 60, false)});
  const report::Chart* c = FindChart(page, "jct_cdf_small_large");
  ASSERT_NE(c, nullptr);
  const json& dash = c->spec["encoding"]["strokeDash"];
  EXPECT_EQ(dash["scale"]["domain"], json({"small (≤ 8 GPUs)", "large (> 8 GPUs)"}));
  EXPECT_EQ(dash["scale"]["range"], json({json{1, 0}, json{6, 4}}));  // solid, then dashed
  EXPECT_NE(c->caption.find("Solid: small jobs"), std::string::npos) << c->caption;
  EXPECT_NE(c->caption.find("dashed: large jobs"), std::string::npos) << c->caption;
  for (const auto& row : c->data) EXPECT_EQ(row["size"] == "large (> 8 GPUs)", row["series"] == "fifo · >8 GPUs");
  // The bar chart's panels: queueing delay left, JCT right, as its caption says.
  const report::Chart* bars = FindChart(page, "small_large");
  EXPECT_EQ(bars->spec["encoding"]["column"]["sort"], json({"avg queueing delay (h)", "avg JCT (h)"}));
  EXPECT_EQ(bars->caption.rfind("Left: average queueing delay; right: average JCT", 0), 0u) << bars->caption;
}

// One unit per row in the summary table (its largest value picks it), per metric in the per-VC
// table: 1800 s, 7200 s, 5400 s → hours; p99 200000 s → days; queueing 30 s → seconds.
TEST(ReportCharts, RunTablesKeepOneUnitPerRowOrColumn) {
  const report::Page page = RunReportPage({MakeRun("sjf", 1800, false), MakeRun("fifo", 7200, true),
                                           MakeRun("easy", 5400, false)});
  const report::Table* t = FindTable(page, "summary");
  ASSERT_NE(t, nullptr);
  const auto row = [&](const std::string& name) {
    for (const auto& r : t->rows)
      if (r[0] == name) return r;
    return std::vector<std::string>{};
  };
  EXPECT_EQ(row("avg JCT (h)"), (std::vector<std::string>{"avg JCT (h)", "0.50", "2.00", "1.50"}));
  EXPECT_EQ(row("median JCT (min)"), (std::vector<std::string>{"median JCT (min)", "10.0", "10.0", "10.0"}));
  EXPECT_EQ(row("p99 JCT (d)"), (std::vector<std::string>{"p99 JCT (d)", "2.31", "2.31", "2.31"}));
  EXPECT_EQ(row("avg queueing delay (s)"), (std::vector<std::string>{"avg queueing delay (s)", "30.0", "30.0", "30.0"}));
  EXPECT_EQ(row("makespan (h)"), (std::vector<std::string>{"makespan (h)", "24.0", "24.0", "24.0"}));
  const report::Table* vc = FindTable(page, "per_vc");
  ASSERT_NE(vc, nullptr);
  EXPECT_EQ(vc->header, (std::vector<std::string>{"VC", "jobs", "sjf: avg JCT (h)", "sjf: avg queueing (s)",
                                                  "fifo: avg JCT (h)", "fifo: avg queueing (s)", "easy: avg JCT (h)",
                                                  "easy: avg queueing (s)"}));
  EXPECT_EQ(vc->rows[0], (std::vector<std::string>{"vc1", "4", "0.50", "45.0", "2.00", "45.0", "1.50", "45.0"}));
  const report::Table* f = FindTable(page, "failures");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->rows.back()[0], "ETTR of the jobs that failed");
  EXPECT_EQ(f->rows[f->rows.size() - 2], (std::vector<std::string>{"mean time to recover (s)", "90.0"}));
}

// Runs of a trace with accounts get a per-account section after the per-VC one; a run without
// the key shows "—" in its columns. Runs without accounts have no such section (above).
TEST(ReportCharts, PerAccountSectionOnlyWhenARunHasAccounts) {
  LoadedRun a = MakeRun("fifo", 7200, false), b = MakeRun("slurm", 3600, false);
  a.summary["per_account"] = json::array({json{{"name", "proj1"}, {"jobs", 3}, {"jct_s", {{"mean", 7200.0}}},
                                               {"queue_delay_s", {{"mean", 600.0}}}, {"gpu_hours", 12.5}},
                                          json{{"name", "proj2"}, {"jobs", 1}, {"jct_s", {{"mean", 3600.0}}},
                                               {"queue_delay_s", {{"mean", 1200.0}}}, {"gpu_hours", 1.0}}});
  const report::Page page = RunReportPage({a, b});
  EXPECT_EQ(page.sections.back().title, "Per account");
  const report::Table* t = FindTable(page, "per_account");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->header, (std::vector<std::string>{"account", "jobs", "fifo: avg JCT (h)", "fifo: avg queueing (min)",
                                                 "slurm: avg JCT (h)", "slurm: avg queueing (min)"}));
  // 7200 s = 2.00 h, 600 s = 10.0 min; slurm has no per_account: "—".
  EXPECT_EQ(t->rows[0], (std::vector<std::string>{"proj1", "3", "2.00", "10.0", "—", "—"}));
  EXPECT_EQ(t->rows[1], (std::vector<std::string>{"proj2", "1", "1.00", "20.0", "—", "—"}));
  const report::Chart* c = FindChart(page, "account_queue");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->data.size(), 2u);
  EXPECT_EQ(c->data[0]["gpu_hours"], 12.5);
  EXPECT_EQ(FindTable(RunReportPage({b}), "per_account"), nullptr);
}

TEST(ReportCharts, TailQuantilesByNearestRank) {
  std::vector<double> v;
  for (int i = 1; i <= 1000; ++i) v.push_back(i);
  const auto t = report::Tail(v, 3);  // p90, p99, p99.9
  ASSERT_EQ(t.size(), 3u);
  EXPECT_DOUBLE_EQ(t[0].x, 900);
  EXPECT_NEAR(t[0].exceed, 0.1, 1e-12);
  EXPECT_DOUBLE_EQ(t[1].x, 990);
  EXPECT_NEAR(t[1].q, 0.99, 1e-12);
  EXPECT_DOUBLE_EQ(t[2].x, 999);
  EXPECT_NEAR(t[2].exceed, 0.001, 1e-12);
  EXPECT_EQ(report::Tail(v).size(), 31u);
  EXPECT_DOUBLE_EQ(report::Tail({5, 7}, 3)[0].x, 7);  // rank ceil(0.9 × 2) = 2
  EXPECT_TRUE(report::Tail({}).empty());
  // The run report's tail chart: 31 points per run, from p90 up.
  const report::Page page = RunReportPage({MakeRun("fifo", 60, false)});
  const report::Chart* c = FindChart(page, "jct_tail");
  ASSERT_EQ(c->data.size(), 31u);
  EXPECT_DOUBLE_EQ(c->data[0]["x"].get<double>(), 1000);  // rank ceil(0.9 × 4) = 4 of {10, 20, 30, 1000}
  EXPECT_EQ(c->spec["encoding"]["y"]["scale"]["domain"], json({0.001, 0.1}));
}

TEST(ReportCharts, TimeUnits) {
  EXPECT_STREQ(report::PickTimeUnit({30, 90}).name, "s");
  const report::TimeUnit min = report::PickTimeUnit({30, 5400});
  EXPECT_STREQ(min.name, "min");
  EXPECT_EQ(report::FormatIn(30, min), "0.50");
  EXPECT_EQ(report::FormatIn(5400, min), "90.0");
  EXPECT_EQ(report::FormatIn(7200, report::PickTimeUnit({7200})), "2.00");
  EXPECT_EQ(report::FormatIn(200000, report::PickTimeUnit({200000})), "2.31");
  EXPECT_STREQ(report::PickTimeUnit({}).name, "s");
}

// Hand-made trace: GPU and CPU jobs with start times, two VCs, epoch 2020-01-06 00:00 UTC.
constexpr const char* kTrace =
    "#orrery-trace v1\n#origin=canonical\n#epoch_unix=1578268800\n"
    "id,source_id,user,vc,name,submit,duration,walltime,start,end,gpus,gpu_milli,gpu_types,nodes,cpu_milli,mem_mib,state\n"
    "0,,alice,vcA,,0,100,,10,110,1,1000,,0,0,0,COMPLETED\n"
    "1,,alice,vcA,,3600,200,,3600,3800,2,1000,,0,0,0,FAILED\n"
    "2,,bob,vcB,,7200,1000,,7300,8300,8,1000,,0,0,0,COMPLETED\n"
    "3,,carol,vcB,,90000,50,,90400,90450,1,1000,,0,0,0,CANCELLED\n"
    "4,,carol,vcA,,90000,30,,90000,90030,0,1000,,0,1000,0,COMPLETED\n";

TEST(ReportCharts, AnalyzePageColoursJobClassesOnceAndFacetsVcs) {
  ImportReport rep;
  auto t = ImportTraceFromString(TraceFormat::kCanonical, kTrace, "hand.csv", {}, &rep);
  ASSERT_TRUE(t.ok()) << t.error().message;
  const Characterization c = Characterize(*t);
  const report::Page page = CharacterizationPage(c, "hand.csv");
  EXPECT_EQ(page.series, (std::vector<std::string>{"GPU jobs", "CPU jobs"}));
  EXPECT_EQ(CheckPageColours(page), (std::vector<std::string>{"duration_cdf", "duration_tail", "queue_cdf", "queue_tail"}));
  EXPECT_EQ(FindChart(page, "queue_tail")->spec["encoding"]["color"]["scale"]["range"], json({"#4c78a8", "#f58518"}));
  // The demand bars' caption names jobs dark and GPU time light: their colours say so.
  const report::Chart* demand = FindChart(page, "gpu_demand");
  ASSERT_NE(demand, nullptr);
  EXPECT_EQ(demand->spec["encoding"]["color"]["scale"]["domain"], json({"jobs", "GPU time"}));
  EXPECT_EQ(demand->spec["encoding"]["color"]["scale"]["range"], json({"#3d3d3d", "#8c8c8c"}));  // dark, light grey
  EXPECT_NE(demand->caption.find("all jobs (dark bar) and of all GPU time (light bar)"), std::string::npos);
  // Per-VC: one panel per VC (largest GPU time first), no colour; ISO dates on the axis.
  const report::Chart* vc = FindChart(page, "vc_over_time");
  ASSERT_NE(vc, nullptr);
  EXPECT_FALSE(vc->spec["encoding"].contains("color"));
  EXPECT_EQ(vc->spec["encoding"]["facet"]["sort"], json({"vcB", "vcA"}));
  EXPECT_EQ(vc->spec["encoding"]["x"]["axis"]["format"], "%Y-%m-%d");
  // Facts: the submissions' dates in the same format.
  std::vector<std::pair<std::string, std::string>> dates;
  for (const auto& f : page.facts)
    if (f.first.find("submission") != std::string::npos && f.first != "submissions span") dates.push_back(f);
  EXPECT_EQ(dates, (std::vector<std::pair<std::string, std::string>>{{"first submission", "2020-01-06"},
                                                                     {"last submission", "2020-01-07"}}));
  // Overview: one unit per row. GPU durations 100, 200, 1000, 50 (mean 337.5 s), CPU 30 s → min;
  // 337.5 / 60 = 5.625 exactly, printed to 2 decimals with the tie to even.
  const report::Table* o = FindTable(page, "overview");
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->rows[1], (std::vector<std::string>{"mean duration (min)", "5.62", "0.50"}));
  // Top users: bob's queueing 100 s, alice 5 s, carol 200 s (400 and 0) → one column in min.
  const report::Table* u = FindTable(page, "top_users");
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->header[4], "avg queueing (min)");
  EXPECT_EQ(u->rows[0][4], "1.67");  // bob: 100 s
}

}  // namespace
}  // namespace orrery
