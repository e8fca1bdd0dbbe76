// Questions to the LLM backend for a driver that must never wait on it (orrery serve's
// decision cycle): Ask queues a question and returns at once; one worker thread sends them
// one at a time through the ChatClient (each bounded by the client's timeout); Take returns
// the answers that have arrived, never blocking. The queue is bounded (max_queued): a
// question that does not fit is refused, and the caller asks again later. How many questions
// a cycle may start is the caller's budget (e.g. [signals] llm_questions_per_cycle).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/result.h"
#include "llm/client.h"

namespace orrery::llm {

class AsyncAsker {
 public:
  explicit AsyncAsker(std::unique_ptr<ChatClient> client, size_t max_queued = 16);
  // Stops the worker: the question in flight (if any) ends within the client's timeout.
  ~AsyncAsker();
  AsyncAsker(const AsyncAsker&) = delete;
  AsyncAsker& operator=(const AsyncAsker&) = delete;

  // Queues a question named `id`; kAlreadyAsked when one of that id is queued, in flight or
  // answered but not taken; kFull when max_queued are queued.
  enum class Queued : uint8_t { kYes, kAlreadyAsked, kFull };
  Queued Ask(std::string id, std::string system, std::string user);

  struct Answer {
    std::string id;
    Result<std::string> content;
  };
  std::vector<Answer> Take();
  // Questions queued or in flight.
  size_t outstanding() const;
  uint64_t sent() const;

 private:
  struct Question {
    std::string id, system, user;
  };
  void Work();

  std::unique_ptr<ChatClient> client_;
  size_t max_queued_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Question> queue_;
  std::vector<Answer> done_;
  std::set<std::string> ids_;  // queued, in flight, or done but not taken
  size_t in_flight_ = 0;
  uint64_t sent_ = 0;
  bool stop_ = false;
  std::thread worker_;
};

}  // namespace orrery::llm
