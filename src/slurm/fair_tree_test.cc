// Fair Tree goldens computed by hand from the documented rules (fair_tree.h): LF = S / U per
// level, users ranked in a depth-first walk of the sorted levels, factor = rank / users.
#include "slurm/fair_tree.h"

#include <cmath>

#include <gtest/gtest.h>

namespace orrery::slurm {
namespace {

FairTree MustBuild(std::string_view listing) {
  auto a = ParseSacctmgr(listing, "t");
  EXPECT_TRUE(a.ok()) << (a.ok() ? "" : a.error().message);
  auto t = FairTree::Build(*a);
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message);
  return std::move(t).value();
}

size_t At(const FairTree& t, std::string_view account, std::string_view user) {
  auto i = t.Find(account, user, "");
  EXPECT_TRUE(i.has_value()) << account << "/" << user;
  return i.value_or(0);
}

constexpr double kInf = std::numeric_limits<double>::infinity();

// root ─┬─ A (60) ─┬─ a1 (1)
//       │          └─ a2 (1)
//       ├─ B (30) ─┬─ b1 (1)
//       │          └─ B2 (1) ── b21 (1)
//       └─ u0 (10), a user directly under root
TEST(FairTree, RanksByLevelFairshareDownTheTree) {
  FairTree t = MustBuild("Account|User|Share\nroot||1\n A||60\n  A|a1|1\n  A|a2|1\n B||30\n  B|b1|1\n  B2||1\n"
                         "   B2|b21|1\n root|u0|10\n");
  ASSERT_EQ(t.user_count(), 5u);
  t.AddUsage(At(t, "A", "a1"), 30);
  t.AddUsage(At(t, "A", "a2"), 10);
  t.AddUsage(At(t, "B", "b1"), 10);
  t.AddUsage(At(t, "root", "u0"), 50);
  t.Compute();
  // First level: shares 60 + 30 + 10 = 100, usage A 40 + B 10 + u0 50 = 100.
  //   A:  S 0.6 / U 0.4 = 1.5      B: S 0.3 / U 0.1 = 3.0      u0: S 0.1 / U 0.5 = 0.2
  //   order B, A, u0.
  // Under B (usage 10): b1 S 0.5 / U 1.0 = 0.5; B2 S 0.5 / U 0 = inf -> B2 first.
  //   under B2: b21 S 1 / U 0 (B2 has no usage) = inf -> rank 5; then b1 rank 4.
  // Under A (usage 40): a1 S 0.5 / U 0.75 = 2/3; a2 S 0.5 / U 0.25 = 2 -> a2 rank 3, a1 rank 2.
  // u0 rank 1.  Factors rank / 5.
  struct Row {
    const char *account, *user;
    double level_fs;
    uint32_t rank;
    double factor;
  } rows[] = {
      {"B2", "b21", kInf, 5, 1.0}, {"B", "b1", 0.5, 4, 0.8}, {"A", "a2", 2.0, 3, 0.6},
      {"A", "a1", 2.0 / 3.0, 2, 0.4}, {"root", "u0", 0.2, 1, 0.2},
  };
  for (const Row& r : rows) {
    const size_t i = At(t, r.account, r.user);
    EXPECT_DOUBLE_EQ(t.level_fs(i), r.level_fs) << r.user;
    EXPECT_EQ(t.rank(i), r.rank) << r.user;
    EXPECT_DOUBLE_EQ(t.factor(i), r.factor) << r.user;
  }
  EXPECT_DOUBLE_EQ(t.usage(1), 40.0);  // row 1, account A: the sum of its users' usage
}

// Ties, first level: p S .25 / U .2 = 1.25; X 1.25; Y 1.25; q S .25 / U .4 = 0.625
// (shares 1 each of 4, usage p 10, X 10, Y 10, q 20 of 50).
// Sorted p (user first), X, Y, q. p takes rank 5. X is tied with p, and Y with X: their
// children {x1, y1, y2} are one merged level that starts tied, all LF 1 (x1: S 1 / U 1;
// y1, y2: S .5 / U .5): each keeps p's rank 5. q is not tied: the next rank is 5 - 4 = 1.
TEST(FairTree, TiesShareARankAndTiedAccountsMerge) {
  FairTree t = MustBuild("Account|User|Share\nroot||1\n root|p|1\n X||1\n  X|x1|1\n Y||1\n  Y|y1|1\n  Y|y2|1\n"
                         " root|q|1\n");
  t.AddUsage(At(t, "root", "p"), 10);
  t.AddUsage(At(t, "X", "x1"), 10);
  t.AddUsage(At(t, "Y", "y1"), 5);
  t.AddUsage(At(t, "Y", "y2"), 5);
  t.AddUsage(At(t, "root", "q"), 20);
  t.Compute();
  struct Row {
    const char *account, *user;
    uint32_t rank;
  } rows[] = {{"root", "p", 5}, {"X", "x1", 5}, {"Y", "y1", 5}, {"Y", "y2", 5}, {"root", "q", 1}};
  for (const Row& r : rows) EXPECT_EQ(t.rank(At(t, r.account, r.user)), r.rank) << r.user;
  EXPECT_DOUBLE_EQ(t.factor(At(t, "root", "q")), 0.2);
}

// Users tied inside an account: A (usage 20) S .5 / U 1/3 = 1.5 before B (usage 40) .75.
// Under A: a3 has no usage (inf, rank 4); a1 and a2 both S 1/3 / U .5 = 2/3, tied at rank 3;
// b1 (S 1 / U 1) is not tied with a2 and takes 4 - 3 = 1.
TEST(FairTree, TiedUsersSkipTheRanksTheyShare) {
  FairTree t = MustBuild("Account|User|Share\nroot||1\n A||1\n  A|a1|1\n  A|a2|1\n  A|a3|1\n B||1\n  B|b1|1\n");
  t.AddUsage(At(t, "A", "a1"), 10);
  t.AddUsage(At(t, "A", "a2"), 10);
  t.AddUsage(At(t, "B", "b1"), 40);
  t.Compute();
  EXPECT_DOUBLE_EQ(t.factor(At(t, "A", "a3")), 1.0);   // 4 / 4
  EXPECT_DOUBLE_EQ(t.factor(At(t, "A", "a1")), 0.75);  // 3 / 4
  EXPECT_DOUBLE_EQ(t.factor(At(t, "A", "a2")), 0.75);
  EXPECT_DOUBLE_EQ(t.factor(At(t, "B", "b1")), 0.25);  // 1 / 4
}

// Zero shares rank last (LF 0), even without usage.
TEST(FairTree, ZeroSharesRankLast) {
  FairTree t = MustBuild("Account|User|Share\nroot||1\n root|z|0\n root|w|1\n");
  t.AddUsage(At(t, "root", "w"), 100);
  t.Compute();
  EXPECT_EQ(t.level_fs(At(t, "root", "z")), 0.0);
  EXPECT_DOUBLE_EQ(t.level_fs(At(t, "root", "w")), 1.0);  // S 1 / U 1
  EXPECT_EQ(t.rank(At(t, "root", "w")), 2u);
  EXPECT_EQ(t.rank(At(t, "root", "z")), 1u);
}

// Decay: 2^(-elapsed / half-life). After one half-life a user's usage halves; the ranking
// follows the decayed usage: c (100 -> 50 after a half-life) vs d (60 charged after it).
TEST(FairTree, UsageDecaysWithTheHalfLife) {
  EXPECT_DOUBLE_EQ(DecayFactor(7 * 86400, 7 * 86400), 0.5);
  EXPECT_DOUBLE_EQ(DecayFactor(14 * 86400, 7 * 86400), 0.25);
  EXPECT_DOUBLE_EQ(DecayFactor(3 * 86400, 6 * 86400), std::sqrt(0.5));
  EXPECT_EQ(DecayFactor(86400, 0), 1.0);  // PriorityDecayHalfLife=0: no decay
  FairTree t = MustBuild("Account|User|Share\nroot||1\n root|c|1\n root|d|1\n");
  t.AddUsage(At(t, "root", "c"), 100);
  t.Decay(DecayFactor(7 * 86400, 7 * 86400));
  t.AddUsage(At(t, "root", "d"), 60);
  t.Compute();
  EXPECT_DOUBLE_EQ(t.usage(At(t, "root", "c")), 50.0);
  // c: S .5 / U 50/110 = 1.1; d: S .5 / U 60/110 = 0.9167 -> c ranks first.
  EXPECT_DOUBLE_EQ(t.level_fs(At(t, "root", "c")), 0.5 / (50.0 / 110.0));
  EXPECT_EQ(t.rank(At(t, "root", "c")), 2u);
  EXPECT_EQ(t.rank(At(t, "root", "d")), 1u);
}

TEST(FairTree, ParentCycleRefused) {
  auto a = ParseSacctmgr("Account|User|Par Name\nroot||\nx||y\ny||x\n", "t");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().message, "t:3:1: expected account \"x\" under root, got a cycle of parent accounts");
  Accounts cyclic;  // built by hand, past the reader
  cyclic.assocs = {Assoc{.account = "x", .parent = "y"}, Assoc{.account = "y", .parent = "x"}};
  auto t = FairTree::Build(cyclic);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message, "the association tree has a cycle of parent accounts (no path from some account to root)");
}

}  // namespace
}  // namespace orrery::slurm
