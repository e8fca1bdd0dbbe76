// `orrery serve --config FILE`: strict TOML (docs/formats/serve-config.md). Unknown keys,
// wrong types and out-of-range values are errors located as file:line:col.
#pragma once

#include <string>

#include "base/result.h"
#include "live/daemon.h"
#include "live/slurm_client.h"

namespace orrery::live {

struct ServeConfig {
  ExecSlurmOptions slurm;
  DaemonOptions daemon;
  std::string journal = "orrery-journal.db";
  bool journal_fsync = true;
  int interval_ms = 1000;
  std::string listen = "127.0.0.1";
  int port = 8642;  // 0 = no HTTP API
  std::string token;  // required by mutating endpoints; empty = they are refused
};

Result<ServeConfig> ParseServeConfig(const std::string& text, const std::string& file);
Result<ServeConfig> LoadServeConfig(const std::string& path);

}  // namespace orrery::live
