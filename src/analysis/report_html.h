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

struct Page {
  std::string title;
  std::vector<std::pair<std::string, std::string>> facts;  // key/value lines in the header
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

// Line chart of CDFs, one colour per series: rows {series, x, p}.
Chart CdfChart(std::string id, std::string title, std::string x_title, bool log_x,
               const std::vector<std::pair<std::string, std::vector<CdfPoint>>>& series,
               std::string legend_title, std::string caption);

// Readable number formats.
std::string FormatSeconds(double s);  // "42 s", "3.1 min", "5.2 h", "2.4 d"
std::string FormatFixed(double v, int digits);
std::string FormatPercent(double fraction, int digits = 1);
std::string CsvEscape(const std::string& s);

}  // namespace orrery::report
