#include "eval/suite.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <memory>

#include "base/io.h"
#include "base/parse.h"

namespace orrery::eval {

std::string_view TaskTypeName(TaskType t) {
  switch (t) {
    case TaskType::kGeneration: return "generation";
    case TaskType::kPerplexity: return "perplexity";
    case TaskType::kLoglikelihood: return "loglikelihood";
  }
  return "?";
}

std::string_view MetricKindName(MetricKind m) {
  switch (m) {
    case MetricKind::kMatch: return "match";
    case MetricKind::kCode: return "code";
    case MetricKind::kJudge: return "judge";
  }
  return "?";
}

bool GlobMatch(std::string_view p, std::string_view s) {
  // Iterative '*' matching with one backtrack point: linear in |p| * |s| at worst.
  size_t pi = 0, si = 0, star = std::string_view::npos, mark = 0;
  while (si < s.size()) {
    if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = si;
    } else if (pi < p.size() && p[pi] == s[si]) {
      ++pi;
      ++si;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      si = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

MetricKind DefaultMetric(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view pat : {"*humaneval*", "*mbpp*"})
    if (GlobMatch(pat, lower)) return MetricKind::kCode;
  return MetricKind::kMatch;
}

namespace {

enum class Column : uint8_t {
  kName, kExamples, kTaskType, kMaxOutLen, kFewShot, kSource, kCandidates, kPromptTokens, kMetric,
};
struct ColumnInfo {
  Column col;
  std::string_view name;
  bool required;
};
constexpr std::array<ColumnInfo, 9> kColumns = {{
    {Column::kName, "name", true},
    {Column::kExamples, "examples", true},
    {Column::kTaskType, "task_type", true},
    {Column::kMaxOutLen, "max_out_len", true},
    {Column::kFewShot, "few_shot", true},
    {Column::kSource, "source", false},
    {Column::kCandidates, "candidates", false},
    {Column::kPromptTokens, "prompt_tokens", false},
    {Column::kMetric, "metric", false},
}};

// Upper bounds that keep every later product (examples x tokens x FLOPs) finite and sane.
constexpr uint64_t kMaxExamples = 1'000'000'000;
constexpr uint64_t kMaxTokens = 10'000'000;
constexpr size_t kMaxDatasets = 100'000;

std::string ColumnList() {
  std::string s;
  for (const ColumnInfo& c : kColumns) s += (s.empty() ? "" : ", ") + std::string(c.name);
  return s;
}

// Column index of each known column in this file (-1 = absent).
struct Header {
  std::array<int, kColumns.size()> index;
  size_t width = 0;
  int operator[](Column c) const { return index[static_cast<size_t>(c)]; }
};

Result<Header> ParseHeader(const std::vector<Field>& fields, const std::string& file, uint64_t line) {
  Header h;
  h.index.fill(-1);
  h.width = fields.size();
  for (size_t i = 0; i < fields.size(); ++i) {
    std::string_view name = Trim(fields[i].text);
    auto it = std::find_if(kColumns.begin(), kColumns.end(), [&](const ColumnInfo& c) { return c.name == name; });
    SourcePos pos{file, line, fields[i].col};
    if (it == kColumns.end())
      return MakeError(FormatPos(pos) + ": unknown column " + Quote(name) + " (expected " + ColumnList() + ")");
    int& slot = h.index[static_cast<size_t>(it - kColumns.begin())];
    if (slot >= 0) return MakeError(FormatPos(pos) + ": column " + Quote(name) + " appears twice");
    slot = static_cast<int>(i);
  }
  for (const ColumnInfo& c : kColumns)
    if (c.required && h[c.col] < 0)
      return MakeError(file + ":" + std::to_string(line) + ":1: missing column '" + std::string(c.name) +
                       "' (a suite needs name, examples, task_type, max_out_len, few_shot)");
  return h;
}

// Optional unsigned integer in [lo, hi]: empty -> nullopt.
Result<std::optional<uint64_t>> OptUint(const Field& f, std::string_view field, const SourcePos& pos, uint64_t lo,
                                        uint64_t hi) {
  std::string_view t = Trim(f.text);
  if (t.empty()) return std::optional<uint64_t>();
  int64_t v = 0;
  if (!ParseI64(t, &v) || v < static_cast<int64_t>(lo) || static_cast<uint64_t>(v) > hi)
    return FieldError(pos, field, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "] or empty",
                      t);
  return std::optional<uint64_t>(static_cast<uint64_t>(v));
}

Result<TaskType> ParseTaskType(std::string_view t, const SourcePos& pos) {
  t = Trim(t);
  for (TaskType k : {TaskType::kGeneration, TaskType::kPerplexity, TaskType::kLoglikelihood})
    if (t == TaskTypeName(k)) return k;
  return FieldError(pos, "task_type", "generation, perplexity or loglikelihood", t);
}

Result<MetricKind> ParseMetric(std::string_view t, std::string_view name, const SourcePos& pos) {
  t = Trim(t);
  if (t.empty()) return DefaultMetric(name);
  for (MetricKind k : {MetricKind::kMatch, MetricKind::kCode, MetricKind::kJudge})
    if (t == MetricKindName(k)) return k;
  return FieldError(pos, "metric", "match, code, judge or empty", t);
}

class RowParser {
 public:
  RowParser(const Header& h, const std::string& file, uint64_t line, const std::vector<Field>& f)
      : h_(h), file_(file), line_(line), f_(f) {}

  Result<Dataset> Parse() {
    Dataset d;
    d.line = line_;
    d.name = std::string(Trim(Get(Column::kName).text));
    if (d.name.empty()) return FieldError(Pos(Column::kName), "name", "a dataset name", "");
    ORR_ASSIGN_OR_RETURN(d.examples, OptUint(Get(Column::kExamples), "examples", Pos(Column::kExamples), 1,
                                             kMaxExamples));
    ORR_ASSIGN_OR_RETURN(d.task, ParseTaskType(Get(Column::kTaskType).text, Pos(Column::kTaskType)));
    ORR_ASSIGN_OR_RETURN(auto out_len, OptUint(Get(Column::kMaxOutLen), "max_out_len", Pos(Column::kMaxOutLen), 1,
                                               kMaxTokens));
    if (out_len) d.max_out_len = static_cast<uint32_t>(*out_len);
    ORR_ASSIGN_OR_RETURN(auto shots, OptUint(Get(Column::kFewShot), "few_shot", Pos(Column::kFewShot), 0, 10'000));
    d.few_shot = static_cast<uint32_t>(shots.value_or(0));
    if (Has(Column::kSource)) d.source = std::string(Trim(Get(Column::kSource).text));
    if (Has(Column::kCandidates)) {
      ORR_ASSIGN_OR_RETURN(auto c, OptUint(Get(Column::kCandidates), "candidates", Pos(Column::kCandidates), 1,
                                           10'000));
      if (c) d.candidates = static_cast<uint32_t>(*c);
    }
    if (Has(Column::kPromptTokens)) {
      ORR_ASSIGN_OR_RETURN(auto p, OptUint(Get(Column::kPromptTokens), "prompt_tokens",
                                           Pos(Column::kPromptTokens), 1, kMaxTokens));
      if (p) d.prompt_tokens = static_cast<uint32_t>(*p);
    }
    std::string_view metric = Has(Column::kMetric) ? Get(Column::kMetric).text : std::string_view();
    ORR_ASSIGN_OR_RETURN(d.metric, ParseMetric(metric, d.name, Pos(Column::kMetric)));
    return d;
  }

 private:
  bool Has(Column c) const { return h_[c] >= 0; }
  const Field& Get(Column c) const { return f_[static_cast<size_t>(h_[c])]; }
  SourcePos Pos(Column c) const { return SourcePos{file_, line_, Has(c) ? Get(c).col : 1}; }
  const Header& h_;
  const std::string& file_;
  uint64_t line_;
  const std::vector<Field>& f_;
};

bool Blank(std::string_view line) { return Trim(line).empty(); }

}  // namespace

Result<Suite> ParseSuite(std::string_view text, const std::string& name) {
  if (text.size() >= 3 && static_cast<unsigned char>(text[0]) == 0xEF && static_cast<unsigned char>(text[1]) == 0xBB &&
      static_cast<unsigned char>(text[2]) == 0xBF)
    text.remove_prefix(3);  // UTF-8 byte-order mark
  std::unique_ptr<LineReader> reader = LineReader::FromString(text, name);
  Suite suite;
  suite.path = name;
  std::optional<Header> header;
  std::map<std::string, uint64_t> seen;  // name -> line
  std::vector<Field> fields;
  std::vector<std::string> scratch;
  std::string_view line;
  while (reader->Next(&line)) {
    const uint64_t no = reader->line_number();
    if (Blank(line)) continue;
    uint32_t bad_col = 0;
    if (!SplitLine(line, ',', &fields, &scratch, &bad_col))
      return MakeError(FormatPos(SourcePos{name, no, bad_col}) + ": unterminated quoted field");
    if (!header) {
      ORR_ASSIGN_OR_RETURN(header, ParseHeader(fields, name, no));
      continue;
    }
    if (fields.size() != header->width)
      return MakeError(name + ":" + std::to_string(no) + ":1: expected " + std::to_string(header->width) +
                       " fields (as in the header), got " + std::to_string(fields.size()));
    ORR_ASSIGN_OR_RETURN(Dataset d, RowParser(*header, name, no, fields).Parse());
    auto [it, fresh] = seen.emplace(d.name, no);
    if (!fresh)
      return MakeError(name + ":" + std::to_string(no) + ":1: dataset " + Quote(d.name) + " appears twice (first on line " +
                       std::to_string(it->second) + ")");
    if (suite.datasets.size() >= kMaxDatasets)
      return MakeError(name + ":" + std::to_string(no) + ":1: more than " + std::to_string(kMaxDatasets) + " datasets");
    suite.datasets.push_back(std::move(d));
  }
  if (!header) return MakeError(name + ":1:1: empty suite: expected a header line (" + ColumnList() + ")");
  return suite;
}

Result<Suite> LoadSuite(const std::string& path) {
  ORR_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseSuite(text, path);
}

Result<Suite> SelectDatasets(const Suite& suite, const std::vector<std::string>& only) {
  if (only.empty()) return suite;
  Suite out;
  out.path = suite.path;
  for (const std::string& n : only) {
    auto it = std::find_if(suite.datasets.begin(), suite.datasets.end(), [&](const Dataset& d) { return d.name == n; });
    if (it == suite.datasets.end())
      return MakeError("unknown dataset " + Quote(n) + ": " + suite.path + " has no row with that name");
  }
  for (const Dataset& d : suite.datasets)
    if (std::find(only.begin(), only.end(), d.name) != only.end()) out.datasets.push_back(d);
  return out;
}

Result<Suite> RequireSized(const Suite& suite, bool skip_unsized, std::vector<std::string>* dropped) {
  Suite out;
  out.path = suite.path;
  std::string missing;
  for (const Dataset& d : suite.datasets) {
    if (d.examples) {
      out.datasets.push_back(d);
      continue;
    }
    if (dropped) dropped->push_back(d.name);
    missing += (missing.empty() ? "" : "; ") + suite.path + ":" + std::to_string(d.line) + ": " + Quote(d.name);
  }
  if (!missing.empty() && !skip_unsized)
    return MakeError("datasets without an example count (fill 'examples' or pass --skip-unsized): " + missing);
  if (out.datasets.empty())
    return MakeError(suite.path + ": zero-size suite: no dataset with examples to evaluate");
  return out;
}

}  // namespace orrery::eval
