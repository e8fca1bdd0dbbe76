#include "predict/xgb_forest.h"

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

namespace orrery {

namespace {

using Json = nlohmann::json;

Error ModelError(const std::string& what) { return MakeError("xgboost model (UBJSON): " + what); }

// One tree's node arrays, appended to `nodes` with indices offset by the tree's root.
template <class Node>
Status AppendTree(const Json& tree, uint32_t num_features, std::vector<Node>* nodes, uint32_t leaf) {
  const Json& left = tree.at("left_children");
  const Json& right = tree.at("right_children");
  const Json& feature = tree.at("split_indices");
  const Json& cond = tree.at("split_conditions");
  const Json& dflt = tree.at("default_left");
  const Json& type = tree.at("split_type");
  const size_t n = left.size();
  if (n == 0 || right.size() != n || feature.size() != n || cond.size() != n || dflt.size() != n || type.size() != n)
    return ModelError("tree arrays of different lengths");
  const uint32_t base = static_cast<uint32_t>(nodes->size());
  for (size_t i = 0; i < n; ++i) {
    const int64_t l = left[i].get<int64_t>(), r = right[i].get<int64_t>();
    Node node{};
    node.value = cond[i].get<float>();  // stored as float32: exact
    if (l < 0) {
      node.left = node.right = node.default_child = leaf;
    } else {
      if (l >= static_cast<int64_t>(n) || r < 0 || r >= static_cast<int64_t>(n)) return ModelError("child index out of range");
      if (type[i].get<int>() != 0) return ModelError("categorical split");
      node.feature = feature[i].get<uint32_t>();
      if (node.feature >= num_features) return ModelError("split feature out of range");
      node.left = base + static_cast<uint32_t>(l);
      node.right = base + static_cast<uint32_t>(r);
      node.default_child = (dflt[i].is_boolean() ? dflt[i].get<bool>() : dflt[i].get<int>() != 0) ? node.left : node.right;
    }
    nodes->push_back(node);
  }
  return Status::Ok();
}

}  // namespace

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
      ORR_RETURN_IF_ERROR(AppendTree(tree, f.num_features_, &f.nodes_, kLeaf));
    }
  } catch (const std::exception& e) {
    return ModelError(e.what());
  }
  return f;
}

}  // namespace orrery
