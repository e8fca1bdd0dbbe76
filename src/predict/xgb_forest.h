// A trained XGBoost regression forest evaluated natively (no DMatrix, no library call per
// row), with the arithmetic of XGBoost's CPU predictor, so predictions are bit-identical:
// the margin starts at base_score (float) and each tree's leaf value is added in float,
// tree by tree in model order; a missing feature (NaN) takes the node's default child,
// otherwise `x < split_condition` goes left. Built from the model saved as UBJSON
// (XGBoosterSaveModelToBuffer, format "ubj": split conditions and leaf values are float32,
// read exactly). Only what XgbEstimator trains is accepted: gbtree, one output, numerical
// splits, identity output transform (reg:squarederror).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace orrery {

class XgbForest {
 public:
  static Result<XgbForest> FromUbjson(std::string_view model);
  // `row` holds num_features() values, NaN = missing.
  float Predict(const float* row) const {
    float sum = base_score_;
    for (uint32_t root : roots_) {
      uint32_t n = root;
      while (nodes_[n].left != kLeaf) {
        const Node& node = nodes_[n];
        const float x = row[node.feature];
        n = x != x ? node.default_child : (x < node.value ? node.left : node.right);
      }
      sum += nodes_[n].value;
    }
    return sum;
  }
  size_t trees() const { return roots_.size(); }
  uint32_t num_features() const { return num_features_; }

 private:
  static constexpr uint32_t kLeaf = UINT32_MAX;
  struct Node {
    float value;     // split condition, or the leaf value
    uint32_t feature;
    uint32_t left;   // absolute node indices; left == kLeaf for a leaf
    uint32_t right;
    uint32_t default_child;
  };
  float base_score_ = 0;
  uint32_t num_features_ = 0;
  std::vector<Node> nodes_;
  std::vector<uint32_t> roots_;
};

}  // namespace orrery
