// Recovery of failed and hung jobs against a real local Slurm 22.05 (tests/slurm/harness.sh;
// live/recovery.h, docs/design/live-recovery.md). Each scenario runs `orrery serve` with a
// [recovery] table and real batch scripts that follow the restart contract (they read
// SLURM_RESTART_COUNT and behave differently on a restart):
//   (a) an NCCL watchdog timeout naming its node, exit 1 -> that node is drained
//       ("orrery: nccl_timeout"), the job requeued and completed on the other node;
//   (b) a Python ModuleNotFoundError -> not requeued, the reason in /api/v1/queue;
//   (c) a job that stops beating its heartbeat file -> detected after hang_after_s, requeued,
//       completed.
// Named *Slow*: the Release stage of CI runs them, the sanitizer stage skips them. Each
// prints what it measured (the detection latencies of docs/validation/live.md).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "slurm/live_slurm.h"

namespace orrery {
namespace {

using testing::ServeProcess;
using testing::SlurmCluster;


std::string Config(const SlurmCluster& c, int port, const std::string& recovery) {
  std::string cfg = "[slurm]\npartitions = [\"gpu\"]\nslurm_conf = \"" + c.conf() +
                    "\"\n[policy]\nspec = \"fifo\"\n[daemon]\njournal = \"" + c.dir() +
                    "/journal.db\"\ninterval_ms = 200\n[http]\nport = " + std::to_string(port) + "\ntoken = \"" +
                    testing::kTestToken + "\"\n[recovery]\n" + recovery;
  std::string path = c.dir() + "/serve.toml";
  testing::WriteFile(path, cfg);
  return path;
}

// sbatch SCRIPT held (the daemon starts it), one node, all its 8 GPUs, output in the test dir.
uint32_t SubmitScript(const SlurmCluster& c, const std::string& name, const std::string& body,
                      const std::string& comment) {
  const std::string script = c.dir() + "/" + name + ".sh";
  testing::WriteFile(script, "#!/bin/bash\n" + body);
  auto r = live::Exec({"sbatch", "--parsable", "--hold", "-J", name, "-p", "gpu", "-N", "1", "--gres=gpu:8", "-o",
                       c.dir() + "/" + name + "-%j.out", "-D", c.dir(), "--comment=" + comment, script},
                      15000, {"SLURM_CONF=" + c.conf()});
  if (!r.ok() || r->exit_code != 0) return 0;
  return static_cast<uint32_t>(std::stoul(r->out));
}

std::string Scontrol(const SlurmCluster& c, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"scontrol"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = live::Exec(argv, 15000, {"SLURM_CONF=" + c.conf()});
  return r.ok() ? r->out : "";
}

// The value of Key= in `scontrol show -o` output.
std::string Field(const std::string& text, const std::string& key) {
  size_t p = text.find(" " + key + "=");
  if (p == std::string::npos) return "";
  p += key.size() + 2;
  return text.substr(p, text.find_first_of(" \n", p) - p);
}

nlohmann::json GetJson(httplib::Client& api, const std::string& path) {
  auto r = api.Get(path);
  if (!r || r->status != 200) return nlohmann::json::array();
  return nlohmann::json::parse(r->body, nullptr, false);
}

nlohmann::json FailureOf(httplib::Client& api, uint32_t job) {
  for (const auto& f : GetJson(api, "/api/v1/failures"))
    if (f.value("job", 0u) == job) return f;
  return nullptr;
}

struct Rig {
  SlurmCluster cluster{2};
  int port = testing::FreePort();
  std::string log;
  std::unique_ptr<ServeProcess> serve;
  std::unique_ptr<httplib::Client> api;
  bool Start(const std::string& recovery) {
    if (!cluster.ok() || port <= 0) return false;
    log = cluster.dir() + "/serve.log";
    serve = std::make_unique<ServeProcess>(Config(cluster, port, recovery), log, cluster.conf());
    api = std::make_unique<httplib::Client>("127.0.0.1", port);
    return testing::WaitFor([&] { return static_cast<bool>(api->Get("/healthz")); }, 10);
  }
};

// (a) An NCCL watchdog timeout on the node the job ran on, exit 1: that node is drained with
// Slurm's Reason "orrery: nccl_timeout", the job is requeued and completes on the other node.
TEST(LiveSlurmSlow, NcclTimeoutDrainsItsNodeAndTheJobCompletesOnAnother) {
  REQUIRE_SLURM();
  Rig rig;
  ASSERT_TRUE(rig.Start("policy = \"acme\"\nmax_drains_per_hour = 2\n")) << rig.cluster.log() << testing::LogTail(rig.log);
  const uint32_t job = SubmitScript(rig.cluster, "nccl",
                                    "if [[ ${SLURM_RESTART_COUNT:-0} -eq 0 ]]; then\n"
                                    "  echo \"step 120 loss 2.31\"\n"
                                    "  echo \"$SLURMD_NODENAME:2201:2250 [0] NCCL INFO comm 0x5581 rank 0 nranks 8 cudaDev 0"
                                    " busId 1b000 - Init COMPLETE\"\n"
                                    "  echo \"[rank0]:[E ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective"
                                    " operation timeout: WorkNCCL(SeqNum=1201, OpType=ALLREDUCE, Timeout(ms)=600000) ran"
                                    " for 600324 milliseconds before timing out.\" >&2\n"
                                    "  exit 1\n"
                                    "fi\n"
                                    "echo \"resumed on $SLURMD_NODENAME, restart $SLURM_RESTART_COUNT\"\n",
                                    "orrery:duration=5");
  ASSERT_GT(job, 0u);
  std::string ran, done_on;
  ASSERT_TRUE(testing::WaitFor([&] {
    for (const auto& [id, c] : rig.cluster.Completions()) {
      if (id != job) continue;
      if (c.state == "FAILED") ran = c.nodes;
      if (c.state == "COMPLETED") done_on = c.nodes;
    }
    return !done_on.empty();
  }, 60)) << testing::LogTail(rig.log) << rig.cluster.log();
  EXPECT_FALSE(ran.empty());
  EXPECT_NE(done_on, ran);
  // The node it failed on is drained, with Orrery's reason; the other is not.
  const std::string node = Scontrol(rig.cluster, {"show", "node", "-o", ran});
  EXPECT_NE(Field(node, "State").find("DRAIN"), std::string::npos) << node;
  EXPECT_NE(node.find("Reason=orrery: nccl_timeout"), std::string::npos) << node;
  const std::string other = Scontrol(rig.cluster, {"show", "node", "-o", done_on});
  EXPECT_EQ(Field(other, "State").find("DRAIN"), std::string::npos) << other;
  EXPECT_EQ(Field(Scontrol(rig.cluster, {"show", "job", "-o", std::to_string(job)}), "Restarts"), "1");
  nlohmann::json f = FailureOf(*rig.api, job);
  ASSERT_FALSE(f.is_null()) << GetJson(*rig.api, "/api/v1/failures").dump();
  EXPECT_EQ(f["category"], "infrastructure");
  EXPECT_EQ(f["subtype"], "nccl_timeout");
  EXPECT_EQ(f["suspect_node"], ran);
  EXPECT_EQ(f["step"], "drain-requeue");
  // Measured: from the failed attempt's end (Slurm's whole seconds) to the daemon's handling.
  Time end = kNoTime;
  for (const auto& [id, c] : rig.cluster.Completions())
    if (id == job && c.state == "FAILED") end = c.end;
  std::printf("[measure] nccl: failed on %s at %lld, handled at %lld (+%lld s), completed on %s\n", ran.c_str(),
              static_cast<long long>(end), static_cast<long long>(f["time"].get<Time>()),
              static_cast<long long>(f["time"].get<Time>() - end), done_on.c_str());
  EXPECT_LE(f["time"].get<Time>() - end, 3);
  auto metrics = rig.api->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("orrery_drains_total 1\n"), std::string::npos) << metrics->body;
  EXPECT_EQ(rig.serve->Kill(SIGTERM), 0);
}

// (b) A Python ModuleNotFoundError: a script error, not requeued; the reason is in the queue.
TEST(LiveSlurmSlow, ModuleNotFoundIsNotRequeuedAndItsReasonIsInTheQueue) {
  REQUIRE_SLURM();
  Rig rig;
  ASSERT_TRUE(rig.Start("policy = \"acme\"\n")) << rig.cluster.log() << testing::LogTail(rig.log);
  const uint32_t job = SubmitScript(rig.cluster, "module",
                                    "cat >&2 <<'EOF'\n"
                                    "Traceback (most recent call last):\n"
                                    "  File \"/home/user/train.py\", line 3, in <module>\n"
                                    "    import flash_attn_v9\n"
                                    "ModuleNotFoundError: No module named 'flash_attn_v9'\n"
                                    "EOF\n"
                                    "exit 1\n",
                                    "orrery:duration=5");
  ASSERT_GT(job, 0u);
  nlohmann::json entry;
  ASSERT_TRUE(testing::WaitFor([&] {
    for (const auto& e : GetJson(*rig.api, "/api/v1/queue"))
      if (e.value("job", 0u) == job && e.value("phase", "") == "failed") entry = e;
    return !entry.is_null();
  }, 40)) << testing::LogTail(rig.log) << GetJson(*rig.api, "/api/v1/queue").dump();
  const std::string why = entry["why"];
  EXPECT_NE(why.find("script/module_not_found"), std::string::npos) << why;
  EXPECT_NE(why.find("No module named 'flash_attn_v9'"), std::string::npos) << why;
  EXPECT_NE(why.find("not retried"), std::string::npos) << why;
  EXPECT_EQ(entry["failure"]["step"], "give-up");
  // Still failed a few cycles later: never requeued, no node drained.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const std::string shown = Scontrol(rig.cluster, {"show", "job", "-o", std::to_string(job)});
  EXPECT_EQ(Field(shown, "JobState"), "FAILED") << shown;
  EXPECT_EQ(Field(shown, "Restarts"), "0") << shown;
  size_t records = 0;
  for (const auto& [id, c] : rig.cluster.Completions()) records += id == job;
  EXPECT_EQ(records, 1u);
  auto metrics = rig.api->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("orrery_drains_total 0\n"), std::string::npos) << metrics->body;
  EXPECT_NE(metrics->body.find("orrery_give_ups_total 1\n"), std::string::npos) << metrics->body;
  EXPECT_EQ(rig.serve->Kill(SIGTERM), 0);
}

// (c) A job that beats its heartbeat file (the restart contract's orrery:heartbeat=PATH) and
// then stops, still running: detected hang_after_s (6 s) after its last beat, requeued
// (Slurm kills it), and it completes when restarted.
TEST(LiveSlurmSlow, JobThatStopsBeatingIsDetectedAndRequeued) {
  REQUIRE_SLURM();
  Rig rig;
  ASSERT_TRUE(rig.Start("policy = \"acme\"\nhang_after_s = 6\n")) << rig.cluster.log() << testing::LogTail(rig.log);
  const std::string dir = rig.cluster.dir();
  const uint32_t job = SubmitScript(rig.cluster, "hang",
                                    "hb=" + dir + "/hb-$SLURM_JOB_ID\n"
                                    "for i in 1 2 3; do touch $hb; echo \"beat $i $(date +%s)\" >> " + dir +
                                        "/beats-$SLURM_JOB_ID; echo \"step $i\"; sleep 1; done\n"
                                    "if [[ ${SLURM_RESTART_COUNT:-0} -eq 0 ]]; then sleep 600; fi\n"
                                    "echo done\n",
                                    "orrery:duration=5 orrery:heartbeat=" + dir + "/hb-%j");
  ASSERT_GT(job, 0u);
  nlohmann::json f;
  ASSERT_TRUE(testing::WaitFor([&] {
    f = FailureOf(*rig.api, job);
    return !f.is_null();
  }, 40)) << testing::LogTail(rig.log);
  EXPECT_EQ(f["trigger"], "hang");
  EXPECT_EQ(f["step"], "requeue");
  // The last beat of the first run (the file is appended to by every run).
  std::ifstream beats(dir + "/beats-" + std::to_string(job));
  std::string line;
  Time last = kNoTime;
  for (int i = 0; i < 3 && std::getline(beats, line); ++i) last = std::stoll(line.substr(line.rfind(' ') + 1));
  ASSERT_NE(last, kNoTime);
  const Time latency = f["time"].get<Time>() - last;
  std::printf("[measure] hang: last beat at %lld, detected at %lld: %lld s after it (hang_after_s = 6)\n",
              static_cast<long long>(last), static_cast<long long>(f["time"].get<Time>()),
              static_cast<long long>(latency));
  EXPECT_GE(latency, 5);  // the mtime and date are whole seconds
  EXPECT_LE(latency, 8);
  ASSERT_TRUE(testing::WaitFor([&] {
    for (const auto& [id, c] : rig.cluster.Completions())
      if (id == job && c.state == "COMPLETED") return true;
    return false;
  }, 40)) << testing::LogTail(rig.log);
  const std::string restarts = Field(Scontrol(rig.cluster, {"show", "job", "-o", std::to_string(job)}), "Restarts");
  std::printf("[measure] hang: Restarts=%s\n", restarts.c_str());
  // Orrery requeues it once; Slurm's count is sometimes 2: a relaunch on the same node right
  // after the kill meets the killed run's revoked credential and Slurm requeues it itself
  // (docs/validation/live.md §X).
  EXPECT_GE(std::atoi(restarts.c_str()), 1);
  EXPECT_EQ(rig.serve->Kill(SIGTERM), 0);
}

}  // namespace
}  // namespace orrery
