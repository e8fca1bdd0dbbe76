// Line handling shared by the log readers (diagnosis and progress tracking).
//  * LineSplitter cuts a byte stream fed in arbitrary chunks into lines. '\n', "\r\n" and a
//    lone '\r' (a terminal progress bar redrawing itself) all end a line, so each tqdm
//    refresh is its own line. Lines longer than kMaxLineBytes are cut there and the rest of
//    the physical line is skipped (counted in truncated_lines()): a binary file or a
//    megabyte-long config dump costs bounded memory and time.
//  * CleanLine removes ANSI escape sequences (colour codes) into a scratch buffer.
// Bytes are never interpreted as UTF-8 here: invalid sequences and NULs pass through.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace orrery::logs {

inline constexpr size_t kMaxLineBytes = 16384;  // verl prints 2-8 KiB metric lines

class LineSplitter {
 public:
  // Calls sink(std::string_view line) for every complete line in `bytes` (plus the
  // buffered start of a line from earlier calls). The view is valid during the call only.
  template <class Sink>
  void Feed(std::string_view bytes, Sink&& sink);
  // Emits the buffered incomplete last line, if any (end of input).
  template <class Sink>
  void Finish(Sink&& sink);
  uint64_t truncated_lines() const { return truncated_; }

 private:
  std::string partial_;
  bool skipping_ = false;   // the current physical line passed kMaxLineBytes
  bool after_cr_ = false;   // last byte seen was '\r' (a following '\n' ends nothing new)
  uint64_t truncated_ = 0;
};

// Returns `line` without ANSI CSI/OSC escape sequences; uses *scratch only when the line
// contains an ESC byte.
std::string_view CleanLine(std::string_view line, std::string* scratch);

template <class Sink>
void LineSplitter::Feed(std::string_view bytes, Sink&& sink) {
  size_t i = 0;
  const size_t n = bytes.size();
  while (i < n) {
    if (after_cr_ && bytes[i] == '\n') {  // "\r\n": the '\r' already ended the line
      after_cr_ = false;
      ++i;
      continue;
    }
    after_cr_ = false;
    size_t j = i;
    while (j < n && bytes[j] != '\n' && bytes[j] != '\r') ++j;
    std::string_view piece = bytes.substr(i, j - i);
    if (j == n) {  // incomplete line: keep (up to the cap) for the next call
      if (!skipping_) {
        size_t room = kMaxLineBytes - partial_.size();
        if (piece.size() > room) {
          partial_.append(piece.substr(0, room));
          skipping_ = true;
          ++truncated_;
        } else {
          partial_.append(piece);
        }
      }
      return;
    }
    after_cr_ = bytes[j] == '\r';
    if (partial_.empty() && !skipping_) {
      if (piece.size() > kMaxLineBytes) {
        piece = piece.substr(0, kMaxLineBytes);
        ++truncated_;
      }
      sink(piece);
    } else {
      if (!skipping_) {
        size_t room = kMaxLineBytes - partial_.size();
        if (piece.size() > room) ++truncated_;
        partial_.append(piece.substr(0, room < piece.size() ? room : piece.size()));
      }
      sink(std::string_view(partial_));
      partial_.clear();
      skipping_ = false;
    }
    i = j + 1;
  }
}

template <class Sink>
void LineSplitter::Finish(Sink&& sink) {
  if (!partial_.empty()) sink(std::string_view(partial_));
  partial_.clear();
  skipping_ = false;
  after_cr_ = false;
}

}  // namespace orrery::logs
