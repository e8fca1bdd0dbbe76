#include "plan/json_fields.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/json_text.h"

namespace orrery::plan {

using nlohmann::json;

std::string Shown(const json& v) {
  std::string s = DumpJson(v);
  return s.size() > 40 ? s.substr(0, 37) + "..." : s;
}

Result<double> Number(const json& obj, std::string_view key, const Where& w, bool positive) {
  auto it = obj.find(std::string(key));
  if (it == obj.end()) return w.Fail(fmt::format("missing field '{}'", key));
  if (!it->is_number()) return w.Child(key).Fail("expected a number, got " + Shown(*it));
  const double v = it->get<double>();
  if (!std::isfinite(v) || (positive ? v <= 0 : v < 0)) {
    return w.Child(key).Fail(std::string("expected a ") + (positive ? "positive" : "non-negative") +
                             " number, got " + Shown(*it));
  }
  return v;
}

Result<int> Integer(const json& obj, std::string_view key, const Where& w, int min_value) {
  ORR_ASSIGN_OR_RETURN(double v, Number(obj, key, w, false));
  if (v != std::floor(v) || v < min_value || v > 1e9) {
    return w.Child(key).Fail(fmt::format("expected an integer >= {}, got {}", min_value, Shown(obj[std::string(key)])));
  }
  return static_cast<int>(v);
}

Result<std::string> String(const json& obj, std::string_view key, const Where& w) {
  auto it = obj.find(std::string(key));
  if (it == obj.end()) return w.Fail(fmt::format("missing field '{}'", key));
  if (!it->is_string()) return w.Child(key).Fail("expected a string, got " + Shown(*it));
  return it->get<std::string>();
}

Status OnlyKeys(const json& obj, std::initializer_list<std::string_view> keys, const Where& w) {
  if (!obj.is_object()) return w.Fail("expected an object, got " + Shown(obj));
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (std::find(keys.begin(), keys.end(), it.key()) == keys.end()) {
      std::string list;
      for (auto k : keys) list += (list.empty() ? "" : ", ") + std::string(k);
      return w.Fail(fmt::format("unknown field '{}' (expected {})", it.key(), list));
    }
  }
  return Status::Ok();
}

}  // namespace orrery::plan
