#include "predict/xgb_forest.h"

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

namespace orrery {

namespace {

using Json = nlohmann::json;

Error ModelError(const std::string& what) { return MakeError("xgboost model (UBJSON): " + what); }

}  // namespace

Status XgbForest::AppendTree(const Json& tree) {
  const Json& left = tree.at("left_children");
  const Json& right = tree.at("right_children");
  const Json& feature = tree.at("split_indices");
  const Json& cond = tree.at("split_conditions");
  const Json& dflt = tree.at("default_left");
  const Json& type = tree.at("split_type");
  const size_t n = left.size();
  if (n == 0 || n > UINT16_MAX || right.size() != n || feature.size() != n || cond.size() != n || dflt.size() != n ||
      type.size() != n)
    return ModelError("tree arrays of different lengths (or over 65,535 nodes)");
  for (size_t i = 0; i < n; ++i) {
    const int64_t l = left[i].get<int64_t>(), r = right[i].get<int64_t>();
    Node node{};
    node.value = cond[i].get<float>();  // stored as float32: exact
    if (l >= 0) {
      if (l == 0 || l >= static_cast<int64_t>(n) || r != l + 1) return ModelError("children not stored as a pair");
      if (type[i].get<int>() != 0) return ModelError("categorical split");
      const uint32_t f = feature[i].get<uint32_t>();
      if (f >= num_features_ || f > kFeatureMask) return ModelError("split feature out of range");
      const bool default_left = dflt[i].is_boolean() ? dflt[i].get<bool>() : dflt[i].get<int>() != 0;
      node.feature = static_cast<uint16_t>(f | (default_left ? kDefaultLeft : 0));
      node.left = static_cast<uint16_t>(l);
    }
    nodes_.push_back(node);
  }
  return Status::Ok();
}

Result<XgbForest> XgbForest::FromUbjson(std::string_view model) {
  XgbForest f;
  try {
    const Json j = Json::from_ubjson(model);
    const Json& learner = j.at("learner");
    if (learner.at("objective").at("name").get<std::string>() != "reg:squarederror")
      return ModelError("objective is not reg:squarederror");
    const Json& param = learner.at("learner_model_param");
    const std::string base = param.at("base_score").get<std::string>();
    char* end = nullptr;
    f.base_score_ = std::strtof(base.c_str(), &end);
    if (end == base.c_str()) return ModelError("bad base_score '" + base + "'");
    if (std::atoi(param.at("num_class").get<std::string>().c_str()) > 1) return ModelError("more than one output");
    f.num_features_ = static_cast<uint32_t>(std::atol(param.at("num_feature").get<std::string>().c_str()));
    const Json& booster = learner.at("gradient_booster");
    if (booster.at("name").get<std::string>() != "gbtree") return ModelError("booster is not gbtree");
    for (const Json& tree : booster.at("model").at("trees")) {
      f.roots_.push_back(static_cast<uint32_t>(f.nodes_.size()));
      ORR_RETURN_IF_ERROR(f.AppendTree(tree));
    }
  } catch (const std::exception& e) {
    return ModelError(e.what());
  }
  return f;
}

}  // namespace orrery
