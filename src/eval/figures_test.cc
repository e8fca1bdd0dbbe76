// The evaluation figures as a test (docs/validation/eval.md, section J): a 7B model on the shared
// OpenCompass suite (the 63 datasets with a known size) at 1 and 4 nodes of 8 A100s. Acme
// reports 1.3x (1 node) and 1.8x (4 nodes) lower makespan than the coupled practice; the
// acme strategy must beat both ratios and both OpenCompass partitioners (at their defaults
// and with one worker per GPU).
#include <gtest/gtest.h>

#include "eval/executor.h"
#include "eval/strategy.h"

namespace orrery::eval {
namespace {

double Makespan(const Workload& w, const std::string& spec, uint32_t nodes) {
  ClusterSpec c;
  c.nodes = nodes;
  auto s = MakeStrategy(spec);
  EXPECT_TRUE(s.ok()) << spec;
  auto p = BuildPlan(**s, spec, w, c);
  EXPECT_TRUE(p.ok()) << spec;
  auto r = Execute(w, *p, c);
  EXPECT_TRUE(r.ok()) << spec;
  return r->makespan_s;
}

TEST(EvalFiguresTest, AcmeBeatsPublishedSpeedupsAndBothPartitioners) {
  auto suite = LoadSuite(std::string(ORRERY_SHARED_DIR) + "/corpora/eval-suite/datasets.csv");
  ASSERT_TRUE(suite.ok()) << suite.error().message;
  auto sized = RequireSized(*suite, true, nullptr);
  ASSERT_TRUE(sized.ok());
  ASSERT_EQ(sized->datasets.size(), 63u);
  auto w = BuildWorkload(*sized, *ParseModelSize("7B"), *GpuByName("a100-80g"), 8, CalibratedCostModel(), nullptr);
  ASSERT_TRUE(w.ok());
  for (auto [nodes, published] : {std::pair<uint32_t, double>{1, 1.3}, {4, 1.8}}) {
    const double acme = Makespan(*w, "acme", nodes);
    const double coupled = Makespan(*w, "coupled", nodes);
    EXPECT_GT(coupled / acme, published) << nodes << " node(s)";
    const std::string per_gpu = "opencompass-workers:num_worker=" + std::to_string(8 * nodes);
    for (const std::string& oc : {std::string("opencompass-size"), std::string("opencompass-workers"), per_gpu})
      EXPECT_LT(acme, Makespan(*w, oc, nodes)) << oc << " at " << nodes << " node(s)";
  }
}

}  // namespace
}  // namespace orrery::eval
