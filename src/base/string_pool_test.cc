#include "base/string_pool.h"

#include <map>
#include <string>

#include <gtest/gtest.h>

namespace orrery {
namespace {

// Ids in first-seen order; a repeat finds its id; values of equal length that differ in any
// one byte (the first, the last, the middle of the word compares) are distinct.
TEST(StringPool, IdsInFirstSeenOrderAndEveryByteCounts) {
  StringPool p;
  EXPECT_EQ(p.Intern("alice"), 0u);
  EXPECT_EQ(p.Intern(""), 1u);
  EXPECT_EQ(p.Intern("bob"), 2u);
  EXPECT_EQ(p.Intern("alice"), 0u);
  EXPECT_EQ(p.Intern(""), 1u);
  EXPECT_EQ(p.size(), 3u);
  EXPECT_EQ(p.Get(2), "bob");
  EXPECT_EQ(p.Find("carol"), UINT32_MAX);
  // Lengths 1..40 cover the byte loop, the 4- and 8-byte overlapping words, 17..32 bytes in
  // four words and memcmp beyond; each position of each length is flipped once.
  for (size_t n = 1; n <= 40; ++n) {
    const std::string base(n, 'x');
    const uint32_t id = p.Intern(base);
    for (size_t k = 0; k < n; ++k) {
      std::string other = base;
      other[k] = 'y';
      EXPECT_EQ(p.Find(other), UINT32_MAX) << n << " " << k;
      EXPECT_FALSE(StringPool::BytesEqual(base.data(), other.data(), n)) << n << " " << k;
    }
    EXPECT_EQ(p.Find(base), id);
    EXPECT_TRUE(StringPool::BytesEqual(base.data(), std::string(base).data(), n));
  }
}

// 20,000 values (the table doubles twelve times): every id is found again, in a copy too.
TEST(StringPool, GrowsAndCopiesWithEveryValueFound) {
  StringPool p;
  std::map<std::string, uint32_t> want;
  for (uint32_t i = 0; i < 20000; ++i) {
    std::string s = "job_" + std::to_string(i * 7919 % 20000) + (i % 3 ? "_imagenet_bs256" : "");
    if (!want.count(s)) want[s] = static_cast<uint32_t>(want.size());
    EXPECT_EQ(p.Intern(s), want[s]);
  }
  const StringPool copy = p;
  for (const auto& [s, id] : want) {
    EXPECT_EQ(p.Find(s), id);
    EXPECT_EQ(copy.Find(s), id);
    EXPECT_EQ(copy.Get(id), s);
  }
  EXPECT_EQ(copy.size(), want.size());
}

}  // namespace
}  // namespace orrery
