// The rows of a line-per-row text listing that changed since the previous listing, for the
// Slurm tools that have no "changed since" filter (sinfo lists every node every time). A
// row's key is its first `key_fields` fields (separated by `sep`): a row is new or changed
// when no row of the previous listing had its key and its bytes; a previous row whose key
// is no longer listed is gone. Blank lines are no rows.
//
// Cost: one comparison of the whole text when nothing changed; otherwise one pass that
// compares each line with the previous listing's line at the same position (the tools list
// in a stable order), falling back to a key index only where rows were added or removed.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace orrery::live {

// The rolling resync: a listing also answers every row of one slice of `of` (of == 0: none),
// whatever its bytes, so that every row is read again within `of` listings.
struct Sweep {
  uint32_t slice = 0;
  uint32_t of = 0;
  bool any() const { return of > 0; }
};

class ListingDelta {
 public:
  // The slice of a row's key (0 .. of-1).
  using SliceOf = uint32_t (*)(std::string_view key, uint32_t of);
  ListingDelta(char sep, size_t key_fields, SliceOf slice_of) : sep_(sep), key_fields_(key_fields), slice_of_(slice_of) {}
  // Its rows are views into the texts it holds: never copied nor moved.
  ListingDelta(const ListingDelta&) = delete;
  ListingDelta& operator=(const ListingDelta&) = delete;

  struct Line {
    std::string_view text;
    size_t lineno = 0;  // 1-based, in the listing's text
  };
  struct Diff {
    bool first = false;                   // no previous listing: every row is new
    std::vector<Line> changed;            // new or changed rows and the sweep's unchanged rows, in listing order
    std::vector<std::string_view> gone;   // keys of the previous listing's rows no longer listed
  };
  // Takes `text` as the current listing and compares it with the previous one; the rows of
  // `sweep`'s slice are answered as changed too. The views in the answer stay valid until the
  // next call of Next or Forget.
  Diff Next(std::string text, Sweep sweep = {});
  // Forgets the previous listing: the next listing is `first` (every row new).
  void Forget();
  // The key of one row: its first key_fields fields.
  std::string_view KeyOf(std::string_view line) const;

 private:
  struct Listing {
    std::string text;
    std::vector<Line> rows;  // non-blank lines, views into text
  };
  static void Index(Listing* l);
  void Compare(const Listing& before, const Listing& now, Sweep sweep, Diff* d);
  bool Swept(const Line& row, Sweep sweep) const { return sweep.any() && slice_of_(KeyOf(row.text), sweep.of) == sweep.slice; }
  // Matches `row` by key in `before` (built on first use per call); true when found.
  bool MatchByKey(const Listing& before, const Line& row, size_t* at);

  char sep_;
  size_t key_fields_;
  SliceOf slice_of_;
  Listing lists_[2];
  int cur_ = 0;        // lists_[cur_] is the latest listing
  bool have_ = false;  // a previous listing exists
  std::unordered_map<std::string_view, size_t> by_key_;  // previous listing's key -> row (lazily)
  bool by_key_built_ = false;
  std::vector<char> matched_;  // previous rows matched in this call
};

}  // namespace orrery::live
