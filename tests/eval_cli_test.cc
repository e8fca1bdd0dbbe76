// End-to-end tests of `orrery eval`: plan text and JSON, determinism, and bad input (exit
// status 2 with a clear, located message).
#include <gtest/gtest.h>

#include "cli_testing.h"
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "live/batch_submit.h"

namespace {

namespace fs = std::filesystem;

using Out = orrery::cli_testing::CmdOut;

Out RunCmd(const std::string& args) { return orrery::cli_testing::RunOrrery(args); }

const std::string kSuite = std::string(ORRERY_SHARED_DIR) + "/corpora/eval-suite/datasets.csv";

fs::path Temp(const std::string& name, const std::string& content) {
  fs::path p = fs::temp_directory_path() / ("orrery_eval_cli_" + std::to_string(getpid()) + "_" + name);
  std::ofstream(p) << content;
  return p;
}

TEST(EvalCliTest, PlanJsonHasTheMakespanGpuHoursAndEveryJob) {
  Out o = RunCmd("eval plan " + kSuite + " --skip-unsized --model-size 7B --nodes 4 --strategy acme --json");
  ASSERT_EQ(o.status, 0) << o.text;
  const auto j = nlohmann::json::parse(o.text.substr(o.text.find('{')));
  EXPECT_GT(j["makespan_s"].get<double>(), 0);
  EXPECT_GT(j["gpu_hours"].get<double>(), 0);
  EXPECT_EQ(j["datasets"].size(), 63u);
  // acme: 4 preloads + 63 metric jobs on the CPU side.
  EXPECT_EQ(j["cpu_jobs"].size(), 4u + 63u);
  size_t slices = 0;
  for (const auto& g : j["gpu_jobs"]) slices += g["slices"].size();
  EXPECT_GE(slices, 63u);
  double last = 0;
  for (const auto& c : j["cpu_jobs"]) last = std::max(last, c["end_s"].get<double>());
  for (const auto& g : j["gpu_jobs"]) last = std::max(last, g["end_s"].get<double>());
  EXPECT_DOUBLE_EQ(last, j["makespan_s"].get<double>());
}

TEST(EvalCliTest, SameInputsGiveByteIdenticalPlans) {
  const std::string args = "eval plan " + kSuite + " --skip-unsized --model-size 13B --nodes 2 --strategy opencompass-size --json";
  Out a = RunCmd(args), b = RunCmd(args);
  ASSERT_EQ(a.status, 0) << a.text;
  EXPECT_EQ(a.text, b.text);
}

TEST(EvalCliTest, BadInputIsExit2WithAClearMessage) {
  struct Case {
    std::string args, message;
  };
  const fs::path bad = Temp("bad.csv", "name,examples,task_type,max_out_len,few_shot\na,12x,generation,,0\n");
  const fs::path empty = Temp("empty.csv", "name,examples,task_type,max_out_len,few_shot\n");
  const fs::path not_db = Temp("history.db", "this is not a SQLite database, it is plain text of some length\n");
  const std::string p = " --model-size 7B --nodes 1";
  const std::vector<Case> cases = {
      {"eval plan " + bad.string() + p, bad.string() + ":2:3: field 'examples': expected an integer"},
      {"eval plan " + empty.string() + p, "zero-size suite: no dataset with examples to evaluate"},
      {"eval plan " + kSuite + p, "datasets without an example count (fill 'examples' or pass --skip-unsized)"},
      {"eval plan " + kSuite + p + " --only gsm8k,nosuchset", "unknown dataset \"nosuchset\""},
      {"eval plan " + kSuite + " --skip-unsized --model-size 7X --nodes 1", "--model: model size \"7X\": expected a parameter count"},
      {"eval plan " + kSuite + " --skip-unsized --model llama-9b --nodes 1",
       "orrery eval plan: --model: unknown model \"llama-9b\": expected one of gpt-125m, gpt-350m, gpt-1.3b, "},
      {"eval plan " + kSuite + " --skip-unsized --model llama-9b --nodes 1",
       ", qwen2.5-72b or a parameter count such as 7B, 1.3B, 350M or 7e9\n"},
      {"eval plan " + kSuite + p + " --skip-unsized --strategy best", "unknown strategy \"best\""},
      {"eval plan " + kSuite + p + " --skip-unsized --history " + not_db.string(), "not a SQLite database"},
      {"eval plan " + kSuite + " --skip-unsized --model-size 7B --nodes 0", "--nodes: expected 1 to 100000 nodes"},
  };
  for (const Case& c : cases) {
    Out o = RunCmd(c.args);
    EXPECT_EQ(o.status, 2) << c.args << "\n" << o.text;
    EXPECT_NE(o.text.find(c.message), std::string::npos) << c.args << "\n" << o.text;
  }
  for (const fs::path& f : {bad, empty, not_db}) fs::remove(f);
}

TEST(EvalCliTest, HistoryOfAnotherSchemaVersionIsExit2) {
  const fs::path db = fs::temp_directory_path() / ("orrery_eval_cli_v9_" + std::to_string(getpid()) + ".db");
  fs::remove(db);
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(h, "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
                            "INSERT INTO meta VALUES('format','orrery-eval-history'),('schema_version','9');",
                         nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(h);
  Out o = RunCmd("eval plan " + kSuite + " --skip-unsized --model-size 7B --nodes 1 --history " + db.string());
  EXPECT_EQ(o.status, 2) << o.text;
  EXPECT_NE(o.text.find("schema version 9, this orrery reads version 1"), std::string::npos) << o.text;
  fs::remove(db);
}

// --model takes a parameter count (read as one, printed as given) or a model name at its
// nominal size, printed by its canonical name; --model-size is its alias.
TEST(EvalCliTest, ModelIsACountOrAModelName) {
  const std::string suite = std::string(ORRERY_SOURCE_DIR) + "/tests/fixtures/eval_sim/suite.csv";
  const std::string rest = " --nodes 1 --strategy acme --json";
  auto model = [](const Out& o) { return nlohmann::json::parse(o.text.substr(o.text.find('{')))["model"]; };
  Out count = RunCmd("eval plan " + suite + " --model-size 1.3B" + rest);
  Out named = RunCmd("eval plan " + suite + " --model GPT-1.3B" + rest);
  Out alias = RunCmd("eval plan " + suite + " --model 1.3b" + rest);
  ASSERT_EQ(count.status, 0) << count.text;
  ASSERT_EQ(named.status, 0) << named.text;
  ASSERT_EQ(alias.status, 0) << alias.text;
  EXPECT_EQ(model(count)["size"], "1.3B");
  EXPECT_EQ(model(named)["size"], "gpt-1.3b");
  EXPECT_EQ(model(alias)["size"], "1.3b");  // a count first, as it always was
  EXPECT_EQ(model(named)["params"], model(count)["params"]);
  Out llama = RunCmd("eval plan " + suite + " --model llama3-70b" + rest);
  ASSERT_EQ(llama.status, 0) << llama.text;
  EXPECT_EQ(model(llama)["params"].get<double>(), 70e9);
}

TEST(EvalCliTest, CompareListsEveryStrategyAtEveryNodeCount) {
  Out o = RunCmd("eval compare " + kSuite + " --skip-unsized --model-size 7B --json");
  ASSERT_EQ(o.status, 0) << o.text;
  const auto j = nlohmann::json::parse(o.text.substr(o.text.find('{')));
  EXPECT_EQ(j["rows"].size(), 4u * 4u);
}

TEST(EvalCliTest, SbatchArgumentsOfATrialArrayAndAMetricJob) {
  orrery::live::BatchSpec arr;
  arr.name = "orrery-eval-trial";
  arr.partition = "gpu";
  arr.script = "/w/trial.sh";
  arr.workdir = "/w";
  arr.output = "/w/logs/trial-%a.out";
  arr.array_size = 3;
  arr.gpus_per_node = 1;
  EXPECT_EQ(orrery::live::SbatchArgs(arr),
            (std::vector<std::string>{"--parsable", "-J", "orrery-eval-trial", "-o", "/w/logs/trial-%a.out", "-D", "/w",
                                      "--cpus-per-task=1", "-p", "gpu", "--array=0-2", "--gres=gpu:1", "--export=ALL",
                                      "/w/trial.sh"}));
  orrery::live::BatchSpec m;
  m.partition = "cpu";
  m.script = "/w/metric.sh";
  m.after_ok = {"17_0", "17_2"};
  m.env = {"ORRERY_EVAL_METRIC=4"};
  m.nodelist = "node2";
  EXPECT_EQ(orrery::live::SbatchArgs(m),
            (std::vector<std::string>{"--parsable", "-J", "orrery", "-o", "/dev/null", "-D", "/tmp", "--cpus-per-task=1",
                                      "-p", "cpu", "--dependency=afterok:17_0:17_2", "--nodelist=node2",
                                      "--export=ALL,ORRERY_EVAL_METRIC=4", "/w/metric.sh"}));
  // The incomplete cells of a sweep: those task indexes only, at most 2 at once.
  orrery::live::BatchSpec sweep;
  sweep.script = "/s/run-cell.sh";
  sweep.array_tasks = {1, 4, 5};
  sweep.array_throttle = 2;
  EXPECT_EQ(orrery::live::SbatchArgs(sweep),
            (std::vector<std::string>{"--parsable", "-J", "orrery", "-o", "/dev/null", "-D", "/tmp", "--cpus-per-task=1",
                                      "--array=1,4,5%2", "--export=ALL", "/s/run-cell.sh"}));
  arr.array_throttle = 1;  // a range with a throttle
  EXPECT_EQ(orrery::live::SbatchArgs(arr)[10], "--array=0-2%1");
}

}  // namespace
