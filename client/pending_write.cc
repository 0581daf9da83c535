#include "client/pending_write.h"

#include "client/write_waiters.h"

namespace zstore::client {

const char* to_string(WriteOutcome::Kind kind) {
  switch (kind) {
    case WriteOutcome::Kind::kApplied:
      return "applied";
    case WriteOutcome::Kind::kRefused:
      return "refused";
    case WriteOutcome::Kind::kFailed:
      return "failed";
    case WriteOutcome::Kind::kUnknown:
      return "unknown";
  }
  return "?";
}

const std::string& PendingWrite::uuid() const { return state_->uuid; }

WriteOutcome PendingWrite::wait(std::chrono::steady_clock::time_point deadline) const {
  std::unique_lock lock(state_->mu);
  if (!state_->cv.wait_until(lock, deadline, [this] { return state_->outcome.has_value(); })) {
    return {WriteOutcome::Kind::kUnknown, 0, "no answer by the deadline"};
  }
  return *state_->outcome;
}

std::optional<WriteOutcome> PendingWrite::outcome() const {
  std::lock_guard lock(state_->mu);
  return state_->outcome;
}

void WriteWaiters::add(const std::shared_ptr<PendingWrite::State>& state) {
  std::lock_guard lock(mu_);
  waiting_[state->uuid].push_back(state);
}

void WriteWaiters::resolve(std::string_view uuid, const WriteOutcome& outcome) {
  std::vector<std::weak_ptr<PendingWrite::State>> handles;
  {
    std::lock_guard lock(mu_);
    auto it = waiting_.find(uuid);
    if (it == waiting_.end()) return;
    handles = std::move(it->second);
    waiting_.erase(it);
  }
  for (const auto& weak : handles) {
    auto state = weak.lock();
    if (!state) continue;
    std::lock_guard lock(state->mu);
    state->outcome = outcome;
    state->cv.notify_all();
  }
}

bool WriteWaiters::wanted(std::string_view uuid) {
  std::lock_guard lock(mu_);
  auto it = waiting_.find(uuid);
  if (it == waiting_.end()) return false;
  for (const auto& weak : it->second) {
    if (!weak.expired()) return true;
  }
  waiting_.erase(it);
  return false;
}

std::size_t WriteWaiters::size() const {
  std::lock_guard lock(mu_);
  return waiting_.size();
}

}  // namespace zstore::client
