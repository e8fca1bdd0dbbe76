#include "live/listing_delta.h"

#include "base/parse.h"

namespace orrery::live {

std::string_view ListingDelta::KeyOf(std::string_view line) const {
  size_t end = 0;
  for (size_t f = 0; f < key_fields_; ++f) {
    const size_t at = line.find(sep_, end);
    if (at == std::string_view::npos) return line;
    end = at + 1;
  }
  return line.substr(0, end == 0 ? 0 : end - 1);
}

void ListingDelta::Index(Listing* l) {
  l->rows.clear();
  size_t pos = 0, lineno = 0;
  std::string_view line;
  while (NextLine(l->text, &pos, &line)) {
    ++lineno;
    if (!line.empty()) l->rows.push_back(Line{line, lineno});
  }
}

ListingDelta::Diff ListingDelta::Next(std::string text, Sweep sweep) {
  if (have_ && text == lists_[cur_].text) {  // byte-identical: nothing changed, nothing to index
    Diff d;
    if (sweep.any())
      for (const Line& row : lists_[cur_].rows)
        if (Swept(row, sweep)) d.changed.push_back(row);
    return d;
  }
  const int before = cur_, now = 1 - cur_;
  lists_[now].text = std::move(text);  // lists_[before] is untouched: the answer's gone keys view it
  Index(&lists_[now]);
  cur_ = now;
  Diff d;
  if (!have_) {
    have_ = true;
    d.first = true;
    d.changed = lists_[now].rows;
    return d;
  }
  Compare(lists_[before], lists_[now], sweep, &d);
  return d;
}

void ListingDelta::Forget() { have_ = false; }

void ListingDelta::Compare(const Listing& before, const Listing& now, Sweep sweep, Diff* d) {
  by_key_.clear();
  by_key_built_ = false;
  matched_.assign(before.rows.size(), 0);
  size_t matched = 0;
  for (size_t i = 0; i < now.rows.size(); ++i) {
    const Line& row = now.rows[i];
    size_t at = i;
    const bool same_place = i < before.rows.size() && !matched_[i] &&
                            (before.rows[i].text == row.text || KeyOf(before.rows[i].text) == KeyOf(row.text));
    if (!same_place && (!MatchByKey(before, row, &at) || matched_[at])) {
      d->changed.push_back(row);  // a new key (or the same key listed twice)
      continue;
    }
    matched_[at] = 1;
    ++matched;
    if (before.rows[at].text != row.text || Swept(row, sweep)) d->changed.push_back(row);
  }
  if (matched == before.rows.size()) return;
  for (size_t j = 0; j < before.rows.size(); ++j)
    if (!matched_[j]) d->gone.push_back(KeyOf(before.rows[j].text));
}

bool ListingDelta::MatchByKey(const Listing& before, const Line& row, size_t* at) {
  if (!by_key_built_) {
    by_key_built_ = true;
    by_key_.reserve(before.rows.size());
    for (size_t j = 0; j < before.rows.size(); ++j) by_key_.emplace(KeyOf(before.rows[j].text), j);
  }
  auto it = by_key_.find(KeyOf(row.text));
  if (it == by_key_.end()) return false;
  *at = it->second;
  return true;
}

}  // namespace orrery::live
