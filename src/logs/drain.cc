#include "logs/drain.h"

#include <algorithm>

namespace orrery::logs {

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsAlnum(char c) { return IsDigit(c) || IsAlpha(c); }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }

bool IsPath(std::string_view t) {
  if (t.size() < 2) return false;
  return t[0] == '/' || (t[0] == '.' && t[1] == '/') || (t[0] == '~' && t[1] == '/');
}

// Byte is part of a drawn tqdm bar: a space, '#' and the digits of an ASCII bar
// ("####5     "), or any byte of a multi-byte UTF-8 sequence (the block elements
// ▏▎▍▌▋▊▉█ are E2 96 8x).
bool IsBarCell(unsigned char c) { return c == ' ' || c == '#' || (c >= '0' && c <= '9') || c >= 0x80; }

// Copies `line` into *out with the cells of every "N%|cells|" bar removed. Returns false
// (and leaves *out unspecified) when the line has no bar.
bool NormaliseBars(std::string_view line, std::string* out) {
  size_t p = line.find("%|");
  if (p == std::string_view::npos) return false;
  out->clear();
  size_t copied = 0;
  while (p != std::string_view::npos) {
    size_t q = p + 2;
    size_t limit = std::min(line.size(), q + 512);
    while (q < limit && IsBarCell(static_cast<unsigned char>(line[q]))) ++q;
    if (q < line.size() && line[q] == '|') {
      out->append(line.substr(copied, p + 2 - copied));
      copied = q;
    }
    p = line.find("%|", p + 2);
  }
  out->append(line.substr(copied));
  return true;
}

// End of the number that starts at t[i] (IsNumberStart(t, i) holds).
size_t NumberEnd(std::string_view t, size_t i) {
  size_t j = i;
  const size_t n = t.size();
  if (t[j] == '-' || t[j] == '+') ++j;
  if (t[j] == '0' && j + 2 < n && (t[j + 1] == 'x' || t[j + 1] == 'X') && IsHex(t[j + 2])) {
    j += 2;
    while (j < n && IsHex(t[j])) ++j;
    return j;
  }
  bool integer = true;
  while (j < n && IsDigit(t[j])) ++j;
  if (j + 1 < n && t[j] == '.' && IsDigit(t[j + 1])) {
    ++j;
    while (j < n && IsDigit(t[j])) ++j;
    integer = false;
  }
  if (j < n && (t[j] == 'e' || t[j] == 'E')) {
    size_t k = j + 1;
    if (k < n && (t[k] == '+' || t[k] == '-')) ++k;
    if (k < n && IsDigit(t[k])) {
      while (k < n && IsDigit(t[k])) ++k;
      return k;
    }
  }
  if (integer && j < n && IsHex(t[j])) {  // "9b", "2606ab": a hex run up to a boundary
    size_t k = j;
    while (k < n && IsHex(t[k])) ++k;
    if (k == n || !IsAlnum(t[k])) return k;
  }
  return j;
}

// "nan", "inf" (any case, optionally signed) as a whole word: a diverged loss.
size_t NonFiniteEnd(std::string_view t, size_t i) {
  if (i > 0 && IsAlnum(t[i - 1])) return 0;
  size_t j = i;
  if (t[j] == '-' || t[j] == '+') ++j;
  if (j + 3 > t.size()) return 0;
  char w[3] = {static_cast<char>(t[j] | 0x20), static_cast<char>(t[j + 1] | 0x20), static_cast<char>(t[j + 2] | 0x20)};
  bool hit = (w[0] == 'n' && w[1] == 'a' && w[2] == 'n') || (w[0] == 'i' && w[1] == 'n' && w[2] == 'f');
  if (!hit || (j + 3 < t.size() && IsAlnum(t[j + 3]))) return 0;
  return j + 3;
}

bool IsNumberStart(std::string_view t, size_t i) {
  char c = t[i];
  if (IsDigit(c)) return true;
  if ((c == '-' || c == '+' || c == '.') && i + 1 < t.size() && IsDigit(t[i + 1])) {
    return i == 0 || !IsAlnum(t[i - 1]);
  }
  return false;
}

// Masks one token (at byte offset `base` of the source) into out->buffer_.
void MaskToken(std::string_view t, size_t base, uint32_t index, MaskedLine* out) {
  std::string& b = out->buffer_;
  if (IsPath(t)) {
    b.append(kWildcard);
    return;
  }
  size_t run_out = b.size();  // where the current alphanumeric run starts in the buffer
  size_t run_in = 0;          // ... and in the token
  bool run_hex = true;        // the run so far is hex letters only
  size_t i = 0;
  while (i < t.size()) {
    if (size_t nf = (t[i] | 0x20) == 'n' || (t[i] | 0x20) == 'i' || t[i] == '-' ? NonFiniteEnd(t, i) : 0; nf != 0) {
      b.append(kWildcard);
      out->params.push_back({t.substr(i, nf - i), index, base + i});
      i = nf;
      run_out = b.size();
      run_in = i;
      run_hex = true;
      continue;
    }
    if (IsNumberStart(t, i)) {
      size_t start = i;
      if (IsDigit(t[i]) && i > run_in && run_hex) {  // "b6c3b2be": the letters belong to it
        start = run_in;
        b.resize(run_out);
      }
      size_t end = start == i ? NumberEnd(t, i) : i;
      if (start != i) {
        while (end < t.size() && IsHex(t[end])) ++end;
      }
      b.append(kWildcard);
      out->params.push_back({t.substr(start, end - start), index, base + start});
      i = end;
      run_out = b.size();
      run_in = i;
      run_hex = true;
      continue;
    }
    char c = t[i];
    b.push_back(c);
    ++i;
    if (!IsAlnum(c)) {
      run_out = b.size();
      run_in = i;
      run_hex = true;
    } else if (!IsHex(c)) {
      run_hex = false;
    }
  }
}

}  // namespace

void Mask(std::string_view line, MaskedLine* out) {
  out->tokens.clear();
  out->params.clear();
  out->buffer_.clear();
  if (NormaliseBars(line, &out->normalised_)) line = out->normalised_;
  out->source = line;
  // Token boundaries first (views into buffer_ are taken after it stops growing).
  auto& spans = out->spans_;  // [begin, end) in buffer_
  spans.clear();
  size_t i = 0;
  uint32_t index = 0;
  while (i < line.size()) {
    while (i < line.size() && IsSpace(line[i])) ++i;
    if (i == line.size()) break;
    size_t j = i;
    while (j < line.size() && !IsSpace(line[j])) ++j;
    size_t begin = out->buffer_.size();
    MaskToken(line.substr(i, j - i), i, index++, out);
    spans.emplace_back(begin, out->buffer_.size());
    i = j;
  }
  std::string_view all(out->buffer_);
  out->tokens.reserve(spans.size());
  for (auto [b, e] : spans) out->tokens.push_back(all.substr(b, e - b));
}

std::string DrainCluster::Template() const {
  std::string s;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (i) s.push_back(' ');
    s += tokens[i];
  }
  return s;
}

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

struct Drain::Node {
  std::unordered_map<std::string, std::unique_ptr<Node>, StringHash, std::equal_to<>> children;
  std::vector<uint32_t> clusters;  // at leaves
};

Drain::Drain(DrainOptions opts) : opts_(opts), root_(std::make_unique<Node>()) {}
Drain::~Drain() = default;
Drain::Drain(Drain&&) noexcept = default;
Drain& Drain::operator=(Drain&&) noexcept = default;

std::vector<uint32_t>* Drain::Leaf(const std::vector<std::string_view>& tokens) {
  Node* node = root_.get();
  auto step = [&](std::string_view key) {
    auto it = node->children.find(key);
    if (it == node->children.end()) {
      if (node->children.size() >= opts_.max_children) key = kWildcard;
      it = node->children.find(key);
      if (it == node->children.end()) it = node->children.emplace(std::string(key), std::make_unique<Node>()).first;
    }
    node = it->second.get();
  };
  step(std::to_string(tokens.size()));
  const size_t levels = opts_.depth > 2 ? static_cast<size_t>(opts_.depth - 2) : 0;
  for (size_t i = 0; i < levels && i < tokens.size(); ++i) {
    std::string_view t = tokens[i];
    step(t.find(kWildcard) != std::string_view::npos ? kWildcard : t);
  }
  return &node->clusters;
}

int Drain::BestMatch(const std::vector<uint32_t>& leaf, const std::vector<std::string_view>& tokens) const {
  int best = -1;
  double best_sim = -1;
  size_t best_params = 0;
  for (uint32_t id : leaf) {
    const std::vector<std::string>& tpl = clusters_[id].tokens;
    if (tpl.size() != tokens.size()) continue;
    size_t equal = 0, params = 0;
    for (size_t i = 0; i < tpl.size(); ++i) {
      if (tpl[i] == kWildcard) {
        ++params;
        ++equal;
      } else if (tpl[i] == tokens[i]) {
        ++equal;
      }
    }
    double sim = tokens.empty() ? 1.0 : static_cast<double>(equal) / static_cast<double>(tokens.size());
    if (sim > best_sim || (sim == best_sim && params > best_params)) {
      best = static_cast<int>(id);
      best_sim = sim;
      best_params = params;
    }
  }
  return best_sim >= opts_.similarity ? best : -1;
}

DrainMatch Drain::Merge(uint32_t id, const std::vector<std::string_view>& tokens) {
  DrainCluster& c = clusters_[id];
  DrainMatch m{id, false, false};
  for (size_t i = 0; i < c.tokens.size() && i < tokens.size(); ++i) {
    if (c.tokens[i] != kWildcard && c.tokens[i] != tokens[i]) {
      c.tokens[i] = std::string(kWildcard);
      m.changed = true;
    }
  }
  ++c.count;
  return m;
}

uint32_t Drain::Overflow(size_t token_count) {
  auto it = overflow_.find(token_count);
  if (it != overflow_.end()) return it->second;
  auto id = static_cast<uint32_t>(clusters_.size());
  clusters_.push_back({id, std::vector<std::string>(token_count, std::string(kWildcard)), 0});
  overflow_.emplace(token_count, id);
  return id;
}

DrainMatch Drain::Add(const MaskedLine& line) {
  std::vector<uint32_t>* leaf = Leaf(line.tokens);
  int best = BestMatch(*leaf, line.tokens);
  if (best >= 0) return Merge(static_cast<uint32_t>(best), line.tokens);
  if (clusters_.size() >= opts_.max_clusters || leaf->size() >= opts_.max_leaf_clusters) {
    uint32_t id = Overflow(line.tokens.size());
    ++clusters_[id].count;
    return {id, false, false};
  }
  auto id = static_cast<uint32_t>(clusters_.size());
  DrainCluster c{id, {}, 1};
  c.tokens.reserve(line.tokens.size());
  for (std::string_view t : line.tokens) c.tokens.emplace_back(t);
  clusters_.push_back(std::move(c));
  leaf->push_back(id);
  return {id, true, false};
}

}  // namespace orrery::logs
