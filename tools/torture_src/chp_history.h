// ChpHistory: every KVSET the torture writers sent, per key in send order,
// with its UUID, value (empty = delete), ttl and the wall-clock time it was
// recorded (just before it was handed to ZeroMQ, so a server cannot have
// received it earlier). Thread-safe; the checks read it under its lock.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace zstore::torture {

// Keys outside the checked load: the good client's (good_client.h) write
// alongside the writers but are not recorded here, so the checks skip them.
inline constexpr std::string_view kUncheckedPrefix = "~good/";
// The counter's key (chp_counters.h) has checks of its own.
inline constexpr std::string_view kCounterPrefix = "~counter/";
inline bool unchecked_key(std::string_view key) {
  return key.starts_with(kUncheckedPrefix) || key.starts_with(kCounterPrefix);
}

struct ChpOp {
  std::string uuid;
  std::string value;         // empty: a delete
  std::uint64_t ttl_s = 0;   // 0: no ttl
  std::int64_t sent_ms = 0;  // wall clock, ms since the epoch
  bool is_delete() const { return value.empty(); }
  // Earliest time a server may expire it; 0 without ttl.
  std::int64_t expires_ms() const { return ttl_s ? sent_ms + static_cast<std::int64_t>(ttl_s) * 1000 : 0; }
};

struct OpRef {
  std::string key;
  std::size_t index = 0;  // within the key's ops
};

using KeyOps = std::map<std::string, std::vector<ChpOp>>;

class ChpHistory {
 public:
  void record(const std::string& key, ChpOp op);
  std::optional<OpRef> find(const std::string& uuid) const;
  std::optional<ChpOp> op(const OpRef& ref) const;
  // Calls fn with every key's ops, under the lock.
  void visit(const std::function<void(const KeyOps&)>& fn) const;
  std::size_t size() const;

 private:
  mutable std::mutex mu_;
  KeyOps by_key_;
  std::unordered_map<std::string, OpRef> by_uuid_;
  std::size_t size_ = 0;
};

std::int64_t now_ms();

}  // namespace zstore::torture
