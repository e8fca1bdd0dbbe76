// The one way Orrery parses JSON text with nlohmann-json (configs, caches, LLM answers,
// profiles, evaluation and report inputs): no library exception may leave a reader, so
//  - the parse goes through a SAX handler that records where and why it stopped (a syntax
//    error, a number beyond a double's range such as 1e400, which nlohmann reports by
//    throwing out_of_range even from its syntax-only entry points, or nesting deeper than
//    kMaxJsonNesting, which bounds the recursion of every later walk, copy and dump);
//  - reads of a parsed document that use throwing accessors (get<> on the wrong type, at()
//    on a missing key) run inside ReadJsonGuarded, which turns the exception into an error;
//  - text written out goes through DumpJson, which replaces invalid UTF-8 (job names and log
//    lines are user bytes) instead of throwing.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "base/parse.h"
#include "base/result.h"

namespace orrery {

inline constexpr int kMaxJsonNesting = 256;

// The parsed document, or where and why it could not be parsed. `J` is nlohmann::json or
// nlohmann::ordered_json.
template <class J>
std::variant<J, TextIssue> ParseJsonTextAs(std::string_view text);

// The same with the issue as an error "file:line:col: message".
Result<nlohmann::json> ParseJson(std::string_view text, const std::string& file);
Result<nlohmann::ordered_json> ParseOrderedJson(std::string_view text, const std::string& file);

// One line of a JSON-lines file: the error is "file:lineno:col: message".
Result<nlohmann::json> ParseJsonLine(std::string_view line, const std::string& file, uint64_t lineno);

// A library exception's message without its "[json.exception.type_error.302] " prefix.
std::string JsonExceptionText(const nlohmann::json::exception& e);

// Runs `read` (returning a Result or a Status) over a parsed document; an exception of the
// library (type_error, out_of_range, ...) becomes the error "where: message".
template <class F>
auto ReadJsonGuarded(const std::string& where, F&& read) -> decltype(read()) {
  try {
    return read();
  } catch (const nlohmann::json::exception& e) {
    return MakeError(where + ": " + JsonExceptionText(e));
  }
}

// Serializes with invalid UTF-8 replaced by U+FFFD (nlohmann's default throws type_error 316).
template <class J>
std::string DumpJson(const J& j, int indent = -1) {
  return j.dump(indent, ' ', false, J::error_handler_t::replace);
}

// A JSON number as an int64 when it holds one exactly: an integer, an unsigned integer up
// to INT64_MAX, or an integral double within int64's range (get<int64_t> on 1e300 is
// undefined behaviour). False for anything else, *out untouched.
template <class J>
bool JsonToI64(const J& v, int64_t* out) {
  if (v.is_number_integer() && !v.is_number_unsigned()) {
    *out = v.template get<int64_t>();
    return true;
  }
  if (v.is_number_unsigned()) {
    const uint64_t u = v.template get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) return false;
    *out = static_cast<int64_t>(u);
    return true;
  }
  if (!v.is_number_float()) return false;
  const double d = v.template get<double>();
  // [-2^63, 2^63): both bounds are exact doubles.
  if (!std::isfinite(d) || d != std::floor(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0) return false;
  *out = static_cast<int64_t>(d);
  return true;
}

extern template std::variant<nlohmann::json, TextIssue> ParseJsonTextAs<nlohmann::json>(std::string_view);
extern template std::variant<nlohmann::ordered_json, TextIssue> ParseJsonTextAs<nlohmann::ordered_json>(std::string_view);

}  // namespace orrery
