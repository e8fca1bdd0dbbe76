#include "predict/flat_index.h"

#include <gtest/gtest.h>

#include <map>

#include "base/rng.h"

namespace orrery {
namespace {

TEST(FlatIndex, KeepsTheFirstValueOfAKey) {
  FlatIndex ix;
  EXPECT_EQ(ix.Emplace(42, 7), std::make_pair(7u, true));
  EXPECT_EQ(ix.Emplace(42, 9), std::make_pair(7u, false));  // present: the stored value, nothing stored
  EXPECT_EQ(ix.Emplace(0, 1), std::make_pair(1u, true));    // key 0 is a key like any other
  EXPECT_EQ(ix.Emplace(UINT64_MAX, 2), std::make_pair(2u, true));
  EXPECT_EQ(ix.size(), 3u);
}

// (user << 32 | name)-shaped keys through several growths, against std::map.
TEST(FlatIndex, AgreesWithAMapThroughGrowth) {
  FlatIndex ix;
  std::map<uint64_t, uint32_t> ref;
  Rng rng(3, "flat-index-test");
  for (int step = 0; step < 100000; ++step) {
    const uint64_t key = (rng.NextU64() % 300) << 32 | (rng.NextU64() % 300);
    const uint32_t next = static_cast<uint32_t>(ref.size());
    auto [it, fresh] = ref.try_emplace(key, next);
    ASSERT_EQ(ix.Emplace(key, next), std::make_pair(it->second, fresh)) << "step " << step;
  }
  EXPECT_EQ(ix.size(), ref.size());
}

}  // namespace
}  // namespace orrery
