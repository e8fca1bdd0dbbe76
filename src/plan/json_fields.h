// Typed reads of the planner's JSON files (GPU profiles, inference profiles) with the location of
// a bad value as a JSON pointer: "file: at /gemm/3/t_s: expected a positive number, got -1".
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace orrery::plan {

// Location of a value inside the document, for error messages.
struct Where {
  std::string_view file;
  std::string path;  // JSON pointer
  Where Child(std::string_view key) const { return {file, path + "/" + std::string(key)}; }
  Where Child(size_t i) const { return {file, path + "/" + std::to_string(i)}; }
  Error Fail(std::string_view what) const {
    return MakeError(std::string(file) + ": at " + (path.empty() ? "/" : path) + ": " + std::string(what));
  }
};

// A value as text for a message, at most 40 bytes.
std::string Shown(const nlohmann::json& v);
// obj[key] as a finite number, positive or non-negative.
Result<double> Number(const nlohmann::json& obj, std::string_view key, const Where& w, bool positive);
Result<int> Integer(const nlohmann::json& obj, std::string_view key, const Where& w, int min_value);
Result<std::string> String(const nlohmann::json& obj, std::string_view key, const Where& w);
// Fails on a key of obj outside `keys`, naming the keys that are read.
Status OnlyKeys(const nlohmann::json& obj, std::initializer_list<std::string_view> keys, const Where& w);

}  // namespace orrery::plan
