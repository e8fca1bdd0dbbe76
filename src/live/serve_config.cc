#include "live/serve_config.h"

#include <algorithm>
#include <sstream>
#include <toml.hpp>

#include "base/io.h"
#include "sched/plugins/ces.h"
#include "sched/plugins/placers.h"
#include "sched/plugins/policies.h"

namespace orrery::live {

namespace {

using TV = toml::value;

struct Ctx {
  std::string file;
  Error At(const TV& v, const std::string& msg) const {
    auto loc = v.location();
    return MakeError(file + ":" + std::to_string(loc.line()) + ":" + std::to_string(loc.column()) + ": " + msg);
  }
};

const TV* Find(const TV& tbl, const std::string& key) {
  const auto& t = tbl.as_table();
  auto it = t.find(key);
  return it == t.end() ? nullptr : &it->second;
}

Status CheckKeys(const Ctx& c, const TV& tbl, const std::string& where, const std::vector<std::string>& allowed) {
  for (const auto& [k, v] : tbl.as_table())
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return c.At(v, "unknown key '" + k + "' in " + where + ": expected one of " + list);
    }
  return Status::Ok();
}

Status GetString(const Ctx& c, const TV& tbl, const std::string& key, const std::string& where, std::string* out) {
  const TV* v = Find(tbl, key);
  if (!v) return Status::Ok();
  if (!v->is_string()) return c.At(*v, "'" + key + "' in " + where + ": expected a string");
  *out = v->as_string().str;
  return Status::Ok();
}

Status GetInt(const Ctx& c, const TV& tbl, const std::string& key, const std::string& where, int64_t lo, int64_t hi,
              int64_t* out) {
  const TV* v = Find(tbl, key);
  if (!v) return Status::Ok();
  if (!v->is_integer()) return c.At(*v, "'" + key + "' in " + where + ": expected an integer");
  int64_t x = v->as_integer();
  if (x < lo || x > hi)
    return c.At(*v, "'" + key + "' in " + where + ": expected " + std::to_string(lo) + ".." + std::to_string(hi) +
                        ", got " + std::to_string(x));
  *out = x;
  return Status::Ok();
}

Status GetBool(const Ctx& c, const TV& tbl, const std::string& key, const std::string& where, bool* out) {
  const TV* v = Find(tbl, key);
  if (!v) return Status::Ok();
  if (!v->is_boolean()) return c.At(*v, "'" + key + "' in " + where + ": expected true or false");
  *out = v->as_boolean();
  return Status::Ok();
}

Result<const TV*> Table(const Ctx& c, const TV& root, const std::string& key) {
  const TV* v = Find(root, key);
  if (!v) return static_cast<const TV*>(nullptr);
  if (!v->is_table()) return c.At(*v, "'" + key + "': expected a table [" + key + "]");
  return v;
}

}  // namespace

Result<ServeConfig> ParseServeConfig(const std::string& text, const std::string& file) {
  Ctx c{file};
  if (text.find('\0') != std::string::npos) return MakeError(file + ":1:1: NUL byte in the config");
  TV root;
  try {
    std::istringstream in(text);
    root = toml::parse(in, file);
  } catch (const toml::exception& e) {
    auto loc = e.location();
    std::string what = e.what();
    what = what.substr(0, what.find('\n'));
    return MakeError(file + ":" + std::to_string(loc.line()) + ":" + std::to_string(loc.column()) +
                     ": TOML syntax error: " + what);
  } catch (const std::exception& e) {
    return MakeError(file + ": TOML syntax error: " + std::string(e.what()).substr(0, 200));
  }
  ServeConfig cfg;
  ORR_RETURN_IF_ERROR(CheckKeys(c, root, "the top-level table", {"slurm", "policy", "daemon", "http"}));

  ORR_ASSIGN_OR_RETURN(const TV* slurm, Table(c, root, "slurm"));
  if (!slurm) return MakeError(file + ":1:1: missing table [slurm] (at least: partitions = [\"...\"])");
  ORR_RETURN_IF_ERROR(CheckKeys(c, *slurm, "[slurm]", {"partitions", "bin_dir", "slurm_conf", "timeout_ms"}));
  const TV* parts = Find(*slurm, "partitions");
  if (!parts) return c.At(*slurm, "missing key 'partitions' in [slurm]: the partitions Orrery manages");
  if (!parts->is_array() || parts->as_array().empty())
    return c.At(*parts, "'partitions' in [slurm]: expected a non-empty array of partition names");
  for (const TV& p : parts->as_array()) {
    if (!p.is_string() || p.as_string().str.empty())
      return c.At(p, "'partitions' in [slurm]: expected partition names (strings)");
    if (std::find(cfg.daemon.partitions.begin(), cfg.daemon.partitions.end(), p.as_string().str) !=
        cfg.daemon.partitions.end())
      return c.At(p, "'partitions' in [slurm]: partition '" + p.as_string().str + "' listed twice");
    cfg.daemon.partitions.push_back(p.as_string().str);
  }
  ORR_RETURN_IF_ERROR(GetString(c, *slurm, "bin_dir", "[slurm]", &cfg.slurm.bin_dir));
  ORR_RETURN_IF_ERROR(GetString(c, *slurm, "slurm_conf", "[slurm]", &cfg.slurm.slurm_conf));
  int64_t timeout = cfg.slurm.timeout_ms;
  ORR_RETURN_IF_ERROR(GetInt(c, *slurm, "timeout_ms", "[slurm]", 100, 600000, &timeout));
  cfg.slurm.timeout_ms = static_cast<int>(timeout);

  ORR_ASSIGN_OR_RETURN(const TV* policy, Table(c, root, "policy"));
  if (policy) {
    ORR_RETURN_IF_ERROR(CheckKeys(c, *policy, "[policy]", {"spec", "placer", "seed", "default_duration_s", "energy"}));
    ORR_RETURN_IF_ERROR(GetString(c, *policy, "spec", "[policy]", &cfg.daemon.policy));
    ORR_RETURN_IF_ERROR(GetString(c, *policy, "placer", "[policy]", &cfg.daemon.placer));
    int64_t seed = static_cast<int64_t>(cfg.daemon.seed), dd = cfg.daemon.default_duration;
    ORR_RETURN_IF_ERROR(GetInt(c, *policy, "seed", "[policy]", 0, INT64_MAX, &seed));
    ORR_RETURN_IF_ERROR(GetInt(c, *policy, "default_duration_s", "[policy]", 1, 365LL * 86400, &dd));
    cfg.daemon.seed = static_cast<uint64_t>(seed);
    cfg.daemon.default_duration = dd;
    auto p = MakePolicy(cfg.daemon.policy, cfg.daemon.seed, nullptr);
    auto where = [&](const char* k) -> const TV& { return Find(*policy, k) ? *Find(*policy, k) : *policy; };
    if (!p.ok()) return c.At(where("spec"), "'spec' in [policy]: " + p.error().message);
    if (p->share)  // pinning a job to a share of a GPU is not expressible with ReqNodeList/--gres=gpu
      return c.At(where("spec"), "'spec' in [policy]: GPU-sharing policies (" + cfg.daemon.policy +
                                     ") are not supported by orrery serve yet");
    auto pl = MakePlacer(cfg.daemon.placer, cfg.daemon.seed);
    if (!pl.ok()) return c.At(where("placer"), "'placer' in [policy]: " + pl.error().message);
    // Energy policy: the same spec and factory as `orrery simulate --energy`.
    ORR_RETURN_IF_ERROR(GetString(c, *policy, "energy", "[policy]", &cfg.daemon.energy));
    if (Find(*policy, "energy")) {
      if (cfg.daemon.energy.empty())
        return c.At(where("energy"), "'energy' in [policy]: expected an energy policy spec (ces[:key=value,...])");
      auto e = MakePowerPlugin(cfg.daemon.energy, cfg.daemon.seed, 0);
      if (!e.ok()) return c.At(where("energy"), "'energy' in [policy]: " + e.error().message);
    }
  }

  ORR_ASSIGN_OR_RETURN(const TV* daemon, Table(c, root, "daemon"));
  if (daemon) {
    ORR_RETURN_IF_ERROR(CheckKeys(c, *daemon, "[daemon]", {"journal", "journal_fsync", "interval_ms", "hold_unheld"}));
    ORR_RETURN_IF_ERROR(GetString(c, *daemon, "journal", "[daemon]", &cfg.journal));
    ORR_RETURN_IF_ERROR(GetBool(c, *daemon, "journal_fsync", "[daemon]", &cfg.journal_fsync));
    ORR_RETURN_IF_ERROR(GetBool(c, *daemon, "hold_unheld", "[daemon]", &cfg.daemon.hold_unheld));
    int64_t iv = cfg.interval_ms;
    ORR_RETURN_IF_ERROR(GetInt(c, *daemon, "interval_ms", "[daemon]", 10, 3600000, &iv));
    cfg.interval_ms = static_cast<int>(iv);
  }

  ORR_ASSIGN_OR_RETURN(const TV* http, Table(c, root, "http"));
  if (http) {
    ORR_RETURN_IF_ERROR(CheckKeys(c, *http, "[http]", {"listen", "port", "token", "token_file"}));
    ORR_RETURN_IF_ERROR(GetString(c, *http, "listen", "[http]", &cfg.listen));
    int64_t port = cfg.port;
    ORR_RETURN_IF_ERROR(GetInt(c, *http, "port", "[http]", 0, 65535, &port));
    cfg.port = static_cast<int>(port);
    ORR_RETURN_IF_ERROR(GetString(c, *http, "token", "[http]", &cfg.token));
    std::string token_file;
    ORR_RETURN_IF_ERROR(GetString(c, *http, "token_file", "[http]", &token_file));
    if (!token_file.empty()) {
      if (!cfg.token.empty()) return c.At(*Find(*http, "token_file"), "[http]: give either 'token' or 'token_file', not both");
      auto t = ReadFile(token_file);
      if (!t.ok()) return c.At(*Find(*http, "token_file"), "'token_file' in [http]: " + t.error().message);
      cfg.token = *t;
      while (!cfg.token.empty() && (cfg.token.back() == '\n' || cfg.token.back() == '\r' || cfg.token.back() == ' '))
        cfg.token.pop_back();
    }
    if (!cfg.token.empty() && cfg.token.size() < 16)
      return c.At(Find(*http, "token") ? *Find(*http, "token") : *http, "[http]: the token must have at least 16 characters");
  }
  return cfg;
}

Result<ServeConfig> LoadServeConfig(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return text.error();
  return ParseServeConfig(*text, path);
}

}  // namespace orrery::live
