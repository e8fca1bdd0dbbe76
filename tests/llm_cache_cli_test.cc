// The LLM backend's answers kept across processes: `orrery progress --llm-config` run twice
// on a log whose line format the built-in learner does not know, against a local stub
// endpoint (llm/fake_endpoint_testing.h) that counts requests: one question in all.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_testing.h"
#include "llm/fake_endpoint_testing.h"

namespace orrery {
namespace {

using cli_testing::FreshTempDir;
using cli_testing::RunOrrery;

TEST(LlmCacheCli, UnknownLogFormatIsAskedOnceAcrossTwoProcessRuns) {
  llm::testing::FakeEndpoint ep;
  ep.content = R"({"step": 0, "total_steps": null, "loss": 1, "seconds_per_step": 2, "seconds_unit": "ms"})";
  const auto dir = FreshTempDir("llm_cache_cli");
  const std::string cfg = (dir / "llm.toml").string(), log = (dir / "job.log").string(),
                    cache = (dir / "cache.json").string();
  {
    std::ofstream(cfg) << "[llm]\nbase_url = \"" << ep.Config().base_url << "\"\nmodel = \"stub\"\ncache_file = \"" << cache
                       << "\"\n";
    std::ofstream out(log);
    for (int i = 1; i <= 30; ++i) out << "zork " << i << " lossy 0.5 t 300\n";
  }
  for (int run = 0; run < 2; ++run) {
    auto r = RunOrrery("progress --json --llm-config " + cfg + " " + log);
    ASSERT_EQ(r.status, 0) << r.text;
    auto j = nlohmann::json::parse(r.text.substr(r.text.find('{')));
    EXPECT_EQ(j["step"], 30) << r.text;
    EXPECT_DOUBLE_EQ(j["seconds_per_step"].get<double>(), 0.3);
  }
  EXPECT_EQ(ep.requests.load(), 1);
  auto kept = nlohmann::json::parse(cli_testing::Slurp(cache));
  ASSERT_EQ(kept["entries"].size(), 1u);
  EXPECT_EQ(kept["entries"].begin().value()["kind"], "format");
  EXPECT_EQ(kept["entries"].begin().value()["model"], "stub");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace orrery
