// The background asker (llm/async.h): Ask and Take never wait on the endpoint; one question
// per id until its answer is taken; a full queue refuses.
#include "llm/async.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

namespace orrery::llm {
namespace {

// Answers "answer to <user>" once released; tells when a question has reached it.
class GatedClient final : public ChatClient {
 public:
  std::promise<void> entered;
  std::shared_future<void> release;
  explicit GatedClient(std::shared_future<void> r) : release(std::move(r)) {}
  Result<std::string> Complete(const std::string&, const std::string& user) override {
    if (!signalled_) {
      signalled_ = true;
      entered.set_value();
    }
    release.wait();
    if (user == "fail") return MakeError("llm: request failed: Connection", kExitRuntime);
    return "answer to " + user;
  }

 private:
  bool signalled_ = false;
};

TEST(AsyncAskerTest, NeverWaitsOneQuestionPerIdAndABoundedQueue) {
  std::promise<void> open;
  auto client = std::make_unique<GatedClient>(open.get_future().share());
  std::future<void> entered = client->entered.get_future();
  AsyncAsker asker(std::move(client), /*max_queued=*/1);
  EXPECT_EQ(asker.Ask("a", "s", "a"), AsyncAsker::Queued::kYes);
  entered.wait();  // "a" is in flight, blocked in the endpoint
  EXPECT_EQ(asker.Ask("a", "s", "a"), AsyncAsker::Queued::kAlreadyAsked);
  EXPECT_EQ(asker.Ask("b", "s", "fail"), AsyncAsker::Queued::kYes);
  EXPECT_EQ(asker.Ask("c", "s", "c"), AsyncAsker::Queued::kFull);  // one queued behind the one in flight
  EXPECT_TRUE(asker.Take().empty());                               // does not wait for the blocked question
  EXPECT_EQ(asker.outstanding(), 2u);
  open.set_value();
  std::vector<AsyncAsker::Answer> got;
  for (int i = 0; i < 1000 && got.size() < 2; ++i) {  // at most ~10 s
    for (AsyncAsker::Answer& a : asker.Take()) got.push_back(std::move(a));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].id, "a");
  ASSERT_TRUE(got[0].content.ok());
  EXPECT_EQ(*got[0].content, "answer to a");
  EXPECT_EQ(got[1].id, "b");
  ASSERT_FALSE(got[1].content.ok());
  EXPECT_EQ(got[1].content.error().message, "llm: request failed: Connection");
  EXPECT_EQ(asker.sent(), 2u);
  EXPECT_EQ(asker.Ask("a", "s", "a"), AsyncAsker::Queued::kYes);  // taken: may be asked again
}

}  // namespace
}  // namespace orrery::llm
