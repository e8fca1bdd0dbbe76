// Interns strings to dense 32-bit ids. Used for users, VC names, job names and
// GPU models so that a Job stays a small fixed-size value.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace orrery {

class StringPool {
 public:
  // Returns the id of s, adding it if new. Ids are assigned 0, 1, 2, ... in first-seen order.
  uint32_t Intern(std::string_view s) {
    auto it = index_.find(s);
    if (it != index_.end()) return it->second;
    uint32_t id = static_cast<uint32_t>(strings_.size());
    strings_.emplace_back(s);
    // Key views into the deque-like stable storage: strings_ may reallocate, so
    // we store an owned copy in keys_ whose buffers never move (std::string in a
    // vector may move on reallocation, but small-string buffers move with it), hence
    // we keep a separate list of heap strings.
    keys_.push_back(std::make_unique<std::string>(s));
    index_.emplace(std::string_view(*keys_.back()), id);
    return id;
  }
  // Returns the id of s or UINT32_MAX when absent.
  uint32_t Find(std::string_view s) const {
    auto it = index_.find(s);
    return it == index_.end() ? UINT32_MAX : it->second;
  }
  const std::string& Get(uint32_t id) const { return strings_[id]; }
  size_t size() const { return strings_.size(); }
  const std::vector<std::string>& all() const { return strings_; }

 private:
  std::vector<std::string> strings_;
  std::vector<std::unique_ptr<std::string>> keys_;
  std::unordered_map<std::string_view, uint32_t> index_;
};

}  // namespace orrery
