// LogTail on temporary files: not-yet, only new bytes, the byte budget, skipping to the
// newest lines, truncation, rotation, an unlinked file, non-regular files.
#include "live/log_tail.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace orrery::live {
namespace {

class LogTailTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("orrery_log_tail_test_" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "job.out").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Append(const std::string& text, const std::string& path = "") {
    std::ofstream out(path.empty() ? path_ : path, std::ios::app | std::ios::binary);
    out << text;
  }
  // Lines of one Read (asserting it succeeded).
  std::vector<std::string> ReadLines(LogTail& t, TailRead* r = nullptr) {
    std::vector<std::string> out;
    auto got = t.Read([&](std::string_view l) { out.emplace_back(l); });
    EXPECT_TRUE(got.ok()) << got.error().message;
    if (r && got.ok()) *r = *got;
    return out;
  }
  std::filesystem::path dir_;
  std::string path_;
};

using Lines = std::vector<std::string>;

TEST_F(LogTailTest, MissingFileIsNotYetThenReadsOnlyNewBytesAsCompleteLines) {
  LogTail t(path_);
  TailRead r;
  EXPECT_EQ(ReadLines(t, &r), Lines{});
  EXPECT_FALSE(r.found);
  Append("a\nb");
  EXPECT_EQ(ReadLines(t, &r), Lines{"a"});
  EXPECT_TRUE(r.found);
  EXPECT_EQ(r.bytes, 3u);
  EXPECT_EQ(ReadLines(t, &r), Lines{});  // nothing new; "b" is still incomplete
  EXPECT_EQ(r.bytes, 0u);
  Append("c\r\nd\n");
  EXPECT_EQ(ReadLines(t, &r), (Lines{"bc", "d"}));
  EXPECT_EQ(r.bytes, 5u);
  EXPECT_EQ(t.offset(), 8u);
}

TEST_F(LogTailTest, BudgetWithoutSkippingReadsTheBacklogInPieces) {
  // Ten lines "line-NNN\n" of 9 bytes (line k ends at byte 9k + 9); 25 bytes per read.
  for (int i = 0; i < 10; ++i) Append("line-" + std::to_string(1000 + i).substr(1) + "\n");
  LogTail t(path_, TailOptions{25, /*newest_only=*/false});
  TailRead r;
  EXPECT_EQ(ReadLines(t, &r), (Lines{"line-000", "line-001"}));  // bytes 0..24: 2 full lines (18) + 7 held
  EXPECT_TRUE(r.more);
  EXPECT_EQ(ReadLines(t, &r), (Lines{"line-002", "line-003", "line-004"}));  // up to byte 50: 5 lines end at 45
  EXPECT_EQ(ReadLines(t, &r), (Lines{"line-005", "line-006", "line-007"}));  // up to 75: 8 lines end at 72
  EXPECT_EQ(ReadLines(t, &r), (Lines{"line-008", "line-009"}));             // 76..90
  EXPECT_FALSE(r.more);
  EXPECT_EQ(r.bytes, 15u);
}

TEST_F(LogTailTest, NewestOnlySkipsTheBacklogAndResyncsAtALineStart) {
  // 100 lines "line NN\n" of 8 bytes: line k at byte 8k, 800 bytes.
  for (int i = 0; i < 100; ++i) Append("line " + std::to_string(100 + i).substr(1) + "\n");
  {
    LogTail t(path_, TailOptions{20, true});
    TailRead r;
    // Skips 780 bytes; byte 780 is inside line 97 (776..783): dropped up to its newline.
    EXPECT_EQ(ReadLines(t, &r), (Lines{"line 98", "line 99"}));
    EXPECT_EQ(r.skipped, 780u);
    EXPECT_EQ(r.bytes, 20u);
  }
  {
    LogTail t(path_, TailOptions{16, true});
    TailRead r;
    // Skips 784: byte 784 starts line 98 exactly (the byte before is '\n'): nothing dropped.
    EXPECT_EQ(ReadLines(t, &r), (Lines{"line 98", "line 99"}));
    EXPECT_EQ(r.skipped, 784u);
    // A log that grows faster than the budget is followed at its newest lines.
    for (int i = 0; i < 10; ++i) Append("more " + std::to_string(10 + i) + "\n");  // 8 bytes each
    EXPECT_EQ(ReadLines(t, &r), (Lines{"more 18", "more 19"}));
    EXPECT_EQ(r.skipped, 64u);
  }
}

TEST_F(LogTailTest, TruncationStartsAgainAtByteZero) {
  Append("one\ntwo\nthree\n");
  LogTail t(path_);
  EXPECT_EQ(ReadLines(t).size(), 3u);
  std::filesystem::resize_file(path_, 0);
  Append("x\n");
  TailRead r;
  EXPECT_EQ(ReadLines(t, &r), Lines{"x"});
  EXPECT_TRUE(r.truncated);
  EXPECT_EQ(t.offset(), 2u);
}

TEST_F(LogTailTest, RotationFinishesTheOldFileThenReadsTheNewOne) {
  Append("a\n");
  LogTail t(path_);
  EXPECT_EQ(ReadLines(t), Lines{"a"});
  Append("b\nc");  // written before the rename; "c" never gets its newline
  std::filesystem::rename(path_, path_ + ".1");
  Append("d\n");
  TailRead r;
  EXPECT_EQ(ReadLines(t, &r), (Lines{"b", "c", "d"}));
  EXPECT_TRUE(r.rotated);
  EXPECT_EQ(t.offset(), 2u);
}

TEST_F(LogTailTest, UnlinkedFileKeepsBeingReadWhileNothingReplacesIt) {
  std::ofstream writer(path_, std::ios::binary);
  writer << "a\n" << std::flush;
  LogTail t(path_);
  EXPECT_EQ(ReadLines(t), Lines{"a"});
  std::filesystem::remove(path_);
  writer << "b\n" << std::flush;
  TailRead r;
  EXPECT_EQ(ReadLines(t, &r), Lines{"b"});
  EXPECT_TRUE(r.found);
}

TEST_F(LogTailTest, DirectoriesAndFifosAreErrorsNotHangs) {
  LogTail d(dir_.string());
  auto r = d.Read([](std::string_view) {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "log " + dir_.string() + ": not a regular file");
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  LogTail f(fifo);
  EXPECT_FALSE(f.Read([](std::string_view) {}).ok());
}

TEST_F(LogTailTest, ResetReadsThePathAfresh) {
  Append("a\nb\n");
  LogTail t(path_, TailOptions{1 << 20, true});
  EXPECT_EQ(ReadLines(t).size(), 2u);
  t.Reset();
  EXPECT_EQ(ReadLines(t), (Lines{"a", "b"}));
}

TEST_F(LogTailTest, ReadLastLinesKeepsWholeLinesOnly) {
  Append("first line\nsecond\nthird\nno newline");
  // The last 20 bytes (and the one before) start inside "second" (11 + 7 + 6 + 10 = 34 bytes; from byte 13).
  auto tail = ReadLastLines(path_, 20);
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(*tail, "third\nno newline");
  EXPECT_EQ(*ReadLastLines(path_, 1000), "first line\nsecond\nthird\nno newline");
  EXPECT_FALSE(ReadLastLines((dir_ / "absent").string(), 10).ok());
}

}  // namespace
}  // namespace orrery::live
