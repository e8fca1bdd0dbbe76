#include "logs/evaluate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/io.h"
#include "logs/progress.h"

namespace orrery::logs {

namespace {

using json = nlohmann::json;

Result<std::vector<json>> ReadJsonl(const std::string& path) {
  auto reader = LineReader::Open(path);
  if (!reader.ok()) return reader.error();
  std::vector<json> out;
  std::string_view line;
  while ((*reader)->Next(&line)) {
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    std::string at = path + ":" + std::to_string((*reader)->line_number());
    ORR_ASSIGN_OR_RETURN(json j, ParseJsonLine(line, path, (*reader)->line_number()));
    if (!j.is_object()) return MakeError(at + ": expected a JSON object");
    if (!j.contains("text") || !j["text"].is_string()) return MakeError(at + ": field 'text': expected a string");
    out.push_back(std::move(j));
  }
  if (!(*reader)->error().empty()) return MakeError(path + ": " + (*reader)->error());
  if (out.empty()) return MakeError(path + ": no records (an evaluation needs at least one labelled record)");
  return out;
}

std::string Str(const json& j, const char* key) {
  if (!j.contains(key)) return "";
  const json& v = j[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return DumpJson(v);
}

// The corpus writes "" for "not shown"; numbers as JSON numbers.
std::optional<double> Num(const json& j, const char* key) {
  if (!j.contains(key)) return std::nullopt;
  const json& v = j[key];
  if (v.is_number()) return v.get<double>();
  if (v.is_string() && !v.get<std::string>().empty()) {
    try {
      return std::stod(v.get<std::string>());
    } catch (...) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::string Show(const std::optional<double>& v) {
  if (!v) return "null";
  char b[40];
  std::snprintf(b, sizeof b, "%.10g", *v);
  return b;
}

bool Same(const std::optional<double>& want, const std::optional<double>& got, double rel) {
  if (!want || !got) return want.has_value() == got.has_value();
  return std::fabs(*want - *got) <= rel * std::max(1.0, std::fabs(*want));
}

std::string Pct(const Tally& t) {
  char b[64];
  std::snprintf(b, sizeof b, "%5.1f %% (%llu/%llu)", 100.0 * t.rate(), static_cast<unsigned long long>(t.right),
                static_cast<unsigned long long>(t.total));
  return b;
}

json TallyJson(const Tally& t) { return {{"right", t.right}, {"total", t.total}, {"rate", t.rate()}}; }

}  // namespace

bool RecordFilter::Keep(const std::string& id) const {
  if (!only.empty() && std::find(only.begin(), only.end(), id) == only.end()) return false;
  return std::find(except.begin(), except.end(), id) == except.end();
}

Result<std::vector<FailureRecord>> ReadFailureRecords(const std::string& path) {
  ORR_ASSIGN_OR_RETURN(std::vector<json> recs, ReadJsonl(path));
  std::vector<FailureRecord> out;
  for (const json& j : recs) {
    FailureRecord r;
    r.id = Str(j, "id");
    r.text = j["text"].get<std::string>();
    r.category = Str(j, "category");
    r.subtype = Str(j, "subtype");
    r.suspect = Str(j, "suspect_node");
    std::string retry = Str(j, "retry");
    r.retry = retry == "yes" || retry == "true";
    out.push_back(std::move(r));
  }
  return out;
}

void ScoreDiagnosis(const FailureRecord& rec, const Diagnosis& d, DiagnoseScores* s) {
  auto tally = [&](Tally& t, bool ok) {
    ++t.total;
    t.right += ok ? 1 : 0;
  };
  auto check = [&](Tally& t, const char* field, const std::string& want, const std::string& got) {
    tally(t, want == got);
    if (want != got) s->misses.push_back({rec.id, field, want, got});
    return want == got;
  };
  const std::string cat(CategoryName(d.category));
  bool cat_ok = check(s->category, "category", rec.category, cat);
  tally(s->by_category[rec.category], cat_ok);
  if (!cat_ok) ++(d.category == Category::kUnknown ? s->withheld : s->confident_wrong);
  bool sub_ok = check(s->subtype, "subtype", rec.subtype, d.subtype);
  tally(s->by_subtype[rec.subtype], sub_ok);
  check(s->suspect, "suspect_node", rec.suspect, d.suspect_node);
  if (rec.retry && d.retry) ++s->tp;
  if (!rec.retry && d.retry) ++s->fp;
  if (rec.retry && !d.retry) ++s->fn;
  if (!rec.retry && !d.retry) ++s->tn;
  if (rec.retry != d.retry) s->misses.push_back({rec.id, "retry", rec.retry ? "yes" : "no", d.retry ? "yes" : "no"});
}

Result<ProgressScores> EvaluateProgress(const std::string& path, const RecordFilter& filter) {
  ORR_ASSIGN_OR_RETURN(std::vector<json> recs, ReadJsonl(path));
  ProgressScores s;
  for (const json& j : recs) {
    if (!filter.Keep(Str(j, "id"))) continue;
    ProgressTracker t;
    t.Feed(j["text"].get<std::string>(), kNoTime);
    t.Finish(kNoTime);
    Reading r = t.latest();
    std::string id = Str(j, "id");
    auto field = [&](const char* name, std::optional<double> want, std::optional<double> got, double rel) {
      Tally& t2 = s.fields[name];
      ++t2.total;
      if (Same(want, got, rel)) ++t2.right;
      else s.misses.push_back({id, name, Show(want), Show(got)});
    };
    auto as_d = [](const std::optional<int64_t>& v) { return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt; };
    std::string fw(FrameworkName(r.framework));
    Tally& ft = s.fields["framework"];
    ++ft.total;
    if (fw == Str(j, "framework")) ++ft.right;
    else s.misses.push_back({id, "framework", Str(j, "framework"), fw});
    field("step", Num(j, "step"), as_d(r.step), 1e-9);
    field("total_steps", Num(j, "total_steps"), as_d(r.total_steps), 1e-9);
    field("epoch", Num(j, "epoch"), r.epoch, 1e-6);
    field("loss", Num(j, "loss"), r.loss, 1e-6);
    field("seconds_per_step", Num(j, "seconds_per_step"), r.seconds_per_step, 0.01);
    if (j.contains("reader")) {  // the fixtures name the reader that should answer
      Tally& rt = s.fields["reader"];
      ++rt.total;
      if (r.reader == Str(j, "reader")) ++rt.right;
      else s.misses.push_back({id, "reader", Str(j, "reader"), r.reader});
    }
  }
  return s;
}

std::string FormatDiagnoseScores(const DiagnoseScores& s, bool as_json) {
  if (as_json) {
    json j;
    j["records"] = s.category.total;
    j["category"] = TallyJson(s.category);
    j["subtype"] = TallyJson(s.subtype);
    j["suspect_node"] = TallyJson(s.suspect);
    j["withheld"] = s.withheld;
    j["confident_wrong"] = s.confident_wrong;
    for (const auto& [k, t] : s.by_category) j["by_category"][k] = TallyJson(t);
    for (const auto& [k, t] : s.by_subtype) j["by_subtype"][k] = TallyJson(t);
    j["retry"] = {{"tp", s.tp}, {"fp", s.fp}, {"fn", s.fn}, {"tn", s.tn},
                  {"precision", s.retry_precision()}, {"recall", s.retry_recall()}};
    j["misses"] = json::array();
    for (const DiagnoseMiss& m : s.misses) j["misses"].push_back({{"id", m.id}, {"field", m.field}, {"want", m.want}, {"got", m.got}});
    return DumpJson(j, 2) + "\n";
  }
  std::string o;
  o += "records            " + std::to_string(s.category.total) + "\n";
  o += "category accuracy  " + Pct(s.category) + "\n";
  for (const auto& [k, t] : s.by_category) o += "  " + k + std::string(k.size() < 17 ? 17 - k.size() : 1, ' ') + Pct(t) + "\n";
  o += "category withheld  " + std::to_string(s.withheld) + " (unknown), confidently wrong " +
       std::to_string(s.confident_wrong) + "\n";
  o += "subtype accuracy   " + Pct(s.subtype) + "\n";
  for (const auto& [k, t] : s.by_subtype) o += "  " + k + std::string(k.size() < 22 ? 22 - k.size() : 1, ' ') + Pct(t) + "\n";
  char b[160];
  std::snprintf(b, sizeof b, "retry precision    %.3f  recall %.3f  (tp %llu fp %llu fn %llu tn %llu)\n", s.retry_precision(),
                s.retry_recall(), static_cast<unsigned long long>(s.tp), static_cast<unsigned long long>(s.fp),
                static_cast<unsigned long long>(s.fn), static_cast<unsigned long long>(s.tn));
  o += b;
  o += "suspect_node exact " + Pct(s.suspect) + "\n";
  for (const DiagnoseMiss& m : s.misses) o += "miss " + m.id + " " + m.field + ": want \"" + m.want + "\", got \"" + m.got + "\"\n";
  return o;
}

std::string FormatProgressScores(const ProgressScores& s, bool as_json) {
  static const char* kOrder[] = {"framework", "step", "total_steps", "epoch", "loss", "seconds_per_step", "reader"};
  if (as_json) {
    json j;
    for (const char* k : kOrder)
      if (s.fields.count(k)) j["fields"][k] = TallyJson(s.fields.at(k));
    j["misses"] = json::array();
    for (const DiagnoseMiss& m : s.misses) j["misses"].push_back({{"id", m.id}, {"field", m.field}, {"want", m.want}, {"got", m.got}});
    return DumpJson(j, 2) + "\n";
  }
  std::string o;
  for (const char* k : kOrder) {
    if (!s.fields.count(k)) continue;
    std::string name = k;
    o += name + std::string(18 - name.size(), ' ') + Pct(s.fields.at(k)) + "\n";
  }
  for (const DiagnoseMiss& m : s.misses) o += "miss " + m.id + " " + m.field + ": want " + m.want + ", got " + m.got + "\n";
  return o;
}

}  // namespace orrery::logs
