#include "semantic/inspect.h"

#include <cmath>
#include <cstdio>

#include "semantic/document.h"
#include "semantic/extract.h"
#include "semantic/llm_schema.h"

namespace orrery::semantic {

namespace {

bool EndsWithPath(std::string_view path, std::string_view ref) {
  auto strip = [](std::string_view p) {
    while (p.rfind("./", 0) == 0) p.remove_prefix(2);
    return p;
  };
  path = strip(path);
  ref = strip(ref);
  if (ref.empty() || path.size() < ref.size()) {
    // the input is named by a shorter path than the reference: compare base names
    std::string_view pb = path.substr(path.find_last_of('/') + 1);
    std::string_view rb = ref.substr(ref.find_last_of('/') + 1);
    return !pb.empty() && pb == rb;
  }
  if (path.substr(path.size() - ref.size()) != ref) {
    std::string_view pb = path.substr(path.find_last_of('/') + 1);
    std::string_view rb = ref.substr(ref.find_last_of('/') + 1);
    return !pb.empty() && pb == rb;
  }
  return path.size() == ref.size() || path[path.size() - ref.size() - 1] == '/';
}

nlohmann::ordered_json ValueJson(const Value& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  double d = std::get<double>(v);
  // Whole numbers print as integers; the range check comes first, since converting a double
  // beyond long long's range is undefined.
  if (std::fabs(d) < 9e15 && d == std::floor(d)) return static_cast<long long>(d);
  return d;
}

}  // namespace

LaunchSchema InspectText(std::string_view name, std::string_view text) {
  Document doc = ReadDocument(name, text, DetectFormat(name, text));
  return Extract(doc);
}

std::vector<LaunchSchema> InspectFiles(const std::vector<InputFile>& files, LlmSchemaFiller* llm) {
  std::vector<Document> docs;
  docs.reserve(files.size());
  for (const InputFile& f : files) docs.push_back(ReadDocument(f.name, f.text, DetectFormat(f.name, f.text)));
  std::vector<LaunchSchema> out;
  for (size_t i = 0; i < docs.size(); ++i) {
    Document merged = docs[i];
    for (const std::string& ref : ReferencedFiles(docs[i])) {
      for (size_t j = 0; j < docs.size(); ++j) {
        if (j != i && EndsWithPath(docs[j].file, ref)) MergeReferenced(&merged, docs[j]);
      }
    }
    out.push_back(Extract(merged));
    if (llm) llm->Fill(&out.back(), files[i]);
  }
  return out;
}

nlohmann::ordered_json ToJson(const LaunchSchema& s) {
  nlohmann::ordered_json j;
  nlohmann::ordered_json sources;
  for (size_t i = 0; i < kNumFields; ++i) {
    const auto& fv = s.fields[i];
    std::string name(FieldName(FieldAt(i)));
    if (!fv) {
      j[name] = nullptr;
      continue;
    }
    j[name] = ValueJson(fv->value);
    nlohmann::ordered_json src;
    src["file"] = fv->origin.file;
    src["line"] = fv->origin.line;
    src["col"] = fv->origin.col;
    src["key"] = fv->origin.key;
    src["provenance"] = std::string(ProvenanceName(fv->provenance));
    src["confidence"] = std::round(fv->confidence * 100) / 100;
    if (!fv->note.empty()) src["note"] = fv->note;
    sources[name] = std::move(src);
  }
  sources["_file"] = s.file;
  if (s.params_estimate) {
    sources["_params_estimate"] = {{"billions", std::round(s.params_estimate->billions * 1000) / 1000},
                                   {"method", s.params_estimate->method}};
  }
  nlohmann::ordered_json warnings = nlohmann::ordered_json::array();
  for (const Warning& w : s.warnings) warnings.push_back(FormatWarning(w));
  sources["_warnings"] = std::move(warnings);
  j["sources"] = std::move(sources);
  return j;
}

std::string ToText(const LaunchSchema& s) {
  std::string out = s.file + "\n";
  char buf[512];
  for (size_t i = 0; i < kNumFields; ++i) {
    const auto& fv = s.fields[i];
    std::string name(FieldName(FieldAt(i)));
    if (!fv) {
      std::snprintf(buf, sizeof buf, "  %-26s -\n", name.c_str());
      out += buf;
      continue;
    }
    std::string where = fv->origin.line > 0 ? fv->origin.file + ":" + std::to_string(fv->origin.line) + " " + fv->origin.key + " "
                        : fv->provenance == Provenance::kDerived ? std::string()
                                                                 : fv->origin.key + " ";
    std::snprintf(buf, sizeof buf, "  %-26s %-24s %.2f  %s(%s)%s%s\n", name.c_str(), FormatValue(fv->value).c_str(),
                  fv->confidence, where.c_str(), std::string(ProvenanceName(fv->provenance)).c_str(),
                  fv->note.empty() ? "" : ": ", fv->note.c_str());
    out += buf;
  }
  if (s.params_estimate) {
    std::snprintf(buf, sizeof buf, "  %-26s %-24.3g      %s\n", "params (estimate)", s.params_estimate->billions,
                  s.params_estimate->method.c_str());
    out += buf;
  }
  for (const Warning& w : s.warnings) out += "  warning: " + FormatWarning(w) + "\n";
  return out;
}

}  // namespace orrery::semantic
