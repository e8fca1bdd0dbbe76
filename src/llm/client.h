// The optional LLM backend's transport (off by default; nothing here runs unless a config
// names an endpoint): an OpenAI-compatible chat-completions client, its config (the [llm]
// table, docs/formats/llm-config.md) and the answer cache it shares with every user
// (cache.h). What is asked, and how an answer is validated, belongs to each user: the log
// readers (logs/llm.h: failure diagnosis, unknown log line formats) and the scheduling
// advisor (semantic/llm_schema.h: launch configs the rule-based readers cannot read).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"
#include "llm/cache.h"

namespace orrery::llm {

struct LlmConfig {
  std::string base_url;         // "http://127.0.0.1:8000/v1": POST {base_url}/chat/completions
  std::string model;
  double timeout_s = 20;        // connect, read and write timeouts each
  std::string api_key_env;      // name of the environment variable holding the key ("" = none)
  size_t max_context_bytes = 12000;
  std::string cache_file;       // answers kept across processes ("" = for this process only)
};

// The [llm] table of a TOML file (other tables are ignored, so it can live in a larger config).
Result<LlmConfig> ParseLlmConfig(std::string_view text, const std::string& file);
Result<LlmConfig> LoadLlmConfig(const std::string& path);

// The config's persistent cache, loaded (a file that is not a cache is reported in *warning
// and replaced at the first new answer).
std::unique_ptr<LlmCache> OpenLlmCache(const LlmConfig& config, std::string* warning);

class ChatClient {
 public:
  virtual ~ChatClient() = default;
  // The assistant message's content, or an error (transport, HTTP status, response shape).
  virtual Result<std::string> Complete(const std::string& system, const std::string& user) = 0;
};

class HttpChatClient final : public ChatClient {
 public:
  explicit HttpChatClient(LlmConfig config);
  Result<std::string> Complete(const std::string& system, const std::string& user) override;

 private:
  LlmConfig cfg_;
};

// The JSON object in an answer that may be wrapped in a Markdown code fence (from the first
// '{' to the last '}'; the text itself when there is none).
std::string_view StripFence(std::string_view s);

}  // namespace orrery::llm
