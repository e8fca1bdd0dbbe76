// Plugin specs "name[:key=value,...]" (policies, Lucid, the CES energy policy, recovery,
// failure and checkpoint plans) and their options read against a declared schema.
//
// A schema lists every key a plugin knows: its type, its default as written in a spec, its
// range or choices and one line of help. The typed getters of SpecArgs take the default and
// the range from the schema, so each is written once, and the same table produces the help
// text and docs/policies.md (policy_registry.h). A key that no schema of the spec declares is
// an error naming its column in the spec and the keys the plugin knows.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"

namespace orrery {

// A spec split into its name and its parameters, in the order given.
struct PluginSpec {
  std::string name;
  std::vector<std::pair<std::string, std::string>> params;
};
// `what` names the kind of spec in errors, e.g. "policy" or "energy policy".
Result<PluginSpec> ParsePluginSpec(const std::string& spec, std::string_view what);

enum class OptionType : uint8_t {
  kBool,    // true | false (also 1 | 0)
  kInt,     // an integer in [lo, hi]
  kNumber,  // a number in [lo, hi] (or [lo, hi) with open_hi)
  kChoice,  // one of `choices` ("a|b|c")
  kText,    // free text (a path, a nested spec such as an estimator)
};

struct OptionSpec {
  std::string_view key;
  OptionType type;
  std::string_view def;   // the default as a spec would write it; "" = unset
  std::string_view help;  // one line, for --list-policies and docs/policies.md
  double lo = 0, hi = 0;  // kInt, kNumber
  std::string_view choices = {};  // kChoice
  bool open_hi = false;           // kNumber: hi itself is excluded
  std::string_view expect = {};   // what an error says was expected; "" = from the type and range
};
using OptionSchema = std::span<const OptionSpec>;

// "a number in [1, 2]", "true or false", "easy or none", ... (the schema's own words when given).
std::string ExpectedText(const OptionSpec& o);
// "integer in [1, 10000000], default 1000" and the like, for listings.
std::string TypeText(const OptionSpec& o);

class SpecArgs {
 public:
  // Parses `spec` and checks every given key against `schemas` (each key in at most one).
  // `what` names the kind of spec in errors ("policy", "energy policy").
  static Result<SpecArgs> Parse(const std::string& spec, std::string_view what, std::vector<OptionSchema> schemas);

  const std::string& name() const { return name_; }
  const std::string& spec() const { return spec_; }
  // Whether the spec gave `key` (a repeated key: its last value counts).
  bool Given(std::string_view key) const { return given_.count(key) != 0; }

  // The value of `key` (given, else the schema's default), checked against the schema.
  // `key` must be declared by one of the schemas.
  Result<bool> Bool(std::string_view key) const;
  Result<int64_t> Int(std::string_view key) const;
  Result<double> Number(std::string_view key) const;
  Result<std::string> Choice(std::string_view key) const;
  std::string Text(std::string_view key) const;

  // "<what> '<spec>': parameter '<key>': expected <expected>, got "<value>"".
  Error Bad(std::string_view key, std::string_view expected, std::string_view value) const;
  // The same with the expectation the schema declares for `key` (a check the getters cannot
  // make, such as an increasing list).
  Error Bad(std::string_view key, std::string_view value) const;
  // "<what> '<spec>': <message>".
  Error Fail(std::string_view message) const;

 private:
  const OptionSpec* Find(std::string_view key) const;
  Error Undeclared(std::string_view key) const;
  std::string Raw(const OptionSpec& o) const;

  std::string spec_, name_, what_;
  std::vector<OptionSchema> schemas_;
  std::map<std::string, std::string, std::less<>> given_;
};

}  // namespace orrery
