#include "live/flex_shape.h"

#include <bit>
#include <string>

#include "base/parse.h"
#include "plan/model.h"

namespace orrery::live {

namespace {

constexpr std::string_view kMarker = "#ORRERY";
constexpr uint32_t kMaxGpus = 4096;

struct Word {
  std::string_view key, value;
  uint32_t col = 1;  // of the key
};

// "WHERE:LINE:COL: key 'K': expected E, got "V"".
Error KeyError(std::string_view where, uint64_t line, uint32_t col, std::string_view key, std::string_view expected,
               std::string_view got) {
  return MakeError(FormatPos(SourcePos{where, line, col}) + ": key '" + std::string(key) + "': expected " +
                   std::string(expected) + ", got " + Quote(got));
}

bool PowerOfTwo(int64_t v) { return v >= 1 && v <= kMaxGpus && std::has_single_bit(static_cast<uint64_t>(v)); }

// "8-16" or "8": powers of two, min ≤ max.
bool ParseGpuRange(std::string_view v, FlexSpec* out) {
  const size_t dash = v.find('-');
  int64_t lo = 0, hi = 0;
  if (!ParseI64(v.substr(0, dash), &lo)) return false;
  hi = lo;
  if (dash != std::string_view::npos && !ParseI64(v.substr(dash + 1), &hi)) return false;
  if (!PowerOfTwo(lo) || !PowerOfTwo(hi) || lo > hi) return false;
  out->min_gpus = static_cast<uint32_t>(lo);
  out->max_gpus = static_cast<uint32_t>(hi);
  return true;
}

bool ParseBounded(std::string_view v, int64_t lo, int64_t hi, int32_t* out) {
  int64_t x = 0;
  if (!ParseI64(v, &x) || x < lo || x > hi) return false;
  *out = static_cast<int32_t>(x);
  return true;
}

// One key=value word of the line into *spec; `seen` collects the keys given.
Status ApplyWord(const Word& w, std::string_view where, uint64_t line, FlexSpec* spec, std::string* seen) {
  auto bad = [&](std::string_view expected) { return KeyError(where, line, w.col, w.key, expected, w.value); };
  const std::string key(w.key);
  if (seen->find(" " + key + " ") != std::string::npos) return bad("each key once");
  *seen += key + " ";
  if (w.key == "shape") {
    if (w.value != "flex") return bad("flex (the only shape a script can declare)");
  } else if (w.key == "gpus") {
    if (!ParseGpuRange(w.value, spec)) return bad("MIN-MAX, powers of two from 1 to 4096 with MIN <= MAX (e.g. 8-16)");
  } else if (w.key == "model") {
    Result<plan::GptModel> m = plan::ParseModelSpec(w.value);
    if (!m.ok()) return bad("gpt:layers=L,hidden=H,heads=A,vocab=V or a preset name (" + m.error().message + ")");
    spec->model.layers = m->layers;
    spec->model.hidden = m->hidden;
    spec->model.heads = m->heads;
    spec->model.vocab = m->vocab;
  } else if (w.key == "seq") {
    if (!ParseBounded(w.value, 1, 1 << 20, &spec->model.seq)) return bad("tokens per sequence, 1 to 1048576");
  } else if (w.key == "global_batch") {
    if (!ParseBounded(w.value, 1, 1 << 24, &spec->model.global_batch))
      return bad("sequences per optimizer step, 1 to 16777216");
  } else {
    return KeyError(where, line, w.col, w.key, "one of shape, gpus, model, seq, global_batch", w.key);
  }
  return Status::Ok();
}

// The words after the marker, with their columns.
Result<std::vector<Word>> SplitWords(std::string_view text, uint32_t first_col, std::string_view where, uint64_t line) {
  std::vector<Field> fields;
  SplitWhitespace(text, &fields);
  std::vector<Word> words;
  for (const Field& f : fields) {
    const uint32_t col = first_col + f.col - 1;
    const size_t eq = f.text.find('=');
    if (eq == std::string_view::npos || eq == 0)
      return MakeError(FormatPos(SourcePos{where, line, col}) + ": expected key=value, got " + Quote(f.text));
    words.push_back(Word{f.text.substr(0, eq), f.text.substr(eq + 1), col});
  }
  return words;
}

Result<FlexSpec> ParseLine(std::string_view rest, uint32_t rest_col, std::string_view where, uint64_t line) {
  ORR_ASSIGN_OR_RETURN(std::vector<Word> words, SplitWords(rest, rest_col, where, line));
  FlexSpec spec;
  std::string seen = " ";
  for (const Word& w : words) ORR_RETURN_IF_ERROR(ApplyWord(w, where, line, &spec, &seen));
  for (const char* need : {"shape", "gpus", "model", "global_batch"}) {
    if (seen.find(" " + std::string(need) + " ") == std::string::npos)
      return MakeError(FormatPos(SourcePos{where, line, 1}) + ": #ORRERY line: key '" + need +
                       "' is missing (expected shape=flex gpus=MIN-MAX model=... global_batch=B [seq=S])");
  }
  return spec;
}

}  // namespace

Result<std::optional<FlexSpec>> ParseFlexLine(std::string_view script, std::string_view where) {
  std::optional<FlexSpec> found;
  uint64_t found_line = 0, line = 0;
  size_t pos = 0;
  std::string_view text;
  while (NextLine(script, &pos, &text)) {
    ++line;
    const size_t lead = text.find_first_not_of(" \t");
    if (lead == std::string_view::npos || text.substr(lead, kMarker.size()) != kMarker) continue;
    const std::string_view after = text.substr(lead + kMarker.size());
    if (!after.empty() && after.front() != ' ' && after.front() != '\t') continue;  // e.g. "#ORRERYX"
    if (found)
      return MakeError(FormatPos(SourcePos{where, line, static_cast<uint32_t>(lead + 1)}) +
                       ": a second #ORRERY line (the first is line " + std::to_string(found_line) + ")");
    ORR_ASSIGN_OR_RETURN(FlexSpec spec,
                         ParseLine(after, static_cast<uint32_t>(lead + kMarker.size() + 1), where, line));
    found = spec;
    found_line = line;
  }
  return found;
}

}  // namespace orrery::live
