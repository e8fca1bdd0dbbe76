// The LLM backend's transport pieces: the [llm] config table and the persistent answer cache.
#include "llm/client.h"
#include "llm/fake_endpoint_testing.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace orrery::llm {
namespace {

TEST(LlmConfigTest, ParseAndErrors) {
  auto c = ParseLlmConfig("[llm]\nbase_url = \"http://127.0.0.1:8000/v1\"\nmodel = \"m\"\ntimeout_s = 3\napi_key_env = \"K\"\n", "c.toml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_DOUBLE_EQ(c->timeout_s, 3);
  EXPECT_EQ(c->api_key_env, "K");
  EXPECT_EQ(ParseLlmConfig("a = " + std::string(70, '['), "c.toml").error().message,
            "c.toml:1:69: expected arrays and inline tables nested at most 64 deep, got deeper nesting");
  EXPECT_EQ(ParseLlmConfig("name = 1\n", "c.toml").error().message, "c.toml:1:1: no [llm] table (base_url, model, timeout_s, api_key_env)");
  EXPECT_EQ(ParseLlmConfig("[llm]\nbase_url = \"ftp://x\"\nmodel = \"m\"\n", "c.toml").error().message,
            "c.toml:2:12: [llm] base_url: expected an http:// or https:// URL, got \"ftp://x\"");
  EXPECT_EQ(ParseLlmConfig("[llm]\nbase_url = \"http://x\"\nmodel = \"m\"\ntemp = 1\n", "c.toml").error().message,
            "c.toml:4:8: unknown key 'temp' in [llm] (expected one of: base_url, model, timeout_s, api_key_env, max_context_bytes, cache_file)");
}

std::string CachePath(const std::string& name) { return llm::testing::FreshCachePath("orrery_llm_cache_test", name); }

TEST(LlmCacheTest, AnswersSurviveTheProcessPerModelAndPrompt) {
  const std::string path = CachePath("roundtrip.json");
  {
    LlmCache c(path, "m1");
    ASSERT_TRUE(c.Load().ok());  // no file yet: empty
    ASSERT_TRUE(c.Put("format", "system prompt", "<*> step <*>", "{\"step\": 0}", 100).ok());
  }
  LlmCache again(path, "m1");
  ASSERT_TRUE(again.Load().ok());
  EXPECT_EQ(again.Get("format", "system prompt", "<*> step <*>"), std::optional<std::string>("{\"step\": 0}"));
  EXPECT_EQ(again.Get("format", "another prompt", "<*> step <*>"), std::nullopt);  // a new prompt asks again
  EXPECT_EQ(again.Get("diagnose", "system prompt", "<*> step <*>"), std::nullopt);
  LlmCache other_model(path, "m2");
  ASSERT_TRUE(other_model.Load().ok());
  EXPECT_EQ(other_model.Get("format", "system prompt", "<*> step <*>"), std::nullopt);
  // Two processes loaded the same file; each adds an answer: the file keeps all three.
  ASSERT_TRUE(other_model.Put("format", "system prompt", "t2", "a2", 101).ok());
  ASSERT_TRUE(again.Put("format", "system prompt", "t3", "a3", 102).ok());
  LlmCache merged(path, "m1");
  ASSERT_TRUE(merged.Load().ok());
  EXPECT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged.Get("format", "system prompt", "t3"), std::optional<std::string>("a3"));
}

TEST(LlmCacheTest, AFileThatIsNotACacheIsReportedAndReplaced) {
  const std::string path = CachePath("corrupt.json");
  { std::ofstream(path) << "[1, 2"; }
  LlmCache c(path, "m");
  Status st = c.Load();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message,
            path + ": not an LLM answer cache (expected {\"version\": 1, \"entries\": {...}}); it will be replaced");
  ASSERT_TRUE(c.Put("format", "s", "q", "a", 1).ok());
  LlmCache back(path, "m");
  ASSERT_TRUE(back.Load().ok());
  EXPECT_EQ(back.size(), 1u);
}

}  // namespace
}  // namespace orrery::llm
