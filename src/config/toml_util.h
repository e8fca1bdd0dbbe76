// The one TOML reader of every Orrery config (cluster configs, `orrery serve` configs):
// parsing with located syntax errors (file:line:col), input checks toml11 needs (UTF-8, no
// NUL, bounded nesting), unknown-key checks and typed getters whose errors say where, what
// was expected and what was found. Callers name the key in their own style (`label`, e.g.
// "key 'nodes' in [[vc]] #2" or "'port' in [http]"); the rest of each message is written here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <toml.hpp>

#include "base/result.h"

namespace orrery::toml_util {

using Value = toml::value;

// Makes located errors for one file.
class Locator {
 public:
  explicit Locator(std::string file) : file_(std::move(file)) {}
  const std::string& file() const { return file_; }
  std::string Pos(uint32_t line, uint32_t col) const;
  // At the value.
  Error At(const Value& v, const std::string& msg) const;
  // At the key of a `key = value` pair when it can be found on the value's line.
  Error AtKey(const Value& v, const std::string& key, const std::string& msg) const;

 private:
  std::string file_;
};

// Parses `text` (named loc.file() in errors). Rejects invalid UTF-8, NUL bytes, nesting
// deeper than 64 and a non-table top level before or instead of toml11.
Result<Value> Parse(const Locator& loc, const std::string& text);

const Value* Find(const Value& tbl, const std::string& key);
// Table entries sorted by source position (toml11's table is unordered).
std::vector<std::pair<std::string, const Value*>> SortedEntries(const Value& tbl);
std::string JoinKeys(const std::vector<std::string>& keys);
// "What was found", e.g. `-3`, `a string "64"`, `a table`.
std::string Got(const Value& v);

// Where an unknown key is reported: at the key, or at its value.
enum class Locate : uint8_t { kKey, kValue };
// The first unknown key (in source order) of `tbl`, as "unknown key 'k' in WHERE: expected one of ...".
Status CheckKeys(const Locator& loc, const Value& tbl, const std::string& where, const std::vector<std::string>& allowed,
                 Locate at = Locate::kKey);

// How an integer range is worded in errors.
enum class IntWording : uint8_t {
  kSign,   // "a positive integer" (lo 1), "a non-negative integer" (lo 0), "an integer"; "no greater than hi"
  kRange,  // "lo..hi"
};
// Integer in [lo, hi] at `key`; absent -> nullopt.
Result<std::optional<int64_t>> GetInt(const Locator& loc, const Value& tbl, const std::string& key,
                                      const std::string& label, int64_t lo, int64_t hi,
                                      IntWording wording = IntWording::kSign);
Result<std::optional<bool>> GetBool(const Locator& loc, const Value& tbl, const std::string& key,
                                    const std::string& label);
// Any string (may be empty).
Result<std::optional<std::string>> GetString(const Locator& loc, const Value& tbl, const std::string& key,
                                             const std::string& label);
// A non-empty name without commas or control characters, at most kMaxNameBytes long (node
// names are built from names, a million nodes at most: the bound keeps their bytes bounded).
inline constexpr size_t kMaxNameBytes = 255;
Result<std::optional<std::string>> GetName(const Locator& loc, const Value& tbl, const std::string& key,
                                           const std::string& label);
// A table [key] (null when absent).
Result<const Value*> GetTable(const Locator& loc, const Value& root, const std::string& key);

}  // namespace orrery::toml_util
