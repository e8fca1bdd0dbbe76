#include "logs/drain.h"

#include <gtest/gtest.h>

#include "logs/lines.h"

namespace orrery::logs {
namespace {

std::vector<std::string> Tokens(std::string_view line) {
  MaskedLine m;
  Mask(line, &m);
  return {m.tokens.begin(), m.tokens.end()};
}

std::vector<std::string> Params(std::string_view line) {
  MaskedLine m;
  Mask(line, &m);
  std::vector<std::string> out;
  for (const MaskedParam& p : m.params) out.emplace_back(p.text);
  return out;
}

using V = std::vector<std::string>;

TEST(MaskTest, NumbersBecomeWildcardsAndParameters) {
  EXPECT_EQ(Tokens(" iteration      122/  250000 | lm loss: 2.504220E+00 |"),
            (V{"iteration", "<*>/", "<*>", "|", "lm", "loss:", "<*>", "|"}));
  EXPECT_EQ(Params(" iteration      122/  250000 | lm loss: 2.504220E+00 |"), (V{"122", "250000", "2.504220E+00"}));
  EXPECT_EQ(Params("lr=-1.5e-3, x=+7 rank0"), (V{"-1.5e-3", "+7", "0"}));
}

TEST(MaskTest, HexPciIdsAndPaths) {
  EXPECT_EQ(Tokens("NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380"), (V{"NVRM:", "Xid", "(PCI:<*>:<*>:<*>):", "<*>,", "pid=<*>"}));
  EXPECT_EQ(Params("(PCI:0000:9b:00):"), (V{"0000", "9b", "00"}));
  EXPECT_EQ(Tokens("GPU-b6c3b2be-c55b ptr 0x7f3a2c"), (V{"GPU-<*>-<*>", "ptr", "<*>"}));
  EXPECT_EQ(Tokens("File \"/home/u/train.py\", line 12 ./run.sh ~/x"), (V{"File", "\"/home/u/train.py\",", "line", "<*>", "<*>", "<*>"}));
  // A quoted path is not masked as a whole (it does not start with '/'), its numbers would be.
}

TEST(MaskTest, TqdmBarCellsAreDropped) {
  const std::string a = " 14%|\xe2\x96\x88\xe2\x96\x8d        | 377/2724 [13:55:57<86:19:20, 132.41s/it]";
  const std::string b = " 99%|\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88 | 2700/2724 [13:55:57<86:19:20, 132.41s/it]";
  EXPECT_EQ(Tokens(a), Tokens(b));
  EXPECT_EQ(Tokens(a), (V{"<*>%||", "<*>/<*>", "[<*>:<*>:<*><<*>:<*>:<*>,", "<*>s/it]"}));
}

TEST(MaskTest, NonFiniteWordsAreNumbers) {
  EXPECT_EQ(Params("loss: nan, grad: -inf banana"), (V{"nan", "-inf"}));
}

TEST(DrainTest, SameMaskedLineJoinsOneCluster) {
  Drain d;
  MaskedLine m;
  Mask("Epoch 1 done in 3.2s", &m);
  DrainMatch a = d.Add(m);
  Mask("Epoch 2 done in 4.1s", &m);
  DrainMatch b = d.Add(m);
  EXPECT_TRUE(a.created);
  EXPECT_FALSE(b.created);
  EXPECT_EQ(a.cluster, b.cluster);
  EXPECT_EQ(d.cluster(a.cluster).count, 2u);
}

TEST(DrainTest, DifferingWordBecomesWildcardAboveThreshold) {
  // 4 of 5 tokens equal: similarity 0.8 >= 0.4, so "beta" joins and the template generalises.
  Drain d;
  MaskedLine m;
  Mask("connected to host alpha ok", &m);
  DrainMatch a = d.Add(m);
  Mask("connected to host beta ok", &m);
  DrainMatch b = d.Add(m);
  EXPECT_EQ(a.cluster, b.cluster);
  EXPECT_TRUE(b.changed);
  EXPECT_EQ(d.cluster(a.cluster).Template(), "connected to host <*> ok");
}

TEST(DrainTest, TreeSeparatesFirstTokensAndLengths) {
  Drain d;
  MaskedLine m;
  Mask("alpha started now", &m);
  uint32_t a = d.Add(m).cluster;
  Mask("beta started now", &m);
  uint32_t b = d.Add(m).cluster;
  Mask("alpha started now really", &m);
  uint32_t c = d.Add(m).cluster;
  EXPECT_NE(a, b);  // first token is a tree level
  EXPECT_NE(a, c);  // token count is the first level
  EXPECT_EQ(d.cluster_count(), 3u);
}

TEST(DrainTest, BelowThresholdStartsNewCluster) {
  // Same first two tokens (same leaf), 2 of 6 equal: 0.33 < 0.4.
  Drain d;
  MaskedLine m;
  Mask("job state a b c d", &m);
  uint32_t a = d.Add(m).cluster;
  Mask("job state w x y z", &m);
  uint32_t b = d.Add(m).cluster;
  EXPECT_NE(a, b);
}

TEST(DrainTest, OverflowClusterBoundsMemory) {
  DrainOptions o;
  o.max_clusters = 2;
  Drain d(o);
  MaskedLine m;
  for (const char* l : {"a b", "c d", "e f", "g h"}) {
    Mask(l, &m);
    d.Add(m);
  }
  EXPECT_EQ(d.cluster_count(), 3u);  // two real clusters and one overflow cluster for 2 tokens
  EXPECT_EQ(d.cluster(2).count, 2u);
}

TEST(LineSplitterTest, NewlinesCarriageReturnsAndChunks) {
  std::vector<std::string> got;
  LineSplitter s;
  auto sink = [&](std::string_view l) { got.emplace_back(l); };
  s.Feed("a\r\nb\rc", sink);
  s.Feed("d\n\ne", sink);
  s.Finish(sink);
  EXPECT_EQ(got, (V{"a", "b", "cd", "", "e"}));
}

TEST(LineSplitterTest, LongLinesAreCut) {
  std::vector<std::string> got;
  LineSplitter s;
  auto sink = [&](std::string_view l) { got.emplace_back(l); };
  std::string big(kMaxLineBytes * 3, 'x');
  s.Feed(big.substr(0, 5000), sink);
  s.Feed(big.substr(5000) + "\nok\n", sink);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].size(), kMaxLineBytes);
  EXPECT_EQ(got[1], "ok");
  EXPECT_EQ(s.truncated_lines(), 1u);
}

TEST(CleanLineTest, AnsiEscapesRemoved) {
  std::string scratch;
  EXPECT_EQ(CleanLine("\x1b[1;31mError\x1b[0m: x", &scratch), "Error: x");
  EXPECT_EQ(CleanLine("plain", &scratch), "plain");
}

}  // namespace
}  // namespace orrery::logs
