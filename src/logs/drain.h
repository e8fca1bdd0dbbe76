// Drain-style online template mining (He et al., ICWS'17; the Drain3 defaults: depth 4,
// similarity threshold 0.4, 100 children per node), the one miner both log readers use.
//
//  * Masking first: in every whitespace-separated token, numbers (integers, decimals,
//    exponents, 0x-hex, hex runs such as PCI ids) become "<*>" and a token that is a path
//    (starts with '/', "./" or "~/") becomes "<*>" as a whole; a tqdm bar "37%|███▍  |"
//    loses its drawn cells ("37%||"), so a bar keeps one token count as it fills. The
//    numbers are kept as the line's parameters, in order, each with the index of its token.
//  * Parse tree: the first level is the token count, then the first depth-2 tokens (a token
//    with "<*>" goes to the wildcard child, as does any token once a node has max_children
//    children); a leaf holds clusters. A line joins the most similar cluster of its leaf
//    (share of equal tokens ≥ similarity; "<*>" in a template matches anything) and the
//    template's differing tokens become "<*>"; otherwise it starts a new cluster. Cluster
//    count and leaf size are capped (lines beyond go to an overflow cluster per length), so
//    adversarial input costs bounded time and memory per line.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace orrery::logs {

inline constexpr std::string_view kWildcard = "<*>";

struct MaskedParam {
  std::string_view text;  // the number as written (a view into the masked line's source)
  uint32_t token = 0;     // index of the token it was found in
  size_t offset = 0;      // byte offset in the source line
};

// One line after masking. Views point into the source line and the internal buffer;
// valid until the next Mask() call or until the source line goes away.
struct MaskedLine {
  std::vector<std::string_view> tokens;  // masked tokens
  std::vector<MaskedParam> params;       // numbers, in order
  std::string_view source;               // the (bar-normalised) line the params point into
  std::string buffer_;                   // storage of masked tokens
  std::string normalised_;               // storage of a bar-normalised copy of the line
  std::vector<std::pair<size_t, size_t>> spans_;  // token spans in buffer_
};

// Masks `line` into *out (reusing its storage).
void Mask(std::string_view line, MaskedLine* out);

struct DrainOptions {
  int depth = 4;             // root + token-count level + (depth - 2) token levels
  double similarity = 0.4;   // minimum share of equal tokens to join a cluster
  size_t max_children = 100;
  size_t max_clusters = 50000;  // beyond this, unmatched lines go to one overflow cluster
  size_t max_leaf_clusters = 256;  // ... and beyond this many in one leaf (bounds the work per line)
};

struct DrainCluster {
  uint32_t id = 0;
  std::vector<std::string> tokens;  // the template
  uint64_t count = 0;               // lines that joined it
  std::string Template() const;     // tokens joined by single spaces
};

struct DrainMatch {
  uint32_t cluster = 0;
  bool created = false;  // the line started a new cluster
  bool changed = false;  // the line turned template tokens into "<*>"
};

class Drain {
 public:
  explicit Drain(DrainOptions opts = {});
  ~Drain();
  Drain(Drain&&) noexcept;
  Drain& operator=(Drain&&) noexcept;

  // Adds one masked line; returns its cluster.
  DrainMatch Add(const MaskedLine& line);
  const DrainCluster& cluster(uint32_t id) const { return clusters_[id]; }
  size_t cluster_count() const { return clusters_.size(); }

 private:
  struct Node;
  std::vector<uint32_t>* Leaf(const std::vector<std::string_view>& tokens);
  int BestMatch(const std::vector<uint32_t>& leaf, const std::vector<std::string_view>& tokens) const;
  DrainMatch Merge(uint32_t id, const std::vector<std::string_view>& tokens);
  uint32_t Overflow(size_t token_count);

  DrainOptions opts_;
  std::unique_ptr<Node> root_;
  std::vector<DrainCluster> clusters_;
  std::unordered_map<size_t, uint32_t> overflow_;  // token count -> overflow cluster
};

}  // namespace orrery::logs
