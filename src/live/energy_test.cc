// Energy policies driven by the live daemon (docs/live.md#energy), against FakeSlurm with
// power states (idle% -> idle~ after the power delay, idle# -> idle after the boot delay).
// Every expectation below is computed by hand from the CES rules (ces.h) and the timings.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <functional>

#include "live/daemon.h"
#include "live/crashing_slurm_testing.h"
#include "live/fake_slurm.h"
#include "live/sleep_job_testing.h"
#include "live/journal.h"
#include "live/serve_config.h"

namespace orrery::live {
namespace {

std::string TempDb(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("orrery_energy_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto p = dir / name;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(p.string() + suffix);
  return p.string();
}

// CES with a 10 s period, one warm-up step, one spare node, a 20 s per-node keep-alive, no
// min-spare rule and no keep window; forecaster "last" (predicts the last bin).
constexpr const char* kCes =
    "ces:period=10,history=1,buffer=1,buffer_frac=0,min_spare=0,keep=0,de_thr=1,idle=20,forecaster=last";


struct EnergyRig {
  SimClock clock{1000};
  FakeSlurm slurm{&clock};
  CrashingSlurm client{&slurm};
  std::unique_ptr<Journal> journal;
  std::unique_ptr<Daemon> daemon;
  DaemonOptions opts;
  std::string path;

  EnergyRig(const std::string& name, int nodes, const std::string& energy = kCes) {
    path = TempDb(name + ".db");
    for (int i = 1; i <= nodes; ++i) slurm.AddNode("node" + std::to_string(i), 8, "gpu");
    slurm.set_power_delay(3);  // powering down and booting take 3 s
    opts.partitions = {"gpu"};
    opts.policy = "fifo";
    opts.energy = energy;
    Start();
  }
  void Start() {
    daemon.reset();
    journal.reset();
    auto opened = Journal::Open(path, false);
    ASSERT_TRUE(opened.ok());
    journal = std::move(*opened);
    daemon = std::make_unique<Daemon>(&client, journal.get(), &clock, opts);
    ASSERT_TRUE(daemon->Recover().ok());
  }
  uint32_t Submit(uint32_t gpus, Duration d) {
    return *slurm.Submit(SleepJob(gpus, d));
  }
  // One second: Slurm moves, then the daemon cycles.
  void Tick() {
    clock.Set(clock.Now() + 1);
    slurm.Advance();
    auto st = daemon->Cycle();
    ASSERT_TRUE(st.ok()) << st.error().message;
  }
  void TickUntil(Time t) {
    while (clock.Now() < t) Tick();
  }
  std::vector<JournalDecision> Power() {
    std::vector<JournalDecision> out;
    auto all = journal->All();
    EXPECT_TRUE(all.ok());
    if (all.ok())
      for (const auto& d : *all)
        if (d.kind == DecisionKind::kPowerUp || d.kind == DecisionKind::kPowerDown) out.push_back(d);
    return out;
  }
  NodeAvail avail(const std::string& n) const { return slurm.node(n).avail; }
};

// First cycle at 1001: the first control step is due at 1011, then every 10 s. All nodes are
// idle from 1001. 1011 (warm-up): target = used 0 + buffer 1 = 1 of 4, but no node has been
// idle for 20 s (10 s) -> nothing. 1021: demand fell by 0 >= his_thr 0, forecast 0, no keep
// window, nothing pending: target = min(4, 0 + 1) = 1, 4 - 1 >= de_thr -> power down the
// three highest-numbered idle nodes, idle for 20 s >= 20: node4, node3, node2.
TEST(LiveEnergy, IdleNodesPastKeepAliveArePoweredDown) {
  EnergyRig r("keepalive", 4);
  r.TickUntil(1020);
  EXPECT_TRUE(r.Power().empty());
  r.Tick();  // 1021
  auto p = r.Power();
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].key, "power-down/node4/1");
  EXPECT_EQ(p[1].key, "power-down/node3/2");
  EXPECT_EQ(p[2].key, "power-down/node2/3");
  for (const auto& d : p) {
    EXPECT_EQ(d.state, DecisionState::kApplied);
    EXPECT_EQ(d.time, 1021);
    EXPECT_EQ(d.detail, "ces");
  }
  r.TickUntil(1030);
  EXPECT_EQ(r.avail("node1"), NodeAvail::kUp);
  for (const char* n : {"node2", "node3", "node4"}) {
    EXPECT_EQ(r.avail(n), NodeAvail::kPoweredDown) << n;
    EXPECT_EQ(r.slurm.node(n).state_raw, "idle~") << n;
    EXPECT_EQ(r.slurm.power_calls(n).downs, 1u) << n;
  }
  auto h = r.daemon->GetHealth();
  EXPECT_EQ(h.nodes_powered_down, 3u);
  EXPECT_EQ(h.nodes_up, 1u);
  std::string m = r.daemon->MetricsText();
  EXPECT_NE(m.find("orrery_nodes_powered 1\n"), std::string::npos) << m;
  EXPECT_NE(m.find("orrery_power_decisions_total{source=\"policy\",kind=\"power-down\"} 3"), std::string::npos);
  // Steady state: one node on (the buffer), nothing more to do for a minute.
  r.TickUntil(1090);
  EXPECT_EQ(r.Power().size(), 3u);
}

// From the state above (node1 on and idle; node2-4 off), three 8-GPU jobs arrive. In the next
// cycle the first starts on node1; two 8-GPU jobs wait with no idle powered node and nothing
// booting: need = ceil(16 GPUs / 8) = 2 -> wake node2 and node3 (lowest-named), not node4.
// They boot for 3 s, the jobs start there, all three complete. (node4 is woken later by the
// policy's own step, not by demand.)
TEST(LiveEnergy, DemandWakesTheRightNumberOfNodes) {
  EnergyRig r("demand", 4);
  r.TickUntil(1030);
  ASSERT_EQ(r.avail("node4"), NodeAvail::kPoweredDown);
  uint32_t a = r.Submit(8, 30), b = r.Submit(8, 30), c = r.Submit(8, 30);
  r.Tick();  // 1031: a on node1; wake node2, node3
  auto p = r.Power();
  ASSERT_EQ(p.size(), 5u);
  EXPECT_EQ(p[3].key, "power-up/node2/4");
  EXPECT_EQ(p[4].key, "power-up/node3/5");
  EXPECT_EQ(p[3].detail, "demand");
  EXPECT_EQ(r.avail("node2"), NodeAvail::kPoweringUp);
  EXPECT_EQ(r.avail("node4"), NodeAvail::kPoweredDown);
  // While they boot the queue says why the jobs wait.
  bool boot_why = false;
  for (const auto& e : r.daemon->Queue(10))
    boot_why |= e.state == JobState::kQueued && e.why.find("waits for powered-down node(s) to boot: node2,node3") == 0;
  EXPECT_TRUE(boot_why);
  r.TickUntil(1080);
  for (uint32_t j : {a, b, c}) {
    EXPECT_EQ(r.slurm.counters(j).completions, 1u) << j;
    EXPECT_EQ(r.slurm.counters(j).starts, 1u) << j;
  }
  EXPECT_EQ(r.slurm.job(a).nodes, std::vector<std::string>{"node1"});
  EXPECT_EQ(r.slurm.power_calls("node2").ups, 1u);
  EXPECT_EQ(r.slurm.power_calls("node3").ups, 1u);
  // The control step of 1041 sees the two demand wake-ups ("Lack") and the peak of 3 busy
  // nodes: increase to max(active 3, 3 + buffer 1) = 4 -> the policy powers node4 up.
  p = r.Power();
  ASSERT_GE(p.size(), 6u);
  EXPECT_EQ(p[5].key, "power-up/node4/6");
  EXPECT_EQ(p[5].detail, "ces");
  EXPECT_EQ(p[5].time, 1041);
  EXPECT_EQ(r.slurm.power_calls("node4").ups, 1u);
  std::string m = r.daemon->MetricsText();
  EXPECT_NE(m.find("orrery_power_decisions_total{source=\"demand\",kind=\"power-up\"} 2"), std::string::npos) << m;
}

// A plugin that asks to power down every powered node at every step: the daemon must drop
// the requests for nodes with a running job or a job a start decision just pinned there.
class PowerEverythingDown final : public PowerPlugin {
 public:
  std::string_view name() const override { return "all-down"; }
  Duration period() const override { return 10; }
  void Decide(const PowerSnapshot& s, std::vector<PowerDecision>* out) override {
    for (size_t n = 0; n < s.nodes.size(); ++n) {
      busy_seen.push_back(s.nodes[n].busy);
      if (s.nodes[n].state == PowerState::kOn) out->push_back({PowerDecision::kPowerDown, NodeId(static_cast<uint32_t>(n))});
    }
  }
  std::vector<bool> busy_seen;
};

// Timeline: a (8 GPUs, 100 s) submitted before the first cycle starts at 1001 on node1; b
// submitted at 1011 is first seen, held, at 1011 and started (pinned to node2, not running
// yet) in the very cycle of the first control step. Both nodes have work: both requests are
// dropped, none reaches Slurm.
TEST(LiveEnergy, BusyAndJustPinnedNodesAreNeverPoweredDown) {
  PowerEverythingDown* plugin = nullptr;
  SimClock clock(1000);
  FakeSlurm slurm(&clock);
  slurm.AddNode("node1", 8, "gpu");
  slurm.AddNode("node2", 8, "gpu");
  auto journal = Journal::Open(TempDb("busy.db"), false);
  ASSERT_TRUE(journal.ok());
  DaemonOptions opts;
  opts.partitions = {"gpu"};
  opts.energy = "test";
  opts.power_factory = [&]() {
    auto p = std::make_unique<PowerEverythingDown>();
    plugin = p.get();
    return std::unique_ptr<PowerPlugin>(std::move(p));
  };
  Daemon d(&slurm, journal->get(), &clock, opts);
  ASSERT_TRUE(d.Recover().ok());
  SubmitSpec s;
  s.partition = "gpu";
  s.gpus_per_node = 8;
  s.sleep_s = 100;
  uint32_t a = *slurm.Submit(s);
  for (Time t = 1001; t <= 1011; ++t) {
    clock.Set(t);
    if (t == 1011) {  // b: first listed (held) in this cycle, started in it
      s.sleep_s = 5;
      ASSERT_TRUE(slurm.Submit(s).ok());
    }
    slurm.Advance();
    ASSERT_TRUE(d.Cycle().ok());
  }
  ASSERT_NE(plugin, nullptr);
  ASSERT_EQ(plugin->busy_seen.size(), 2u);
  EXPECT_TRUE(plugin->busy_seen[0]);
  EXPECT_TRUE(plugin->busy_seen[1]);
  EXPECT_EQ(slurm.job(a).nodes, std::vector<std::string>{"node1"});
  EXPECT_EQ(slurm.power_calls("node1").downs, 0u);
  EXPECT_EQ(slurm.power_calls("node2").downs, 0u);
  EXPECT_NE(d.MetricsText().find("orrery_power_refused_total 2"), std::string::npos);
  // b runs 5 s: at the step of 1021 node2 is idle again and is powered down; node1 is not.
  for (Time t = 1012; t <= 1021; ++t) {
    clock.Set(t);
    slurm.Advance();
    ASSERT_TRUE(d.Cycle().ok());
  }
  EXPECT_EQ(slurm.power_calls("node1").downs, 0u);
  EXPECT_EQ(slurm.power_calls("node2").downs, 1u);
}

// The daemon dies in the control step of 1021 (see the first test): the power-down of node4
// reached Slurm, the daemon never learnt it; node3 and node2 were planned, not sent. After the
// restart: node4's decision is confirmed from what Slurm shows (no second POWER_DOWN),
// node3's and node2's are sent once. No decision stays planned, none is applied twice.
TEST(LiveEnergy, RestartBetweenPlanAndApplyDoesNotDuplicate) {
  EnergyRig r("restart", 4);
  r.TickUntil(1020);
  r.client.budget = 0;
  r.clock.Set(1021);
  r.slurm.Advance();
  auto st = r.daemon->Cycle();
  ASSERT_TRUE(st.ok());
  ASSERT_TRUE(r.client.crashed);
  EXPECT_EQ(r.slurm.power_calls("node4").downs, 1u);
  EXPECT_EQ(r.slurm.power_calls("node3").downs, 0u);
  r.client.crashed = false;
  r.client.budget = 1 << 30;
  r.Start();  // a new process on the same journal
  r.TickUntil(1040);
  for (const char* n : {"node2", "node3", "node4"}) {
    EXPECT_EQ(r.slurm.power_calls(n).downs, 1u) << n;
    EXPECT_EQ(r.avail(n), NodeAvail::kPoweredDown) << n;
  }
  auto p = r.Power();
  ASSERT_EQ(p.size(), 3u);
  for (const auto& d : p) EXPECT_EQ(d.state, DecisionState::kApplied) << d.key;
  EXPECT_NE(p[0].detail.find("confirmed: Slurm shows node4"), std::string::npos) << p[0].detail;
  EXPECT_EQ(r.slurm.power_calls("node1").downs, 0u);
}

// Slurm wins: a node powered down (or up) by Slurm itself or an operator is observed, not
// fought. node2 powered down in Slurm at 1005: the daemon takes it out of placement and issues
// no power-up while nothing waits; a job that needs it makes the daemon wake it (demand).
// node3 powered up by someone else is adopted as booting, then schedulable.
TEST(LiveEnergy, SlurmSideChangesAreAdopted) {
  // buffer 0, per-node keep-alive 1 h: the controller itself powers nothing down here.
  EnergyRig r("adopt", 3, "ces:period=10,history=1,buffer=0,buffer_frac=0,min_spare=0,keep=0,idle=3600,forecaster=last");
  r.TickUntil(1004);
  ASSERT_TRUE(r.slurm.PowerDown("node2").ok());
  ASSERT_TRUE(r.slurm.PowerDown("node3").ok());
  r.TickUntil(1040);
  EXPECT_TRUE(r.Power().empty());
  EXPECT_EQ(r.avail("node2"), NodeAvail::kPoweredDown);
  EXPECT_EQ(r.daemon->GetHealth().nodes_powered_down, 2u);
  ASSERT_TRUE(r.slurm.PowerUp("node3").ok());  // someone else powers node3 up
  r.Tick();
  EXPECT_EQ(r.daemon->GetHealth().nodes_booting, 1u);
  r.TickUntil(1046);
  EXPECT_EQ(r.avail("node3"), NodeAvail::kUp);
  // Two 8-GPU jobs: node1 and node3 are on and idle -> they run there, node2 stays off.
  uint32_t a = r.Submit(8, 5), b = r.Submit(8, 5);
  r.TickUntil(1060);
  EXPECT_EQ(r.slurm.counters(a).completions, 1u);
  EXPECT_EQ(r.slurm.counters(b).completions, 1u);
  EXPECT_EQ(r.slurm.power_calls("node2").ups, 0u);
  EXPECT_EQ(r.slurm.power_calls("node3").ups, 1u);  // the outside one
  EXPECT_TRUE(r.Power().empty());
  // Three jobs: one more than the powered nodes -> exactly node2 is woken.
  uint32_t c = r.Submit(8, 5), d = r.Submit(8, 5), e = r.Submit(8, 5);
  r.TickUntil(1080);
  for (uint32_t j : {c, d, e}) EXPECT_EQ(r.slurm.counters(j).completions, 1u) << j;
  auto p = r.Power();
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].key, "power-up/node2/1");
  EXPECT_EQ(p[0].detail, "demand");
}

// A wake-up that fails (the node goes down after ResumeTimeout) is reported in the events,
// /health and /metrics; the node leaves the model and the queue runs on what is left.
TEST(LiveEnergy, FailedResumeIsReportedAndWorkGoesOn) {
  EnergyRig r("failresume", 2, "ces:period=10,history=1,buffer=0,buffer_frac=0,min_spare=0,keep=0,idle=3600,forecaster=last");
  r.TickUntil(1002);
  ASSERT_TRUE(r.slurm.PowerDown("node2").ok());
  r.slurm.set_fail_resume("node2", true);
  r.TickUntil(1010);
  uint32_t a = r.Submit(8, 10), b = r.Submit(8, 5);
  r.Tick();  // 1011: a on node1, node2 woken for b
  ASSERT_EQ(r.Power().size(), 1u);
  r.TickUntil(1040);
  EXPECT_EQ(r.avail("node2"), NodeAvail::kDown);
  auto h = r.daemon->GetHealth();
  EXPECT_EQ(h.failed_resumes, 1u);
  bool noted = false;
  for (const auto& ev : h.events) noted |= ev.find("failed resume: node2") != std::string::npos;
  EXPECT_TRUE(noted);
  EXPECT_NE(r.daemon->MetricsText().find("orrery_failed_resumes_total 1"), std::string::npos);
  EXPECT_EQ(r.slurm.counters(a).completions, 1u);
  EXPECT_EQ(r.slurm.counters(b).completions, 1u);
  EXPECT_EQ(r.slurm.job(b).nodes, std::vector<std::string>{"node1"});
  EXPECT_EQ(r.slurm.power_calls("node2").ups, 1u);  // a down node is not woken again
}

// Slurm 22.05 requeues a job whose batch launch failed on a just-resumed node as held, with
// this reason: the daemon must see it held (else it waits forever for a start that never comes).
TEST(LiveEnergy, LaunchFailedRequeuedHeldIsHeld) {
  auto r = ParseSqueue("2\x1fPENDING\x1fgpu\x1froot\x1f" "1\x1fgres:gpu:8\x1fUNLIMITED\x1f" "2026-11-30T21:14:29\x1f"
                       "N/A\x1fN/A\x1flaunch failed requeued held\x1f\x1forrery\x1forrery:duration=3\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 1u);
  EXPECT_TRUE((*r)[0].held);
}

TEST(LiveEnergy, ServeConfigEnergyKey) {
  auto ok = ParseServeConfig("[slurm]\npartitions = [\"gpu\"]\n[policy]\nenergy = \"ces:period=5,idle=30\"\n", "s.toml");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->daemon.energy, "ces:period=5,idle=30");
  auto bad = ParseServeConfig("[slurm]\npartitions = [\"gpu\"]\n[policy]\nenergy = \"ces:bogus=1\"\n", "s.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.rfind("s.toml:4:10: 'energy' in [policy]: energy policy 'ces:bogus=1': unknown parameter 'bogus'", 0), 0u)
      << bad.error().message;
  auto type = ParseServeConfig("[slurm]\npartitions = [\"gpu\"]\n[policy]\nenergy = 3\n", "s.toml");
  ASSERT_FALSE(type.ok());
  EXPECT_EQ(type.error().message, "s.toml:4:10: 'energy' in [policy]: expected a string");
  auto empty = ParseServeConfig("[slurm]\npartitions = [\"gpu\"]\n[policy]\nenergy = \"\"\n", "s.toml");
  ASSERT_FALSE(empty.ok());
  auto none = ParseServeConfig("[slurm]\npartitions = [\"gpu\"]\n", "s.toml");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->daemon.energy, "");
}

}  // namespace
}  // namespace orrery::live
