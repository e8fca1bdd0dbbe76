// Expected values computed with CPython 3.11's difflib (the python line is beside each).
#include "predict/difflib.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace orrery::difflib {
namespace {

TEST(Difflib, RatioMatchesPython) {
  // difflib.SequenceMatcher(None, 'abcd', 'bcde').ratio() -> 0.75
  EXPECT_DOUBLE_EQ(Ratio("abcd", "bcde"), 0.75);
  // SequenceMatcher(None, 'train_resnet50', 'train_resnet101').ratio() -> 0.896551724137931
  EXPECT_DOUBLE_EQ(Ratio("train_resnet50", "train_resnet101"), 0.896551724137931);
  // SequenceMatcher(None, 'bert_base', 'bert_large').ratio() -> 0.7368421052631579
  EXPECT_DOUBLE_EQ(Ratio("bert_base", "bert_large"), 0.7368421052631579);
  // SequenceMatcher(None, '', '').ratio() -> 1.0 ; SequenceMatcher(None, 'a', '').ratio() -> 0.0
  EXPECT_DOUBLE_EQ(Ratio("", ""), 1.0);
  EXPECT_DOUBLE_EQ(Ratio("a", ""), 0.0);
  // Code points, not bytes: SequenceMatcher(None, 'héllo', 'hello').ratio() -> 0.8
  EXPECT_DOUBLE_EQ(Ratio("h\xc3\xa9llo", "hello"), 0.8);
}

TEST(Difflib, AutojunkForLongSequences) {
  // Identical strings of >= 200 chars: every element is "popular" and dropped from b2j,
  // but the extension loops still absorb them.
  // a = 'x'*300; SequenceMatcher(None, a, a).ratio() -> 1.0
  std::string x300(300, 'x');
  EXPECT_DOUBLE_EQ(Ratio(x300, x300), 1.0);
  // c = 'abcdefghij'*25; SequenceMatcher(None, c, c).ratio() -> 1.0
  std::string c;
  for (int i = 0; i < 25; ++i) c += "abcdefghij";
  EXPECT_DOUBLE_EQ(Ratio(c, c), 1.0);
  // random.seed(3); long1 = ''.join(random.choice('abcdefgh') for _ in range(250));
  // long2 = long1[:120] + 'zz' + long1[120:]; SequenceMatcher(None, long2, long1).ratio()
  //   -> 0.47808764940239046 (autojunk: nearly identical strings score low)
  const std::string long1 =
      "dcfhbaheddhhgcdcgabcaeaehggghcfbachdegeggfgdfaecfbdeebbhhbfbgcaeggbaagfedaeabbadgeecafffcgghgbegdegeefagfagcaf"
      "hffehaaafehefcfcffeegbacededfcgbbffdhcbfdhedbadfcefbfcgeehfgeggagcdahgdahefdbebdaadgaahbcedagabfcehafddbbcdecah"
      "gaedegahfaacababhabhfcfbfggef";
  ASSERT_EQ(long1.size(), 250u);
  const std::string long2 = long1.substr(0, 120) + "zz" + long1.substr(120);
  EXPECT_DOUBLE_EQ(Ratio(long2, long1), 0.47808764940239046);
  EXPECT_DOUBLE_EQ(Ratio(long1, long2), 0.47808764940239046);
}

TEST(Difflib, QuickRatios) {
  // s = SequenceMatcher(None, 'ape', 'apple'); s.quick_ratio(), s.real_quick_ratio() -> 0.75, 0.75
  std::u32string a = DecodeUtf8("ape");
  SequenceMatcher s(DecodeUtf8("apple"));
  s.set_a(&a);
  EXPECT_DOUBLE_EQ(s.quick_ratio(), 0.75);
  EXPECT_DOUBLE_EQ(s.real_quick_ratio(), 0.75);
  EXPECT_DOUBLE_EQ(s.quick_ratio(), 0.75);  // scratch state is reset between calls
}

TEST(Difflib, GetCloseMatchesMatchesPython) {
  // difflib.get_close_matches('appel', ['ape', 'apple', 'peach', 'puppy']) -> ['apple', 'ape']
  EXPECT_EQ(GetCloseMatches("appel", {"ape", "apple", "peach", "puppy"}), (std::vector<std::string>{"apple", "ape"}));
  // difflib.get_close_matches('ab', ['aa', 'bb', 'ba', 'abc'], n=2) -> ['abc'] (others score 0.5)
  EXPECT_EQ(GetCloseMatches("ab", {"aa", "bb", "ba", "abc"}, 2), (std::vector<std::string>{"abc"}));
  // Ties are broken by the larger string (heapq.nlargest on (score, x)):
  // difflib.get_close_matches('job_1', ['job_2', 'job_3', 'job_10', 'jobx'], n=2) -> ['job_10', 'job_3']
  // (scores 0.8, 0.8, 0.909..., 0.666...)
  EXPECT_EQ(GetCloseMatches("job_1", {"job_2", "job_3", "job_10", "jobx"}, 2),
            (std::vector<std::string>{"job_10", "job_3"}));
  EXPECT_EQ(GetCloseMatches("job_1", {"job_3", "job_2", "jobx"}, 2), (std::vector<std::string>{"job_3", "job_2"}));
  EXPECT_TRUE(GetCloseMatches("zzzz", {"train_resnet50", "bert_base", "eval"}, 2).empty());
}

TEST(Difflib, IncrementalMatcherEqualsBatch) {
  const std::vector<std::string> poss = {"job_2", "jobx", "job_3", "job_10", "job_1", "task_1", "job_11"};
  CloseMatcher m(2, 0.6);
  for (size_t k = 0; k < poss.size(); ++k) {
    m.Add(poss[k]);
    std::vector<std::string> prefix(poss.begin(), poss.begin() + static_cast<long>(k) + 1);
    std::vector<std::string> got;
    for (const auto& h : m.Query(42, "job_1")) got.push_back(poss[h.index]);
    EXPECT_EQ(got, GetCloseMatches("job_1", prefix, 2)) << "after " << k + 1 << " possibilities";
  }
}

}  // namespace
}  // namespace orrery::difflib
