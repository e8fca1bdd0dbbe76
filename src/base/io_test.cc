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
