#include "llm/client.h"

#include <cstdlib>
#include <ctime>

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <toml.hpp>

#include "base/json_text.h"
#include "base/io.h"
#include "base/toml_text.h"

namespace orrery::llm {

namespace {

using json = nlohmann::json;

const std::vector<std::string> kLlmKeys = {"base_url", "model", "timeout_s", "api_key_env", "max_context_bytes", "cache_file"};

std::string At(const std::string& file, const toml::value& v) {
  auto loc = v.location();
  return file + ":" + std::to_string(loc.line()) + ":" + std::to_string(loc.column());
}

Result<std::string> TomlString(const std::string& file, const toml::value& v, const std::string& key) {
  if (!v.is_string() || v.as_string().str.empty())
    return MakeError(At(file, v) + ": [llm] " + key + ": expected a non-empty string");
  return v.as_string().str;
}

}  // namespace

std::string_view StripFence(std::string_view s) {
  size_t a = s.find('{'), b = s.rfind('}');
  if (a == std::string_view::npos || b == std::string_view::npos || b < a) return s;
  return s.substr(a, b - a + 1);
}

Result<LlmConfig> ParseLlmConfig(std::string_view text, const std::string& file) {
  ORR_ASSIGN_OR_RETURN(toml::value root, ParseToml(text, file));
  if (!root.is_table() || !root.contains("llm") || !root.at("llm").is_table())
    return MakeError(file + ":1:1: no [llm] table (base_url, model, timeout_s, api_key_env)");
  const toml::value& t = root.at("llm");
  LlmConfig c;
  for (const auto& [k, v] : t.as_table()) {
    if (k == "base_url") {
      ORR_ASSIGN_OR_RETURN(c.base_url, TomlString(file, v, k));
      if (c.base_url.rfind("http://", 0) != 0 && c.base_url.rfind("https://", 0) != 0)
        return MakeError(At(file, v) + ": [llm] base_url: expected an http:// or https:// URL, got \"" + c.base_url + "\"");
    } else if (k == "model") {
      ORR_ASSIGN_OR_RETURN(c.model, TomlString(file, v, k));
    } else if (k == "api_key_env") {
      ORR_ASSIGN_OR_RETURN(c.api_key_env, TomlString(file, v, k));
    } else if (k == "cache_file") {
      ORR_ASSIGN_OR_RETURN(c.cache_file, TomlString(file, v, k));
    } else if (k == "timeout_s") {
      double d = v.is_floating() ? v.as_floating() : v.is_integer() ? static_cast<double>(v.as_integer()) : -1;
      if (!(d > 0 && d <= 600)) return MakeError(At(file, v) + ": [llm] timeout_s: expected seconds in (0, 600]");
      c.timeout_s = d;
    } else if (k == "max_context_bytes") {
      if (!v.is_integer() || v.as_integer() < 256 || v.as_integer() > 1000000)
        return MakeError(At(file, v) + ": [llm] max_context_bytes: expected an integer in [256, 1000000]");
      c.max_context_bytes = static_cast<size_t>(v.as_integer());
    } else {
      std::string keys;
      for (const std::string& a : kLlmKeys) keys += (keys.empty() ? "" : ", ") + a;
      return MakeError(At(file, v) + ": unknown key '" + k + "' in [llm] (expected one of: " + keys + ")");
    }
  }
  if (c.base_url.empty()) return MakeError(At(file, t) + ": [llm]: missing required key 'base_url'");
  if (c.model.empty()) return MakeError(At(file, t) + ": [llm]: missing required key 'model'");
  return c;
}

Result<LlmConfig> LoadLlmConfig(const std::string& path) {
  ORR_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseLlmConfig(text, path);
}

std::unique_ptr<LlmCache> OpenLlmCache(const LlmConfig& config, std::string* warning) {
  auto cache = std::make_unique<LlmCache>(config.cache_file, config.model);
  if (Status st = cache->Load(); !st.ok() && warning) *warning = st.error().message;
  return cache;
}

HttpChatClient::HttpChatClient(LlmConfig config) : cfg_(std::move(config)) {}

Result<std::string> HttpChatClient::Complete(const std::string& system, const std::string& user) {
  size_t scheme = cfg_.base_url.find("://");
  size_t path_at = cfg_.base_url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  std::string origin = cfg_.base_url.substr(0, path_at);
  std::string prefix = path_at == std::string::npos ? "" : cfg_.base_url.substr(path_at);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  httplib::Client cli(origin);
  if (!cli.is_valid()) return MakeError("llm: cannot use base_url \"" + cfg_.base_url + "\"", kExitRuntime);
  auto sec = static_cast<time_t>(cfg_.timeout_s);
  auto usec = static_cast<time_t>((cfg_.timeout_s - static_cast<double>(sec)) * 1e6);
  cli.set_connection_timeout(sec, usec);
  cli.set_read_timeout(sec, usec);
  cli.set_write_timeout(sec, usec);
  httplib::Headers headers;
  if (!cfg_.api_key_env.empty()) {
    if (const char* key = std::getenv(cfg_.api_key_env.c_str()); key != nullptr && *key != 0)
      headers.emplace("Authorization", std::string("Bearer ") + key);
  }
  json body = {{"model", cfg_.model},
               {"temperature", 0},
               {"response_format", {{"type", "json_object"}}},
               {"messages", json::array({{{"role", "system"}, {"content", system}}, {{"role", "user"}, {"content", user}}})}};
  auto res = cli.Post(prefix + "/chat/completions", headers, DumpJson(body),
                      "application/json");
  if (!res) return MakeError("llm: request to " + cfg_.base_url + " failed: " + httplib::to_string(res.error()), kExitRuntime);
  if (res->status != 200)
    return MakeError("llm: " + cfg_.base_url + " answered HTTP " + std::to_string(res->status), kExitRuntime);
  auto parsed = ParseJsonTextAs<json>(res->body);
  const json j = std::holds_alternative<json>(parsed) ? std::move(std::get<json>(parsed)) : json();
  if (!j.is_object() || !j.contains("choices") || !j["choices"].is_array() || j["choices"].empty() ||
      !j["choices"][0].is_object() || !j["choices"][0].contains("message") || !j["choices"][0]["message"].is_object() ||
      !j["choices"][0]["message"].contains("content") || !j["choices"][0]["message"]["content"].is_string())
    return MakeError("llm: response is not a chat completion (choices[0].message.content missing)", kExitRuntime);
  return j["choices"][0]["message"]["content"].get<std::string>();
}

}  // namespace orrery::llm
