// End-to-end tests of what the `orrery` commands refuse rather than ignore (docs/cli.md): flags
// that do not apply to the chosen input, numbers out of range (the range in words, never the
// 300 digits given), misspelled subcommands, and an --out-dir that holds another run's outputs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "cli_testing.h"

namespace {

namespace fs = std::filesystem;
using orrery::cli_testing::CmdOut;
using orrery::cli_testing::RunOrrery;
using orrery::cli_testing::Slurp;

const std::string kSwf = std::string(ORRERY_SOURCE_DIR) + "/tests/fixtures/swf/tiny.swf";

struct Refusal {
  std::string args;      // after "orrery "
  std::string expected;  // a substring of the message
};

void ExpectRefused(const Refusal& r) {
  CmdOut o = RunOrrery(r.args);
  EXPECT_EQ(o.status, 2) << r.args << "\n" << o.text;
  EXPECT_NE(o.text.find(r.expected), std::string::npos) << r.args << "\n" << o.text;
}

TEST(CliFlagsTest, FlagsThatDoNotApplyAreRefused) {
  const Refusal cases[] = {
      // A trace is replayed as recorded: the generator's flags would be ignored.
      {"simulate " + kSwf + " --days 3 --jobs 5 --load 9 --arrivals closed-loop --no-output",
       "--jobs does not apply: it shapes a generated workload"},
      {"simulate " + kSwf + " --days 3 --no-output", "--days does not apply"},
      {"simulate " + kSwf + " --arrivals closed-loop --no-output", "--arrivals does not apply"},
      // No trace: the trace reader's flags.
      {"simulate --format philly --no-output", "--format does not apply: it reads a trace file"},
      {"simulate --generate helios-venus --skip-bad-rows --no-output", "--skip-bad-rows does not apply"},
      // --generate llm takes --jobs, --load and --seed.
      {"simulate --generate llm --days 2 --no-output", "--days does not apply: --generate llm"},
      // Settings of features that are off.
      {"simulate --wake-latency 10 --no-output", "--wake-latency does not apply: it tunes energy saving"},
      {"simulate --power-model H100 --no-output", "--power-model does not apply"},
      {"simulate --recovery acme --no-output", "--recovery does not apply: it sets how failed jobs recover"},
      // --no-output writes nothing.
      {"simulate --no-output --out-dir /tmp/orrery-never-written", "--out-dir does not apply: --no-output"},
      {"simulate --no-output --sample-interval 10", "--sample-interval does not apply"},
  };
  for (const Refusal& r : cases) ExpectRefused(r);
}

TEST(CliFlagsTest, NumbersOutOfRangeNameTheRangeInWords) {
  const std::string digits(300, '9');
  const Refusal cases[] = {
      {"simulate --days -3 --no-output", "expected a number of days greater than 0 and at most 3650, got \"-3\""},
      {"simulate --days 0 --no-output", "expected a number of days greater than 0 and at most 3650, got \"0\""},
      {"simulate --days 1e400 --no-output", "expected a number of days greater than 0"},
      {"simulate --load -1 --no-output", "expected a number of times the preset's arrival rate greater than 0"},
      {"simulate --jobs 0 --no-output", "expected a whole number of jobs from 1 to 100000000, got \"0\""},
      {"simulate --jobs 2.5 --no-output", "expected a whole number of jobs from 1 to 100000000, got \"2.5\""},
      // 24 characters of the 300 and the length, never all of them.
      {"simulate --jobs " + digits + " --no-output", "got \"999999999999999999999999\"... (300 characters)"},
      {"simulate --threads 5000 --no-output", "expected a whole number of threads from 0 to 4096"},
  };
  for (const Refusal& r : cases) ExpectRefused(r);
  CmdOut o = RunOrrery("simulate --jobs " + digits + " --no-output");
  EXPECT_EQ(o.text.find(std::string(30, '9')), std::string::npos) << o.text;
}

TEST(CliFlagsTest, MisspelledSubcommandSuggestsTheNearest) {
  const Refusal cases[] = {
      {"simulat --no-output", "'simulat' is not a command; did you mean 'simulate'?"},
      {"diagnos x.log", "did you mean 'diagnose'?"},
      {"plan estimat", "'estimat' is not a command; did you mean 'estimate'?"},
  };
  for (const Refusal& r : cases) ExpectRefused(r);
  // Far from every command: CLI11's own message, no suggestion.
  CmdOut o = RunOrrery("frobnicate");
  EXPECT_EQ(o.status, 2) << o.text;
  EXPECT_EQ(o.text.find("did you mean"), std::string::npos) << o.text;
}

// The same run's outputs are replaced; another run's are refused, or replaced with --force.
// Binary input (here the first bytes of an ELF executable) is refused with the offset of its
// first NUL byte, and none of its bytes reach the terminal.
TEST(CliFlagsTest, BinaryInputIsRefusedWithItsOffsetAndNoRawBytes) {
  const fs::path bin = fs::temp_directory_path() / ("orrery_binary_" + std::to_string(::getpid()));
  {
    std::ofstream f(bin, std::ios::binary);
    f.write("\x7f" "ELF\x02\x01\x01\x00\x00\x00\x1b[31m", 15);  // NUL at byte offset 7
  }
  for (const std::string& args : {"simulate " + bin.string() + " --no-output",
                                   "simulate " + bin.string() + " --format sacct --no-output",
                                   "import " + bin.string() + " --from helios --out /dev/null"}) {
    CmdOut o = RunOrrery(args);
    EXPECT_EQ(o.status, 2) << args << "\n" << o.text;
    EXPECT_NE(o.text.find(bin.string() + ": byte offset 7: expected text, found a NUL byte"), std::string::npos)
        << args << "\n" << o.text;
    for (char c : o.text)
      EXPECT_FALSE(c == '\x7f' || c == '\x1b' || c == '\0') << args << ": a raw byte reached the terminal";
  }
  fs::remove(bin);
}

TEST(CliFlagsTest, OutDirHoldingAnotherRunIsRefusedUnlessForced) {
  fs::path d = orrery::cli_testing::FreshTempDir("cli_flags_outdir");
  const std::string base = "simulate " + kSwf + " -q --out-dir " + d.string();
  ASSERT_EQ(RunOrrery(base + " --policy fifo,sjf").status, 0);
  ASSERT_TRUE(fs::exists(d / "sjf" / "jobs.csv"));
  fs::create_directories(d / "notes");  // not a run's output: never touched
  { std::ofstream(d / "notes" / "keep.txt") << "mine\n"; }

  EXPECT_EQ(RunOrrery(base + " --policy fifo,sjf").status, 0) << "the same run is replaced";
  ExpectRefused({base + " --policy fifo", "holds the outputs of another run"});
  ExpectRefused({base + " --policy fifo,sjf --seed 2", "pass --force to replace them"});
  EXPECT_TRUE(fs::exists(d / "sjf" / "jobs.csv")) << "a refused run removes nothing";

  CmdOut forced = RunOrrery(base + " --policy fifo --force");
  ASSERT_EQ(forced.status, 0) << forced.text;
  EXPECT_FALSE(fs::exists(d / "sjf")) << "the other run's folder is cleared";
  EXPECT_TRUE(fs::exists(d / "fifo" / "jobs.csv"));
  EXPECT_EQ(Slurp(d / "summary.json").find("\"sjf\""), std::string::npos);
  EXPECT_EQ(Slurp(d / "notes" / "keep.txt"), "mine\n");
  fs::remove_all(d);
}

// `report` compares runs of one workload; runs of two are refused unless --allow-mixed, and then
// labelled by workload.
TEST(CliFlagsTest, ReportRefusesMixedWorkloadsUnlessAllowed) {
  fs::path d = orrery::cli_testing::FreshTempDir("cli_flags_report");
  const std::string a = (d / "a").string(), b = (d / "b").string(), b2 = (d / "b2").string();
  ASSERT_EQ(RunOrrery("simulate " + kSwf + " -q --policy fifo --out-dir " + a).status, 0);
  ASSERT_EQ(RunOrrery("simulate --generate helios-venus --days 1 -q --policy fifo --out-dir " + b).status, 0);
  ASSERT_EQ(RunOrrery("simulate --generate helios-venus --days 1 -q --policy sjf --out-dir " + b2).status, 0);

  ExpectRefused({"report -q " + a + " " + b + " --out " + (d / "r1").string(), "the runs are of 2 different workloads"});
  EXPECT_FALSE(fs::exists(d / "r1"));
  // One workload, two folders: no refusal, no workload labels.
  ASSERT_EQ(RunOrrery("report -q " + b + " " + b2 + " --out " + (d / "r2").string()).status, 0);
  EXPECT_EQ(Slurp(d / "r2" / "report.json").find("W1 "), std::string::npos);

  CmdOut mixed = RunOrrery("report -q " + a + " " + b + " --allow-mixed --out " + (d / "r3").string());
  ASSERT_EQ(mixed.status, 0) << mixed.text;
  const std::string json = Slurp(d / "r3" / "report.json");
  EXPECT_NE(json.find("W1 a: fifo"), std::string::npos) << json.substr(0, 2000);
  EXPECT_NE(json.find("W2 b: fifo"), std::string::npos);
  EXPECT_NE(json.find("W1: " + kSwf), std::string::npos);
  fs::remove_all(d);
}

}  // namespace
