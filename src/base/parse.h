// Located parsing of delimited text. A FieldCursor knows the file, line and the
// column of every field, so each failure reads
//   "file:line:col: field 'gpus': expected a non-negative integer, got \"abc\"".
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace orrery {

struct SourcePos {
  std::string_view file;
  uint64_t line = 0;
  uint32_t col = 0;  // 1-based byte column
};

inline std::string FormatPos(const SourcePos& p) {
  return std::string(p.file) + ":" + std::to_string(p.line) + ":" + std::to_string(p.col);
}

// Shortens a value for an error message: at most 57 bytes of it, then "..."; control bytes
// and bytes that are not well-formed UTF-8 are shown as \xHH, never written raw to a terminal.
std::string Quote(std::string_view v);

// "file:line:col: field 'name': expected X, got "v""
inline Error FieldError(const SourcePos& p, std::string_view field, std::string_view expected, std::string_view got) {
  return MakeError(FormatPos(p) + ": field '" + std::string(field) + "': expected " + std::string(expected) +
                   ", got " + Quote(got));
}

// Where and why a whole text could not be parsed (TOML and JSON documents).
struct TextIssue {
  uint32_t line = 1, col = 1;  // 1-based
  std::string message;         // e.g. "expected UTF-8 text without NUL bytes, got byte 0xFF"
};

struct Field {
  std::string_view text;
  uint32_t col = 1;  // 1-based column of the field's first byte in the line
};

// Splits one line on `delim`. Supports RFC 4180 double quotes within a line
// ("a,b" and "" escapes); quoted fields are unescaped into `scratch` storage.
// Returns false (and sets *bad_col) on an unterminated quote.
bool SplitLine(std::string_view line, char delim, std::vector<Field>* out, std::vector<std::string>* scratch,
               uint32_t* bad_col);

// Splits on runs of spaces/tabs (SWF).
void SplitWhitespace(std::string_view line, std::vector<Field>* out);

// The next line of an in-memory text from *pos (without its '\n' and a trailing '\r'), *pos
// moved past it; false at the end of the text.
inline bool NextLine(std::string_view text, size_t* pos, std::string_view* line) {
  if (*pos >= text.size()) return false;
  const size_t nl = text.find('\n', *pos);
  *line = text.substr(*pos, nl == std::string_view::npos ? std::string_view::npos : nl - *pos);
  *pos = nl == std::string_view::npos ? text.size() : nl + 1;
  if (!line->empty() && line->back() == '\r') line->remove_suffix(1);
  return true;
}

inline std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Integer parsing; accepts an optional leading '-' and, if allow_float_zero, a
// trailing ".0..." fraction of zeros (Philly writes "66.0").
bool ParseI64(std::string_view s, int64_t* out);
bool ParseI64Lenient(std::string_view s, int64_t* out);  // also "12.0", "1e3"-free, rounds "12.7" -> error
bool ParseF64(std::string_view s, double* out);

// Parses "YYYY-MM-DD HH:MM:SS" (or 'T' separator) as UTC seconds since 1970.
bool ParseDateTime(std::string_view s, int64_t* out);
// Formats seconds since 1970 (UTC) as "YYYY-MM-DD HH:MM:SS".
std::string FormatDateTime(int64_t unix_seconds);

// `given` spells the non-empty `name`: the same letters in any case, '_' read as '-' (the
// matching of the model and GPU names that commands accept, docs/cli.md).
bool SpellsName(std::string_view given, std::string_view name);

}  // namespace orrery
