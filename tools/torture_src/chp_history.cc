#include "tools/torture_src/chp_history.h"

#include <chrono>

namespace zstore::torture {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void ChpHistory::record(const std::string& key, ChpOp op) {
  std::lock_guard lock(mu_);
  auto& ops = by_key_[key];
  by_uuid_[op.uuid] = OpRef{key, ops.size()};
  ops.push_back(std::move(op));
  ++size_;
}

std::optional<OpRef> ChpHistory::find(const std::string& uuid) const {
  std::lock_guard lock(mu_);
  auto it = by_uuid_.find(uuid);
  if (it == by_uuid_.end()) return std::nullopt;
  return it->second;
}

std::optional<ChpOp> ChpHistory::op(const OpRef& ref) const {
  std::lock_guard lock(mu_);
  auto it = by_key_.find(ref.key);
  if (it == by_key_.end() || ref.index >= it->second.size()) return std::nullopt;
  return it->second[ref.index];
}

void ChpHistory::visit(const std::function<void(const KeyOps&)>& fn) const {
  std::lock_guard lock(mu_);
  fn(by_key_);
}

std::size_t ChpHistory::size() const {
  std::lock_guard lock(mu_);
  return size_;
}

}  // namespace zstore::torture
