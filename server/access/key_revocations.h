// KeyRevocations: how many reloads of the CURVE allow list removed a key.
// The ZAP handler counts them (after the new list is in force); a reactor
// that binds CURVE ports watches the count once per turn (Watch) and, when
// it moved, ends every connection of its bound sockets (BoundEndpoint).
// Clients then connect and authenticate again, so a removed key loses its
// open connections at once instead of keeping them until they end.
#pragma once

#include <atomic>
#include <cstdint>

namespace zstore::server {

class KeyRevocations {
 public:
  void add() { count_.fetch_add(1, std::memory_order_release); }
  std::uint64_t count() const { return count_.load(std::memory_order_acquire); }

  // One reader's view. news() is true once after each revocation (several
  // since the last call count as one); a Watch of null never has news.
  class Watch {
   public:
    Watch() = default;
    explicit Watch(const KeyRevocations* revocations)
        : revocations_(revocations), seen_(revocations ? revocations->count() : 0) {}
    bool news() {
      if (!revocations_) return false;
      std::uint64_t now = revocations_->count();
      if (now == seen_) return false;
      seen_ = now;
      return true;
    }

   private:
    const KeyRevocations* revocations_ = nullptr;
    std::uint64_t seen_ = 0;
  };

 private:
  std::atomic<std::uint64_t> count_{0};
};

}  // namespace zstore::server
