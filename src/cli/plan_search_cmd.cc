// `orrery plan search`: Sailor-style plan search over a GPU pool with Sailor's published
// per-layer profiles (docs/design/planner.md, "Search").
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "cli/commands.h"
#include "plan/model_names.h"
#include "plan/registry.h"
#include "plan/sailor_search.h"

namespace orrery::cli {

namespace {

struct SearchArgs {
  plan::SailorSearchArgs search;
  bool json = false;
};

int RunSearch(const SearchArgs& a) {
  const std::string dir = plan::DefaultProfilePaths().shared_dir + "/sailor-profiles";
  Result<nlohmann::ordered_json> res = plan::SearchSailorPool(a.search, dir);
  if (!res.ok()) return Fail("plan", res.error());
  const nlohmann::ordered_json& j = *res;
  if (a.json) {
    std::printf("%s\n", DumpJson(j, 2).c_str());
    return kExitOk;
  }
  std::printf("best plan: pp=%d dp=%d micro-batch=%d (%d micro-batches), %d GPUs\n", j["pp"].get<int>(),
              j["dp"].get<int>(), j["micro_batch"].get<int>(), j["num_micro"].get<int>(), j["gpus_used"].get<int>());
  for (size_t i = 0; i < j["stages"].size(); ++i) {
    const nlohmann::ordered_json& s = j["stages"][i];
    std::printf("  stage %zu: %s tp=%d layers [%d,%d) peak %.1f GiB\n", i, s["gpu"].get<std::string>().c_str(),
                s["tp"].get<int>(), s["layers"][0].get<int>(), s["layers"][1].get<int>(), s["peak_gib"].get<double>());
  }
  std::printf("iteration %.3f s (%.3f it/s), %.3f $/iter; %lld plans evaluated in %.3f s\n", j["iter_s"].get<double>(),
              j["iters_per_s"].get<double>(), j["cost_per_iter"].get<double>(), j["evaluated"].get<long long>(),
              j["search_s"].get<double>());
  return kExitOk;
}

}  // namespace

void RegisterPlanSearch(CLI::App& plan, int* exit_code) {
  auto a = std::make_shared<SearchArgs>();
  CLI::App* c = plan.add_subcommand("search", "search parallel plans over a GPU pool (Sailor's profiles)");
  SetExamples(c, {"./build/orrery plan search --model opt-350m --pool sailor:A100-40=16,V100-16=32"});
  c->add_option("--model", a->search.model,
                "a model with a Sailor profile: " + plan::CanonicalModelList(plan::ModelUse::kSailor) + " (default gpt-neo-2.7b)");
  c->add_option("--pool", a->search.pool, "sailor:TYPE=COUNT[@ZONE][,TYPE=COUNT[@ZONE]...]")->required();
  c->add_option("--global-batch", a->search.global_batch, "sequences per iteration (default: Sailor's training config)");
  c->add_option("--objective", a->search.objective, "throughput | cost");
  c->add_option("--max-cost", a->search.max_cost, "budget: at most this many $ per iteration");
  c->add_option("--min-throughput", a->search.min_throughput, "at least this many iterations per second");
  c->add_flag("--exhaustive", a->search.exhaustive, "turn the heuristics off (every TP and DP degree)");
  c->add_flag("--json", a->json, "JSON output");
  c->callback([a, exit_code] { *exit_code = RunSearch(*a); });
}

}  // namespace orrery::cli
