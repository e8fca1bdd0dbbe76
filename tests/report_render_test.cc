// Renders the HTML reports of `orrery analyze` and `orrery report` in headless Chromium and
// checks that every chart drew: the page sets <body data-charts-rendered=N data-charts-total=N
// data-charts-failed=0> after every vegaEmbed promise resolves (analysis/report_html.h); the
// DOM is dumped with --dump-dom. Every rendered legend that names the page's series (report.json
// "series") lists exactly the series its chart shows, in page order, each with its page colour.
// Screenshots are kept under <build>/report-artifacts/.
// Skips when `chromium` is not installed (scripts/install-deps.sh installs it).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::string Sh(const std::string& cmd, int* rc) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    *rc = -1;
    return out;
  }
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  *rc = pclose(p);
  return out;
}

std::string Unescape(std::string s) {
  const std::pair<const char*, const char*> ents[] = {{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&amp;", "&"}};
  for (const auto& [from, to] : ents)
    for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + 1)) s.replace(p, std::string(from).size(), to);
  return s;
}

struct LegendEntry {
  std::string label;
  std::string symbol;  // the markup of the entry's symbol (holds its colour)
};

// The legend entries drawn in one chart's markup, in drawing order (all legends of the chart).
std::vector<LegendEntry> LegendEntries(const std::string& chart) {
  std::vector<LegendEntry> out;
  size_t symbol = std::string::npos;
  for (size_t p = chart.find("role-legend-"); p != std::string::npos; p = chart.find("role-legend-", p + 1)) {
    if (chart.compare(p, 18, "role-legend-symbol") == 0) symbol = p;
    if (chart.compare(p, 17, "role-legend-label") != 0) continue;
    const std::string group = chart.substr(p, chart.find("</g>", p) - p);
    const std::string sym = symbol == std::string::npos ? "" : chart.substr(symbol, chart.find("</g>", symbol) - symbol);
    static const std::regex text("<text[^>]*>([^<]*)</text>");
    for (auto it = std::sregex_iterator(group.begin(), group.end(), text); it != std::sregex_iterator(); ++it)
      out.push_back({Unescape((*it)[1].str()), sym});
  }
  return out;
}

// Each chart's markup in the dumped DOM, by chart id (without the "chart-" prefix).
std::vector<std::pair<std::string, std::string>> ChartMarkup(const std::string& dom) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::string open = "<div id=\"chart-";
  for (size_t p = dom.find(open); p != std::string::npos;) {
    const size_t id_end = dom.find('"', p + open.size());
    const size_t next = dom.find(open, p + 1);
    out.push_back({dom.substr(p + open.size(), id_end - p - open.size()), dom.substr(p, next == std::string::npos ? std::string::npos : next - p)});
    p = next;
  }
  return out;
}

bool HaveChromium() {
  int rc = 0;
  Sh("command -v chromium >/dev/null 2>&1", &rc);
  return rc == 0;
}

const std::string kChromium =
    "timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
    "--disable-background-networking --disable-component-update --disable-sync --hide-scrollbars "
    "--virtual-time-budget=20000 ";

class ReportRender : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveChromium()) GTEST_SKIP() << "chromium not installed (apt package chromium; scripts/install-deps.sh)";
    work_ = fs::temp_directory_path() / ("orrery-report-test-" + std::to_string(getpid()));
    fs::remove_all(work_);
    fs::create_directories(work_);
    artifacts_ = fs::path(ORRERY_BINARY).parent_path() / "report-artifacts";
    fs::create_directories(artifacts_);
  }
  void TearDown() override {
    if (!work_.empty()) fs::remove_all(work_);
  }

  void Run(const std::string& cmd) {
    int rc = 0;
    std::string out = Sh(cmd + " 2>&1", &rc);
    ASSERT_EQ(rc, 0) << cmd << "\n" << out;
  }

  // Dumps the DOM and checks every chart rendered; saves a screenshot as <name>.png.
  void CheckRendered(const fs::path& html, const std::string& name) {
    const std::string url = "file://" + fs::absolute(html).string();
    int rc = 0;
    const std::string dom = Sh(kChromium + "--user-data-dir=$(mktemp -d) --dump-dom '" + url + "' 2>/dev/null", &rc);
    ASSERT_EQ(rc, 0) << "chromium --dump-dom failed for " << html;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(dom, m, std::regex("<body data-charts[^>]*>"))) << "no <body data-charts-...> in the dumped DOM";
    const std::string body = m.str();
    std::smatch r, t, f;
    ASSERT_TRUE(std::regex_search(body, t, std::regex("data-charts-total=\"(\\d+)\""))) << body;
    ASSERT_TRUE(std::regex_search(body, r, std::regex("data-charts-rendered=\"(\\d+)\""))) << body;
    ASSERT_TRUE(std::regex_search(body, f, std::regex("data-charts-failed=\"(\\d+)\"")))
        << "charts did not finish rendering: " << body;
    EXPECT_GT(std::stoi(t[1]), 0);
    EXPECT_EQ(r[1], t[1]) << name << ": not every chart rendered";
    EXPECT_EQ(f[1], "0") << name << ": a chart failed";
    // Every chart container holds an SVG.
    size_t charts = 0, svgs = 0;
    for (size_t p = dom.find("<div id=\"chart-"); p != std::string::npos; p = dom.find("<div id=\"chart-", p + 1)) {
      ++charts;
      const size_t next = dom.find("<div id=\"chart-", p + 1);
      const size_t svg = dom.find("<svg", p);
      if (svg != std::string::npos && (next == std::string::npos || svg < next)) ++svgs;
    }
    EXPECT_EQ(svgs, charts) << name << ": a chart container has no SVG";
    CheckLegends(dom, html.parent_path() / "report.json", name);
    const fs::path png = artifacts_ / (name + ".png");
    fs::remove(png);
    Sh(kChromium + "--user-data-dir=$(mktemp -d) --window-size=1280,4000 --screenshot='" + png.string() + "' '" +
           url + "' >/dev/null 2>&1",
       &rc);
    ASSERT_TRUE(fs::exists(png)) << "no screenshot written";
    EXPECT_GT(fs::file_size(png), 50'000u) << "screenshot looks blank: " << png;
  }

  // Every legend that lists series of the page: exactly the series in the chart's data (report.json),
  // in page order, each symbol in the series' page colour. Counts such legends into legends_.
  void CheckLegends(const std::string& dom, const fs::path& report_json, const std::string& name) {
    std::ifstream in(report_json);
    const nlohmann::json page = nlohmann::json::parse(in);
    std::vector<std::string> order;
    std::map<std::string, std::string> color;
    for (const auto& s : page.at("series")) {
      order.push_back(s.at("label"));
      color[s.at("label")] = s.at("color");
    }
    std::map<std::string, std::set<std::string>> shown;  // chart id -> series in its data
    for (const auto& sec : page.at("sections"))
      for (const auto& c : sec.at("charts"))
        for (const auto& row : c.at("data"))
          for (const char* key : {"series", "policy"})
            if (row.contains(key) && color.count(row[key].get<std::string>())) shown[c.at("id")].insert(row[key].get<std::string>());
    legends_ = 0;
    for (const auto& [id, markup] : ChartMarkup(dom)) {
      std::vector<std::string> drawn, want;
      for (const auto& e : LegendEntries(markup)) {
        if (!color.count(e.label)) continue;
        drawn.push_back(e.label);
        EXPECT_NE(e.symbol.find(color[e.label]), std::string::npos)
            << name << " " << id << ": legend symbol of " << e.label << " is not " << color[e.label] << ": " << e.symbol;
      }
      if (drawn.empty()) continue;
      ++legends_;
      for (const auto& label : order)
        if (shown[id].count(label)) want.push_back(label);
      EXPECT_EQ(drawn, want) << name << " " << id << ": legend not the chart's series in page order";
    }
  }

  fs::path work_, artifacts_;
  int legends_ = 0;
};

TEST_F(ReportRender, AnalyzeHeliosFixture) {
  const std::string out = (work_ / "helios").string();
  Run(std::string(ORRERY_BINARY) + " analyze -q " ORRERY_SOURCE_DIR "/tests/fixtures/trace/helios_cluster_log.csv --out " + out);
  CheckRendered(fs::path(out) / "report.html", "analyze_helios_fixture");
  EXPECT_EQ(legends_, 4) << "duration and queueing CDFs and tails: a GPU jobs / CPU jobs legend each";
  std::ifstream in(fs::path(out) / "report.html");
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("<title>Workload characterization: helios_cluster_log.csv</title>"), std::string::npos)
      << "the title names the trace by its file name";
  EXPECT_TRUE(fs::exists(fs::path(out) / "report.json"));
  EXPECT_TRUE(fs::exists(fs::path(out) / "csv" / "duration_cdf.csv"));
}

TEST_F(ReportRender, AnalyzeAcmeFixture) {
  const std::string out = (work_ / "acme").string();
  Run(std::string(ORRERY_BINARY) + " analyze -q " ORRERY_SOURCE_DIR "/tests/fixtures/trace/acme_seren.csv --out " + out);
  CheckRendered(fs::path(out) / "report.html", "analyze_acme_fixture");
  EXPECT_TRUE(fs::exists(fs::path(out) / "csv" / "job_types.csv"));
}

TEST_F(ReportRender, ReportMultiPolicySimulation) {
  const std::string sim = (work_ / "sim").string();
  Run(std::string(ORRERY_BINARY) + " simulate --generate helios-venus --jobs 1500 --policy fifo,sjf,qssf,easy -q --out-dir " + sim);
  Run(std::string(ORRERY_BINARY) + " report -q " + sim + " --out " + sim + "/report");
  CheckRendered(fs::path(sim) / "report" / "report.html", "report_multi_policy");
  // JCT and queueing CDFs and tails, small vs large (CDF and bars), utilization, pending demand, per VC.
  EXPECT_EQ(legends_, 9);
}

// Two simulations of one workload with failures, two recoveries: the comparison report gets
// the "Failures and recovery" chart and it renders.
TEST_F(ReportRender, ReportSimulationWithFailures) {
  const std::string base = std::string(ORRERY_BINARY) + " simulate --generate acme-kalos --jobs 3000 --cluster " ORRERY_SOURCE_DIR
                           "/configs/acme-kalos.toml --policy fifo -q --failures trace";
  const std::string acme = (work_ / "acme").string(), requeue = (work_ / "requeue").string();
  Run(base + " --recovery acme --out-dir " + acme);
  Run(base + " --recovery requeue --out-dir " + requeue);
  Run(std::string(ORRERY_BINARY) + " report -q " + acme + " " + requeue + " --out " + acme + "/report");
  const fs::path html = fs::path(acme) / "report" / "report.html";
  std::ifstream in(html);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("chart-failure_gpu_hours"), std::string::npos) << "no failures chart in the report";
  CheckRendered(html, "report_failures");
}

}  // namespace
