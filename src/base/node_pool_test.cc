#include "base/node_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory_resource>
#include <set>
#include <vector>

namespace orrery {
namespace {

TEST(NodePoolTest, AFreedBlockIsTheNextOneOfItsSizeClass) {
  NodePool pool;
  void* a = pool.allocate(40, 8);
  void* b = pool.allocate(40, 8);
  EXPECT_NE(a, b);
  pool.deallocate(a, 40, 8);
  // 33..48 bytes share one 16-byte class: the freed 40-byte block serves a 48-byte request.
  EXPECT_EQ(pool.allocate(48, 8), a);
  // Another class does not take it.
  pool.deallocate(b, 40, 8);
  void* c = pool.allocate(64, 8);
  EXPECT_NE(c, b);
  EXPECT_EQ(pool.allocate(33, 8), b);
}

TEST(NodePoolTest, BlocksAreAlignedAndDisjointAcrossChunks) {
  NodePool pool;
  // 3,000 blocks of 48 bytes span three 64 KiB chunks (1,365 per chunk).
  std::vector<uintptr_t> p;
  for (int i = 0; i < 3000; ++i) p.push_back(reinterpret_cast<uintptr_t>(pool.allocate(48, 16)));
  std::set<uintptr_t> distinct(p.begin(), p.end());
  EXPECT_EQ(distinct.size(), 3000u);
  for (uintptr_t a : p) EXPECT_EQ(a % 16, 0u);
  uintptr_t prev = 0;
  for (uintptr_t a : distinct) {  // no two blocks overlap
    if (prev) {
      EXPECT_GE(a - prev, 48u);
    }
    prev = a;
  }
}

TEST(NodePoolTest, LargeRequestsGoUpstreamAndContainersWork) {
  NodePool pool;
  void* big = pool.allocate(4096, 16);
  pool.deallocate(big, 4096, 16);
  std::pmr::set<int> s(&pool);
  for (int i = 0; i < 10000; ++i) s.insert((i * 7919) % 10007);
  for (int i = 0; i < 10000; i += 2) s.erase((i * 7919) % 10007);
  EXPECT_EQ(s.size(), 5000u);
  EXPECT_EQ(*s.begin(), [] {  // the smallest value left: min over odd i of (i × 7919) mod 10007
    int m = 10007;
    for (int i = 1; i < 10000; i += 2) m = std::min(m, (i * 7919) % 10007);
    return m;
  }());
}

}  // namespace
}  // namespace orrery
