// The LLM backend against a small OpenAI-compatible server on 127.0.0.1 started by the test
// (httplib::Server in a thread): a valid answer, a malformed one, a wrong schema, HTTP 500,
// a timeout, and the cache.
#include "logs/llm.h"
#include "llm/fake_endpoint_testing.h"

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

using llm::HttpChatClient;
using llm::LlmConfig;
using llm::OpenLlmCache;
using llm::testing::FakeEndpoint;

// A RuntimeError no specific rule explains: rule runtime_error, confidence 0.3 < 0.5 (and below
// unknown_below 0.35: the rules alone withhold the category).
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
  EXPECT_EQ(out.note, "rules said unknown/unknown (confidence 0.30)");
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
  EXPECT_EQ(out.note,
            "llm answer: content:1:1: JSON syntax error while parsing value - invalid literal; last read: 'I'; the rules' "
            "diagnosis stands");
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
  EXPECT_EQ(t.latest().reader, "llm");  // the oracle's plan answered, not a rule or generic reader
}

std::string CachePath(const std::string& name) { return llm::testing::FreshCachePath("orrery_llm_cache_test", name); }

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
