#include "client/client_state.h"

namespace zstore::client {

namespace chp = protocol::chp;
using Clock = std::chrono::steady_clock;

void ClientState::changed() {
  ++version_;
  cv_.notify_all();
}

void ClientState::begin_session(std::size_t index, SessionCause cause) {
  std::lock_guard lock(mu_);
  synced_ = false;
  stats_.current_server = index;
  if (cause == SessionCause::kFailover) ++stats_.failovers;
  if (cause == SessionCause::kResync) ++stats_.resyncs;
  changed();
}

std::vector<Change> ClientState::load(const LoadedSnapshot& snapshot) {
  std::lock_guard lock(mu_);
  auto source = stats_.snapshots_applied == 0 ? ChangeSource::kInitialSnapshot : ChangeSource::kResync;
  std::vector<Change> changes = snapshot.resumed ? map_.merge(snapshot.entries, snapshot.sequence, source)
                                                 : map_.replace(snapshot.entries, snapshot.sequence, source);
  if (snapshot.resumed) ++stats_.resumes;
  for (const auto& [key, entry] : snapshot.entries) uuids_.add(entry.uuid);
  for (const auto& update : snapshot.updates) {
    uuids_.add(update.uuid);
    auto applied = map_.apply(update);
    if (applied.outcome == LocalMap::Outcome::kStale) ++stats_.stale_discarded;
    if (applied.change) changes.push_back(std::move(*applied.change));
  }
  ++stats_.snapshots_applied;
  synced_ = true;
  changed();
  return changes;
}

std::optional<Change> ClientState::apply(const chp::KvMsg& update) {
  std::lock_guard lock(mu_);
  uuids_.add(update.uuid);
  auto applied = map_.apply(update);
  if (applied.outcome == LocalMap::Outcome::kStale) ++stats_.stale_discarded;
  changed();
  return std::move(applied.change);
}

void ClientState::note_uuid(std::string_view uuid) {
  if (uuid.empty()) return;
  std::lock_guard lock(mu_);
  uuids_.add(uuid);
  changed();
}

void ClientState::expect_servers(std::size_t servers) {
  std::lock_guard lock(mu_);
  handshake_errors_.resize(servers);
}

void ClientState::set_handshake_error(std::size_t index, std::optional<std::string> why) {
  std::lock_guard lock(mu_);
  if (index >= handshake_errors_.size()) handshake_errors_.resize(index + 1);
  if (why) {
    ++stats_.handshake_failures;
    stats_.last_error = *why;
  }
  handshake_errors_[index] = std::move(why);
  changed();
}

std::optional<std::string> ClientState::handshake_error() const {
  std::lock_guard lock(mu_);
  std::string out;
  for (const auto& error : handshake_errors_) {
    if (!error) return std::nullopt;
    out += (out.empty() ? "" : "; ") + *error;
  }
  if (out.empty()) return std::nullopt;
  return out;
}

void ClientState::set_unsent(std::size_t queued) {
  unsent_.store(queued, std::memory_order_relaxed);
  wake_room_waiters();
}

void ClientState::write_taken() {
  in_pipe_.fetch_sub(1, std::memory_order_relaxed);
  wake_room_waiters();
}

void ClientState::wake_room_waiters() {
  if (room_waiters_.load() == 0) return;
  std::lock_guard lock(mu_);
  cv_.notify_all();
}

bool ClientState::wait_unsent_below(std::size_t limit, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  ++room_waiters_;
  bool room = cv_.wait_for(lock, timeout, [&] { return unsent_writes() < limit; });
  --room_waiters_;
  return room;
}

void ClientState::update_stats(const std::function<void(ClientStats&)>& fn) {
  std::lock_guard lock(mu_);
  fn(stats_);
  changed();
}

std::optional<std::string> ClientState::get(std::string_view key) const {
  std::lock_guard lock(mu_);
  return map_.get(key);
}

std::optional<std::pair<std::string, std::uint64_t>> ClientState::get_with_sequence(std::string_view key) const {
  std::lock_guard lock(mu_);
  return map_.get_with_sequence(key);
}

std::map<std::string, std::string> ClientState::values() const {
  std::lock_guard lock(mu_);
  return map_.values();
}

std::uint64_t ClientState::sequence() const {
  std::lock_guard lock(mu_);
  return map_.sequence();
}

bool ClientState::has_map() const {
  std::lock_guard lock(mu_);
  return stats_.snapshots_applied > 0;
}

bool ClientState::synced() const {
  std::lock_guard lock(mu_);
  return synced_;
}

ClientStats ClientState::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

bool ClientState::wait_synced(std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [this] { return synced_; });
}

bool ClientState::wait_published(std::string_view uuid, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return uuids_.contains(uuid); });
}

bool ClientState::wait_for(const std::function<bool()>& predicate, std::chrono::milliseconds timeout) const {
  const auto deadline = Clock::now() + timeout;
  std::unique_lock lock(mu_);
  while (true) {
    const std::uint64_t seen = version_;
    lock.unlock();
    if (predicate()) return true;
    lock.lock();
    if (!cv_.wait_until(lock, deadline, [&] { return version_ != seen; })) return false;
  }
}

}  // namespace zstore::client
