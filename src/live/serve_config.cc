#include "live/serve_config.h"

#include <algorithm>

#include "base/io.h"
#include "config/toml_util.h"
#include "live/live_policy.h"
#include "llm/client.h"
#include "sched/plugins/ces.h"
#include "sched/plugins/placers.h"
#include "sched/plugins/recovery.h"

namespace orrery::live {

namespace {

using TV = toml_util::Value;
using Ctx = toml_util::Locator;
using toml_util::Find;

std::string Label(const std::string& key, const std::string& where) { return "'" + key + "' in " + where; }

Status OnlyKeys(const Ctx& c, const TV& tbl, const std::string& where, const std::vector<std::string>& allowed) {
  return toml_util::CheckKeys(c, tbl, where, allowed, toml_util::Locate::kValue);
}

Status ReadString(const Ctx& c, const TV& tbl, const std::string& key, const std::string& where, std::string* out) {
  ORR_ASSIGN_OR_RETURN(auto v, toml_util::GetString(c, tbl, key, Label(key, where)));
  if (v) *out = std::move(*v);
  return Status::Ok();
}

Status ReadInt(const Ctx& c, const TV& tbl, const std::string& key, const std::string& where, int64_t lo, int64_t hi,
              int64_t* out) {
  ORR_ASSIGN_OR_RETURN(auto v, toml_util::GetInt(c, tbl, key, Label(key, where), lo, hi, toml_util::IntWording::kRange));
  if (v) *out = *v;
  return Status::Ok();
}

Status ReadBool(const Ctx& c, const TV& tbl, const std::string& key, const std::string& where, bool* out) {
  ORR_ASSIGN_OR_RETURN(auto v, toml_util::GetBool(c, tbl, key, Label(key, where)));
  if (v) *out = *v;
  return Status::Ok();
}

Result<const TV*> Table(const Ctx& c, const TV& root, const std::string& key) { return toml_util::GetTable(c, root, key); }

Status ParseSlurm(const Ctx& c, const TV& slurm, ServeConfig* cfg) {
  ORR_RETURN_IF_ERROR(OnlyKeys(c, slurm, "[slurm]", {"partitions", "bin_dir", "slurm_conf", "timeout_ms"}));
  const TV* parts = Find(slurm, "partitions");
  if (!parts) return c.At(slurm, "missing key 'partitions' in [slurm]: the partitions Orrery manages");
  if (!parts->is_array() || parts->as_array().empty())
    return c.At(*parts, "'partitions' in [slurm]: expected a non-empty array of partition names");
  std::vector<std::string>& names = cfg->daemon.partitions;
  for (const TV& p : parts->as_array()) {
    if (!p.is_string() || p.as_string().str.empty())
      return c.At(p, "'partitions' in [slurm]: expected partition names (strings)");
    if (std::find(names.begin(), names.end(), p.as_string().str) != names.end())
      return c.At(p, "'partitions' in [slurm]: partition '" + p.as_string().str + "' listed twice");
    names.push_back(p.as_string().str);
  }
  ORR_RETURN_IF_ERROR(ReadString(c, slurm, "bin_dir", "[slurm]", &cfg->slurm.bin_dir));
  ORR_RETURN_IF_ERROR(ReadString(c, slurm, "slurm_conf", "[slurm]", &cfg->slurm.slurm_conf));
  int64_t timeout = cfg->slurm.timeout_ms;
  ORR_RETURN_IF_ERROR(ReadInt(c, slurm, "timeout_ms", "[slurm]", 100, 600000, &timeout));
  cfg->slurm.timeout_ms = static_cast<int>(timeout);
  return Status::Ok();
}

Status ParsePolicy(const Ctx& c, const TV& policy, DaemonOptions* d) {
  ORR_RETURN_IF_ERROR(OnlyKeys(c, policy, "[policy]", {"spec", "placer", "seed", "default_duration_s", "energy", "gpu_type"}));
  ORR_RETURN_IF_ERROR(ReadString(c, policy, "spec", "[policy]", &d->policy));
  ORR_RETURN_IF_ERROR(ReadString(c, policy, "gpu_type", "[policy]", &d->gpu_type));
  ORR_RETURN_IF_ERROR(ReadString(c, policy, "placer", "[policy]", &d->placer));
  int64_t seed = static_cast<int64_t>(d->seed), dd = d->default_duration;
  ORR_RETURN_IF_ERROR(ReadInt(c, policy, "seed", "[policy]", 0, INT64_MAX, &seed));
  ORR_RETURN_IF_ERROR(ReadInt(c, policy, "default_duration_s", "[policy]", 1, 365LL * 86400, &dd));
  d->seed = static_cast<uint64_t>(seed);
  d->default_duration = dd;
  auto where = [&](const char* k) -> const TV& { return Find(policy, k) ? *Find(policy, k) : policy; };
  // The daemon's own check (live_policy.h), located here.
  if (Status s = CheckLivePolicy(d->policy, d->seed, d->signals.advisor, d->gpu_type); !s.ok())
    return c.At(where("spec"), "'spec' in [policy]: " + s.error().message);
  auto pl = MakePlacer(d->placer, d->seed);
  if (!pl.ok()) return c.At(where("placer"), "'placer' in [policy]: " + pl.error().message);
  // Energy policy: the same spec and factory as `orrery simulate --energy`.
  ORR_RETURN_IF_ERROR(ReadString(c, policy, "energy", "[policy]", &d->energy));
  if (!Find(policy, "energy")) return Status::Ok();
  if (d->energy.empty())
    return c.At(where("energy"), "'energy' in [policy]: expected an energy policy spec (ces[:key=value,...])");
  auto e = MakePowerPlugin(d->energy, d->seed, 0);
  if (!e.ok()) return c.At(where("energy"), "'energy' in [policy]: " + e.error().message);
  return Status::Ok();
}

Status ParseSignals(const Ctx& c, const TV& sig, SignalsOptions* o) {
  ORR_RETURN_IF_ERROR(OnlyKeys(c, sig, "[signals]",
                               {"advisor", "tracker", "read_interval_s", "max_bytes_per_job", "max_bytes_per_cycle",
                                "lookups_per_cycle", "llm_questions_per_cycle"}));
  ORR_RETURN_IF_ERROR(ReadBool(c, sig, "advisor", "[signals]", &o->advisor));
  ORR_RETURN_IF_ERROR(ReadBool(c, sig, "tracker", "[signals]", &o->tracker));
  int64_t interval = o->read_interval_s, per_job = static_cast<int64_t>(o->max_bytes_per_job),
          per_cycle = static_cast<int64_t>(o->max_bytes_per_cycle), lookups = o->lookups_per_cycle,
          questions = o->llm_questions_per_cycle;
  ORR_RETURN_IF_ERROR(ReadInt(c, sig, "read_interval_s", "[signals]", 0, 86400, &interval));
  ORR_RETURN_IF_ERROR(ReadInt(c, sig, "max_bytes_per_job", "[signals]", 256, 64LL << 20, &per_job));
  ORR_RETURN_IF_ERROR(ReadInt(c, sig, "max_bytes_per_cycle", "[signals]", 256, 1LL << 30, &per_cycle));
  ORR_RETURN_IF_ERROR(ReadInt(c, sig, "lookups_per_cycle", "[signals]", 1, 100000, &lookups));
  ORR_RETURN_IF_ERROR(ReadInt(c, sig, "llm_questions_per_cycle", "[signals]", 0, 1000, &questions));
  if (per_cycle < per_job)
    return c.At(*Find(sig, "max_bytes_per_cycle"), "'max_bytes_per_cycle' in [signals]: expected at least max_bytes_per_job (" +
                                                       std::to_string(per_job) + "), got " + std::to_string(per_cycle));
  o->read_interval_s = interval;
  o->max_bytes_per_job = static_cast<size_t>(per_job);
  o->max_bytes_per_cycle = static_cast<size_t>(per_cycle);
  o->lookups_per_cycle = static_cast<uint32_t>(lookups);
  o->llm_questions_per_cycle = static_cast<uint32_t>(questions);
  return Status::Ok();
}

Status ParseDaemon(const Ctx& c, const TV& daemon, ServeConfig* cfg) {
  ORR_RETURN_IF_ERROR(OnlyKeys(c, daemon, "[daemon]", {"journal", "journal_fsync", "interval_ms", "hold_unheld", "full_resync_cycles"}));
  ORR_RETURN_IF_ERROR(ReadString(c, daemon, "journal", "[daemon]", &cfg->journal));
  ORR_RETURN_IF_ERROR(ReadBool(c, daemon, "journal_fsync", "[daemon]", &cfg->journal_fsync));
  ORR_RETURN_IF_ERROR(ReadBool(c, daemon, "hold_unheld", "[daemon]", &cfg->daemon.hold_unheld));
  int64_t iv = cfg->interval_ms;
  ORR_RETURN_IF_ERROR(ReadInt(c, daemon, "interval_ms", "[daemon]", 10, 3600000, &iv));
  cfg->interval_ms = static_cast<int>(iv);
  int64_t resync = cfg->daemon.full_resync_cycles;
  ORR_RETURN_IF_ERROR(ReadInt(c, daemon, "full_resync_cycles", "[daemon]", 0, 1000000, &resync));
  cfg->daemon.full_resync_cycles = static_cast<int>(resync);
  return Status::Ok();
}

Status ParseRecovery(const Ctx& c, const TV& rec, RecoveryOptions* r) {
  ORR_RETURN_IF_ERROR(OnlyKeys(c, rec, "[recovery]",
                               {"policy", "hang_after_s", "max_drains_per_hour", "max_restarts", "log_tail_kib"}));
  ORR_RETURN_IF_ERROR(ReadString(c, rec, "policy", "[recovery]", &r->policy));
  if (auto p = MakeRecovery(r->policy); !p.ok())
    return c.At(Find(rec, "policy") ? *Find(rec, "policy") : rec, "'policy' in [recovery]: " + p.error().message);
  int64_t hang = r->hang_after, drains = r->max_drains_per_hour, restarts = r->max_restarts;
  int64_t tail = static_cast<int64_t>(r->log_tail_bytes / 1024);
  ORR_RETURN_IF_ERROR(ReadInt(c, rec, "hang_after_s", "[recovery]", 0, 30LL * 86400, &hang));
  ORR_RETURN_IF_ERROR(ReadInt(c, rec, "max_drains_per_hour", "[recovery]", 0, 100000, &drains));
  ORR_RETURN_IF_ERROR(ReadInt(c, rec, "max_restarts", "[recovery]", 0, 1000, &restarts));
  ORR_RETURN_IF_ERROR(ReadInt(c, rec, "log_tail_kib", "[recovery]", 1, 65536, &tail));
  r->hang_after = hang;
  r->max_drains_per_hour = static_cast<int>(drains);
  r->max_restarts = static_cast<int>(restarts);
  r->log_tail_bytes = static_cast<size_t>(tail) * 1024;
  return Status::Ok();
}

Status ReadTokenFile(const Ctx& c, const TV& http, ServeConfig* cfg) {
  std::string token_file;
  ORR_RETURN_IF_ERROR(ReadString(c, http, "token_file", "[http]", &token_file));
  if (token_file.empty()) return Status::Ok();
  const TV& at = *Find(http, "token_file");
  if (!cfg->token.empty()) return c.At(at, "[http]: give either 'token' or 'token_file', not both");
  auto t = ReadFile(token_file);
  if (!t.ok()) return c.At(at, "'token_file' in [http]: " + t.error().message);
  cfg->token = *t;
  while (!cfg->token.empty() && (cfg->token.back() == '\n' || cfg->token.back() == '\r' || cfg->token.back() == ' '))
    cfg->token.pop_back();
  return Status::Ok();
}

Status ParseHttp(const Ctx& c, const TV& http, ServeConfig* cfg) {
  ORR_RETURN_IF_ERROR(OnlyKeys(c, http, "[http]", {"listen", "port", "token", "token_file"}));
  ORR_RETURN_IF_ERROR(ReadString(c, http, "listen", "[http]", &cfg->listen));
  int64_t port = cfg->port;
  ORR_RETURN_IF_ERROR(ReadInt(c, http, "port", "[http]", 0, 65535, &port));
  cfg->port = static_cast<int>(port);
  ORR_RETURN_IF_ERROR(ReadString(c, http, "token", "[http]", &cfg->token));
  ORR_RETURN_IF_ERROR(ReadTokenFile(c, http, cfg));
  if (!cfg->token.empty() && cfg->token.size() < 16)
    return c.At(Find(http, "token") ? *Find(http, "token") : http, "[http]: the token must have at least 16 characters");
  return Status::Ok();
}

}  // namespace

Result<ServeConfig> ParseServeConfig(const std::string& text, const std::string& file) {
  Ctx c{file};
  ORR_ASSIGN_OR_RETURN(TV root, toml_util::Parse(c, text));
  ServeConfig cfg;
  ORR_RETURN_IF_ERROR(
      OnlyKeys(c, root, "the top-level table", {"slurm", "policy", "daemon", "http", "signals", "llm", "recovery"}));
  ORR_ASSIGN_OR_RETURN(const TV* slurm, Table(c, root, "slurm"));
  if (!slurm) return MakeError(file + ":1:1: missing table [slurm] (at least: partitions = [\"...\"])");
  ORR_RETURN_IF_ERROR(ParseSlurm(c, *slurm, &cfg));
  ORR_ASSIGN_OR_RETURN(const TV* signals, Table(c, root, "signals"));  // before [policy]: the advisor decides its estimator
  if (signals) ORR_RETURN_IF_ERROR(ParseSignals(c, *signals, &cfg.daemon.signals));
  if (Find(root, "llm")) {  // the LLM backend's own table and reader (docs/formats/llm-config.md)
    ORR_ASSIGN_OR_RETURN(cfg.daemon.signals.llm, llm::ParseLlmConfig(text, file));
  }
  ORR_ASSIGN_OR_RETURN(const TV* policy, Table(c, root, "policy"));
  if (policy) ORR_RETURN_IF_ERROR(ParsePolicy(c, *policy, &cfg.daemon));
  if (!policy && cfg.daemon.signals.advisor)
    return c.At(*Find(*signals, "advisor"), "'advisor' in [signals]: the default policy 'fifo' reads no duration estimate; "
                                            "set [policy] spec with estimator=semantic (e.g. srtf:estimator=semantic)");
  ORR_ASSIGN_OR_RETURN(const TV* daemon, Table(c, root, "daemon"));
  if (daemon) ORR_RETURN_IF_ERROR(ParseDaemon(c, *daemon, &cfg));
  ORR_ASSIGN_OR_RETURN(const TV* recovery, Table(c, root, "recovery"));
  if (recovery) ORR_RETURN_IF_ERROR(ParseRecovery(c, *recovery, &cfg.daemon.recovery));
  ORR_ASSIGN_OR_RETURN(const TV* http, Table(c, root, "http"));
  if (http) ORR_RETURN_IF_ERROR(ParseHttp(c, *http, &cfg));
  return cfg;
}

Result<ServeConfig> LoadServeConfig(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return text.error();
  return ParseServeConfig(*text, path);
}

}  // namespace orrery::live
