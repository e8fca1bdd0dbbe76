// Renders the HTML reports of `orrery analyze` and `orrery report` in headless Chromium and
// checks that every chart drew: the page sets <body data-charts-rendered=N data-charts-total=N
// data-charts-failed=0> after every vegaEmbed promise resolves (analysis/report_html.h); the
// DOM is dumped with --dump-dom. Screenshots are kept under <build>/report-artifacts/.
// Skips when `chromium` is not installed (scripts/install-deps.sh installs it).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

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
    const fs::path png = artifacts_ / (name + ".png");
    fs::remove(png);
    Sh(kChromium + "--user-data-dir=$(mktemp -d) --window-size=1280,4000 --screenshot='" + png.string() + "' '" +
           url + "' >/dev/null 2>&1",
       &rc);
    ASSERT_TRUE(fs::exists(png)) << "no screenshot written";
    EXPECT_GT(fs::file_size(png), 50'000u) << "screenshot looks blank: " << png;
  }

  fs::path work_, artifacts_;
};

TEST_F(ReportRender, AnalyzeHeliosFixture) {
  const std::string out = (work_ / "helios").string();
  Run(std::string(ORRERY_BINARY) + " analyze -q " ORRERY_SOURCE_DIR "/tests/fixtures/trace/helios_cluster_log.csv --out " + out);
  CheckRendered(fs::path(out) / "report.html", "analyze_helios_fixture");
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
