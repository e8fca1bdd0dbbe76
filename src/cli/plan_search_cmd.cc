// `orrery plan search`: Sailor-style plan search over a GPU pool with Sailor's published
// per-layer profiles (docs/design/planner.md, "Search").
#include <chrono>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "cli/commands.h"
#include "plan/model_names.h"
#include "plan/registry.h"
#include "plan/sailor.h"
#include "plan/search.h"

namespace orrery::cli {

namespace {

struct SearchArgs {
  std::string model = "gpt-neo-2.7b";
  std::string pool;
  int global_batch = 0;
  std::string objective = "throughput";
  double max_cost = 0;
  double min_throughput = 0;
  bool exhaustive = false;
  bool json = false;
};

struct PoolSpec {
  std::string gpu;
  int count = 0;
  std::string zone;
};

// "sailor:A100-40=128,V100-16=384" or with zones "sailor:A100-40=64@us-central1-a,V100-16=384@us-west1-b"
Result<std::vector<PoolSpec>> ParsePool(const std::string& text) {
  const std::string prefix = "sailor:";
  if (text.rfind(prefix, 0) != 0) {
    return MakeError("search: --pool must read sailor:TYPE=COUNT[,TYPE=COUNT...] (Sailor's profiles), got \"" + text + "\"");
  }
  std::vector<PoolSpec> out;
  std::stringstream ss(text.substr(prefix.size()));
  std::string item;
  while (std::getline(ss, item, ',')) {
    const size_t at = item.find('@');
    const std::string zone = at == std::string::npos ? "" : item.substr(at + 1);
    item = item.substr(0, at);
    const size_t eq = item.find('=');
    int count = 0;
    try {
      count = eq == std::string::npos ? 0 : std::stoi(item.substr(eq + 1));
    } catch (...) {
      count = 0;
    }
    if (eq == std::string::npos || count <= 0) {
      return MakeError("search: pool entry \"" + item + "\" must read TYPE=COUNT[@ZONE] with COUNT > 0");
    }
    out.push_back({item.substr(0, eq), count, zone});
  }
  if (out.empty()) return MakeError("search: empty --pool");
  return out;
}

int RunSearch(const SearchArgs& a) {
  const std::string dir = plan::DefaultProfilePaths().shared_dir + "/sailor-profiles";
  Result<std::vector<PoolSpec>> pool = ParsePool(a.pool);
  if (!pool.ok()) return Fail("plan", pool.error());
  Result<const plan::ModelName*> name = plan::ResolveModel(a.model, plan::ModelUse::kSailor);
  if (!name.ok()) return Fail("plan", name.error().With("--model"));
  const std::string profile((*name)->sailor), canonical((*name)->canonical);
  Result<plan::SailorModel> model = plan::LoadSailorModel(dir, profile);
  if (!model.ok()) return Fail("plan", model.error());
  std::vector<plan::SailorGpu> gpus;
  for (const PoolSpec& p : *pool) {
    Result<plan::SailorGpu> g = plan::LoadSailorGpu(dir, profile, p.gpu);
    if (!g.ok()) return Fail("plan", MakeError("unknown GPU type '" + p.gpu + "' for " + canonical + " in Sailor's profiles (" + g.error().message + ")"));
    gpus.push_back(std::move(*g));
  }
  plan::SearchRequest r;
  r.model = &*model;
  r.global_batch = a.global_batch > 0 ? a.global_batch : model->global_batch;
  plan::ZoneNetwork zones;
  bool zoned = false;
  for (const PoolSpec& p : *pool) zoned = zoned || !p.zone.empty();
  if (zoned) {
    Result<plan::ZoneNetwork> z = plan::LoadZoneNetwork(dir);
    if (!z.ok()) return Fail("plan", z.error());
    zones = std::move(*z);
    r.zones = &zones;
  }
  for (size_t i = 0; i < gpus.size(); ++i) r.pool.push_back({&gpus[i], (*pool)[i].count, (*pool)[i].zone});
  if (a.objective == "cost") r.objective = plan::Objective::kCost;
  else if (a.objective != "throughput") return Fail("plan", MakeError("search: --objective must be throughput or cost, got \"" + a.objective + "\""));
  if (a.max_cost > 0) r.max_cost_per_iter = a.max_cost;
  r.min_iters_per_s = a.min_throughput;
  r.exhaustive = a.exhaustive;
  const auto t0 = std::chrono::steady_clock::now();
  Result<plan::SearchResult> res = plan::SearchPlans(r);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!res.ok()) return Fail("plan", res.error());
  const plan::PlanCandidate& b = res->best;
  nlohmann::json stages = nlohmann::json::array();
  for (const plan::StagePlan& s : b.stages) {
    stages.push_back({{"gpu", gpus[s.gpu_index].name}, {"zone", r.pool[s.gpu_index].zone}, {"tp", s.tp}, {"layers", {s.layer_begin, s.layer_end}},
                      {"peak_gib", s.peak_bytes / double(1ull << 30)}});
  }
  nlohmann::json j = {{"model", canonical}, {"global_batch", r.global_batch}, {"pp", b.pp}, {"dp", b.dp},
                      {"micro_batch", b.micro_batch}, {"num_micro", b.num_micro}, {"iter_s", b.iter_s},
                      {"iters_per_s", 1.0 / b.iter_s}, {"cost_per_iter", b.cost_per_iter}, {"gpus_used", b.gpus},
                      {"stages", stages}, {"evaluated", res->evaluated}, {"search_s", secs}};
  if (a.json) {
    std::printf("%s\n", DumpJson(j, 2).c_str());
  } else {
    std::printf("best plan: pp=%d dp=%d micro-batch=%d (%d micro-batches), %d GPUs\n", b.pp, b.dp, b.micro_batch,
                b.num_micro, b.gpus);
    for (size_t i = 0; i < b.stages.size(); ++i) {
      const plan::StagePlan& s = b.stages[i];
      std::printf("  stage %zu: %s tp=%d layers [%d,%d) peak %.1f GiB\n", i, gpus[s.gpu_index].name.c_str(), s.tp,
                  s.layer_begin, s.layer_end, s.peak_bytes / double(1ull << 30));
    }
    std::printf("iteration %.3f s (%.3f it/s), %.3f $/iter; %lld plans evaluated in %.3f s\n", b.iter_s,
                1.0 / b.iter_s, b.cost_per_iter, static_cast<long long>(res->evaluated), secs);
  }
  return kExitOk;
}

}  // namespace

void RegisterPlanSearch(CLI::App& plan, int* exit_code) {
  auto a = std::make_shared<SearchArgs>();
  CLI::App* c = plan.add_subcommand("search", "search parallel plans over a GPU pool (Sailor's profiles)");
  SetExamples(c, {"./build/orrery plan search --model opt-350m --pool sailor:A100-40=16,V100-16=32"});
  c->add_option("--model", a->model,
                "a model with a Sailor profile: " + plan::CanonicalModelList(plan::ModelUse::kSailor) + " (default gpt-neo-2.7b)");
  c->add_option("--pool", a->pool, "sailor:TYPE=COUNT[@ZONE][,TYPE=COUNT[@ZONE]...]")->required();
  c->add_option("--global-batch", a->global_batch, "sequences per iteration (default: Sailor's training config)");
  c->add_option("--objective", a->objective, "throughput | cost");
  c->add_option("--max-cost", a->max_cost, "budget: at most this many $ per iteration");
  c->add_option("--min-throughput", a->min_throughput, "at least this many iterations per second");
  c->add_flag("--exhaustive", a->exhaustive, "turn the heuristics off (every TP and DP degree)");
  c->add_flag("--json", a->json, "JSON output");
  c->callback([a, exit_code] { *exit_code = RunSearch(*a); });
}

}  // namespace orrery::cli
