// RecentUuids: the last N distinct UUIDs seen on KVPUBs and snapshot entries,
// so a writer can tell its own update was published. Not thread-safe.
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_set>

namespace zstore::client {

class RecentUuids {
 public:
  explicit RecentUuids(std::size_t capacity) : capacity_(capacity) {}

  // Remembers uuid (empty ones are ignored), forgetting the oldest when full.
  void add(std::string_view uuid) {
    if (uuid.empty() || capacity_ == 0) return;
    auto [it, inserted] = set_.emplace(uuid);
    if (!inserted) return;
    order_.push_back(*it);
    if (order_.size() > capacity_) {
      set_.erase(order_.front());
      order_.pop_front();
    }
  }

  bool contains(std::string_view uuid) const { return set_.contains(std::string(uuid)); }

 private:
  std::size_t capacity_;
  std::deque<std::string> order_;
  std::unordered_set<std::string> set_;
};

}  // namespace zstore::client
