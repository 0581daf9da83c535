// WriteWaiters: the confirmed writes a CloneClient's API handed to its agent
// and not yet answered, by UUID, and the handles (PendingWrite) waiting for
// each. The API adds, the agent resolves; a write whose handles are all
// gone is no longer wanted. Thread-safe (one mutex).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/pending_write.h"
#include "protocol/frames.h"

namespace zstore::client {

struct PendingWrite::State {
  std::string uuid;
  protocol::Frames request;  // the WRITE? frames, for a retry
  mutable std::mutex mu;
  mutable std::condition_variable cv;
  std::optional<WriteOutcome> outcome;
};

class WriteWaiters {
 public:
  void add(const std::shared_ptr<PendingWrite::State>& state);
  // Gives outcome to every live handle of uuid and forgets it.
  void resolve(std::string_view uuid, const WriteOutcome& outcome);
  // Whether a handle of uuid still lives (else forgotten, and false).
  bool wanted(std::string_view uuid);
  // Writes added and not resolved (handles possibly gone).
  std::size_t size() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::vector<std::weak_ptr<PendingWrite::State>>, std::less<>> waiting_;
};

}  // namespace zstore::client
