// A faithful C++ port of the parts of CPython's difflib that Helios' history estimator
// uses: SequenceMatcher (isjunk=None, autojunk=True) ratio / quick_ratio /
// real_quick_ratio, and get_close_matches(word, possibilities, n, cutoff).
//
// Sequences are Unicode code points (Python str elements): inputs are UTF-8 and are
// decoded; a byte that is not valid UTF-8 becomes U+DC80+byte (Python's
// "surrogateescape"), so every input has a defined result.
//
// Semantics reproduced exactly (CPython 3.x Lib/difflib.py):
//  * b (seq2) is the "word" whose element index b2j is built; when len(b) >= 200 the
//    autojunk heuristic drops "popular" elements (count > len(b)//100 + 1) from b2j,
//    but they may still be absorbed by find_longest_match's extension loops.
//  * ratio = 2*M/T over the matching blocks (1.0 when both are empty).
//  * get_close_matches keeps x when real_quick_ratio, quick_ratio and ratio are all
//    >= cutoff, then returns heapq.nlargest(n, [(ratio, x)]) — i.e. sorted by score
//    descending, ties by the larger string (code-point order) first.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace orrery::difflib {

// UTF-8 -> code points (invalid bytes -> U+DC80+byte).
std::u32string DecodeUtf8(std::string_view s);

// SequenceMatcher with a fixed b (set_seq2) and a changeable a (set_seq1), as
// get_close_matches uses it. Not thread-safe (scratch buffers).
class SequenceMatcher {
 public:
  explicit SequenceMatcher(std::u32string b);
  void set_a(const std::u32string* a) { a_ = a; }  // borrowed; must outlive the calls

  double ratio();
  double quick_ratio();
  double real_quick_ratio() const;
  // Sum of the sizes of get_matching_blocks() (the "M" of ratio()).
  int64_t matching_characters();

  const std::u32string& b() const { return b_; }

 private:
  struct Match {
    int64_t i, j, k;
  };
  Match FindLongestMatch(int64_t alo, int64_t ahi, int64_t blo, int64_t bhi);
  const std::vector<int32_t>* B2j(char32_t c) const;
  int32_t FullBCount(char32_t c) const;

  std::u32string b_;
  const std::u32string* a_ = nullptr;
  // b2j: element -> ascending indices in b (popular elements removed when autojunk).
  std::vector<std::vector<int32_t>> b2j_small_;  // code points < 256
  std::unordered_map<char32_t, std::vector<int32_t>> b2j_big_;
  // fullbcount (counts before junk removal), for quick_ratio.
  int32_t bcount_small_[256] = {};
  std::unordered_map<char32_t, int32_t> bcount_big_;
  // Scratch for find_longest_match (j2len rows) and quick_ratio (avail).
  std::vector<int32_t> len_prev_, len_cur_;
  std::vector<int32_t> touched_prev_, touched_cur_;
  int32_t avail_small_[256] = {};
};

// get_close_matches(word, possibilities, n, cutoff): the matching possibilities,
// best first, with their scores.
std::vector<std::pair<double, std::string>> GetCloseMatchesScored(std::string_view word,
                                                                  const std::vector<std::string>& possibilities,
                                                                  int n = 3, double cutoff = 0.6);
std::vector<std::string> GetCloseMatches(std::string_view word, const std::vector<std::string>& possibilities,
                                         int n = 3, double cutoff = 0.6);
double Ratio(std::string_view a, std::string_view b);  // SequenceMatcher(None, a, b).ratio()

// Incremental get_close_matches over a growing list of distinct possibilities, with a
// per-query cache. Because (score, string) is a total order on distinct strings,
// nlargest(n, old ∪ new) == nlargest(n, nlargest(n, old) ∪ new): a repeated query only
// scores the possibilities added since its last call. Total work is
// O(#distinct queries × #possibilities) ratio computations, each O(len(a)·len(b)) at
// worst (usually far less after the quick_ratio pre-filters), instead of
// O(#queries × #possibilities).
class CloseMatcher {
 public:
  CloseMatcher(int n, double cutoff) : n_(n), cutoff_(cutoff) {}
  // Adds a possibility (the caller guarantees it is new); returns its index.
  uint32_t Add(std::string_view s);
  size_t size() const { return poss_.size(); }
  const std::u32string& possibility(uint32_t idx) const { return poss_[idx]; }

  struct Hit {
    double score;
    uint32_t index;  // into the possibilities, in Add order
  };
  // Query with a cache key (e.g. the NameId of word): results are exactly
  // get_close_matches(word, possibilities-so-far, n, cutoff).
  const std::vector<Hit>& Query(uint64_t key, std::string_view word);

  uint64_t ratio_calls() const { return ratio_calls_; }

 private:
  struct Entry {
    std::u32string word;
    std::vector<Hit> top;  // best first
    uint32_t scanned = 0;  // possibilities [0, scanned) already considered
  };
  bool Better(const Hit& x, const Hit& y) const;  // x ranks before y

  int n_;
  double cutoff_;
  std::vector<std::u32string> poss_;
  std::unordered_map<uint64_t, Entry> cache_;
  uint64_t ratio_calls_ = 0;
};

}  // namespace orrery::difflib
