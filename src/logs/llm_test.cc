// The LLM backend against a small OpenAI-compatible server on 127.0.0.1 started by the test
// (httplib::Server in a thread): a valid answer, a malformed one, a wrong schema, HTTP 500,
// a timeout, and the cache.
#include "logs/llm.h"
#include "logs/fake_llm_testing.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <chrono>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace orrery::logs {
namespace {

using testing::FakeEndpoint;

// A RuntimeError no specific rule explains: rule runtime_error, confidence 0.35 < 0.5.
const char* kVague = "Traceback (most recent call last):\n  File \"x.py\", line 1\nRuntimeError: the flux capacitor broke\n";

TEST(LlmTest, ValidAnswerReplacesLowConfidenceRules) {
  FakeEndpoint ep;
  ep.content = R"({"category": "infrastructure", "subtype": "gpu_xid", "retry": true, "suspect_node": "node7",
                   "evidence": ["RuntimeError: the flux capacitor broke"]})";
  HttpChatClient client(ep.Config());
  Diagnoser rules;
  LlmDiagnoser d(&rules, &client);
  Diagnosis out = d.Diagnose(kVague);
  EXPECT_EQ(out.source, DiagnosisSource::kLlm);
  EXPECT_EQ(out.category, Category::kInfrastructure);
  EXPECT_EQ(out.subtype, "gpu_xid");
  EXPECT_TRUE(out.retry);
  EXPECT_EQ(out.suspect_node, "node7");
  EXPECT_EQ(out.note, "rules said script/user_code_exception (confidence 0.35)");
  // The request carried the model and the compressed log.
  auto body = nlohmann::json::parse(ep.last_body);
  EXPECT_EQ(body["model"], "test-model");
  EXPECT_NE(body["messages"][1]["content"].get<std::string>().find("flux capacitor"), std::string::npos);
  // Cached: the same log is not asked twice.
  (void)d.Diagnose(kVague);
  EXPECT_EQ(ep.requests.load(), 1);
  EXPECT_EQ(d.cache_hits(), 1u);
}

TEST(LlmTest, ConfidentRulesAreNotSentToTheLlm) {
  FakeEndpoint ep;
  HttpChatClient client(ep.Config());
  Diagnoser rules;
  LlmDiagnoser d(&rules, &client);
  EXPECT_EQ(d.Diagnose("ModuleNotFoundError: No module named 'torch'\n").subtype, "module_not_found");
  EXPECT_EQ(ep.requests.load(), 0);
}

TEST(LlmTest, MalformedAnswerFallsBackToRules) {
  FakeEndpoint ep;
  ep.content = "I think it is the GPU.";
  HttpChatClient client(ep.Config());
  Diagnoser rules;
  LlmDiagnoser d(&rules, &client);
  Diagnosis out = d.Diagnose(kVague);
  EXPECT_EQ(out.source, DiagnosisSource::kRules);
  EXPECT_EQ(out.rule, "runtime_error");
  EXPECT_EQ(out.note, "llm answer: expected a JSON object; the rules' diagnosis stands");
}

TEST(LlmTest, WrongSchemaFallsBackToRules) {
  FakeEndpoint ep;
  ep.content = R"({"category": "hardware", "subtype": "gpu", "retry": true})";
  HttpChatClient client(ep.Config());
  Diagnoser rules;
  LlmDiagnoser d(&rules, &client);
  Diagnosis out = d.Diagnose(kVague);
  EXPECT_EQ(out.source, DiagnosisSource::kRules);
  EXPECT_EQ(out.note,
            "llm answer: 'category': expected infrastructure, framework or script, got \"hardware\"; the rules' diagnosis stands");
  EXPECT_EQ(ParseLlmDiagnosis(R"({"category": "script", "subtype": "x", "retry": "yes"})").error().message,
            "llm answer: 'retry': expected true or false");
}

TEST(LlmTest, HttpErrorAndTimeoutFallBackToRules) {
  FakeEndpoint ep;
  ep.status = 500;
  {
    HttpChatClient client(ep.Config());
    Diagnoser rules;
    LlmDiagnoser d(&rules, &client);
    Diagnosis out = d.Diagnose(kVague);
    EXPECT_EQ(out.source, DiagnosisSource::kRules);
    EXPECT_NE(out.note.find("answered HTTP 500"), std::string::npos) << out.note;
  }
  ep.status = 200;
  ep.content = R"({"category": "script", "subtype": "x", "retry": false})";
  ep.delay_ms = 1500;
  HttpChatClient slow(ep.Config(0.2));
  auto t0 = std::chrono::steady_clock::now();
  Result<std::string> r = slow.Complete("s", "u");
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("failed"), std::string::npos) << r.error().message;
  EXPECT_LT(waited, 1.4);  // gave up at the timeout, did not wait for the answer
}

TEST(LlmTest, FormatOracleValidatesIndices) {
  MaskedLine m;
  Mask("zork 12 lossy 0.5 t 300", &m);
  auto ok = ParseLlmPlan(R"({"step": 0, "loss": 1, "seconds_per_step": 2, "seconds_unit": "ms"})", m);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  ASSERT_EQ(ok->refs.size(), 3u);
  EXPECT_DOUBLE_EQ(ok->refs[2].scale, 0.001);
  EXPECT_EQ(ParseLlmPlan(R"({"step": 7})", m).error().message, "llm answer: 'step': expected null or a number index in [0, 3)");
  EXPECT_EQ(ParseLlmPlan(R"({"step": null})", m).error().message, "llm answer: no field mapped (the line is not progress)");

  FakeEndpoint ep;
  ep.content = R"({"step": 0, "loss": 1})";
  HttpChatClient client(ep.Config());
  LlmFormatOracle oracle(&client);
  ProgressTracker t({}, &oracle);
  for (int i = 1; i <= 20; ++i) t.Feed("zork " + std::to_string(i) + " lossy 0.5 t 300\n", kNoTime);
  EXPECT_EQ(ep.requests.load(), 1);  // one question for the template
  EXPECT_EQ(t.latest().step, 20);
  EXPECT_DOUBLE_EQ(*t.latest().loss, 0.5);
}

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

// ------------------------------------------------------------------ the persistent cache

std::string CachePath(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("orrery_llm_cache_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto p = dir / name;
  std::filesystem::remove(p);
  return p.string();
}

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

// Two "processes" (each its own client, cache object and tracker) on one cache file: the
// template is asked once; a transport failure is not kept, so a later process asks again.
TEST(LlmTest, FormatOracleAsksOncePerTemplateAcrossProcesses) {
  FakeEndpoint ep;
  ep.content = R"({"step": 0, "loss": 1})";
  LlmConfig cfg = ep.Config();
  cfg.cache_file = CachePath("format.json");
  auto run = [&] {
    HttpChatClient client(cfg);
    std::string warning;
    auto cache = OpenLlmCache(cfg, &warning);
    EXPECT_EQ(warning, "");
    LlmFormatOracle oracle(&client, cache.get());
    ProgressTracker t({}, &oracle);
    for (int i = 1; i <= 20; ++i) t.Feed("zork " + std::to_string(i) + " lossy 0.5 t 300\n", kNoTime);
    return t.latest().step.value_or(-1);
  };
  EXPECT_EQ(run(), 20);
  EXPECT_EQ(run(), 20);
  EXPECT_EQ(ep.requests.load(), 1);

  FakeEndpoint down;
  down.status = 500;
  cfg = down.Config();
  cfg.cache_file = CachePath("format-500.json");
  EXPECT_EQ(run(), -1);
  down.status = 200;
  down.content = R"({"step": 0, "loss": 1})";
  EXPECT_EQ(run(), 20);
  EXPECT_EQ(down.requests.load(), 2);
}

}  // namespace
}  // namespace orrery::logs
