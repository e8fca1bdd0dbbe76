// The sweep spec reader (docs/formats/sweep.md) and the grid's expansion into cells.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>

#include "base/io.h"
#include "base/parse.h"
#include "base/rng.h"
#include "config/toml_util.h"
#include "sweep/sweep.h"

namespace orrery::sweep {

namespace {

namespace tu = toml_util;

// A non-empty array at `key` whose elements `elem` reads; absent -> `fallback`.
template <class T, class F>
Result<std::vector<T>> SweepList(const tu::Locator& loc, const tu::Value& tbl, const std::string& key,
                                 const std::string& what, std::vector<T> fallback, F elem) {
  const tu::Value* v = tu::Find(tbl, key);
  if (v == nullptr) return fallback;
  if (!v->is_array() || v->as_array().empty())
    return loc.AtKey(*v, key, "'" + key + "': expected a non-empty array of " + what + ", got " +
                                   (v->is_array() ? std::string("an empty array") : tu::Got(*v)));
  std::vector<T> out;
  for (const tu::Value& e : v->as_array()) {
    std::optional<T> x = elem(e);
    if (!x) return loc.At(e, "'" + key + "': expected " + what + ", got " + tu::Got(e));
    // A value listed twice would be one cell twice (the same id and folder).
    if (std::find(out.begin(), out.end(), *x) != out.end())
      return loc.At(e, "'" + key + "': expected distinct values, got " + tu::Got(e) + " twice");
    out.push_back(*x);
  }
  return out;
}

std::optional<std::string> SweepString(const tu::Value& e) {
  if (!e.is_string()) return std::nullopt;
  return e.as_string().str;
}

std::optional<uint64_t> SweepSeed(const tu::Value& e) {
  if (!e.is_integer() || e.as_integer() < 0) return std::nullopt;
  return static_cast<uint64_t>(e.as_integer());
}

std::optional<double> SweepLoad(const tu::Value& e) {
  double x = e.is_integer() ? static_cast<double>(e.as_integer()) : e.is_floating() ? e.as_floating() : -1;
  if (!(x > 0 && x <= 1000)) return std::nullopt;
  return x;
}

// A relative path is read from the spec's folder.
std::string SweepResolve(const std::string& file, const std::string& p) {
  if (p.empty() || std::filesystem::path(p).is_absolute()) return p;
  const std::filesystem::path base = std::filesystem::path(file).parent_path();
  return base.empty() ? p : (base / p).lexically_normal().string();
}

Status ReadSweepWorkload(const tu::Locator& loc, const tu::Value& root, SweepSpec* s) {
  ORR_ASSIGN_OR_RETURN(auto trace, tu::GetString(loc, root, "trace", "'trace'"));
  ORR_ASSIGN_OR_RETURN(const tu::Value* gen, tu::GetTable(loc, root, "generate"));
  if (trace.has_value() == (gen != nullptr))
    return MakeError(loc.Pos(1, 1) + ": expected exactly one of 'trace' (a file) and [generate], got " +
                     (gen ? "both" : "neither"));
  if (trace) {
    if (trace->empty()) return loc.AtKey(*tu::Find(root, "trace"), "trace", "'trace': expected a path, got \"\"");
    s->workload.trace = SweepResolve(loc.file(), *trace);
    return Status::Ok();
  }
  ORR_RETURN_IF_ERROR(tu::CheckKeys(loc, *gen, "[generate]", {"preset", "jobs", "days"}));
  ORR_ASSIGN_OR_RETURN(auto preset, tu::GetName(loc, *gen, "preset", "'preset' in [generate]"));
  if (!preset) return loc.At(*gen, "[generate]: expected a 'preset' (e.g. helios-venus), got none");
  s->workload.preset = *preset;
  ORR_ASSIGN_OR_RETURN(auto jobs, tu::GetInt(loc, *gen, "jobs", "'jobs' in [generate]", 1, 100'000'000));
  if (jobs) s->workload.jobs = static_cast<uint64_t>(*jobs);
  if (const tu::Value* d = tu::Find(*gen, "days")) {
    std::optional<double> days = SweepLoad(*d);  // (0, 1000]
    if (!days) return loc.AtKey(*d, "days", "'days' in [generate]: expected a number of days in (0, 1000], got " + tu::Got(*d));
    s->workload.days = *days;
  }
  return Status::Ok();
}

// "1", "0.5", "2.25": the shortest of %g's forms that reads back.
std::string SweepNumber(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.10g", x);
  return b;
}

std::string SweepSlug(const std::string& s, size_t max) {
  std::string out;
  for (char c : s) {
    if (out.size() >= max) break;
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') out.push_back(c);
    else if (!out.empty() && out.back() != '_') out.push_back('_');
  }
  return out;
}

std::optional<std::string> SweepJobCount(const tu::Value& e) {
  if (!e.is_integer() || e.as_integer() < 1 || e.as_integer() > 100'000'000) return std::nullopt;
  return std::to_string(e.as_integer());
}

std::optional<std::string> SweepDays(const tu::Value& e) {
  std::optional<double> d = SweepLoad(e);  // (0, 1000]
  if (!d) return std::nullopt;
  return SweepNumber(*d);
}

// One workload axis of [options] (kWorkloadAxes): its values as canonical text, each checked
// against the spec's preset as `simulate --generate` would apply it.
Status ReadSweepWorkloadAxis(const tu::Locator& loc, const tu::Value& opt, const std::string& key, SweepSpec* s) {
  const tu::Value* v = tu::Find(opt, key);
  if (v == nullptr) return Status::Ok();
  const std::string where = "'" + key + "' in [options]";
  if (!s->workload.trace.empty())
    return loc.AtKey(*v, key, where + ": expected no workload option for a trace file (it is replayed as recorded), got a list");
  if ((key == "jobs" && s->workload.jobs) || (key == "days" && s->workload.days > 0))
    return loc.AtKey(*v, key, where + ": expected " + key + " in one place, got [generate] " + key + " too");
  const bool numeric = key == "jobs" || key == "days";
  const std::string what = key == "jobs"   ? "job counts from 1 to 100,000,000"
                           : key == "days" ? "numbers of days in (0, 1000]"
                                           : "model names (strings)";
  ORR_ASSIGN_OR_RETURN(std::vector<std::string> values,
                       SweepList<std::string>(loc, opt, key, what, {},
                                              key == "jobs" ? SweepJobCount : key == "days" ? SweepDays : SweepString));
  Result<workload::WorkloadSpec> preset = workload::GetPreset(s->workload.preset);
  if (!preset.ok()) return loc.AtKey(*v, key, where + ": " + preset.error().message);
  for (size_t i = 0; i < values.size() && !numeric; ++i) {
    workload::WorkloadSpec gen = *preset;
    if (Status st = ApplyWorkloadAxis(key, values[i], &gen); !st.ok())
      return loc.At(v->as_array()[i], where + ": " + st.error().message);
  }
  s->workload_axes.emplace_back(key, std::move(values));
  return Status::Ok();
}

Status ReadSweepOptions(const tu::Locator& loc, const tu::Value& root, SweepSpec* s) {
  ORR_ASSIGN_OR_RETURN(const tu::Value* opt, tu::GetTable(loc, root, "options"));
  if (opt == nullptr) return Status::Ok();
  std::vector<std::string> known = {"load", "placer"};
  known.insert(known.end(), kWorkloadAxes.begin(), kWorkloadAxes.end());
  ORR_RETURN_IF_ERROR(tu::CheckKeys(loc, *opt, "[options]", known));
  ORR_ASSIGN_OR_RETURN(s->loads, SweepList<double>(loc, *opt, "load", "arrival-rate multipliers in (0, 1000]",
                                                   s->loads, SweepLoad));
  ORR_ASSIGN_OR_RETURN(s->placers, SweepList<std::string>(loc, *opt, "placer", "placer names (strings)", s->placers,
                                                          SweepString));
  if (s->loads != std::vector<double>{0} && !s->workload.trace.empty())
    return loc.AtKey(*tu::Find(*opt, "load"), "load",
                     "'load' in [options]: expected no load for a trace file (it is replayed as recorded), got a list");
  for (const std::string& key : kWorkloadAxes) ORR_RETURN_IF_ERROR(ReadSweepWorkloadAxis(loc, *opt, key, s));
  return Status::Ok();
}

}  // namespace

const std::vector<std::string> kWorkloadAxes = {"jobs", "days", "arrivals", "batches", "long_runs", "long_run_sizes"};

Status ApplyWorkloadAxis(const std::string& key, const std::string& value, workload::WorkloadSpec* gen) {
  int64_t n = 0;
  double d = 0;
  if (key == "jobs") {
    if (!ParseI64(value, &n) || n < 1 || n > 100'000'000)
      return MakeError("jobs: expected a job count from 1 to 100,000,000, got \"" + value + "\"");
    gen->jobs = static_cast<uint64_t>(n);
  } else if (key == "days") {
    if (!ParseF64(value, &d) || !(d > 0 && d <= 1000))
      return MakeError("days: expected a number of days in (0, 1000], got \"" + value + "\"");
    gen->days = d;
  } else if (key == "arrivals") {
    ORR_ASSIGN_OR_RETURN(gen->arrivals, workload::ParseArrivalModel(value));
  } else if (key == "batches") {
    ORR_ASSIGN_OR_RETURN(gen->batches, workload::ParseBatchModel(value));
  } else if (key == "long_runs") {
    ORR_ASSIGN_OR_RETURN(gen->long_runs, workload::ParseLongRunArrivals(value));
  } else if (key == "long_run_sizes") {
    ORR_ASSIGN_OR_RETURN(workload::LongRunSizes z, workload::ParseLongRunSizes(value));
    ORR_ASSIGN_OR_RETURN(*gen, workload::WithLongRunSizes(*gen, z));
  } else {
    return MakeError("workload option: expected one of " + tu::JoinKeys(kWorkloadAxes) + ", got '" + key + "'");
  }
  return Status::Ok();
}

Result<SweepSpec> ParseSweepSpec(const std::string& text, const std::string& file) {
  const tu::Locator loc(file);
  ORR_ASSIGN_OR_RETURN(tu::Value root, tu::Parse(loc, text));
  ORR_RETURN_IF_ERROR(
      tu::CheckKeys(loc, root, "the sweep spec", {"trace", "generate", "policies", "seeds", "clusters", "options", "retries"}));
  SweepSpec s;
  s.loads = {0};
  s.placers = {"consolidate"};
  s.clusters = {""};
  ORR_RETURN_IF_ERROR(ReadSweepWorkload(loc, root, &s));
  ORR_ASSIGN_OR_RETURN(s.policies, SweepList<std::string>(loc, root, "policies", "policy specs (strings)", {}, SweepString));
  if (s.policies.empty()) return MakeError(loc.Pos(1, 1) + ": expected 'policies' (a list of policy specs), got none");
  ORR_ASSIGN_OR_RETURN(s.seeds, SweepList<uint64_t>(loc, root, "seeds", "non-negative integers", {1}, SweepSeed));
  ORR_ASSIGN_OR_RETURN(s.clusters, SweepList<std::string>(loc, root, "clusters", "cluster TOML paths (strings)", s.clusters,
                                                          SweepString));
  for (std::string& c : s.clusters) c = SweepResolve(file, c);
  ORR_RETURN_IF_ERROR(ReadSweepOptions(loc, root, &s));
  ORR_ASSIGN_OR_RETURN(auto retries, tu::GetInt(loc, root, "retries", "'retries'", 0, 100));
  if (retries) s.retries = static_cast<uint32_t>(*retries);
  return s;
}

Result<SweepSpec> LoadSweepSpec(const std::string& path) {
  ORR_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseSweepSpec(text, path);
}

namespace {

// Every combination of the workload axes' values, first axis slowest; one empty combination
// when the spec lists none.
std::vector<std::vector<std::pair<std::string, std::string>>> SweepWorkloadCombos(const SweepSpec& spec) {
  std::vector<std::vector<std::pair<std::string, std::string>>> combos = {{}};
  for (const auto& [key, values] : spec.workload_axes) {
    std::vector<std::vector<std::pair<std::string, std::string>>> next;
    for (const auto& c : combos)
      for (const std::string& v : values) {
        next.push_back(c);
        next.back().emplace_back(key, v);
      }
    combos = std::move(next);
  }
  return combos;
}

}  // namespace

std::vector<Cell> ExpandGrid(const SweepSpec& spec) {
  std::vector<Cell> cells;
  const auto combos = SweepWorkloadCombos(spec);
  for (const std::string& cluster : spec.clusters)
    for (double load : spec.loads)
      for (const auto& combo : combos)
        for (const std::string& placer : spec.placers)
          for (const std::string& policy : spec.policies)
            for (uint64_t seed : spec.seeds) {
              Cell c{policy, cluster, placer, seed, load, combo, "", "", "", ""};
              c.group = "policy=" + policy + "\ncluster=" + cluster + "\nplacer=" + placer + "\nload=" + SweepNumber(load);
              // Workload axes join the key only when given, so a spec without them keeps its ids.
              for (const auto& [k, v] : combo) {
                c.group += "\n" + k + "=" + v;
                c.workload_text += (c.workload_text.empty() ? "" : " ") + k + "=" + v;
              }
              c.key = c.group + "\nseed=" + std::to_string(seed);
              char hex[20];
              std::snprintf(hex, sizeof hex, "%016" PRIx64, Fnv1a64(c.key));
              c.id = SweepSlug(policy, 24) + "-s" + std::to_string(seed) + "-" + hex;
              cells.push_back(std::move(c));
            }
  return cells;
}

}  // namespace orrery::sweep
