// The daemon under hostile input: batch scripts with numbers beyond a double's range, deep
// nesting, invalid UTF-8, multi-megabyte lines and self-doubling variables, job names and
// comments of the same kind, a log that grows without a newline, and an LLM endpoint whose
// answers are malformed or enormous. Each such job carries a located error in the queue
// view (QueueEntry::input_error, "input_error" in /api/v1/queue); the cycle never fails,
// the journal keeps recording decisions, and the healthy job beside them starts and ends.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include <httplib.h>

#include "base/json_text.h"
#include "live/daemon.h"
#include "live/fake_slurm.h"
#include "live/http_api.h"
#include "live/journal.h"
#include "llm/fake_endpoint_testing.h"
#include "semantic/semantic_estimator.h"

namespace orrery::live {
namespace {

namespace fs = std::filesystem;

// A 1.31 B-parameter GPT, 100 steps (live_signals_test.cc's script): read without warnings.
constexpr const char* kHealthy =
    "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gres=gpu:8\n"
    "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 24 --hidden-size 2048 --num-attention-heads 16 \\\n"
    "  --seq-length 2048 --micro-batch-size 4 --global-batch-size 64 --train-iters 100\n";

// A DeepSpeed config written by the script: line 4 holds a number beyond a double's range,
// at column 22 (`{"train_batch_size": ` is 21 bytes).
constexpr const char* kOverflow =
    "#!/bin/bash\n#SBATCH --gres=gpu:8\ncat > ds_config.json <<'EOF'\n"
    "{\"train_batch_size\": 10e11190}\nEOF\n"
    "deepspeed train.py --deepspeed ds_config.json\n";

// The same config nested 300 levels deep (the readers read 100).
std::string DeepScript() {
  return "#!/bin/bash\n#SBATCH --gres=gpu:8\ncat > ds_config.json <<'EOF'\n{\"a\": " + std::string(300, '[') +
         std::string(300, ']') + "}\nEOF\ndeepspeed train.py --deepspeed ds_config.json\n";
}

// Invalid UTF-8 in a config written by the script: byte 0xFF at line 4, column 16.
constexpr const char* kBadUtf8 =
    "#!/bin/bash\n#SBATCH --gres=gpu:8\ncat > ds_config.json <<'EOF'\n"
    "{\"optimizer\": \"\xff\xfe\"}\nEOF\ndeepspeed train.py --deepspeed ds_config.json\n";

// 30 doublings of a 16-byte variable would be 16 GiB; a 3 MiB comment line; huge numbers.
std::string BombScript() {
  std::string s = "#!/bin/bash\n#SBATCH --gres=gpu:8\n# " + std::string(3 << 20, 'x') + "\nA=xxxxxxxxxxxxxxxx\n";
  for (int i = 0; i < 30; ++i) s += "A=$A$A\n";
  return s + "torchrun pretrain_gpt.py --num-layers 99999999999999999999999999 --hidden-size 1e400 --train-iters $A\n";
}

struct HostileRig {
  SimClock clock{1000};
  FakeSlurm slurm{&clock};
  std::unique_ptr<Journal> journal;
  std::unique_ptr<Daemon> daemon;
  DaemonOptions opts;
  fs::path dir;

  explicit HostileRig(int nodes, std::optional<llm::LlmConfig> llm = std::nullopt) {
    semantic::RegisterSemanticEstimator();
    dir = fs::temp_directory_path() / ("orrery_hostile_" + std::to_string(getpid()) + "_" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
    for (int i = 1; i <= nodes; ++i) slurm.AddNode("node" + std::to_string(i), 8, "gpu");
    opts.partitions = {"gpu"};
    opts.policy = "srtf:estimator=semantic";
    opts.signals.advisor = true;
    opts.signals.tracker = true;
    opts.signals.read_interval_s = 0;
    opts.signals.llm = std::move(llm);
    auto opened = Journal::Open((dir / "journal.db").string(), false);
    EXPECT_TRUE(opened.ok());
    journal = std::move(*opened);
    daemon = std::make_unique<Daemon>(&slurm, journal.get(), &clock, opts);
    EXPECT_TRUE(daemon->Recover().ok());
  }
  ~HostileRig() {
    daemon.reset();
    journal.reset();
    fs::remove_all(dir);
  }
  std::string Log(uint32_t job) const { return (dir / ("slurm-" + std::to_string(job) + ".out")).string(); }
  uint32_t Submit(const std::string& script, Duration sleep_s, const std::string& name = "train",
                  const std::string& comment = "") {
    SubmitSpec s;
    s.name = name;
    s.comment = comment;
    s.partition = "gpu";
    s.gpus_per_node = 8;
    s.sleep_s = sleep_s;
    uint32_t id = *slurm.Submit(s);
    slurm.SetJobFiles(id, JobFiles{Log(id), Log(id), dir.string()}, script);
    return id;
  }
  void Tick(Duration dt = 1) {
    clock.Set(clock.Now() + dt);
    slurm.Advance();
    auto st = daemon->Cycle();
    ASSERT_TRUE(st.ok()) << st.error().message;
  }
  std::map<uint32_t, std::string> InputErrors() const {
    std::map<uint32_t, std::string> out;
    for (const QueueEntry& e : daemon->Queue(100)) out[e.job] = e.input_error;
    return out;
  }
};

std::string Sbatch(uint32_t job) { return "job-" + std::to_string(job) + ".sbatch"; }

TEST(HostileInput, ScriptsNamesAndLogsGetLocatedErrorsWhileTheDaemonRuns) {
  HostileRig r(6);
  const uint32_t healthy = r.Submit(kHealthy, 5);
  const uint32_t overflow = r.Submit(kOverflow, 5, "n\xff\xfe" + std::string(1 << 20, 'n'));
  const uint32_t deep = r.Submit(DeepScript(), 5, "deep", "orrery:duration=1e400 " + std::string(1 << 20, '\xff'));
  const uint32_t bad_utf8 = r.Submit(kBadUtf8, 5);
  const uint32_t bomb = r.Submit(BombScript(), 5);
  const uint32_t endless = r.Submit(kHealthy, 100000);
  r.Tick();  // 1001: every job read and started (six nodes of 8 GPUs)
  const auto errors = r.InputErrors();
  ASSERT_EQ(errors.size(), 6u);
  EXPECT_EQ(errors.at(healthy), "");
  EXPECT_EQ(errors.at(overflow), Sbatch(overflow) +
                                     ":4:22: expected a number within a double's range (magnitude below 1.8e308), "
                                     "got \"10e11190\"");
  EXPECT_EQ(errors.at(deep), Sbatch(deep) + ":4:1: JSON nested deeper than 100 levels: not read");
  EXPECT_EQ(errors.at(bad_utf8), Sbatch(bad_utf8) +
                                     ":4:16: JSON syntax error while parsing value - invalid string: ill-formed UTF-8 "
                                     "byte; last read: '\"?'");
  EXPECT_EQ(errors.at(bomb).rfind(Sbatch(bomb) + ":", 0), 0u) << errors.at(bomb);
  // A log that grows by 1 MiB per cycle and never ends a line: read within the per-job byte
  // budget, cut at logs' line bound, no progress and no error.
  for (int i = 0; i < 4; ++i) {
    std::ofstream(r.Log(endless), std::ios::app) << std::string(1 << 20, '7');
    r.Tick();
  }
  for (const QueueEntry& e : r.daemon->Queue(100))
    if (e.job == endless) {
      EXPECT_FALSE(e.progress.has_value());
      EXPECT_EQ(e.input_error, "");
    }
  // The queue API serves these jobs' errors as JSON (the names and comments hold invalid UTF-8).
  HttpApi api(r.daemon.get(), "");
  ASSERT_TRUE(api.Start("127.0.0.1", 0).ok());
  httplib::Client cli("127.0.0.1", api.port());
  auto q = cli.Get("/api/v1/queue");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->status, 200);
  auto body = ParseJson(q->body, "queue");
  ASSERT_TRUE(body.ok()) << body.error().message;
  size_t with_error = 0;
  for (const auto& e : *body) with_error += e["input_error"].is_string();
  EXPECT_EQ(with_error, 4u);  // overflow, deep, bad_utf8, bomb
  api.Stop();
  // The five 5-second jobs end (started at 1001, running from 1002); the daemon journaled
  // every start.
  for (int i = 0; i < 10; ++i) r.Tick();
  for (uint32_t j : {healthy, overflow, deep, bad_utf8, bomb})
    EXPECT_EQ(r.slurm.job(j).state, SlurmJobState::kFinished) << j;
  auto starts = r.journal->OfKind(DecisionKind::kStart, 0);
  ASSERT_TRUE(starts.ok());
  EXPECT_EQ(starts->size(), 6u);
}

// A script the readers cannot read well: nodes and GPUs only (the LLM is asked about it).
std::string Mystery(int n) {
  return "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gres=gpu:8\nsrun python train.py --cfg exp/mystery" +
         std::to_string(n) + ".yaml\n";
}

struct BadAnswer {
  std::string content;
  std::string error;  // the job's input error: located in the answer's content
};

TEST(HostileInput, MalformedOrEnormousLlmAnswersAreRejectedOnTheirJob) {
  const std::string deep = std::string(300, '[') + std::string(300, ']');
  const BadAnswer cases[] = {
      {"{\"num_layers\": 1e99999}",
       "llm answer: content:1:16: expected a number within a double's range (magnitude below 1.8e308), got \"1e99999\""},
      {"{\"num_layers\": " + deep + "}",
       "llm answer: content:1:271: expected JSON nested at most 256 levels deep, got a bracket one level deeper"},
      {"{\"num_layers\": 24, \"notes\": \"" + std::string(8 << 20, 'z') + "\"}", "llm answer: unknown key 'notes'"},
      {"{\"num_layers\": 24", "llm answer: content:1:18: JSON syntax error while parsing object - unexpected end of "
                              "input; expected '}'"},
  };
  for (const BadAnswer& c : cases) {
    llm::testing::FakeEndpoint ep;
    ep.content = c.content;
    HostileRig r(1, ep.Config());
    const uint32_t running = r.Submit(kHealthy, 100000);
    const uint32_t asked = r.Submit(Mystery(1), 5);
    r.Tick();
    for (int i = 0; i < 400 && ep.requests.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::string err;
    for (int i = 0; i < 400 && err.find("llm (") == std::string::npos; ++i) {  // the answer arrives in the background
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      r.Tick(0);
      err = r.InputErrors()[asked];
    }
    EXPECT_EQ(err, Sbatch(asked) + ":0:0: llm (test-model): " + c.error + "; answer rejected") << c.content.substr(0, 40);
    EXPECT_EQ(r.InputErrors()[running], "");
    EXPECT_EQ(r.slurm.job(running).state, SlurmJobState::kRunning);
  }
}

}  // namespace
}  // namespace orrery::live
