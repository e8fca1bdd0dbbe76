#include "predict/difflib.h"

#include <algorithm>

namespace orrery::difflib {

std::u32string DecodeUtf8(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  size_t i = 0;
  const size_t n = s.size();
  auto cont = [&](size_t k) { return k < n && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80; };
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out.push_back(c);
      ++i;
      continue;
    }
    char32_t cp = 0;
    size_t len = 0;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2, cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3, cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4, cp = c & 0x07;
    }
    bool ok = len > 0;
    for (size_t k = 1; ok && k < len; ++k) {
      if (!cont(i + k)) {
        ok = false;
      } else {
        cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
      }
    }
    // Reject overlong 3/4-byte forms, surrogates and > U+10FFFF as Python's strict decoder does.
    if (ok && ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))) {
      ok = false;
    }
    if (ok) {
      out.push_back(cp);
      i += len;
    } else {
      out.push_back(0xDC00 + c);
      ++i;
    }
  }
  return out;
}

SequenceMatcher::SequenceMatcher(std::u32string b) : b_(std::move(b)) {
  b2j_small_.resize(256);
  const int32_t n = static_cast<int32_t>(b_.size());
  for (int32_t i = 0; i < n; ++i) {
    char32_t c = b_[i];
    if (c < 256) {
      b2j_small_[c].push_back(i);
      ++bcount_small_[c];
    } else {
      b2j_big_[c].push_back(i);
      ++bcount_big_[c];
    }
  }
  // autojunk: purge popular elements (no isjunk, so bjunk is empty).
  if (n >= 200) {
    const size_t ntest = static_cast<size_t>(n / 100 + 1);
    for (auto& v : b2j_small_) {
      if (v.size() > ntest) v.clear();
    }
    for (auto it = b2j_big_.begin(); it != b2j_big_.end();) {
      if (it->second.size() > ntest) {
        it = b2j_big_.erase(it);
      } else {
        ++it;
      }
    }
  }
  len_prev_.assign(b_.size() + 1, 0);
  len_cur_.assign(b_.size() + 1, 0);
}

const std::vector<int32_t>* SequenceMatcher::B2j(char32_t c) const {
  if (c < 256) return b2j_small_[c].empty() ? nullptr : &b2j_small_[c];
  auto it = b2j_big_.find(c);
  return it == b2j_big_.end() ? nullptr : &it->second;
}

int32_t SequenceMatcher::FullBCount(char32_t c) const {
  if (c < 256) return bcount_small_[c];
  auto it = bcount_big_.find(c);
  return it == bcount_big_.end() ? 0 : it->second;
}

SequenceMatcher::Match SequenceMatcher::FindLongestMatch(int64_t alo, int64_t ahi, int64_t blo, int64_t bhi) {
  const std::u32string& a = *a_;
  const std::u32string& b = b_;
  int64_t besti = alo, bestj = blo, bestsize = 0;
  // len_prev_[j] = j2len[j] of the previous row (0 when absent); touched lists let us
  // reset only what was written.
  for (int64_t i = alo; i < ahi; ++i) {
    touched_cur_.clear();
    if (const std::vector<int32_t>* idxs = B2j(a[i])) {
      for (int32_t j : *idxs) {
        if (j < blo) continue;
        if (j >= bhi) break;
        int32_t k = (j > 0 ? len_prev_[j - 1] : 0) + 1;
        len_cur_[j] = k;
        touched_cur_.push_back(j);
        if (k > bestsize) {
          besti = i - k + 1;
          bestj = j - k + 1;
          bestsize = k;
        }
      }
    }
    for (int32_t j : touched_prev_) len_prev_[j] = 0;
    std::swap(len_prev_, len_cur_);
    std::swap(touched_prev_, touched_cur_);
  }
  for (int32_t j : touched_prev_) len_prev_[j] = 0;
  touched_prev_.clear();

  // Extension over non-junk elements (bjunk is empty, so "not isbjunk" always holds;
  // popular elements are not junk and can be absorbed here).
  while (besti > alo && bestj > blo && a[besti - 1] == b[bestj - 1]) {
    --besti, --bestj, ++bestsize;
  }
  while (besti + bestsize < ahi && bestj + bestsize < bhi && a[besti + bestsize] == b[bestj + bestsize]) {
    ++bestsize;
  }
  // The junk-extension loops of CPython never fire: bjunk is empty.
  return {besti, bestj, bestsize};
}

int64_t SequenceMatcher::matching_characters() {
  const int64_t la = static_cast<int64_t>(a_->size()), lb = static_cast<int64_t>(b_.size());
  struct Range {
    int64_t alo, ahi, blo, bhi;
  };
  std::vector<Range> queue{{0, la, 0, lb}};
  int64_t total = 0;
  while (!queue.empty()) {
    Range r = queue.back();
    queue.pop_back();
    Match m = FindLongestMatch(r.alo, r.ahi, r.blo, r.bhi);
    if (m.k) {
      total += m.k;
      if (r.alo < m.i && r.blo < m.j) queue.push_back({r.alo, m.i, r.blo, m.j});
      if (m.i + m.k < r.ahi && m.j + m.k < r.bhi) queue.push_back({m.i + m.k, r.ahi, m.j + m.k, r.bhi});
    }
  }
  return total;
}

static double CalculateRatio(int64_t matches, int64_t length) {
  if (length) return 2.0 * static_cast<double>(matches) / static_cast<double>(length);
  return 1.0;
}

double SequenceMatcher::ratio() {
  return CalculateRatio(matching_characters(), static_cast<int64_t>(a_->size() + b_.size()));
}

double SequenceMatcher::quick_ratio() {
  // avail[elt] starts at fullbcount[elt] and is decremented per occurrence in a.
  int64_t matches = 0;
  std::unordered_map<char32_t, int32_t> avail_big;
  for (char32_t c : *a_) {
    if (c < 256) {
      int32_t numb = bcount_small_[c] - avail_small_[c];  // avail_small_ counts uses
      ++avail_small_[c];
      if (numb > 0) ++matches;
    } else {
      auto [it, fresh] = avail_big.try_emplace(c, FullBCount(c));
      int32_t numb = it->second;
      it->second = numb - 1;
      if (numb > 0) ++matches;
    }
  }
  for (char32_t c : *a_) {
    if (c < 256) avail_small_[c] = 0;
  }
  return CalculateRatio(matches, static_cast<int64_t>(a_->size() + b_.size()));
}

double SequenceMatcher::real_quick_ratio() const {
  const int64_t la = static_cast<int64_t>(a_->size()), lb = static_cast<int64_t>(b_.size());
  return CalculateRatio(std::min(la, lb), la + lb);
}

double Ratio(std::string_view a, std::string_view b) {
  std::u32string ua = DecodeUtf8(a);
  SequenceMatcher m(DecodeUtf8(b));
  m.set_a(&ua);
  return m.ratio();
}

std::vector<std::pair<double, std::string>> GetCloseMatchesScored(std::string_view word,
                                                                  const std::vector<std::string>& possibilities,
                                                                  int n, double cutoff) {
  SequenceMatcher s(DecodeUtf8(word));
  std::vector<std::pair<double, std::u32string>> result;
  std::vector<std::string> originals;
  std::vector<std::pair<double, size_t>> hits;
  std::vector<std::u32string> decoded;
  for (size_t k = 0; k < possibilities.size(); ++k) {
    std::u32string x = DecodeUtf8(possibilities[k]);
    s.set_a(&x);
    if (s.real_quick_ratio() >= cutoff && s.quick_ratio() >= cutoff) {
      double r = s.ratio();
      if (r >= cutoff) {
        hits.emplace_back(r, decoded.size());
        decoded.push_back(std::move(x));
        originals.push_back(possibilities[k]);
      }
    }
  }
  // heapq.nlargest(n, [(score, x)]): descending by (score, x).
  std::sort(hits.begin(), hits.end(), [&](const auto& p, const auto& q) {
    if (p.first != q.first) return p.first > q.first;
    return decoded[p.second] > decoded[q.second];
  });
  std::vector<std::pair<double, std::string>> out;
  for (size_t k = 0; k < hits.size() && static_cast<int>(k) < n; ++k) {
    out.emplace_back(hits[k].first, originals[hits[k].second]);
  }
  return out;
}

std::vector<std::string> GetCloseMatches(std::string_view word, const std::vector<std::string>& possibilities, int n,
                                         double cutoff) {
  std::vector<std::string> out;
  for (auto& [score, x] : GetCloseMatchesScored(word, possibilities, n, cutoff)) out.push_back(std::move(x));
  return out;
}

uint32_t CloseMatcher::Add(std::string_view s) {
  poss_.push_back(DecodeUtf8(s));
  return static_cast<uint32_t>(poss_.size() - 1);
}

bool CloseMatcher::Better(const Hit& x, const Hit& y) const {
  if (x.score != y.score) return x.score > y.score;
  return poss_[x.index] > poss_[y.index];
}

const std::vector<CloseMatcher::Hit>& CloseMatcher::Query(uint64_t key, std::string_view word) {
  auto [it, fresh] = cache_.try_emplace(key);
  Entry& e = it->second;
  if (fresh) e.word = DecodeUtf8(word);
  if (e.scanned == poss_.size()) return e.top;
  SequenceMatcher s(e.word);
  // Exact pruning: ratio <= quick_ratio <= real_quick_ratio, so once n hits are held a
  // candidate whose bound is below the n-th best score cannot enter (a bound equal to
  // it might, through the larger-string tie-break, so it is still scored).
  double thr = cutoff_;
  if (static_cast<int>(e.top.size()) >= n_) thr = std::max(thr, e.top.back().score);
  for (uint32_t k = e.scanned; k < poss_.size(); ++k) {
    s.set_a(&poss_[k]);
    if (s.real_quick_ratio() >= thr && s.quick_ratio() >= thr) {
      ++ratio_calls_;
      double r = s.ratio();
      if (r >= cutoff_) {
        Hit h{r, k};
        // Insert keeping the n best, best first.
        auto pos = std::find_if(e.top.begin(), e.top.end(), [&](const Hit& y) { return Better(h, y); });
        if (static_cast<int>(pos - e.top.begin()) < n_) {
          e.top.insert(pos, h);
          if (static_cast<int>(e.top.size()) > n_) e.top.pop_back();
          if (static_cast<int>(e.top.size()) >= n_) thr = std::max(cutoff_, e.top.back().score);
        }
      }
    }
  }
  e.scanned = static_cast<uint32_t>(poss_.size());
  return e.top;
}

}  // namespace orrery::difflib
