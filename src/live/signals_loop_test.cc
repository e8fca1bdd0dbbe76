// The signals loop (signals_loop.h) over FakeSlurm, temporary logs and a recording host: one
// row per job record (its state, whether the snapshot runs it, what its log shows, a reading
// journaled before a restart) with the readings reported to the core, the jobs handed to the
// hang watch and the journal's progress rows afterwards.
#include "live/signals_loop.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "live/fake_slurm.h"
#include "live/journal_testing.h"

namespace orrery::live {
namespace {

using S = JobState;
namespace fs = std::filesystem;

// Megatron-LM's training_log line.
std::string Iteration(int64_t step, int64_t total) {
  char b[300];
  std::snprintf(b, sizeof b,
                " iteration %8lld/%8lld | consumed samples: %12lld | elapsed time per iteration (ms): 1000.0 | "
                "learning rate: 3.000E-04 | global batch size:    64 | lm loss: 2.500000E+00 | loss scale: 1.0 |\n",
                static_cast<long long>(step), static_cast<long long>(total), static_cast<long long>(step * 64));
  return b;
}

// The host: the slots the snapshot runs are set by the test; each reading and watch is recorded
// ("report <job> step <n>", "watch <job>").
class RecordingSignalsHost : public SignalsHost {
 public:
  std::set<uint32_t> running_slots;
  std::vector<std::string> calls;

  bool RunsInSnapshot(const LiveJob& lj) const override { return running_slots.count(lj.slot) > 0; }
  bool EstimatedByEstimator(const LiveJob&) const override { return true; }
  void UpdateEstimate(const LiveJob& lj, Duration, Time) override {
    calls.push_back("estimate " + std::to_string(lj.id));
  }
  void Report(const LiveSignals::Report& r, Time) override {
    calls.push_back("report " + std::to_string(r.job) + " step " + std::to_string(r.reading.step));
  }
  void Watch(uint32_t job) override { calls.push_back("watch " + std::to_string(job)); }
};

struct Fixture {
  explicit Fixture(const std::string& name) : slurm(&clock) {
    dir = fs::temp_directory_path() / ("orrery_signals_loop_test_" + std::to_string(getpid()) + "_" + name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    auto j = Journal::Open(FreshJournalPath("orrery_signals_loop_test", name + ".db"), false);
    EXPECT_TRUE(j.ok());
    journal = std::move(*j);
    events = std::make_unique<EventLog>(journal.get());
    book = std::make_unique<JobBook>(events.get());
    SignalsOptions opts;
    opts.tracker = true;
    opts.read_interval_s = 0;
    signals = std::make_unique<SignalsLoop>(book.get(), &slurm, journal.get(), events.get(), &host, opts);
    slurm.AddNode("n1", 8, "gpu");
  }
  ~Fixture() { fs::remove_all(dir); }
  // A job in Slurm with its StdOut holding steps 1..`steps` of 100 (none: an empty log).
  uint32_t Submit(int64_t steps) {
    SubmitSpec s;
    s.partition = "gpu";
    s.gpus_per_node = 8;
    const uint32_t id = *slurm.Submit(s);
    const std::string log = (dir / ("slurm-" + std::to_string(id) + ".out")).string();
    std::ofstream out(log, std::ios::trunc);
    for (int64_t i = 1; i <= steps; ++i) out << Iteration(i, 100);
    slurm.SetJobFiles(id, JobFiles{log, log, dir.string()}, "");
    return id;
  }
  // The daemon's record of it, in the policy's slot `id`.
  void Record(uint32_t id, S state) {
    auto lj = std::make_unique<LiveJob>();
    lj->id = id;
    LiveJob& added = book->Add(std::move(lj));
    book->Enter(added, state, 900);
    book->Bind(added, id);
  }
  SimClock clock{1000};
  FakeSlurm slurm;
  RecordingSignalsHost host;
  fs::path dir;
  std::unique_ptr<Journal> journal;
  std::unique_ptr<EventLog> events;
  std::unique_ptr<JobBook> book;
  std::unique_ptr<SignalsLoop> signals;
};

struct Case {
  const char* what;
  int64_t log_steps;     // steps the job's log shows
  bool recorded;         // the daemon has a record of the job (else it left)
  S state;
  bool in_snapshot;      // the snapshot runs it
  int64_t journaled;     // a reading journaled before the restart: its step (-1 none)
  // expected
  std::vector<std::string> calls;  // with <job> for the job's id
  int64_t journal_step;            // its progress row afterwards (-1: none)
};

std::vector<std::string> WithId(const std::vector<std::string>& calls, uint32_t id) {
  std::vector<std::string> out;
  for (std::string c : calls) {
    if (auto at = c.find("<job>"); at != std::string::npos) c.replace(at, 5, std::to_string(id));
    out.push_back(c);
  }
  return out;
}

TEST(SignalsLoop, StepOneRowPerJob) {
  const Case cases[] = {
      // Ten steps read: reported to the core, watched for hangs, journaled.
      {"a running job's progress: reported and journaled", 10, true, S::kRunning, true, -1,
       {"report <job> step 10", "watch <job>"}, 10},
      // Nothing in its log yet: no reading, no row.
      {"a running job without steps: nothing", 0, true, S::kRunning, true, -1, {}, -1},
      // The record says running, the snapshot does not run it (yet): not read.
      {"not running in the snapshot: not read", 10, true, S::kRunning, false, -1, {}, -1},
      // Queued: not read.
      {"a queued job: not read", 10, true, S::kQueued, false, -1, {}, -1},
      // The journaled step 4 goes to the core before the log is read; the log's 10 follows.
      {"a reading journaled before a restart: reported first", 10, true, S::kRunning, true, 4,
       {"report <job> step 4", "watch <job>", "report <job> step 10", "watch <job>"}, 10},
      // The job left the daemon: forgotten, its row dropped.
      {"a job that left: forgotten", 10, false, S::kRunning, false, 4, {}, -1},
  };
  int n = 0;
  for (const Case& c : cases) {
    Fixture f("step_" + std::to_string(n++));
    const uint32_t id = f.Submit(c.log_steps);
    if (c.journaled >= 0) {  // before the restart
      JournalProgress p;
      p.job = id;
      p.step = c.journaled;
      p.total = 100;
      p.at = 950;
      p.read_at = 950;
      ASSERT_TRUE(f.journal->SetProgress(p).ok()) << c.what;
    }
    ASSERT_TRUE(f.signals->Load().ok()) << c.what;
    ASSERT_TRUE(f.signals->on()) << c.what;
    if (c.recorded) f.Record(id, c.state);
    if (c.in_snapshot) f.host.running_slots.insert(id);
    f.signals->Step(1000);
    EXPECT_EQ(f.host.calls, WithId(c.calls, id)) << c.what;
    auto rows = f.journal->AllProgress();
    ASSERT_TRUE(rows.ok()) << c.what;
    if (c.journal_step < 0) {
      EXPECT_TRUE(rows->empty()) << c.what;
      continue;
    }
    ASSERT_EQ(rows->size(), 1u) << c.what;
    EXPECT_EQ(rows->at(0).job, id) << c.what;
    EXPECT_EQ(rows->at(0).step, c.journal_step) << c.what;
    EXPECT_EQ(rows->at(0).total, 100) << c.what;
    ASSERT_NE(f.signals->live()->View(id), nullptr) << c.what;  // what the API shows
    EXPECT_EQ(f.signals->live()->View(id)->step, c.journal_step) << c.what;
  }
}

// Off unless [signals] asks for the advisor or the tracker: nothing is built, no schema source.
TEST(SignalsLoop, OffWithoutSignals) {
  SimClock clock{1000};
  FakeSlurm slurm(&clock);
  auto j = Journal::Open(FreshJournalPath("orrery_signals_loop_test", "off.db"), false);
  ASSERT_TRUE(j.ok());
  EventLog events(j->get());
  JobBook book(&events);
  RecordingSignalsHost host;
  SignalsLoop signals(&book, &slurm, j->get(), &events, &host, SignalsOptions{});
  ASSERT_TRUE(signals.Load().ok());
  EXPECT_FALSE(signals.on());
  EXPECT_EQ(signals.live(), nullptr);
  EXPECT_FALSE(static_cast<bool>(signals.LaunchSchemas()));
  signals.Introduce(1);  // nothing to read
}

}  // namespace
}  // namespace orrery::live
