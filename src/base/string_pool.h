// Interns strings to dense 32-bit ids. Used for users, VC names, job names and
// GPU models so that a Job stays a small fixed-size value.
//
// The index is an open-addressing hash table (linear probing, load <= 1/2) of
// 16-byte slots {32-bit hash tag, id + 1, length, offset}: a lookup touches one or two
// slots and, when the tags match, compares the string bytes with the pool's arena, where
// every string's bytes lie back to back. Shaped for the importers (a million rows, three
// lookups each): a hit reads one slot and one place in a dense arena, never the
// std::string objects or their scattered heap blocks. The table holds no pointers, so a
// pool copies and moves freely.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace orrery {

class StringPool {
 public:
  // Returns the id of s, adding it if new. Ids are assigned 0, 1, 2, ... in first-seen order.
  uint32_t Intern(std::string_view s) {
    if (slots_.empty()) Rehash(16);
    const uint64_t h = Hash(s);
    const uint32_t tag = static_cast<uint32_t>(h >> 32);
    size_t i = static_cast<size_t>(h) & mask_;
    for (;;) {
      const Slot& sl = slots_[i];
      if (sl.id1 == 0) break;
      if (sl.tag == tag && Holds(sl, s)) return sl.id1 - 1;
      i = (i + 1) & mask_;
    }
    const uint32_t id = static_cast<uint32_t>(strings_.size());
    strings_.emplace_back(s);
    slots_[i] = SlotFor(tag, id);
    if (strings_.size() * 2 > slots_.size()) Rehash(slots_.size() * 2);
    return id;
  }
  // Returns the id of s or UINT32_MAX when absent.
  uint32_t Find(std::string_view s) const {
    if (slots_.empty()) return UINT32_MAX;
    const uint64_t h = Hash(s);
    const uint32_t tag = static_cast<uint32_t>(h >> 32);
    size_t i = static_cast<size_t>(h) & mask_;
    for (;;) {
      const Slot& sl = slots_[i];
      if (sl.id1 == 0) return UINT32_MAX;
      if (sl.tag == tag && Holds(sl, s)) return sl.id1 - 1;
      i = (i + 1) & mask_;
    }
  }
  const std::string& Get(uint32_t id) const { return strings_[id]; }
  size_t size() const { return strings_.size(); }
  const std::vector<std::string>& all() const { return strings_; }

  // 64-bit hash of a byte string (multiply-mix over 8-byte words; not for adversarial keys).
  static uint64_t Hash(std::string_view s) {
    const unsigned char* p = reinterpret_cast<const unsigned char*>(s.data());
    size_t n = s.size();
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (static_cast<uint64_t>(n) * 0xA0761D6478BD642FULL);
    while (n > 8) {
      h = Mix(h ^ Load64(p), 0xE7037ED1A0B428DBULL);
      p += 8;
      n -= 8;
    }
    uint64_t a = 0, b = 0;
    if (n >= 4) {
      a = Load32(p);
      b = Load32(p + n - 4);
    } else if (n > 0) {
      a = (static_cast<uint64_t>(p[0]) << 16) | (static_cast<uint64_t>(p[n >> 1]) << 8) | p[n - 1];
    }
    return Mix(h ^ a ^ (b << 32), 0x8EBC6AF09C88C6E3ULL);
  }

  // Whether the n bytes at a and b are equal: inline word compares up to 32 bytes (most
  // interned values are short names), memcmp beyond.
  static bool BytesEqual(const char* a, const char* b, size_t n) {
    const auto* p = reinterpret_cast<const unsigned char*>(a);
    const auto* q = reinterpret_cast<const unsigned char*>(b);
    if (n >= 8) {
      if (n > 32) return std::memcmp(p, q, n) == 0;
      const uint64_t head = (Load64(p) ^ Load64(q)) | (Load64(p + n - 8) ^ Load64(q + n - 8));
      if (n <= 16) return head == 0;
      return (head | (Load64(p + 8) ^ Load64(q + 8)) | (Load64(p + n - 16) ^ Load64(q + n - 16))) == 0;
    }
    if (n >= 4) return ((Load32(p) ^ Load32(q)) | (Load32(p + n - 4) ^ Load32(q + n - 4))) == 0;
    for (size_t i = 0; i < n; ++i)
      if (p[i] != q[i]) return false;
    return true;
  }

 private:
  // off == kNotInArena: the string's bytes are compared with strings_ (the arena stops
  // growing at 4 GiB; a pool that large exists only for hostile input).
  static constexpr uint32_t kNotInArena = UINT32_MAX;
  struct Slot {
    uint32_t tag = 0;
    uint32_t id1 = 0;  // id + 1; 0 = empty
    uint32_t len = 0, off = 0;
  };
  static uint64_t Load64(const unsigned char* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  static uint64_t Load32(const unsigned char* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  static uint64_t Mix(uint64_t a, uint64_t b) {
    unsigned __int128 r = static_cast<unsigned __int128>(a) * b;
    return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
  }
  bool Holds(const Slot& sl, std::string_view s) const {
    if (sl.off == kNotInArena) return strings_[sl.id1 - 1] == s;
    return sl.len == s.size() && BytesEqual(arena_.data() + sl.off, s.data(), s.size());
  }
  // The slot of new string `id` (the last of strings_); appends its bytes to the arena.
  Slot SlotFor(uint32_t tag, uint32_t id) {
    const std::string& s = strings_[id];
    Slot sl{tag, id + 1, 0, kNotInArena};
    if (s.size() < kNotInArena && arena_.size() <= kNotInArena - s.size()) {  // fits below 4 GiB
      sl.len = static_cast<uint32_t>(s.size());
      sl.off = static_cast<uint32_t>(arena_.size());
      arena_.append(s);
    }
    return sl;
  }
  void Rehash(size_t n) {
    std::vector<Slot> old(n);
    old.swap(slots_);
    mask_ = n - 1;
    for (const Slot& sl : old) {  // every string keeps its tag, length and arena bytes
      if (sl.id1 == 0) continue;
      size_t i = static_cast<size_t>(Hash(strings_[sl.id1 - 1])) & mask_;
      while (slots_[i].id1 != 0) i = (i + 1) & mask_;
      slots_[i] = sl;
    }
  }

  std::vector<std::string> strings_;
  std::string arena_;  // the strings' bytes in id order (those below 4 GiB)
  std::vector<Slot> slots_;
  size_t mask_ = 0;
};

}  // namespace orrery
