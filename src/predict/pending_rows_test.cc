#include "predict/pending_rows.h"

#include <gtest/gtest.h>

#include <map>

#include "base/rng.h"

namespace orrery {
namespace {

TEST(PendingRows, FindsWhatWasAddedAndForgetsWhatWasRemoved) {
  PendingRows<int> p(2);
  EXPECT_EQ(p.Find(7), PendingRows<int>::kNone);  // empty table
  const uint32_t a = p.Add(7);
  p.row(a)[0] = 1.5f;
  p.row(a)[1] = 2.5f;
  p.extra(a) = 70;
  const uint32_t b = p.Add(UINT32_MAX);  // every id is a key, the largest included
  p.extra(b) = 99;
  EXPECT_EQ(p.Find(7), a);
  EXPECT_EQ(p.Find(UINT32_MAX), b);
  EXPECT_EQ(p.row(a)[1], 2.5f);
  EXPECT_EQ(p.size(), 2u);
  p.Remove(7);
  EXPECT_EQ(p.Find(7), PendingRows<int>::kNone);
  EXPECT_EQ(p.Find(UINT32_MAX), b);
  p.Remove(7);  // absent: nothing happens
  EXPECT_EQ(p.size(), 1u);
  // The freed slot is reused (no growth per job).
  EXPECT_EQ(p.Add(8), a);
}

// Random adds and removes (about 2,000 live ids of 4,096, dense or sparse: several growths
// and many backward shifts) against std::map: every lookup agrees and every row keeps its values.
TEST(PendingRows, AgreesWithAMapUnderChurn) {
  // Ids k · stride for k < 4096: dense (stride 1), and sparse over the whole uint32 range.
  for (const uint32_t stride : {1u, 1048573u, 0x9E3779B1u}) {
    PendingRows<uint32_t> p(3);
    std::map<uint32_t, uint32_t> ref;  // id -> slot
    Rng rng(stride, "pending-rows-test");
    for (int step = 0; step < 200000; ++step) {
      const uint32_t id = static_cast<uint32_t>(rng.NextU64() % 4096) * stride;
      const uint32_t found = p.Find(id);
      auto it = ref.find(id);
      ASSERT_EQ(found, it == ref.end() ? PendingRows<uint32_t>::kNone : it->second) << "step " << step;
      if (it == ref.end() && rng.Uniform() < 0.55) {
        const uint32_t s = p.Add(id);
        for (int c = 0; c < 3; ++c) p.row(s)[c] = static_cast<float>(id) + static_cast<float>(c);
        p.extra(s) = id;
        ref[id] = s;
      } else if (it != ref.end()) {
        ASSERT_EQ(p.extra(found), id);
        ASSERT_EQ(p.row(found)[2], static_cast<float>(id) + 2.0f);
        p.Remove(id);
        ref.erase(it);
      }
      ASSERT_EQ(p.size(), ref.size());
    }
    for (const auto& [id, slot] : ref) EXPECT_EQ(p.Find(id), slot);
  }
}

}  // namespace
}  // namespace orrery
