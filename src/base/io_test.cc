#include "base/io.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace orrery {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A file with a NUL byte in its first kBinaryProbe bytes is binary: refused with the byte
// offset; a NUL after them, or in a string read with FromString, is left to the parser.
TEST(LineReaderTest, BinaryFileIsRefusedWithTheOffsetOfItsFirstNul) {
  const fs::path p = fs::temp_directory_path() / ("orrery_io_bin_" + std::to_string(::getpid()));
  auto write = [&](const std::string& bytes) {
    std::ofstream f(p, std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  };
  auto first_error = [&]() {
    auto r = LineReader::Open(p.string());
    EXPECT_TRUE(r.ok());
    std::string_view line;
    size_t lines = 0;
    while ((*r)->Next(&line)) ++lines;
    return std::make_pair(lines, (*r)->error());
  };
  write(std::string("a,b\nc,d\0" "e\n", 11));  // NUL at byte offset 7
  EXPECT_EQ(first_error(), std::make_pair(size_t{0}, p.string() +
                                                     ": byte offset 7: expected text, found a NUL byte (a binary "
                                                     "file, not a trace, config or log)"));
  write(std::string(8000, 'x') + std::string("\n\x00\n", 3));  // past the probe: text
  EXPECT_EQ(first_error(), std::make_pair(size_t{2}, std::string()));
  auto mem = LineReader::FromString(std::string("a\0" "b\n", 4));
  std::string_view line;
  ASSERT_TRUE(mem->Next(&line));
  EXPECT_EQ(line.size(), 3u);
  fs::remove(p);
}

TEST(AtomicFileTest, ReplacesOnlyOnCommit) {
  fs::path d = fs::temp_directory_path() / ("orrery_io_" + std::to_string(getpid()));
  fs::create_directories(d);
  fs::path p = d / "out.txt";
  std::ofstream(p) << "old";
  {
    auto f = AtomicFile::Create(p.string());
    ASSERT_TRUE(f.ok());
    (*f)->Write("new content");
    EXPECT_EQ(Slurp(p), "old");  // not visible before Commit
    // destroyed without Commit: the old file stays, no temp file is left
  }
  EXPECT_EQ(Slurp(p), "old");
  size_t entries = 0;
  for (auto& e : fs::directory_iterator(d)) entries += e.is_regular_file();
  EXPECT_EQ(entries, 1u);
  auto f = AtomicFile::Create(p.string());
  ASSERT_TRUE(f.ok());
  (*f)->Write("new content");
  ASSERT_TRUE((*f)->Commit().ok());
  EXPECT_EQ(Slurp(p), "new content");
  EXPECT_FALSE(AtomicFile::Create(d.string()).ok());  // a directory is refused
  fs::remove_all(d);
}

TEST(AtomicFileTest, DevicesAreWrittenInPlaceNeverReplaced) {
  // Regression: writing --out /dev/null once renamed a regular file over the device node.
  struct stat before;
  ASSERT_EQ(::stat("/dev/null", &before), 0);
  ASSERT_TRUE(S_ISCHR(before.st_mode));
  auto f = AtomicFile::Create("/dev/null");
  ASSERT_TRUE(f.ok());
  (*f)->Write("discarded");
  ASSERT_TRUE((*f)->Commit().ok());
  struct stat after;
  ASSERT_EQ(::stat("/dev/null", &after), 0);
  EXPECT_TRUE(S_ISCHR(after.st_mode));
  EXPECT_EQ(before.st_rdev, after.st_rdev);
}

}  // namespace
}  // namespace orrery
