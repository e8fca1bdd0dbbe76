// Text that remembers, for every byte, where in the source file it was written. A shell
// word built from `--num-layers $NLAYERS` keeps the position of `NLAYERS=40`'s `40`, so
// the schema can cite the line that really sets a value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace orrery::semantic {

struct Loc {
  uint32_t line = 0;  // 1-based
  uint32_t col = 0;   // 1-based byte column
};

struct LocText {
  std::string s;
  std::vector<Loc> at;  // at[i] is where s[i] was written

  void push(char c, Loc l) {
    s.push_back(c);
    at.push_back(l);
  }
  void append(const LocText& o) {
    s += o.s;
    at.insert(at.end(), o.at.begin(), o.at.end());
  }
  void append(std::string_view text, Loc l) {
    for (char c : text) push(c, l);
  }
  Loc first() const { return at.empty() ? Loc{} : at.front(); }
  bool empty() const { return s.empty(); }
};

// Splits `text` into lines (without '\n' and a trailing '\r'); line i is text line i+1.
std::vector<std::string_view> SplitLines(std::string_view text);

}  // namespace orrery::semantic
