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

#include <nlohmann/json_fwd.hpp>

#include "base/result.h"

namespace orrery {

class XgbForest {
 public:
  static Result<XgbForest> FromUbjson(std::string_view model);
  // `row` holds num_features() values, NaN = missing. The trees are walked kLanes at a time in
  // lockstep (depth() steps each, a leaf stays put), so the walks' loads overlap instead of
  // forming one chain of dependent loads and mispredicted branches; the leaves are still added
  // one by one in tree order, so the float sum is XGBoost's.
  float Predict(const float* row) const;
  size_t trees() const { return roots_.size(); }
  // Depth of the deepest tree (edges from the root to its deepest leaf).
  int depth() const { return depth_; }
  uint32_t num_features() const { return num_features_; }

 private:
  // 8 bytes a node, children by index within their tree, the right child right after the
  // left (XGBoost allocates the two together): a forest of hundreds of depth-6 trees stays
  // in the L2 cache.
  struct Node {
    float value;       // split condition, or the leaf value
    uint16_t feature;  // feature index | kDefaultLeft
    uint16_t left;     // index of the left child in the tree; 0 = leaf (the root is nobody's child)
  };
  static constexpr uint16_t kDefaultLeft = 0x8000, kFeatureMask = 0x7fff;
  // The child of split node `node` that `row` goes to: a missing value (NaN) takes the default
  // child, otherwise `x < split` goes left; the right child follows the left one.
  static uint32_t Child(const Node& node, const float* row) {
    const float x = row[node.feature & kFeatureMask];
    const bool right = x != x ? (node.feature & kDefaultLeft) == 0 : !(x < node.value);
    return node.left + static_cast<uint32_t>(right);
  }
  // Appends one tree of the model's JSON (UBJSON-decoded) to nodes_.
  Status AppendTree(const nlohmann::json& tree);
  // Depth of the tree whose nodes start at nodes_[root] (children after parents, as XGBoost
  // numbers them).
  int TreeDepth(uint32_t root, size_t n) const;
  // Leaf values of the kLanes trees first..first+kLanes-1 for `row`.
  void Leaves(const float* row, size_t first, float* out) const;
  static constexpr size_t kLanes = 8;
  float base_score_ = 0;
  int depth_ = 0;
  uint32_t num_features_ = 0;
  std::vector<Node> nodes_;
  std::vector<uint32_t> roots_;
};

}  // namespace orrery
