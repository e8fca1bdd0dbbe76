// `orrery inspect --llm-config`: a config the readers cannot read well is asked about once,
// across two process runs (the answer cache), against the local stub endpoint
// (llm/fake_endpoint_testing.h); a config they read is never sent; an endpoint down is a
// warning and the partial schema, exit 0.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_testing.h"
#include "llm/fake_endpoint_testing.h"

namespace orrery {
namespace {

using cli_testing::FreshTempDir;
using cli_testing::RunOrrery;

// The JSON object line of a run's output (stderr is folded in).
nlohmann::json SchemaOf(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] == '{') return nlohmann::json::parse(line);
  return nullptr;
}

struct Rig {
  std::filesystem::path dir = FreshTempDir("inspect_llm_cli");
  std::string cfg = (dir / "llm.toml").string(), cache = (dir / "cache.json").string(),
              ds = (dir / "ds_config.json").string();
  explicit Rig(const std::string& base_url) {
    std::ofstream(cfg) << "[llm]\nbase_url = \"" << base_url << "\"\nmodel = \"stub\"\ncache_file = \"" << cache << "\"\n";
    // DeepSpeed with only its batch sizes: framework + 2 fields, fewer than 4.
    std::ofstream(ds) << "{\n  \"train_batch_size\": 512,\n  \"train_micro_batch_size_per_gpu\": 8\n}\n";
  }
  ~Rig() { std::filesystem::remove_all(dir); }
};

TEST(InspectLlmCli, AnUnreadConfigIsAskedOnceAcrossTwoRunsAndMergedAsLlm) {
  llm::testing::FakeEndpoint ep;
  ep.content = R"({"framework": "DeepSpeed", "global_batch": 1024, "seq_len": 2048, "train_steps": 5000})";
  Rig r(ep.Config().base_url);
  for (int run = 0; run < 2; ++run) {
    auto out = RunOrrery("inspect --json --llm-config " + r.cfg + " " + r.ds);
    ASSERT_EQ(out.status, 0) << out.text;
    nlohmann::json j = SchemaOf(out.text);
    ASSERT_TRUE(j.is_object()) << out.text;
    EXPECT_EQ(j["global_batch"], 512);  // the file's, not the answer's 1024
    EXPECT_EQ(j["sources"]["global_batch"]["provenance"], "written");
    EXPECT_EQ(j["seq_len"], 2048);
    EXPECT_EQ(j["train_steps"], 5000);
    EXPECT_EQ(j["sources"]["train_steps"]["provenance"], "llm");
    EXPECT_EQ(j["sources"]["train_steps"]["key"], "llm:stub");
    EXPECT_DOUBLE_EQ(j["sources"]["train_steps"]["confidence"].get<double>(), 0.3);
    EXPECT_NE(out.text.find(run == 0 ? "llm: 1 question(s), 0 cache hit(s)" : "llm: 0 question(s), 1 cache hit(s)"),
              std::string::npos)
        << out.text;
  }
  EXPECT_EQ(ep.requests.load(), 1);
  auto kept = nlohmann::json::parse(cli_testing::Slurp(r.cache));
  ASSERT_EQ(kept["entries"].size(), 1u);
  EXPECT_EQ(kept["entries"].begin().value()["kind"], "config");
}

TEST(InspectLlmCli, AConfigTheReadersReadIsNotSentAndAnEndpointDownIsAWarning) {
  llm::testing::FakeEndpoint ep;
  ep.status = 503;
  Rig r(ep.Config().base_url);
  const std::string script = (r.dir / "train_gpt2.py").string();
  {
    std::ifstream in(std::string(ORRERY_SOURCE_DIR) + "/tests/fixtures/inspect/train_gpt2.py");
    std::ofstream(script) << in.rdbuf();
  }
  auto read = RunOrrery("inspect --json --llm-config " + r.cfg + " " + script);
  ASSERT_EQ(read.status, 0) << read.text;
  EXPECT_EQ(ep.requests.load(), 0);
  auto down = RunOrrery("inspect --json --llm-config " + r.cfg + " " + r.ds);
  ASSERT_EQ(down.status, 0) << down.text;
  EXPECT_EQ(ep.requests.load(), 1);
  EXPECT_NE(down.text.find("warning: " + r.ds + ":0:0: llm (stub): no answer (llm: " + ep.Config().base_url +
                           " answered HTTP 503); the readers' schema stands"),
            std::string::npos)
      << down.text;
  nlohmann::json j = SchemaOf(down.text);
  EXPECT_EQ(j["micro_batch"], 8);  // the readers' partial schema
  EXPECT_TRUE(j["train_steps"].is_null());
}

}  // namespace
}  // namespace orrery
