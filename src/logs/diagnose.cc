#include "logs/diagnose.h"

#include <algorithm>

#include "logs/drain.h"
#include "logs/lines.h"

namespace orrery::logs {

std::string_view DiagnosisSourceName(DiagnosisSource s) {
  switch (s) {
    case DiagnosisSource::kRules: return "rules";
    case DiagnosisSource::kLlm: return "llm";
    case DiagnosisSource::kNone: return "none";
  }
  return "none";
}

namespace {

bool Blank(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v'; });
}

// Per template: the first keep_first lines and the latest one.
struct TemplateLines {
  std::vector<KeptLine> first;
  KeptLine last;
  uint64_t count = 0;
};

}  // namespace

CompressedLog Compress(std::string_view text, const CompressOptions& opts) {
  Drain drain;
  MaskedLine masked;
  std::string scratch;
  std::vector<TemplateLines> per;
  std::vector<KeptLine> tail(opts.tail_lines);  // ring of the last lines
  uint64_t line_no = 0, nonblank = 0;
  LineSplitter split;
  auto on_line = [&](std::string_view raw) {
    ++line_no;
    std::string_view line = CleanLine(raw, &scratch);
    if (Blank(line)) return;
    Mask(line, &masked);
    DrainMatch m = drain.Add(masked);
    if (m.cluster >= per.size()) per.resize(m.cluster + 1);
    TemplateLines& t = per[m.cluster];
    ++t.count;
    if (t.first.size() < opts.keep_first) {
      t.first.push_back({std::string(line), "", line_no, m.cluster, 0});
    } else {
      t.last.text.assign(line.data(), line.size());
      t.last.line_no = line_no;
      t.last.cluster = m.cluster;
    }
    if (!tail.empty()) {
      KeptLine& k = tail[nonblank % tail.size()];
      k.text.assign(line.data(), line.size());
      k.line_no = line_no;
      k.cluster = m.cluster;
    }
    ++nonblank;
  };
  split.Feed(text, on_line);
  split.Finish(on_line);
  CompressedLog out;
  out.total_lines = line_no;
  out.templates = drain.cluster_count();
  out.truncated_lines = split.truncated_lines();
  for (TemplateLines& t : per) {
    for (KeptLine& k : t.first) out.lines.push_back(std::move(k));
    if (t.last.line_no != 0) out.lines.push_back(std::move(t.last));
  }
  for (KeptLine& k : tail)
    if (k.line_no != 0) out.lines.push_back(std::move(k));
  std::sort(out.lines.begin(), out.lines.end(), [](const KeptLine& a, const KeptLine& b) { return a.line_no < b.line_no; });
  out.lines.erase(std::unique(out.lines.begin(), out.lines.end(),
                              [](const KeptLine& a, const KeptLine& b) { return a.line_no == b.line_no; }),
                  out.lines.end());
  for (KeptLine& k : out.lines) {
    k.repeats = per[k.cluster].count;
    k.lower = AsciiLower(k.text);
  }
  return out;
}

std::string CompressedLog::Text(size_t max_bytes) const {
  std::vector<std::string> rows;
  size_t bytes = 0;
  for (size_t i = lines.size(); i-- > 0;) {
    std::string row = lines[i].text;
    if (lines[i].repeats > 1) row += "  (x" + std::to_string(lines[i].repeats) + ")";
    if (bytes + row.size() + 1 > max_bytes) break;
    bytes += row.size() + 1;
    rows.push_back(std::move(row));
  }
  std::string s;
  s.reserve(bytes);
  for (size_t i = rows.size(); i-- > 0;) s += rows[i] + "\n";
  return s;
}

Diagnoser::Diagnoser(RuleSet rules) : rules_(std::move(rules)) {}

namespace {

bool ContainsAny(std::string_view line, const std::vector<std::string>& needles) {
  for (const std::string& n : needles)
    if (line.find(n) != std::string_view::npos) return true;
  return false;
}

bool ContainsAll(std::string_view line, const std::vector<std::string>& needles) {
  for (const std::string& n : needles)
    if (line.find(n) == std::string_view::npos) return false;
  return true;
}

bool ExceptionIn(std::string_view line, const std::vector<std::string>& classes) {
  std::string_view name = PythonException(line);
  if (name.empty()) return false;
  for (const std::string& c : classes)
    if (c == "*" || c == name) return true;
  return false;
}

bool IsChainMarker(std::string_view line) {
  return line.find("The above exception was the direct cause of the following exception") != std::string_view::npos ||
         line.find("During handling of the above exception, another exception occurred") != std::string_view::npos;
}

}  // namespace

bool Diagnoser::LineMatches(const Rule& r, const CompressedLog& log, size_t i) const {
  auto text = [&](size_t j) -> std::string_view { return r.case_sensitive ? log.lines[j].text : log.lines[j].lower; };
  std::string_view line = text(i);
  bool hit = (!r.any.empty() && ContainsAny(line, r.any)) ||
             (!r.exception.empty() && ExceptionIn(log.lines[i].text, r.exception));
  if (!hit || !ContainsAll(line, r.all) || (!r.unless.empty() && ContainsAny(line, r.unless))) return false;
  if (r.near.empty()) return true;
  size_t from = i >= r.window ? i - r.window : 0;
  for (size_t j = from; j <= i; ++j)
    if (ContainsAny(text(j), r.near)) return true;
  return false;
}

std::vector<Diagnoser::Match> Diagnoser::Matches(const CompressedLog& log) const {
  std::vector<Match> out;
  std::vector<uint64_t> counts(rules_.rules.size(), 0);
  std::vector<std::vector<uint32_t>> seen(rules_.rules.size());  // templates counted per rule
  for (size_t i = 0; i < log.lines.size(); ++i) {
    for (size_t r = 0; r < rules_.rules.size(); ++r) {
      if (!LineMatches(rules_.rules[r], log, i)) continue;
      out.push_back({r, i});
      auto& s = seen[r];
      if (std::find(s.begin(), s.end(), log.lines[i].cluster) == s.end()) {
        s.push_back(log.lines[i].cluster);
        counts[r] += log.lines[i].repeats;
      }
    }
  }
  std::erase_if(out, [&](const Match& m) { return counts[m.rule] < rules_.rules[m.rule].min_count; });
  return out;
}

size_t Diagnoser::Decide(const CompressedLog& log, const std::vector<Match>& m) const {
  int top = -1;
  for (const Match& x : m) top = std::max(top, rules_.rules[x.rule].priority);
  std::vector<size_t> tied;  // indices into m, in line order
  for (size_t k = 0; k < m.size(); ++k)
    if (rules_.rules[m[k].rule].priority == top) tied.push_back(k);
  switch (rules_.tie_break) {
    case TieBreak::kFirst: return tied.front();
    case TieBreak::kLast: return tied.back();
    case TieBreak::kChainRoot: break;
  }
  // Follow the chain back: while a chain marker separates the current match from an
  // earlier tied match (with no tied match in between), that earlier one is its cause.
  size_t cur = tied.size() - 1;
  while (cur > 0) {
    size_t prev = cur - 1;
    bool chained = false;
    for (size_t l = m[tied[prev]].line + 1; l < m[tied[cur]].line && !chained; ++l) chained = IsChainMarker(log.lines[l].text);
    if (!chained) break;
    cur = prev;
  }
  return tied[cur];
}

Diagnosis Diagnoser::Explain(const CompressedLog& log, const std::vector<Match>& m, size_t winner) const {
  const Rule& r = rules_.rules[m[winner].rule];
  Diagnosis d;
  // Weak evidence (a generic exception class, a bare wrapper): the category is withheld
  // rather than guessed; the rule, its evidence and its retry guess stay.
  const bool weak = r.confidence < rules_.unknown_below;
  d.category = weak ? Category::kUnknown : r.category;
  d.subtype = weak ? "unknown" : r.subtype;
  d.retry = r.retry;
  d.rule = r.name;
  d.confidence = r.confidence;
  d.source = DiagnosisSource::kRules;
  std::vector<std::string> suspects;
  std::vector<size_t> lines;
  for (const Match& x : m)
    if (x.rule == m[winner].rule) lines.push_back(x.line);
  // The deciding line first, then up to three more of the same rule in input order.
  std::vector<size_t> shown{m[winner].line};
  for (size_t l : lines)
    if (shown.size() < 4 && l != m[winner].line) shown.push_back(l);
  for (size_t l : shown) {
    std::string t = log.lines[l].text;
    if (t.size() > 400) t = t.substr(0, 400) + "...";
    d.evidence.push_back(std::move(t));
  }
  // A line that names a place only as a bystander is a weak suspect, kept only when no other
  // line names one: Slurm's "*** JOB n ON host CANCELLED" names the batch host, and an IB
  // completion flushed with status 5 (the queue pair was already in error) is the far side of a
  // link that failed elsewhere.
  std::vector<std::string> bystanders;
  auto same = [](std::string a, std::string b) {
    for (std::string* x : {&a, &b}) {
      if (x->rfind("PCI:", 0) == 0) x->erase(0, 4);
      if (x->size() == 12 && (*x)[10] == '.') x->resize(10);
    }
    return a == b;
  };
  for (size_t l : lines) {
    const std::string& text = log.lines[l].text;
    const bool bystander = (text.find(" CANCELLED") != std::string::npos && text.find("*** ") != std::string::npos) ||
                           text.find("with status=5 ") != std::string::npos;
    std::string all = ExtractSuspect(r.suspect, text);
    size_t from = 0;
    while (from < all.size()) {
      size_t comma = all.find(',', from);
      if (comma == std::string::npos) comma = all.size();
      std::string s = all.substr(from, comma - from);
      from = comma + 1;
      std::vector<std::string>& into = bystander ? bystanders : suspects;
      if (!s.empty() && std::none_of(into.begin(), into.end(), [&](const std::string& x) { return same(x, s); }) &&
          into.size() < 4)
        into.push_back(s);
    }
  }
  if (suspects.empty()) suspects = bystanders;
  for (size_t i = 0; i < suspects.size(); ++i) d.suspect_node += (i ? "," : "") + suspects[i];
  return d;
}

Diagnosis Diagnoser::Classify(const CompressedLog& log) const {
  std::vector<Match> m = Matches(log);
  if (m.empty()) {
    Diagnosis d;
    d.note = log.lines.empty() ? "empty log" : "no rule matched";
    for (size_t i = log.lines.size() > 3 ? log.lines.size() - 3 : 0; i < log.lines.size(); ++i)
      d.evidence.push_back(log.lines[i].text.substr(0, 400));
    return d;
  }
  return Explain(log, m, Decide(log, m));
}

Diagnosis Diagnoser::Diagnose(std::string_view tail) const { return Classify(Compress(tail, rules_.compress)); }

}  // namespace orrery::logs
