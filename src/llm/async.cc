#include "llm/async.h"

namespace orrery::llm {

AsyncAsker::AsyncAsker(std::unique_ptr<ChatClient> client, size_t max_queued)
    : client_(std::move(client)), max_queued_(max_queued), worker_([this] { Work(); }) {}

AsyncAsker::~AsyncAsker() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

AsyncAsker::Queued AsyncAsker::Ask(std::string id, std::string system, std::string user) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (ids_.count(id)) return Queued::kAlreadyAsked;
    if (queue_.size() >= max_queued_) return Queued::kFull;
    ids_.insert(id);
    queue_.push_back(Question{std::move(id), std::move(system), std::move(user)});
  }
  cv_.notify_one();
  return Queued::kYes;
}

std::vector<AsyncAsker::Answer> AsyncAsker::Take() {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<Answer> out;
  out.swap(done_);
  for (const Answer& a : out) ids_.erase(a.id);
  return out;
}

size_t AsyncAsker::outstanding() const {
  std::lock_guard<std::mutex> l(mu_);
  return queue_.size() + in_flight_;
}

uint64_t AsyncAsker::sent() const {
  std::lock_guard<std::mutex> l(mu_);
  return sent_;
}

void AsyncAsker::Work() {
  std::unique_lock<std::mutex> l(mu_);
  while (true) {
    cv_.wait(l, [this] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    Question q = std::move(queue_.front());
    queue_.pop_front();
    ++in_flight_;
    ++sent_;
    l.unlock();
    Result<std::string> content = client_->Complete(q.system, q.user);  // the only wait, outside the lock
    l.lock();
    --in_flight_;
    done_.push_back(Answer{std::move(q.id), std::move(content)});
  }
}

}  // namespace orrery::llm
