#include "plan/sailor_search.h"

#include <algorithm>
#include <chrono>
#include <string_view>

#include "base/parse.h"
#include "plan/model_names.h"
#include "plan/sailor.h"
#include "plan/search.h"

namespace orrery::plan {

Result<std::vector<SailorPoolEntry>> ParseSailorPool(const std::string& text) {
  const std::string prefix = "sailor:";
  if (text.rfind(prefix, 0) != 0)
    return MakeError("search: --pool must read sailor:TYPE=COUNT[,TYPE=COUNT...] (Sailor's profiles), got \"" + text + "\"");
  std::vector<SailorPoolEntry> out;
  const std::string_view list = std::string_view(text).substr(prefix.size());
  for (size_t pos = 0; !list.empty() && pos <= list.size();) {
    const size_t comma = std::min(list.find(',', pos), list.size());
    std::string_view item = list.substr(pos, comma - pos);
    pos = comma + 1;
    const size_t at = item.find('@');
    const std::string zone(at == std::string_view::npos ? "" : item.substr(at + 1));
    item = item.substr(0, at);
    const size_t eq = item.find('=');
    int64_t count = 0;
    if (eq == std::string_view::npos || !ParseI64(item.substr(eq + 1), &count) || count <= 0 || count > 1'000'000)
      return MakeError("search: pool entry \"" + std::string(item) +
                       "\" must read TYPE=COUNT[@ZONE] with 0 < COUNT <= 1000000");
    out.push_back({std::string(item.substr(0, eq)), static_cast<int>(count), zone});
  }
  if (out.empty()) return MakeError("search: empty --pool");
  return out;
}

namespace {

nlohmann::ordered_json BestPlanJson(const SearchRequest& r, const SearchResult& res, const std::vector<SailorGpu>& gpus,
                                    const std::string& canonical, double secs) {
  const PlanCandidate& b = res.best;
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const StagePlan& s : b.stages)
    stages.push_back({{"gpu", gpus[s.gpu_index].name},
                      {"zone", r.pool[s.gpu_index].zone},
                      {"tp", s.tp},
                      {"layers", {s.layer_begin, s.layer_end}},
                      {"peak_gib", s.peak_bytes / double(1ull << 30)}});
  return {{"model", canonical},       {"global_batch", r.global_batch}, {"pp", b.pp},
          {"dp", b.dp},               {"micro_batch", b.micro_batch},   {"num_micro", b.num_micro},
          {"iter_s", b.iter_s},       {"iters_per_s", 1.0 / b.iter_s},  {"cost_per_iter", b.cost_per_iter},
          {"gpus_used", b.gpus},      {"stages", stages},               {"evaluated", res.evaluated},
          {"search_s", secs}};
}

}  // namespace

Result<nlohmann::ordered_json> SearchSailorPool(const SailorSearchArgs& a, const std::string& profile_dir) {
  ORR_ASSIGN_OR_RETURN(std::vector<SailorPoolEntry> pool, ParseSailorPool(a.pool));
  Result<const ModelName*> resolved = ResolveModel(a.model, ModelUse::kSailor);
  if (!resolved.ok()) return resolved.error().With("--model");
  const ModelName* name = *resolved;
  const std::string profile(name->sailor), canonical(name->canonical);
  ORR_ASSIGN_OR_RETURN(SailorModel model, LoadSailorModel(profile_dir, profile));
  std::vector<SailorGpu> gpus;
  for (const SailorPoolEntry& p : pool) {
    Result<SailorGpu> g = LoadSailorGpu(profile_dir, profile, p.gpu);
    if (!g.ok())
      return MakeError("unknown GPU type '" + p.gpu + "' for " + canonical + " in Sailor's profiles (" + g.error().message + ")");
    gpus.push_back(std::move(*g));
  }
  SearchRequest r;
  r.model = &model;
  r.global_batch = a.global_batch > 0 ? a.global_batch : model.global_batch;
  ZoneNetwork zones;
  bool zoned = false;
  for (const SailorPoolEntry& p : pool) zoned = zoned || !p.zone.empty();
  if (zoned) {
    ORR_ASSIGN_OR_RETURN(zones, LoadZoneNetwork(profile_dir));
    r.zones = &zones;
  }
  for (size_t i = 0; i < gpus.size(); ++i) r.pool.push_back({&gpus[i], pool[i].count, pool[i].zone});
  if (a.objective == "cost") r.objective = Objective::kCost;
  else if (a.objective != "throughput")
    return MakeError("search: --objective must be throughput or cost, got \"" + a.objective + "\"");
  if (a.max_cost > 0) r.max_cost_per_iter = a.max_cost;
  r.min_iters_per_s = a.min_throughput;
  r.exhaustive = a.exhaustive;
  const auto t0 = std::chrono::steady_clock::now();
  ORR_ASSIGN_OR_RETURN(SearchResult res, SearchPlans(r));
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return BestPlanJson(r, res, gpus, canonical, secs);
}

}  // namespace orrery::plan
