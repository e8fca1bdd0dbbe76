#include "semantic/shell.h"

#include <gtest/gtest.h>

#include "semantic/arith.h"

namespace orrery::semantic {
namespace {

std::vector<std::string> Words(const ShellScan& s, size_t cmd) {
  std::vector<std::string> out;
  for (const ShellWord& w : s.commands.at(cmd).words) out.push_back(StripUnresolved(w.text.s));
  return out;
}

std::string Var(const ShellScan& s, const std::string& name) {
  auto it = s.vars.find(name);
  return it == s.vars.end() ? "<unset>" : StripUnresolved(it->second.items.at(0).text.s);
}

TEST(ShellTest, SelfDoublingVariablesStopAtTheExpansionBudget) {
  // 16 bytes doubled 30 times would be 16 GiB. The scan may expand its text's size (19 + 30 · 7
  // + 7 = 236 bytes) + 1 MiB = 1,048,812 bytes: the first line and 15 doublings use
  // 16 · (2^16 - 1) = 1,048,560 of them, the 16th doubling gets the last 252 bytes and the
  // unresolved mark, every later expansion only the mark.
  std::string text = "A=xxxxxxxxxxxxxxxx\n";
  for (int i = 0; i < 30; ++i) text += "A=$A$A\n";
  text += "run $A\n";
  ShellScan s = ScanShell(text, "t.sh");
  const ShellWord& a = s.vars.at("A").items.at(0);
  EXPECT_EQ(a.text.s, std::string(1, kUnresolvedMark));
  EXPECT_TRUE(a.unresolved);
  ASSERT_EQ(s.commands.size(), 1u);
  EXPECT_EQ(Words(s, 0), (std::vector<std::string>{"", ""}));  // "run" and $A: not known before the run
  // One warning, at the value of the 16th doubling (line 17, after "A=").
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_EQ(FormatWarning(s.warnings[0]),
            "t.sh:17:3: expected shell expansions of at most 1048812 bytes in all (the script's size + 1 MiB), got "
            "more: the rest is not known before the run");
}

TEST(ShellTest, QuotingFollowsPosix) {
  // 'a b' stays one word; "x $V" expands inside double quotes; \$ is literal; $V unquoted splits.
  ShellScan s = ScanShell("V='1 2'\necho 'a b' \"x $V\" \\$V $V\n", "t.sh");
  EXPECT_EQ(Words(s, 0), (std::vector<std::string>{"echo", "a b", "x 1 2", "$V", "1", "2"}));
}

TEST(ShellTest, DefaultsArithmeticAndContinuations) {
  ShellScan s = ScanShell(
      "NNODES=${NNODES:-4}\nGPN=8\nEMPTY=\nA=${EMPTY:-x} B=${EMPTY-y}\nWORLD=$(($GPN*$NNODES))\n"
      "HALF=$(( WORLD / 3 ))\nrun --world $WORLD \\\n  --half $HALF\n",
      "t.sh");
  EXPECT_EQ(Var(s, "NNODES"), "4");
  EXPECT_EQ(Var(s, "A"), "x");  // ':-' also replaces an empty value
  EXPECT_EQ(Var(s, "B"), "");   // '-' only an unset one
  EXPECT_EQ(Var(s, "WORLD"), "32");
  EXPECT_EQ(Var(s, "HALF"), "10");  // integer division: 32 / 3 = 10
  EXPECT_EQ(Words(s, 0), (std::vector<std::string>{"run", "--world", "32", "--half", "10"}));
}

TEST(ShellTest, ArraysKeepEachElementsLine) {
  ShellScan s = ScanShell("ARGS=(\n    --num-layers 96 # comment\n    --hidden-size 12288\n)\ntorchrun ${ARGS[@]} x.py\n", "t.sh");
  ASSERT_EQ(s.commands.size(), 1u);
  const auto& w = s.commands[0].words;
  ASSERT_EQ(w.size(), 6u);
  EXPECT_EQ(w[2].text.s, "96");
  EXPECT_EQ(w[2].text.first().line, 2u);  // written on line 2, used on line 5
  EXPECT_EQ(w[2].text.first().col, 18u);
  EXPECT_EQ(w[4].text.first().line, 3u);
}

TEST(ShellTest, CommandSubstitutionIsNeverRunAndMarksTheWord) {
  ShellScan s = ScanShell("H=$(hostname)\nT=`date`\nrun --host $H --n 2\n", "t.sh");
  const auto& w = s.commands.at(0).words;
  ASSERT_EQ(w.size(), 5u);
  EXPECT_TRUE(w[2].unresolved);
  EXPECT_FALSE(w[4].unresolved);
  EXPECT_TRUE(s.vars.at("T").items[0].unresolved);
}

TEST(ShellTest, HereDocumentsExpandUnlessTheDelimiterIsQuoted) {
  ShellScan s = ScanShell("S=3\ncat <<EOT > a.json\n{\"stage\": $S}\nEOT\ncat <<'EOF' > b\n$S\nEOF\n", "t.sh");
  ASSERT_EQ(s.heredocs.size(), 2u);
  EXPECT_EQ(s.heredocs[0].body.s, "{\"stage\": 3}\n");
  EXPECT_EQ(s.heredocs[0].loc.line, 3u);
  EXPECT_EQ(s.heredocs[1].body.s, "$S\n");
}

TEST(ShellTest, ControlFlowAssignmentsApplyInTextOrder) {
  ShellScan s = ScanShell("if [[ $R == 1 ]]; then ITER=100 SAVE=10\nelif [[ $R == 2 ]]; then ITER=1000\nfi\n", "t.sh");
  EXPECT_EQ(Var(s, "ITER"), "1000");
  EXPECT_EQ(Var(s, "SAVE"), "10");
  EXPECT_TRUE(s.commands.empty());
}

TEST(ShellTest, UnterminatedQuoteIsALocatedWarning) {
  ShellScan s = ScanShell("A=1\nrun --x 'oops\n", "job.sh");
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_EQ(FormatWarning(s.warnings[0]), "job.sh:2:9: unterminated single quote: expected \"'\", found end of file");
}

TEST(ShellTest, UnterminatedHereDocumentIsALocatedWarning) {
  ShellScan s = ScanShell("cat <<EOT\n{\n", "job.sh");
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_EQ(FormatWarning(s.warnings[0]), "job.sh:2:1: here-document: expected the delimiter 'EOT', found end of file");
}

TEST(ShellTest, ExpandLineUsesTheScriptsVariables) {
  ShellScan s = ScanShell("N=4\n", "t.sh");
  std::vector<ShellWord> w = ExpandLine(" --nodes=$N  # four", Loc{7, 8}, s);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].text.s, "--nodes=4");
  EXPECT_EQ(w[0].text.first().line, 7u);
  EXPECT_EQ(w[0].text.first().col, 9u);
}

TEST(ArithTest, PrecedenceUnderscoresAndUnknowns) {
  auto none = [](std::string_view) -> std::optional<double> { return std::nullopt; };
  EXPECT_EQ(EvalArith("2 + 3 * 4", none, true), 14);
  EXPECT_EQ(EvalArith("(2 + 3) * 4 % 7", none, true), 6);  // 20 % 7
  EXPECT_EQ(EvalArith("2 ** 3 ** 2", none, true), 512);    // right-associative
  EXPECT_EQ(EvalArith("300_000_000 / 1024", none, true), 292968);
  EXPECT_EQ(EvalArith("7 / 2", none, false), 3.5);
  EXPECT_EQ(EvalArith("1 / 0", none, true), std::nullopt);
  EXPECT_EQ(EvalArith("X + 1", none, true), std::nullopt);
  EXPECT_EQ(EvalArith("2 +", none, true), std::nullopt);
  EXPECT_EQ(EvalArith(std::string(500, '('), none, true), std::nullopt);  // bounded recursion
}

}  // namespace
}  // namespace orrery::semantic
