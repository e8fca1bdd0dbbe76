#include "eval/strategy.h"

#include <map>

#include "base/parse.h"

namespace orrery::eval {

namespace {

class Coupled final : public Strategy {
 public:
  std::string_view name() const override { return "coupled"; }
  Plan Build(const Workload& w, const ClusterSpec&) const override {
    Plan p;
    p.load = LoadSource::kSharedStorage;
    p.metric = MetricPlacement::kOnGpu;
    for (uint32_t d = 0; d < w.datasets.size(); ++d)
      p.gpu_jobs.push_back(GpuJob{{Slice{d, 0, w.datasets[d].examples}}});
    return p;
  }
};

// "k=v,k=v" after the name; every key must be consumed by the strategy's maker.
class Options {
 public:
  static Result<Options> Parse(std::string_view name, std::string_view text) {
    Options o;
    o.name_ = std::string(name);
    while (!text.empty()) {
      size_t comma = text.find(',');
      std::string_view kv = text.substr(0, comma);
      text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
      size_t eq = kv.find('=');
      if (eq == std::string_view::npos || eq == 0)
        return MakeError("strategy " + o.name_ + ": option " + Quote(kv) + ": expected key=value");
      o.kv_[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
    }
    return o;
  }
  Status Uint(const char* key, uint64_t lo, uint64_t hi, uint64_t* out) {
    auto it = kv_.find(key);
    if (it == kv_.end()) return Status::Ok();
    int64_t v = 0;
    if (!ParseI64(it->second, &v) || v < static_cast<int64_t>(lo) || static_cast<uint64_t>(v) > hi)
      return MakeError("strategy " + name_ + ": option " + key + ": expected an integer in [" + std::to_string(lo) +
                       ", " + std::to_string(hi) + "], got " + Quote(it->second));
    *out = static_cast<uint64_t>(v);
    kv_.erase(it);
    return Status::Ok();
  }
  Status Choice(const char* key, const char* yes, const char* no, bool* out) {
    auto it = kv_.find(key);
    if (it == kv_.end()) return Status::Ok();
    if (it->second != yes && it->second != no)
      return MakeError("strategy " + name_ + ": option " + key + ": expected " + yes + " or " + no + ", got " +
                       Quote(it->second));
    *out = it->second == yes;
    kv_.erase(it);
    return Status::Ok();
  }
  Status Done() const {
    if (kv_.empty()) return Status::Ok();
    return MakeError("strategy " + name_ + ": unknown option " + Quote(kv_.begin()->first));
  }

 private:
  std::string name_;
  std::map<std::string, std::string> kv_;
};

constexpr uint64_t kMaxOpt = 1'000'000'000;

}  // namespace

std::unique_ptr<Strategy> MakeCoupled() { return std::make_unique<Coupled>(); }

const std::vector<std::string_view>& StrategyNames() {
  static const std::vector<std::string_view> names = {"coupled", "opencompass-size", "opencompass-workers", "acme"};
  return names;
}

Result<std::unique_ptr<Strategy>> MakeStrategy(std::string_view spec) {
  const size_t colon = spec.find(':');
  const std::string_view name = spec.substr(0, colon);
  ORR_ASSIGN_OR_RETURN(Options o, Options::Parse(name, colon == std::string_view::npos ? "" : spec.substr(colon + 1)));
  std::unique_ptr<Strategy> s;
  if (name == "coupled") {
    s = MakeCoupled();
  } else if (name == "opencompass-size") {
    SizePartitionerOptions so;
    ORR_RETURN_IF_ERROR(o.Uint("max_task_size", 1, kMaxOpt, &so.max_task_size));
    ORR_RETURN_IF_ERROR(o.Uint("gen_task_coef", 1, 1'000'000, &so.gen_task_coef));
    ORR_RETURN_IF_ERROR(o.Choice("strategy", "heuristic", "split", &so.heuristic));
    s = MakeSizePartitioner(so);
  } else if (name == "opencompass-workers") {
    NumWorkerPartitionerOptions no;
    ORR_RETURN_IF_ERROR(o.Uint("num_worker", 1, 1'000'000, &no.num_worker));
    ORR_RETURN_IF_ERROR(o.Uint("num_split", 1, 1'000'000, &no.num_split));
    ORR_RETURN_IF_ERROR(o.Uint("min_task_size", 1, kMaxOpt, &no.min_task_size));
    ORR_RETURN_IF_ERROR(o.Choice("strategy", "heuristic", "split", &no.heuristic));
    s = MakeNumWorkerPartitioner(no);
  } else if (name == "acme") {
    AcmeOptions ao;
    ORR_RETURN_IF_ERROR(o.Uint("granularity", 1, 1024, &ao.granularity));
    ORR_RETURN_IF_ERROR(o.Choice("metric_cut", "1", "0", &ao.metric_cut));
    s = MakeAcme(ao);
  } else {
    return MakeError("unknown strategy " + Quote(name) + " (expected coupled, opencompass-size, opencompass-workers or acme)");
  }
  ORR_RETURN_IF_ERROR(o.Done());
  return s;
}

Result<Plan> BuildPlan(const Strategy& s, std::string_view spec, const Workload& w, const ClusterSpec& c) {
  Plan p = s.Build(w, c);
  p.strategy = std::string(spec);
  AddMetricJobs(w, &p);
  ORR_RETURN_IF_ERROR(CheckCoverage(w, p));
  return p;
}

}  // namespace orrery::eval
