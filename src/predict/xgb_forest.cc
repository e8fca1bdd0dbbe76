#include "predict/xgb_forest.h"

#include <algorithm>
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
      if (l <= static_cast<int64_t>(i) || l >= static_cast<int64_t>(n) || r != l + 1)
        return ModelError("children not stored as a pair after their parent");
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

int XgbForest::TreeDepth(uint32_t root, size_t n) const {
  std::vector<int> depth(n, 0);
  int deepest = 0;
  for (size_t i = 0; i < n; ++i) {
    const Node& node = nodes_[root + i];
    if (node.left == 0) continue;
    depth[node.left] = depth[node.left + 1u] = depth[i] + 1;  // children follow their parent
    deepest = std::max(deepest, depth[i] + 1);
  }
  return deepest;
}

void XgbForest::Leaves(const float* row, size_t first, float* out) const {
  const Node* tree[kLanes];
  uint32_t at[kLanes] = {};
  for (size_t k = 0; k < kLanes; ++k) tree[k] = &nodes_[roots_[first + k]];
  for (int d = 0; d < depth_; ++d) {
    for (size_t k = 0; k < kLanes; ++k) {
      const Node& node = tree[k][at[k]];
      at[k] = node.left != 0 ? Child(node, row) : at[k];
    }
  }
  for (size_t k = 0; k < kLanes; ++k) out[k] = tree[k][at[k]].value;
}

float XgbForest::Predict(const float* row) const {
  float sum = base_score_;
  size_t t = 0;
  for (float leaf[kLanes]; t + kLanes <= roots_.size(); t += kLanes) {
    Leaves(row, t, leaf);
    for (float v : leaf) sum += v;
  }
  for (; t < roots_.size(); ++t) {
    const Node* tree = &nodes_[roots_[t]];
    uint32_t n = 0;
    while (tree[n].left != 0) n = Child(tree[n], row);
    sum += tree[n].value;
  }
  return sum;
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
      const uint32_t root = static_cast<uint32_t>(f.nodes_.size());
      f.roots_.push_back(root);
      ORR_RETURN_IF_ERROR(f.AppendTree(tree));
      f.depth_ = std::max(f.depth_, f.TreeDepth(root, f.nodes_.size() - root));
    }
  } catch (const std::exception& e) {
    return ModelError(e.what());
  }
  return f;
}

}  // namespace orrery
