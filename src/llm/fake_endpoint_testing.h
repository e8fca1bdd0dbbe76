// A small OpenAI-compatible chat-completions server on 127.0.0.1 (httplib::Server in a
// thread) for the LLM backend's tests: it answers every request with `content` (and
// `status`, after `delay_ms`) and counts the requests.
#pragma once

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "llm/client.h"

namespace orrery::llm::testing {

class FakeEndpoint {
 public:
  std::atomic<int> requests{0};
  std::string content = "{}";  // what the assistant answers
  int status = 200;
  int delay_ms = 0;
  std::string last_body;

  FakeEndpoint() {
    server_.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
      ++requests;
      last_body = req.body;
      if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      nlohmann::json j = {{"choices", {{{"message", {{"role", "assistant"}, {"content", content}}}}}}};
      res.status = status;
      res.set_content(j.dump(), "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeEndpoint() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  LlmConfig Config(double timeout_s = 5) const {
    LlmConfig c;
    c.base_url = "http://127.0.0.1:" + std::to_string(port_) + "/v1";
    c.model = "test-model";
    c.timeout_s = timeout_s;
    return c;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

// `name` in a per-process folder `suite`_<pid> of the temp dir, removed first: a cache file
// that no earlier test has written.
inline std::string FreshCachePath(const std::string& suite, const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / (suite + "_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto p = dir / name;
  std::filesystem::remove(p);
  return p.string();
}

}  // namespace orrery::llm::testing
