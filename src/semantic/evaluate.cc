#include "semantic/evaluate.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "semantic/inspect.h"
#include "semantic/llm_schema.h"
#include "semantic/shell.h"
#include "semantic/strings.h"

namespace orrery::semantic {

namespace {

std::string BeforeParen(const std::string& s) {
  size_t p = s.find(" (");
  return p == std::string::npos ? s : s.substr(0, p);
}

// "owner/repo path @ commit, ..." -> base name of path.
std::string FileNameOfSource(const std::string& source) {
  size_t sp = source.find(' ');
  if (sp == std::string::npos) return "";
  size_t at = source.find(" @", sp + 1);
  std::string path = source.substr(sp + 1, at == std::string::npos ? std::string::npos : at - sp - 1);
  return path.substr(path.find_last_of('/') + 1);
}

std::optional<Value> LabelValue(const nlohmann::json& v, FieldId f) {
  if (v.is_null()) return std::nullopt;
  if (v.is_number()) return Value(v.get<double>());
  if (!v.is_string()) return std::nullopt;
  std::string s = v.get<std::string>();
  if (s.empty()) return std::nullopt;
  if (!IsTextField(f)) {
    char* end = nullptr;
    double d = std::strtod(s.c_str(), &end);
    if (end != nullptr && *end == '\0') return Value(d);
  }
  return Value(s);
}

Result<LabelledRecord> ParseRecord(std::string_view line, const std::string& file, uint64_t lineno) {
  const std::string where = file + ":" + std::to_string(lineno);
  ORR_ASSIGN_OR_RETURN(nlohmann::json j, ParseJsonLine(line, file, lineno));
  if (!j.is_object()) return MakeError(where + ":1: expected a JSON object per line, got " + std::string(j.type_name()));
  if (!j.contains("labels") || !j["labels"].is_object())
    return MakeError(where + ":1: field 'labels': expected an object, got " + (j.contains("labels") ? std::string(j["labels"].type_name()) : "nothing"));
  auto text_of = [&](const char* key) -> Result<std::string> {
    if (!j.contains(key) || j[key].is_null()) return std::string();
    if (!j[key].is_string()) return MakeError(where + ":1: field '" + key + "': expected a string, got " + j[key].type_name());
    return j[key].get<std::string>();
  };
  LabelledRecord r;
  ORR_ASSIGN_OR_RETURN(r.id, text_of("id"));
  ORR_ASSIGN_OR_RETURN(r.kind, text_of("kind"));
  ORR_ASSIGN_OR_RETURN(r.text, text_of("text"));
  ORR_ASSIGN_OR_RETURN(std::string source, text_of("source"));
  r.file_name = FileNameOfSource(source);
  if (r.file_name.empty()) r.file_name = r.id;
  const nlohmann::json& labels = j["labels"];
  for (size_t i = 0; i < kNumFields; ++i) {
    std::string name(FieldName(FieldAt(i)));
    if (labels.contains(name)) r.labels[i] = LabelValue(labels[name], FieldAt(i));
  }
  return r;
}

std::string Show(const std::optional<Value>& v) { return v ? FormatValue(*v) : "-"; }

}  // namespace

Result<std::vector<LabelledRecord>> ParseLabelledCorpus(std::string_view jsonl, const std::string& file) {
  std::vector<LabelledRecord> out;
  std::vector<std::string_view> lines = SplitLines(jsonl);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find_first_not_of(" \t") == std::string_view::npos) continue;
    ORR_ASSIGN_OR_RETURN(LabelledRecord r, ParseRecord(lines[i], file, i + 1));
    out.push_back(std::move(r));
  }
  if (out.empty()) return MakeError(file + ": no records (expected one JSON object per line)");
  return out;
}

bool ValuesMatch(FieldId f, const std::optional<Value>& predicted, const std::optional<Value>& label, bool strict) {
  if (!predicted || !label) return !predicted && !label;
  const auto* pd = std::get_if<double>(&*predicted);
  const auto* ld = std::get_if<double>(&*label);
  if (pd && ld) return std::fabs(*pd - *ld) <= 1e-6 * std::max(1.0, std::fabs(*ld));
  std::string p = FormatValue(*predicted), l = FormatValue(*label);
  switch (f) {
    case FieldId::kTimeLimit: return p == l;
    case FieldId::kFramework: return NormalizeName(BeforeParen(p)) == NormalizeName(BeforeParen(l));
    case FieldId::kModelName: {
      std::string np = NormalizeName(p), nl = NormalizeName(l);
      if (strict || np.size() < 4 || nl.size() < 4) return np == nl;
      return nl.find(np) != std::string::npos || np.find(nl) != std::string::npos;
    }
    default: return NormalizeName(p) == NormalizeName(l);
  }
}

double CorpusAccuracy::overall() const {
  if (evaluated == 0) return 0;
  size_t c = 0;
  for (const FieldAccuracy& f : fields) c += f.correct;
  return static_cast<double>(c) / static_cast<double>(evaluated * kNumFields);
}

CorpusAccuracy EvaluateCorpus(const std::vector<LabelledRecord>& records) {
  CorpusAccuracy a;
  a.records = records.size();
  for (const LabelledRecord& r : records) {
    if (r.text.empty()) {
      ++a.skipped_no_text;
      continue;
    }
    ++a.evaluated;
    LaunchSchema s = InspectText(r.file_name, r.text);
    if (LlmNeed need = NeedsLlm(s); need != LlmNeed::kNone)
      a.llm_triggers.push_back(r.id + " (" + std::string(LlmNeedName(need)) + ")");
    RecordResult rr;
    rr.id = r.id;
    for (size_t i = 0; i < kNumFields; ++i) {
      FieldId f = FieldAt(i);
      std::optional<Value> p;
      if (s.fields[i]) p = s.fields[i]->value;
      bool ok = ValuesMatch(f, p, r.labels[i], false);
      FieldAccuracy& fa = a.fields[i];
      fa.correct += ok;
      if (r.labels[i]) {
        ++fa.stated;
        fa.stated_correct += ok;
      } else if (p) {
        ++fa.invented;
      }
      if (f == FieldId::kModelName) a.model_name_strict += ValuesMatch(f, p, r.labels[i], true);
      if (!ok) rr.misses.push_back(std::string(FieldName(f)) + ": predicted " + Show(p) + ", label " + Show(r.labels[i]));
    }
    a.per_record.push_back(std::move(rr));
  }
  return a;
}

std::string FormatAccuracy(const CorpusAccuracy& a, bool per_record) {
  std::string out;
  char buf[256];
  std::snprintf(buf, sizeof buf, "records %zu, evaluated %zu, skipped (text not stored) %zu\n", a.records, a.evaluated,
                a.skipped_no_text);
  out += buf;
  std::snprintf(buf, sizeof buf, "%-26s %9s %12s %9s\n", "field", "accuracy", "stated-recall", "invented");
  out += buf;
  for (size_t i = 0; i < kNumFields; ++i) {
    const FieldAccuracy& f = a.fields[i];
    double acc = a.evaluated ? static_cast<double>(f.correct) / static_cast<double>(a.evaluated) : 0;
    std::string recall = f.stated ? std::to_string(f.stated_correct) + "/" + std::to_string(f.stated) : "-";
    std::snprintf(buf, sizeof buf, "%-26s %8.1f%% %12s %9zu\n", std::string(FieldName(FieldAt(i))).c_str(), 100 * acc,
                  recall.c_str(), f.invented);
    out += buf;
  }
  double strict = a.evaluated ? static_cast<double>(a.model_name_strict) / static_cast<double>(a.evaluated) : 0;
  std::snprintf(buf, sizeof buf, "model_name (strict)        %8.1f%%\nall fields                 %8.1f%%\n", 100 * strict,
                100 * a.overall());
  out += buf;
  std::string triggers;
  for (const std::string& t : a.llm_triggers) triggers += (triggers.empty() ? ": " : ", ") + t;
  out += "would ask the LLM (--llm-config) " + std::to_string(a.llm_triggers.size()) + " of " + std::to_string(a.evaluated) +
         triggers + "\n";
  if (per_record) {
    for (const RecordResult& r : a.per_record) {
      out += r.id + (r.misses.empty() ? ": all fields match\n" : ":\n");
      for (const std::string& m : r.misses) out += "  " + m + "\n";
    }
  }
  return out;
}

}  // namespace orrery::semantic
