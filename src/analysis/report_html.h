// Self-contained HTML reports (orrery analyze / orrery report; docs/reports.md).
//
// A Page is a list of sections; each holds charts (Vega-Lite specs whose data is inlined)
// and tables. WriteReport writes, atomically, into one folder:
//   report.html   one file, opens offline: Vega, Vega-Lite and vega-embed (vendored from
//                 web/package-lock.json at build time, embedded in the binary) are inlined
//   report.json   every chart's data and every table, by section
//   csv/<id>.csv  one CSV per chart (its data rows) and per table
// The page sets <body data-charts-rendered="N" data-charts-total="N"> once every chart's
// vegaEmbed promise has resolved (data-charts-failed on error); the render test checks it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace orrery::report {

struct Table {
  std::string id;       // file name stem of its CSV
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

struct Chart {
  std::string id;       // unique in the page; file name stem of its CSV
  std::string title;
  std::string caption;  // one or two sentences under the chart
  nlohmann::ordered_json data = nlohmann::ordered_json::array();  // rows (objects with the same keys)
  nlohmann::ordered_json spec;  // Vega-Lite spec without "data" (WriteReport adds it)
};

struct Section {
  std::string title;
  std::string text;                // paragraph under the title
  std::vector<Chart> charts;
  std::vector<Table> tables;
  std::vector<std::string> missing;  // what the input cannot support, shown as notes
};

// The page's series (the runs of `orrery report`, the job classes of `orrery analyze`), in
// page order: series i has colour kSeriesPalette[i % kSeriesPaletteSize] in every chart of the
// page, and every legend lists series in this order.
constexpr const char* kSeriesPalette[] = {"#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2",
                                          "#eeca3b", "#9d755d", "#ff9da6", "#17becf", "#79706e", "#bcbd22"};
constexpr size_t kSeriesPaletteSize = sizeof(kSeriesPalette) / sizeof(kSeriesPalette[0]);
// Colours of the parts of a whole and of other categories that are not series (failure causes,
// RL phases, final states, measures): greys and browns, never a series colour.
constexpr const char* kPartPalette[] = {"#3d3d3d", "#8c8c8c", "#c7c7c7", "#8c6d31", "#c4a35a",
                                        "#e7d4a1", "#5c4a2e", "#a8a08c", "#6b6b6b", "#dcdcdc"};
constexpr size_t kPartPaletteSize = sizeof(kPartPalette) / sizeof(kPartPalette[0]);

struct Page {
  std::string title;
  std::vector<std::pair<std::string, std::string>> facts;  // key/value lines in the header
  std::vector<std::string> series;  // colour domain, in page order (see kSeriesPalette)
  std::vector<Section> sections;
};

std::string RenderHtml(const Page& page);
nlohmann::ordered_json PageToJson(const Page& page);
// Creates out_dir (and out_dir/csv) and writes report.html, report.json and the CSVs atomically.
Status WriteReport(const Page& page, const std::string& out_dir);

// ---- Helpers shared by the two reports -------------------------------------------------

struct CdfPoint {
  double x = 0;  // value
  double p = 0;  // fraction of values <= x
};
// Empirical CDF of `sorted` (ascending) with at most max_points points: one per distinct
// value while they fit, else the first value reaching each probability k/max_points
// (always including the minimum and the maximum).
std::vector<CdfPoint> Cdf(const std::vector<double>& sorted, size_t max_points = 200);

// The colour of a page series (kSeriesPalette by its index in `domain`; grey if absent).
std::string SeriesColor(const std::vector<std::string>& domain, const std::string& label);
// A Vega-Lite colour encoding of `field` by the page's series: its scale domain is the series
// of `domain` that occur in data[*][field], in page order, its range their colours, and the
// legend lists them in that order.
nlohmann::ordered_json SeriesColorEncoding(const std::vector<std::string>& domain, const nlohmann::ordered_json& data,
                                           const std::string& field, const std::string& title);
// A colour encoding of a category that is not a series: the given order, kPartPalette colours.
nlohmann::ordered_json PartColorEncoding(const std::string& field, const std::string& title,
                                         const std::vector<std::string>& order);

using CdfSeries = std::vector<std::pair<std::string, std::vector<CdfPoint>>>;
// Line chart of CDFs, coloured by the page's series (`domain`): rows {series, x, p}.
Chart CdfChart(std::string id, std::string title, std::string x_title, bool log_x, const CdfSeries& series,
               std::string legend_title, std::string caption, const std::vector<std::string>& domain);

// The tail of a distribution: the values at the quantiles q = 1 − 0.1 × 10^(−2k/(n−1)),
// k = 0..n−1 (p90 to p99.9, evenly spaced on a log scale of 1 − q), by nearest rank: the
// value of rank ceil(q × N) of the N sorted values. Empty when `sorted` is.
struct TailPoint {
  double q = 0;         // quantile
  double exceed = 0;    // 1 − q: fraction of values above x
  double x = 0;         // value
};
std::vector<TailPoint> Tail(const std::vector<double>& sorted, size_t n = 31);
using TailSeries = std::vector<std::pair<std::string, std::vector<TailPoint>>>;
// Tail view next to a CDF: 1 − CDF from p90 to p99.9 on log-log axes, coloured by the page's
// series; rows {series, q, exceed, x}.
Chart TailChart(std::string id, std::string title, std::string x_title, const TailSeries& series,
                std::string legend_title, std::string caption, const std::vector<std::string>& domain);

// One unit for a column (or row) of durations: the largest magnitude picks it, as FormatSeconds
// does ("s", "min", "h", "d"); every cell is then written in it.
struct TimeUnit {
  const char* name = "s";
  double seconds = 1;
};
TimeUnit PickTimeUnit(const std::vector<double>& seconds);
std::string FormatIn(double seconds, TimeUnit unit);  // 3 significant digits at most 2 decimals: "0.25", "12.5", "340"

// Readable number formats.
std::string FormatSeconds(double s);  // "42 s", "3.1 min", "5.2 h", "2.4 d"
std::string FormatFixed(double v, int digits);
std::string FormatPercent(double fraction, int digits = 1);
std::string CsvEscape(const std::string& s);

}  // namespace orrery::report
