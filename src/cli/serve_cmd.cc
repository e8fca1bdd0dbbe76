// `orrery serve --config FILE`: the live daemon (docs/live.md). Observes Slurm, runs the
// configured policy through the same Scheduler as `orrery simulate`, applies decisions with
// scontrol, journals them (SQLite WAL), and serves the HTTP API on 127.0.0.1 by default.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <thread>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/live_runtime.h"
#include "live/daemon.h"
#include "live/http_api.h"
#include "live/journal.h"
#include "live/serve_config.h"

namespace orrery::cli {

namespace {


int RunServe(const std::string& config_path, int64_t max_cycles, bool verbose) {
  auto cfg = live::LoadServeConfig(config_path);
  if (!cfg.ok()) {
    fmt::print(stderr, "orrery serve: {}\n", cfg.error().message);
    return cfg.error().exit_code;
  }
  auto journal = live::Journal::Open(cfg->journal, cfg->journal_fsync);
  if (!journal.ok()) {
    fmt::print(stderr, "orrery serve: {}\n", journal.error().message);
    return kExitBadInput;
  }
  live::ExecSlurmClient slurm(cfg->slurm);
  // Fail fast when the Slurm tools are not there at all; an unreachable controller is
  // retried (slurmctld restarts must not stop the daemon).
  {
    auto probe = slurm.Nodes(cfg->daemon.partitions);
    if (!probe.ok() && probe.error().code == ErrorCode::kNoTool) {
      fmt::print(stderr, "orrery serve: {} (set [slurm] bin_dir or PATH)\n", probe.error().message);
      return kExitBadInput;
    }
    if (!probe.ok()) fmt::print(stderr, "orrery serve: warning: {} (retrying)\n", probe.error().message);
    else if (probe->empty())
      fmt::print(stderr, "orrery serve: warning: Slurm reports no node in partition(s) {}\n",
                 fmt::join(cfg->daemon.partitions, ","));
  }
  WallClock clock;
  live::Daemon daemon(&slurm, journal->get(), &clock, cfg->daemon);
  if (Status st = daemon.Recover(); !st.ok()) {
    fmt::print(stderr, "orrery serve: {}\n", st.error().message);
    return st.error().exit_code;
  }
  live::HttpApi api(&daemon, cfg->token);
  if (cfg->port > 0) {
    if (Status st = api.Start(cfg->listen, cfg->port); !st.ok()) {
      fmt::print(stderr, "orrery serve: {}\n", st.error().message);
      return kExitBadInput;
    }
  }
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  fmt::print("orrery serve: managing partition(s) {} with policy {}{} (journal {}{})\n",
             fmt::join(cfg->daemon.partitions, ","), cfg->daemon.policy,
             cfg->daemon.energy.empty() ? std::string() : ", energy " + cfg->daemon.energy, cfg->journal,
             cfg->port > 0 ? fmt::format(", http://{}:{}", cfg->listen, api.port()) : std::string());
  std::fflush(stdout);
  std::string last_err;
  int64_t n = 0;
  while (!g_stop.load() && (max_cycles <= 0 || n < max_cycles)) {
    auto t0 = std::chrono::steady_clock::now();
    auto st = daemon.Cycle();
    ++n;
    if (!st.ok()) {
      if (st.error().message != last_err) fmt::print(stderr, "orrery serve: cycle failed: {}\n", st.error().message);
      last_err = st.error().message;
    } else {
      if (!last_err.empty()) fmt::print(stderr, "orrery serve: recovered\n");
      last_err.clear();
      if (verbose && (st->starts || st->requeues || st->apply_errors))
        fmt::print("cycle {}: {} start(s), {} requeue(s), {} apply error(s), {} pending, {} running, {:.2f} ms\n",
                   st->cycle, st->starts, st->requeues, st->apply_errors, st->pending, st->running, st->total_ms);
    }
    std::fflush(stdout);
    auto next = t0 + std::chrono::milliseconds(cfg->interval_ms);
    while (!g_stop.load() && std::chrono::steady_clock::now() < next)
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(cfg->interval_ms, 50)));
  }
  api.Stop();
  fmt::print("orrery serve: stopped after {} cycle(s); journal {} kept\n", n, cfg->journal);
  return kExitOk;
}

}  // namespace

void RegisterServe(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("serve", "Steer a Slurm cluster with an Orrery policy (live mode; docs/live.md)");
  SetExamples(cmd, {}, {"./build/orrery serve --config /etc/orrery/serve.toml -v"});
  auto config = std::make_shared<std::string>();
  auto cycles = std::make_shared<int64_t>(0);
  auto verbose = std::make_shared<bool>(false);
  cmd->add_option("--config", *config, "serve config (TOML, docs/formats/serve-config.md)")->required();
  cmd->add_option("--cycles", *cycles, "stop after N cycles (0 = run until SIGTERM/SIGINT)");
  cmd->add_flag("-v,--verbose", *verbose, "print a line per cycle that made decisions");
  cmd->callback([=] { *exit_code = RunServe(*config, *cycles, *verbose); });
}

}  // namespace orrery::cli
