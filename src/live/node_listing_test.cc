// The incremental observe path: ListingDelta (which rows changed), ExecSlurmClient::NodeChanges
// and ::Jobs over a scripted `sinfo` / `squeue`, and the daemon applying only the rows Slurm
// lists as changed, with the same decisions as full listings.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "live/daemon.h"
#include "live/fake_slurm.h"
#include "live/sleep_job_testing.h"
#include "live/journal.h"
#include "live/journal_testing.h"
#include "live/listing_delta.h"
#include "live/slurm_client.h"

namespace orrery::live {
namespace {

// One `sinfo -h -N -o kSinfoFormat` row: name, partition, state, GRES.
std::string Row(const std::string& name, const std::string& state, const std::string& partition = "gpu",
                int gpus = 8) {
  const std::string sep(1, kFieldSep);
  return name + sep + partition + sep + state + sep + "gpu:" + std::to_string(gpus);
}

std::string Text(const std::vector<std::string>& rows) {
  std::string s;
  for (const std::string& r : rows) s += r + "\n";
  return s;
}

std::string Key(const std::string& name, const std::string& partition = "gpu") {
  return name + std::string(1, kFieldSep) + partition;
}

std::vector<std::string> Texts(const std::vector<ListingDelta::Line>& lines) {
  std::vector<std::string> out;
  for (const auto& l : lines) out.emplace_back(l.text);
  return out;
}

std::vector<std::string> Keys(const std::vector<std::string_view>& keys) { return {keys.begin(), keys.end()}; }

// ------------------------------------------------------------------ ListingDelta

TEST(ListingDelta, FirstListingIsEveryRowThenOnlyChangedRows) {
  ListingDelta d(kFieldSep, 2, &SinfoKeySlice);
  const std::string n1 = Row("n1", "idle"), n2 = Row("n2", "idle"), n3 = Row("n3", "idle");
  auto first = d.Next(Text({n1, n2, n3}));
  EXPECT_TRUE(first.first);
  EXPECT_EQ(Texts(first.changed), (std::vector<std::string>{n1, n2, n3}));
  EXPECT_TRUE(first.gone.empty());

  auto same = d.Next(Text({n1, n2, n3}));  // byte-identical: nothing changed
  EXPECT_FALSE(same.first);
  EXPECT_TRUE(same.changed.empty());
  EXPECT_TRUE(same.gone.empty());

  const std::string n2_mixed = Row("n2", "mixed");
  auto one = d.Next(Text({n1, n2_mixed, n3}));
  ASSERT_EQ(one.changed.size(), 1u);
  EXPECT_EQ(one.changed[0].text, n2_mixed);
  EXPECT_EQ(one.changed[0].lineno, 2u);
  EXPECT_TRUE(one.gone.empty());
}

TEST(ListingDelta, RowsThatLeaveAreGoneAndComeBackAsNew) {
  ListingDelta d(kFieldSep, 2, &SinfoKeySlice);
  const std::string n1 = Row("n1", "idle"), n2 = Row("n2", "idle"), n3 = Row("n3", "idle");
  d.Next(Text({n1, n2, n3}));
  auto left = d.Next(Text({n1, n3}));  // n3 moved up one line: matched by its key, unchanged
  EXPECT_TRUE(left.changed.empty());
  EXPECT_EQ(Keys(left.gone), (std::vector<std::string>{Key("n2")}));
  const std::string n2_back = Row("n2", "idle", "gpu", 4);
  auto back = d.Next(Text({n1, n2_back, n3}));
  EXPECT_EQ(Texts(back.changed), (std::vector<std::string>{n2_back}));
  EXPECT_TRUE(back.gone.empty());
  auto added_last = d.Next(Text({n1, n2_back, n3, Row("n4", "idle")}));
  EXPECT_EQ(Texts(added_last.changed), (std::vector<std::string>{Row("n4", "idle")}));
}

TEST(ListingDelta, KeyIsNameAndPartition) {
  ListingDelta d(kFieldSep, 2, &SinfoKeySlice);
  const std::string a = Row("n1", "idle", "gpu"), b = Row("n1", "idle", "debug");
  d.Next(Text({a, b}));
  const std::string b2 = Row("n1", "drained", "debug");
  auto changed = d.Next(Text({a, b2}));
  EXPECT_EQ(Texts(changed.changed), (std::vector<std::string>{b2}));
  auto gone = d.Next(Text({b2}));
  EXPECT_TRUE(gone.changed.empty());
  EXPECT_EQ(Keys(gone.gone), (std::vector<std::string>{Key("n1", "gpu")}));
}

TEST(ListingDelta, ReorderedRowsBlankLinesAndCarriageReturnsChangeNothing) {
  ListingDelta d(kFieldSep, 2, &SinfoKeySlice);
  const std::string n1 = Row("n1", "idle"), n2 = Row("n2", "mixed"), n3 = Row("n3", "down*");
  d.Next(Text({n1, n2, n3}));
  auto reordered = d.Next(n3 + "\r\n\n" + n1 + "\r\n" + n2);  // no final newline either
  EXPECT_TRUE(reordered.changed.empty());
  EXPECT_TRUE(reordered.gone.empty());
  auto empty = d.Next("");
  EXPECT_TRUE(empty.changed.empty());
  EXPECT_EQ(Keys(empty.gone), (std::vector<std::string>{Key("n3"), Key("n1"), Key("n2")}));  // previous order
}

TEST(ListingDelta, ForgetMakesTheNextListingFirst) {
  ListingDelta d(kFieldSep, 2, &SinfoKeySlice);
  d.Next(Text({Row("n1", "idle")}));
  d.Forget();
  auto again = d.Next(Text({Row("n1", "idle")}));
  EXPECT_TRUE(again.first);
  EXPECT_EQ(again.changed.size(), 1u);
}

TEST(ListingDelta, KeyOfShortLinesIsTheWholeLine) {
  ListingDelta d(kFieldSep, 2, &SinfoKeySlice);
  EXPECT_EQ(d.KeyOf("n1"), "n1");
  EXPECT_EQ(d.KeyOf(Key("n1")), Key("n1"));
  EXPECT_EQ(d.KeyOf(Row("n1", "idle")), Key("n1"));
}

// ------------------------------------------------------------------ ExecSlurmClient::NodeChanges

// A Slurm tool (`sinfo`, `squeue`) that prints the file `listing` beside it; the test rewrites
// the file between listings.
class ScriptedTool {
 public:
  explicit ScriptedTool(const std::string& tool) {
    static int made = 0;
    dir_ = std::filesystem::temp_directory_path() /
           ("orrery_listing_" + tool + "_" + std::to_string(getpid()) + "_" + std::to_string(made++));
    std::filesystem::create_directories(dir_);
    const std::string script = (dir_ / tool).string();
    std::ofstream(script) << "#!/bin/sh\ncat \"$(dirname \"$0\")/listing\"\n";
    chmod(script.c_str(), 0755);
    Set("");
  }
  ~ScriptedTool() { std::filesystem::remove_all(dir_); }
  void Set(const std::string& text) { std::ofstream(dir_ / "listing", std::ios::trunc) << text; }
  std::string dir() const { return dir_.string(); }

 private:
  std::filesystem::path dir_;
};

std::vector<std::string> Names(const NodeListing& l) {
  std::vector<std::string> out;
  for (const SlurmNode& n : l.nodes) out.push_back(n.name);
  return out;
}

TEST(ExecNodeChanges, ParsesOnlyChangedRowsAndNamesGoneOnes) {
  ScriptedTool sinfo("sinfo");
  ExecSlurmClient c(ExecSlurmOptions{sinfo.dir(), "", 5000});
  const std::vector<std::string> parts = {"gpu"};
  sinfo.Set(Text({Row("n1", "idle"), Row("n2", "idle"), Row("n3", "allocated")}));
  auto full = c.NodeChanges(parts, 0);
  ASSERT_TRUE(full.ok()) << full.error().message;
  EXPECT_TRUE(full->full);
  EXPECT_EQ(Names(*full), (std::vector<std::string>{"n1", "n2", "n3"}));
  ASSERT_NE(full->cursor, 0u);

  auto same = c.NodeChanges(parts, full->cursor);
  ASSERT_TRUE(same.ok());
  EXPECT_FALSE(same->full);
  EXPECT_TRUE(same->nodes.empty());
  EXPECT_TRUE(same->gone.empty());

  sinfo.Set(Text({Row("n1", "idle"), Row("n2", "down*"), Row("n3", "allocated")}));
  auto down = c.NodeChanges(parts, same->cursor);
  ASSERT_TRUE(down.ok());
  ASSERT_EQ(Names(*down), (std::vector<std::string>{"n2"}));
  EXPECT_EQ(down->nodes[0].avail, NodeAvail::kDown);
  EXPECT_EQ(down->nodes[0].gpus, 8);

  sinfo.Set(Text({Row("n1", "idle"), Row("n2", "down*")}));
  auto gone = c.NodeChanges(parts, down->cursor);
  ASSERT_TRUE(gone.ok());
  EXPECT_TRUE(gone->nodes.empty());
  ASSERT_EQ(gone->gone.size(), 1u);
  EXPECT_EQ(gone->gone[0].name, "n3");
  EXPECT_EQ(gone->gone[0].partition, "gpu");

  // A cursor that is not the last listing's (another caller's, or older) gets a full listing,
  // and so do other partitions.
  auto stale = c.NodeChanges(parts, full->cursor);
  ASSERT_TRUE(stale.ok());
  EXPECT_TRUE(stale->full);
  EXPECT_EQ(Names(*stale), (std::vector<std::string>{"n1", "n2"}));
  auto other = c.NodeChanges({"gpu", "debug"}, stale->cursor);
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(other->full);
}

TEST(ExecNodeChanges, ABadRowIsAnErrorAndTheNextListingIsFull) {
  ScriptedTool sinfo("sinfo");
  ExecSlurmClient c(ExecSlurmOptions{sinfo.dir(), "", 5000});
  sinfo.Set(Text({Row("n1", "idle"), Row("n2", "idle")}));
  auto first = c.NodeChanges({"gpu"}, 0);
  ASSERT_TRUE(first.ok());
  const std::string sep(1, kFieldSep);
  sinfo.Set(Text({Row("n1", "idle"), "n2" + sep + "gpu" + sep + "idle"}));  // 3 fields
  auto bad = c.NodeChanges({"gpu"}, first->cursor);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "sinfo output line 2: expected 4 fields, got \"n2\x1fgpu\x1fidle\"");
  // The bad listing is not the base of the next one: the daemon's cursor is the first
  // listing's, and it gets every row again (n2 is not skipped as "unchanged").
  sinfo.Set(Text({Row("n1", "idle"), Row("n2", "mixed")}));
  auto next = c.NodeChanges({"gpu"}, first->cursor);
  ASSERT_TRUE(next.ok());
  EXPECT_TRUE(next->full);
  EXPECT_EQ(Names(*next), (std::vector<std::string>{"n1", "n2"}));
}

// ------------------------------------------------------------------ ExecSlurmClient::Jobs

// One `squeue -h -o kSqueueFormat` row of `j` as Slurm prints it (ParseSqueueLine reads it back).
std::string SqueueRow(const SlurmJob& j) {
  auto when = FormatSlurmTime;
  auto limit = [](Duration d) {
    if (d < 0) return std::string("UNLIMITED");
    char b[32];
    std::snprintf(b, sizeof b, "%lld-%02lld:%02lld:%02lld", static_cast<long long>(d / 86400),
                  static_cast<long long>(d % 86400 / 3600), static_cast<long long>(d % 3600 / 60),
                  static_cast<long long>(d % 60));
    return std::string(b);
  };
  std::string nodes;
  for (const std::string& n : j.nodes) nodes += (nodes.empty() ? "" : ",") + n;
  const std::vector<std::string> f = {std::to_string(j.id), j.state_raw, j.partition, j.user,
                                      std::to_string(j.num_nodes),
                                      j.gpus_per_node ? "gres:gpu:" + std::to_string(j.gpus_per_node) : "N/A",
                                      limit(j.time_limit), when(j.submit), when(j.start), when(j.end), j.reason, nodes,
                                      j.name, j.comment.empty() ? "(null)" : j.comment};
  std::string row;
  for (size_t i = 0; i < f.size(); ++i) row += (i ? std::string(1, kFieldSep) : "") + f[i];
  return row;
}

SlurmJob AJob(uint32_t id, const std::string& state, const std::string& reason) {
  SlurmJob j;
  j.id = id;
  j.state_raw = state;
  j.partition = "gpu";
  j.user = "u";
  j.gpus_per_node = 8;
  j.time_limit = 3600;
  j.submit = 1'000'000;
  j.reason = reason;
  j.name = "train";
  j.comment = "orrery:duration=60";
  return j;
}

std::vector<uint32_t> Ids(const JobListing& l) {
  std::vector<uint32_t> out;
  for (const SlurmJob& j : l.jobs) out.push_back(j.id);
  return out;
}

TEST(ExecJobChanges, ParsesOnlyChangedRowsAndNamesGoneJobs) {
  ScriptedTool squeue("squeue");
  ExecSlurmClient c(ExecSlurmOptions{squeue.dir(), "", 5000});
  const std::vector<std::string> parts = {"gpu"};
  SlurmJob a = AJob(11, "PENDING", "JobHeldAdmin"), b = AJob(12, "PENDING", "JobHeldAdmin");
  SlurmJob array = AJob(13, "PENDING", "JobHeldUser");
  const std::string array_row = "13_1" + SqueueRow(array).substr(2);  // an array task: not managed
  squeue.Set(Text({SqueueRow(a), SqueueRow(b), array_row}));
  auto full = c.Jobs(parts, 0);
  ASSERT_TRUE(full.ok()) << full.error().message;
  EXPECT_TRUE(full->full);
  EXPECT_EQ(Ids(*full), (std::vector<uint32_t>{11, 12}));
  EXPECT_TRUE(full->jobs[0].held);
  EXPECT_EQ(full->jobs[0].submit, 1'000'000);
  ASSERT_NE(full->cursor, 0u);

  auto same = c.Jobs(parts, full->cursor);
  ASSERT_TRUE(same.ok());
  EXPECT_FALSE(same->full);
  EXPECT_TRUE(same->jobs.empty());
  EXPECT_TRUE(same->gone.empty());

  b.state_raw = "RUNNING";
  b.reason = "None";
  b.start = 1'000'100;
  b.nodes = {"n1"};
  squeue.Set(Text({SqueueRow(a), SqueueRow(b), array_row}));
  auto started = c.Jobs(parts, same->cursor);
  ASSERT_TRUE(started.ok());
  ASSERT_EQ(Ids(*started), (std::vector<uint32_t>{12}));
  EXPECT_EQ(started->jobs[0].state, SlurmJobState::kRunning);
  EXPECT_EQ(started->jobs[0].nodes, std::vector<std::string>{"n1"});
  EXPECT_EQ(started->jobs[0].start, 1'000'100);

  squeue.Set(Text({SqueueRow(b)}));  // a purged, the array task gone too
  auto purged = c.Jobs(parts, started->cursor);
  ASSERT_TRUE(purged.ok());
  EXPECT_TRUE(purged->jobs.empty());
  EXPECT_EQ(purged->gone, std::vector<uint32_t>{11});

  // A cursor that is not the last job listing's (older, or a node listing's) gets a full listing.
  auto stale = c.Jobs(parts, full->cursor);
  ASSERT_TRUE(stale.ok());
  EXPECT_TRUE(stale->full);
  EXPECT_EQ(Ids(*stale), std::vector<uint32_t>{12});
}

TEST(ExecJobChanges, ABadRowIsAnErrorAndTheNextListingIsFull) {
  ScriptedTool squeue("squeue");
  ExecSlurmClient c(ExecSlurmOptions{squeue.dir(), "", 5000});
  const SlurmJob a = AJob(11, "PENDING", "JobHeldAdmin"), b = AJob(12, "PENDING", "JobHeldAdmin");
  squeue.Set(Text({SqueueRow(a), SqueueRow(b)}));
  auto first = c.Jobs({"gpu"}, 0);
  ASSERT_TRUE(first.ok());
  squeue.Set(Text({SqueueRow(a), "12" + std::string(1, kFieldSep) + "PENDING"}));
  auto bad = c.Jobs({"gpu"}, first->cursor);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "squeue output line 2: expected 14 fields, got \"12\x1fPENDING\"");
  squeue.Set(Text({SqueueRow(a), SqueueRow(b)}));  // b as at the first listing: listed again anyway
  auto next = c.Jobs({"gpu"}, first->cursor);
  ASSERT_TRUE(next.ok());
  EXPECT_TRUE(next->full);
  EXPECT_EQ(Ids(*next), (std::vector<uint32_t>{11, 12}));
}

// ------------------------------------------------------------------ the daemon

// How the daemon's job listings are made: FakeSlurm's change log, or FakeSlurm's jobs printed
// as `squeue` rows and read by ExecSlurmClient::Jobs, in full every cycle (what it did before it
// compared rows) or as the rows that changed.
enum class JobRows { kChangeLog, kSqueueFull, kSqueueChanged };

// Forwards to FakeSlurm and logs every mutating call; with full_nodes, node listings are the
// base class's full listing every cycle (the observe path before NodeChanges had deltas).
class LoggingSlurm final : public SlurmClient {
 public:
  LoggingSlurm(FakeSlurm* inner, bool full_nodes, JobRows jobs = JobRows::kChangeLog)
      : inner_(inner), full_nodes_(full_nodes), jobs_(jobs), squeue_("squeue"),
        exec_(ExecSlurmOptions{squeue_.dir(), "", 5000}) {}
  std::vector<std::string> calls;
  size_t job_rows = 0;  // jobs listed to the daemon
  uint32_t refuse_hold_every = 0;  // every k-th hold is refused (Slurm did not answer it); 0: none
  Result<JobListing> ListJobs(const std::vector<std::string>& p, uint64_t c, Sweep w) override {
    auto l = JobsAsListed(p, c, w);
    if (l.ok()) job_rows += l->jobs.size();
    return l;
  }
  Result<std::vector<SlurmNode>> Nodes(const std::vector<std::string>& p) override { return inner_->Nodes(p); }
  Result<NodeListing> ListNodeChanges(const std::vector<std::string>& p, uint64_t c, Sweep w) override {
    return full_nodes_ ? SlurmClient::ListNodeChanges(p, c, w) : inner_->NodeChanges(p, c, w);
  }
  Status Hold(uint32_t j) override {
    if (refuse_hold_every > 0 && ++holds_ % refuse_hold_every == 0)
      return Log("hold " + std::to_string(j), SlurmError("slurm: Socket timed out on send/recv operation"));
    return Log("hold " + std::to_string(j), inner_->Hold(j));
  }
  Status StartOn(uint32_t j, const std::vector<NodeShare>& n, bool r) override {
    std::string names;
    for (const NodeShare& s : n) names += (names.empty() ? "" : ",") + s.node;
    return Log("start " + std::to_string(j) + " " + names, inner_->StartOn(j, n, r));
  }
  Status Reshape(uint32_t j, const std::vector<NodeShare>& n) override { return inner_->Reshape(j, n); }
  Status RequeueHold(uint32_t j) override { return Log("requeuehold " + std::to_string(j), inner_->RequeueHold(j)); }
  Status SetPriority(uint32_t j, uint32_t p) override { return inner_->SetPriority(j, p); }
  Status PowerDown(const std::string& n) override { return Log("power_down " + n, inner_->PowerDown(n)); }
  Status PowerUp(const std::string& n) override { return Log("power_up " + n, inner_->PowerUp(n)); }
  Result<uint32_t> Submit(const SubmitSpec& s) override { return inner_->Submit(s); }
  Status Cancel(uint32_t j) override { return inner_->Cancel(j); }
  Status Drain(const std::string& n, const std::string& r) override { return Log("drain " + n, inner_->Drain(n, r)); }
  Status Undrain(const std::string& n) override { return Log("undrain " + n, inner_->Undrain(n)); }
  Status RestartHeld(uint32_t j) override { return Log("restart " + std::to_string(j), inner_->RestartHeld(j)); }

 private:
  Status Log(std::string call, Status s) {
    calls.push_back(std::move(call) + (s.ok() ? "" : " (refused)"));
    return s;
  }
  Result<JobListing> JobsAsListed(const std::vector<std::string>& p, uint64_t c, Sweep w) {
    if (jobs_ == JobRows::kChangeLog) return inner_->Jobs(p, c, w);
    ORR_ASSIGN_OR_RETURN(JobListing all, inner_->Jobs(p, 0));
    std::string text;
    for (const SlurmJob& j : all.jobs) text += SqueueRow(j) + "\n";
    squeue_.Set(text);
    return exec_.Jobs(p, jobs_ == JobRows::kSqueueFull ? 0 : c, w);
  }
  FakeSlurm* inner_;
  bool full_nodes_;
  JobRows jobs_;
  uint32_t holds_ = 0;
  ScriptedTool squeue_;
  ExecSlurmClient exec_;
};

struct NodeRig {
  SimClock clock{1000};
  FakeSlurm slurm{&clock};
  LoggingSlurm client;
  std::unique_ptr<Journal> journal;
  std::unique_ptr<Daemon> daemon;

  NodeRig(const std::string& name, int nodes, bool full_nodes = false, const std::string& energy = "",
          JobRows jobs = JobRows::kChangeLog, int resync_cycles = 0)
      : client(&slurm, full_nodes, jobs) {
    for (int i = 1; i <= nodes; ++i) slurm.AddNode("node" + std::to_string(i), 8, "gpu");
    slurm.set_power_delay(3);
    auto opened = Journal::Open(FreshJournalPath("orrery_node_listing_test", name + ".db"), false);
    EXPECT_TRUE(opened.ok());
    journal = std::move(*opened);
    DaemonOptions opts;
    opts.partitions = {"gpu"};
    opts.policy = "fifo";
    opts.energy = energy;
    opts.full_resync_cycles = resync_cycles;  // 0: deltas only after the first listing
    daemon = std::make_unique<Daemon>(&client, journal.get(), &clock, opts);
    EXPECT_TRUE(daemon->Recover().ok());
  }
  uint32_t Submit(uint32_t gpus, Duration d) {
    return *slurm.Submit(SleepJob(gpus, d));
  }
  // One second: Slurm moves, then the daemon cycles.
  CycleStats Tick() {
    clock.Set(clock.Now() + 1);
    slurm.Advance();
    auto st = daemon->Cycle();
    EXPECT_TRUE(st.ok()) << st.error().message;
    return st.ok() ? *st : CycleStats{};
  }
  bool Noted(const std::string& text) const {
    for (const std::string& e : daemon->GetHealth().events)
      if (e.find(text) != std::string::npos) return true;
    return false;
  }
};

TEST(DaemonNodes, AnUnchangedListingChangesNothing) {
  NodeRig r("unchanged", 4);
  uint32_t a = r.Submit(8, 100), b = r.Submit(8, 100);
  CycleStats first = r.Tick();  // full listing: 4 rows; a and b decided and released
  EXPECT_EQ(first.node_rows, 4u);
  EXPECT_EQ(first.starts, 2u);
  CycleStats started = r.Tick();  // Slurm started a and b: their two nodes are listed allocated
  EXPECT_EQ(started.node_rows, 2u);
  ASSERT_EQ(r.slurm.job(a).state, SlurmJobState::kRunning);
  ASSERT_EQ(r.slurm.job(b).state, SlurmJobState::kRunning);
  const auto calls = r.client.calls;
  const auto events = r.daemon->GetHealth().events;
  for (int i = 0; i < 5; ++i) {
    CycleStats quiet = r.Tick();
    EXPECT_EQ(quiet.node_rows, 0u);
    EXPECT_EQ(quiet.starts + quiet.requeues, 0u);
    EXPECT_FALSE(quiet.rebuilt);
  }
  EXPECT_EQ(r.client.calls, calls);
  EXPECT_EQ(r.daemon->GetHealth().events, events);
  const auto h = r.daemon->GetHealth();
  EXPECT_EQ(h.nodes_up, 4u);
  EXPECT_EQ(h.nodes_total, 4u);
  EXPECT_NE(r.daemon->MetricsText().find("orrery_node_rows_total 6"), std::string::npos);  // 4 + 2
}

TEST(DaemonNodes, AChangedNodeIsPickedUp) {
  NodeRig r("changed", 2);
  r.Tick();
  r.slurm.SetNodeDown("node1", true);  // idle: no job is requeued
  CycleStats down = r.Tick();
  EXPECT_EQ(down.node_rows, 1u);
  EXPECT_EQ(r.daemon->GetHealth().nodes_up, 1u);
  EXPECT_TRUE(r.Noted("node1 up -> down (down*)"));
  // Two 8-GPU jobs: only node2 can take one.
  uint32_t a = r.Submit(8, 50), b = r.Submit(8, 50);
  r.Tick();
  r.Tick();
  EXPECT_EQ(r.slurm.job(a).nodes, (std::vector<std::string>{"node2"}));
  EXPECT_EQ(r.slurm.job(b).state, SlurmJobState::kPending);
  r.slurm.SetNodeDown("node1", false);
  CycleStats back = r.Tick();
  EXPECT_EQ(back.node_rows, 1u);
  EXPECT_EQ(back.starts, 1u);  // b, on node1
  r.Tick();
  EXPECT_EQ(r.slurm.job(b).nodes, (std::vector<std::string>{"node1"}));
}

TEST(DaemonNodes, ANodeThatLeavesAndComesBackIsHandled) {
  NodeRig r("leaves", 2);
  r.Tick();
  r.slurm.RemoveNode("node2");
  CycleStats left = r.Tick();
  EXPECT_EQ(left.node_rows, 1u);  // one gone row
  EXPECT_TRUE(r.Noted("node2 left the managed partitions"));
  EXPECT_EQ(r.daemon->GetHealth().nodes_total, 1u);
  uint32_t a = r.Submit(8, 50), b = r.Submit(8, 50);
  r.Tick();
  r.Tick();
  EXPECT_EQ(r.slurm.job(a).nodes, (std::vector<std::string>{"node1"}));
  EXPECT_EQ(r.slurm.job(b).state, SlurmJobState::kPending);  // never placed on the departed node
  r.slurm.AddNode("node2", 8, "gpu");
  CycleStats back = r.Tick();
  EXPECT_EQ(back.node_rows, 1u);
  EXPECT_FALSE(back.rebuilt);  // same GPU count: its scheduler node is placeable again
  EXPECT_EQ(back.starts, 1u);
  r.Tick();
  EXPECT_EQ(r.slurm.job(b).nodes, (std::vector<std::string>{"node2"}));
  EXPECT_EQ(r.daemon->GetHealth().nodes_total, 2u);
}

// A node leaves Slurm while a job still runs there: its free GPUs are out of placement at once
// (drained in the scheduler), not only once that job is gone. Job 1 (4 GPUs) and job 2 (8)
// fill 4 + 8 of the two nodes' 16; the node of job 1 leaves. Job 3 (4 GPUs) then fits only
// the departed node's 4 free GPUs: it is never started (before, it was sent there once, the
// release failed, and it was re-planned); the VC offers 0 free GPUs.
TEST(DaemonNodes, ADepartedNodeThatStillHoldsWorkIsPlacedOnNoMore) {
  NodeRig r("departed_busy", 2);
  const uint32_t a = r.Submit(4, 100);
  r.Submit(8, 100);
  r.Tick();
  r.Tick();
  ASSERT_EQ(r.slurm.job(a).state, SlurmJobState::kRunning);
  const std::string left = r.slurm.job(a).nodes.at(0);
  r.slurm.RemoveNode(left);
  r.Tick();
  EXPECT_TRUE(r.Noted(left + " left the managed partitions"));
  EXPECT_EQ(r.daemon->scheduler()->cluster_state().vc_free_gpus(VcId(0)), 0u);
  const uint32_t c = r.Submit(4, 50);
  const size_t before = r.client.calls.size();
  for (int i = 0; i < 3; ++i) {
    CycleStats st = r.Tick();
    EXPECT_EQ(st.starts, 0u);
  }
  EXPECT_EQ(r.client.calls.size(), before);  // no start sent anywhere
  EXPECT_EQ(r.slurm.job(c).state, SlurmJobState::kPending);
  EXPECT_TRUE(r.daemon->JobView(a).has_value());  // job 1 runs on there, in the snapshot
}

TEST(DaemonNodes, ANodeThatComesBackWithOtherGpusRebuildsTheScheduler) {
  NodeRig r("regpu", 2);
  r.Tick();
  r.slurm.RemoveNode("node2");
  r.Tick();
  r.slurm.AddNode("node2", 4, "gpu");
  CycleStats back = r.Tick();
  EXPECT_TRUE(back.rebuilt);
  EXPECT_TRUE(r.Noted("node2 came back with 4 GPUs instead of 8: the scheduler is rebuilt"));
  // 8 + 4 GPUs: a 4-GPU job and an 8-GPU job run side by side.
  uint32_t a = r.Submit(8, 50), b = r.Submit(4, 50);
  r.Tick();
  r.Tick();
  EXPECT_EQ(r.slurm.job(a).state, SlurmJobState::kRunning);
  EXPECT_EQ(r.slurm.job(b).state, SlurmJobState::kRunning);
  EXPECT_EQ(r.daemon->scheduler()->cluster_state().free_gpus(NodeId(0)) +
                r.daemon->scheduler()->cluster_state().free_gpus(NodeId(1)),
            0u);
}

// The energy policy (CES, as energy_test.cc) powers idle nodes down and wakes them; the
// daemon mirrors each power action at once (MirrorLocally) and Slurm shows it later.
constexpr const char* kCes =
    "ces:period=10,history=1,buffer=1,buffer_frac=0,min_spare=0,keep=0,de_thr=1,idle=20,forecaster=last";

// Random minutes (600 ticks: ten) of submissions, node failures, departures and returns (some with fewer
// GPUs), operator drains and CES power actions: every call the daemon sent Slurm, every event it
// noted (sorted within a cycle: their order there may differ), node rows and jobs listed.
struct RandomRun {
  std::vector<std::string> calls, events;
  size_t rows = 0, done = 0, job_rows = 0;
};
// Faults on top: every k-th hold refused, and half of the jobs submitted without --hold (the
// daemon holds them), so that holds are many and some are refused.
struct Faults {
  uint32_t refuse_hold_every = 0;
  bool unheld = false;
};
RandomRun RandomMinutes(const std::string& name, bool full_nodes, JobRows jobs, int ticks = 600, Faults faults = {}) {
  NodeRig r(name, 6, full_nodes, kCes, jobs);
  r.client.refuse_hold_every = faults.refuse_hold_every;
  std::mt19937_64 rng(7);
  std::map<std::string, int> removed;  // node -> the tick it comes back
  std::set<std::string> down, drained;
  const uint32_t gpus[] = {1, 2, 4, 8};
  RandomRun out;
  for (int t = 0; t < ticks; ++t) {
    for (auto it = removed.begin(); it != removed.end();) {
      if (it->second != t) {
        ++it;
        continue;
      }
      r.slurm.AddNode(it->first, rng() % 3 == 0 ? 4 : 8, "gpu");  // back, sometimes smaller
      it = removed.erase(it);
    }
    const std::string node = "node" + std::to_string(1 + rng() % 6);
    const uint64_t u = rng() % 1000;
    const bool listed = !removed.count(node);
    if (u < 200) {
      SubmitSpec s = SleepJob(gpus[rng() % 4], 5 + static_cast<Duration>(rng() % 60));
      if (faults.unheld) s.hold = rng() % 2 == 0;
      EXPECT_TRUE(r.slurm.Submit(s).ok());
    } else if (u < 215 && listed) {
      r.slurm.SetNodeDown(node, !down.count(node));
      if (!down.erase(node)) down.insert(node);
    } else if (u < 222 && listed) {
      r.slurm.RemoveNode(node);
      removed[node] = t + 5 + static_cast<int>(rng() % 30);
      down.erase(node);
      drained.erase(node);
    } else if (u < 235 && listed && !down.count(node)) {
      Status s = drained.erase(node) ? r.slurm.Undrain(node) : r.slurm.Drain(node, "operator");
      if (s.ok() && r.slurm.node(node).avail == NodeAvail::kDown) drained.insert(node);
    }
    const CycleStats st = r.Tick();
    out.rows += st.node_rows;
    std::vector<std::string> now;
    for (const std::string& e : r.daemon->GetHealth().events)
      if (e.rfind(std::to_string(st.now) + " ", 0) == 0) now.push_back(e);
    std::sort(now.begin(), now.end());
    out.events.insert(out.events.end(), now.begin(), now.end());
  }
  out.calls = r.client.calls;
  out.done = r.slurm.num_done();
  out.job_rows = r.client.job_rows;
  return out;
}

// The random run twice: with node deltas and with a full node listing every cycle. Every call
// the daemon sends Slurm is the same, in the same order, and so is every event it notes.
TEST(DaemonNodes, DeltaListingsDecideAsFullListings) {
  using Run = RandomRun;
  auto run = [](bool full_nodes) {
    return RandomMinutes(full_nodes ? "equiv_full" : "equiv_delta", full_nodes, JobRows::kChangeLog);
  };
  const Run delta = run(false), full = run(true);
  EXPECT_EQ(delta.calls, full.calls);
  EXPECT_EQ(delta.events, full.events);
  EXPECT_EQ(delta.done, full.done);
  // The run did real work (~120 jobs submitted) on every path: power actions mirrored at once,
  // node departures and returns, and deltas a fraction of the rows of full listings.
  EXPECT_GT(delta.done, 60u);
  auto count = [](const std::vector<std::string>& v, const std::string& what) {
    return std::count_if(v.begin(), v.end(), [&](const std::string& s) { return s.find(what) != std::string::npos; });
  };
  EXPECT_GT(count(delta.calls, "power_down"), 0);
  EXPECT_GT(count(delta.events, "left the managed partitions"), 0);
  EXPECT_GT(count(delta.events, "came back with 4 GPUs"), 0);
  EXPECT_GT(count(delta.events, "up -> down"), 0);
  EXPECT_LT(delta.rows * 5, full.rows);
}

// The random run (five minutes: each listing runs the scripted squeue) through
// ExecSlurmClient::Jobs, FakeSlurm's jobs printed as squeue rows: with the rows that changed
// since the previous listing, and with every row every cycle (what it did before). Every call,
// every event and every finished job is the same; the daemon is told of a small share of the
// jobs.
TEST(DaemonJobs, ChangedSqueueRowsDecideAsFullListings) {
  const int ticks = 300;
  const RandomRun changed = RandomMinutes("jobs_changed", false, JobRows::kSqueueChanged, ticks);
  const RandomRun full = RandomMinutes("jobs_full", false, JobRows::kSqueueFull, ticks);
  EXPECT_EQ(changed.calls, full.calls);
  EXPECT_EQ(changed.events, full.events);
  EXPECT_EQ(changed.done, full.done);
  EXPECT_GT(changed.done, 30u);
  EXPECT_LT(changed.job_rows * 5, full.job_rows);
  // And as FakeSlurm's change log (the daemon tests' and the benchmark's listings).
  const RandomRun log = RandomMinutes("jobs_log", false, JobRows::kChangeLog, ticks);
  EXPECT_EQ(changed.calls, log.calls);
  EXPECT_EQ(changed.events, log.events);
}

// The same with Slurm refusing every third hold, on jobs half of which were submitted without
// --hold: a refused hold leaves the job's row unchanged, so the delta path must reconcile that
// row again by itself (relist_) to send the hold again when a full listing would.
TEST(DaemonJobs, RefusedHoldsDecideAsFullListings) {
  const int ticks = 300;
  const Faults faults{3, true};
  const RandomRun changed = RandomMinutes("refused_changed", false, JobRows::kSqueueChanged, ticks, faults);
  const RandomRun full = RandomMinutes("refused_full", false, JobRows::kSqueueFull, ticks, faults);
  EXPECT_EQ(changed.calls, full.calls);
  EXPECT_EQ(changed.events, full.events);
  EXPECT_EQ(changed.done, full.done);
  const auto refused = std::count_if(changed.calls.begin(), changed.calls.end(),
                                     [](const std::string& c) { return c.find("(refused)") != std::string::npos; });
  EXPECT_GT(refused, 5);
  EXPECT_GT(changed.done, 30u);
  EXPECT_LT(changed.job_rows * 3, full.job_rows);
}

// One refused hold, by hand: two held 8-GPU jobs fill both nodes; job 3 is submitted without
// --hold (Slurm cannot start it: no free GPU). The daemon's hold of job 3 is refused; its row
// stays "pending, released", so no delta lists it again: the next cycle sends the hold again
// from the stored row, and Slurm then lists it held.
TEST(DaemonJobs, ARefusedHoldIsSentAgainAtTheNextCycle) {
  NodeRig r("refused_hold", 2);
  r.Submit(8, 100);
  r.Submit(8, 100);
  r.Tick();
  r.Tick();
  SubmitSpec s = SleepJob(8, 30);
  s.hold = false;
  const uint32_t c = *r.slurm.Submit(s);
  ASSERT_EQ(c, 3u);
  const size_t before = r.client.calls.size();
  r.client.refuse_hold_every = 1;
  r.Tick();
  EXPECT_EQ(std::vector<std::string>(r.client.calls.begin() + before, r.client.calls.end()),
            (std::vector<std::string>{"hold 3 (refused)"}));
  EXPECT_FALSE(r.slurm.job(c).held);
  r.client.refuse_hold_every = 0;
  r.Tick();
  EXPECT_EQ(std::vector<std::string>(r.client.calls.begin() + before, r.client.calls.end()),
            (std::vector<std::string>{"hold 3 (refused)", "hold 3"}));
  EXPECT_TRUE(r.slurm.job(c).held);
  r.Tick();  // held now: nothing more to send
  EXPECT_EQ(r.client.calls.size(), before + 2);
}

// A change the delta listings never show (FakeSlurm leaves it out of its change log) is read
// by the rolling resync within its period. full_resync_cycles = 4: cycle c re-reads the jobs
// with id % 4 == c % 4 and the node rows of slice c % 4.
TEST(DaemonJobs, AChangeTheDeltasMissedIsReadWithinTheResyncPeriod) {
  NodeRig r("missed", 2, false, "", JobRows::kChangeLog, 4);
  const uint32_t a = r.Submit(8, 4);  // job 1: slice 1
  r.Tick();                           // cycle 1 (t = 1001): listed, decided, released
  r.Tick();                           // cycle 2 (t = 1002): Slurm started it at 1002; it ends at 1006
  ASSERT_EQ(r.slurm.job(a).state, SlurmJobState::kRunning);
  ASSERT_TRUE(r.daemon->JobView(a).has_value());
  const std::string idle = r.slurm.job(a).nodes.at(0) == "node1" ? "node2" : "node1";
  r.slurm.set_lose_changes(true);  // its end and the idle node going down are never logged
  r.slurm.SetNodeDown(idle, true);
  int64_t seen_done = 0, seen_down = 0;
  for (int64_t cycle = 3; cycle <= 10; ++cycle) {
    r.Tick();
    if (seen_done == 0 && !r.daemon->JobView(a)) seen_done = cycle;
    if (seen_down == 0 && r.daemon->GetHealth().nodes_up == 1) seen_down = cycle;
  }
  ASSERT_EQ(r.slurm.job(a).state, SlurmJobState::kFinished);
  // Job 1 ended at cycle 6 (t = 1006); slice 1 is swept at cycles 5 and 9: the daemon sees the
  // end at cycle 9, three cycles late, and within the period of 4.
  EXPECT_EQ(seen_done, 9);
  // The node went down before cycle 3; its slice is swept once in any 4 cycles.
  EXPECT_EQ(seen_down, 3 + static_cast<int64_t>((NodeSlice(idle, 4) + 1) % 4));
}

// The rolling resync of ExecSlurmClient: an unchanged listing answers no row without a sweep,
// and the rows of the swept slice with one (jobs 11 and 13 are slice 1 of 2, 12 slice 0).
TEST(ExecJobChanges, ASweepAnswersItsSliceWhateverTheBytes) {
  ScriptedTool squeue("squeue");
  ExecSlurmClient c(ExecSlurmOptions{squeue.dir(), "", 5000});
  const SlurmJob a = AJob(11, "PENDING", "JobHeldAdmin"), b = AJob(12, "PENDING", "JobHeldAdmin"),
                 d = AJob(13, "PENDING", "JobHeldAdmin");
  squeue.Set(Text({SqueueRow(a), SqueueRow(b), SqueueRow(d)}));
  auto first = c.Jobs({"gpu"}, 0, Sweep{1, 2});
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(first->full);
  EXPECT_FALSE(first->swept.any());  // a full listing has every row: no slice to speak of
  auto quiet = c.Jobs({"gpu"}, first->cursor);
  ASSERT_TRUE(quiet.ok());
  EXPECT_TRUE(quiet->jobs.empty());
  auto swept = c.Jobs({"gpu"}, quiet->cursor, Sweep{1, 2});
  ASSERT_TRUE(swept.ok());
  EXPECT_FALSE(swept->full);
  EXPECT_EQ(Ids(*swept), (std::vector<uint32_t>{11, 13}));
  EXPECT_EQ(swept->swept.slice, 1u);
  SlurmJob b2 = b;
  b2.reason = "None";
  b2.held = false;
  squeue.Set(Text({SqueueRow(a), SqueueRow(b2)}));  // 12 released, 13 gone
  auto changed = c.Jobs({"gpu"}, swept->cursor, Sweep{0, 2});
  ASSERT_TRUE(changed.ok());
  EXPECT_EQ(Ids(*changed), (std::vector<uint32_t>{12}));  // changed, and slice 0's only row
  EXPECT_EQ(changed->gone, std::vector<uint32_t>{13});
}

}  // namespace
}  // namespace orrery::live
