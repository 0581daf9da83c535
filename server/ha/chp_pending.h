// PendingList: client updates a passive server received on its collector
// but has not yet seen republished by the active, oldest first, keyed by
// UUID (Guide Model Six). At takeover the new active applies them in order,
// with their properties and absolute expiry intact. UUIDs already seen from
// the active are remembered for a while so a late KVSET is not re-applied.
// Once the active has published an update of a key, pending updates of that
// key that reached us before it are superseded and dropped: the active never
// got them (a publisher drops messages to a peer that is reconnecting), and
// applying them at takeover would put an older value over a newer one.
// Bounded: past max_entries, or max_bytes of keys, UUIDs, properties and
// values, the oldest entries are dropped (and counted).
// A passive that (re)loads the active's snapshot drops, once it is loaded,
// everything it received until then (see drop_received_before): the
// active's KVPUBs of those updates may have gone out before we subscribed,
// and a delete or an overwritten value never shows up in the snapshot.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "storage/chp/chp_store.h"

namespace zstore::server {

class PendingList {
 public:
  explicit PendingList(std::size_t max_entries = 1'000'000, std::size_t max_seen = 1'000'000,
                       std::uint64_t max_bytes = 4ull << 30)
      : max_entries_(max_entries), max_seen_(max_seen), max_bytes_(max_bytes) {}

  // Adds a client update unless the active already republished its UUID.
  void add(storage::ChpWrite write);
  // The active republished uuid: forget it (and the older pending updates
  // of its key) and remember it as seen.
  void seen_from_active(const std::string& uuid);
  // Removes and returns every pending update, oldest first.
  std::vector<storage::ChpWrite> take_all();

  // A mark of the updates received so far, for drop_received_before.
  std::uint64_t mark() const { return next_id_; }
  // Forgets the updates received before mark was taken; returns how many.
  // A follower calls it with mark() once a snapshot is loaded: an update
  // received until then is in the snapshot (or was overwritten or deleted
  // there), or comes later as a KVPUB, or was never published; applying it
  // at takeover could put an old value over a newer one.
  std::size_t drop_received_before(std::uint64_t mark);

  std::size_t size() const { return entries_.size(); }
  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t dropped() const { return dropped_; }
  std::uint64_t superseded() const { return superseded_; }

 private:
  std::size_t max_entries_;
  std::size_t max_seen_;
  std::uint64_t max_bytes_;
  std::uint64_t bytes_ = 0;
  struct Entry {
    std::uint64_t id;  // arrival order
    storage::ChpWrite write;
  };
  using Iter = std::list<Entry>::iterator;
  void erase(Iter it);
  void drop_older_of_key(const std::string& key, std::uint64_t before_id);

  std::list<Entry> entries_;
  std::unordered_map<std::string, Iter> by_uuid_;
  std::unordered_map<std::string, std::map<std::uint64_t, Iter>> by_key_;  // arrival id -> entry
  std::uint64_t next_id_ = 0;
  std::unordered_set<std::string> seen_;
  std::deque<std::string> seen_order_;
  std::uint64_t dropped_ = 0;
  std::uint64_t superseded_ = 0;
};

}  // namespace zstore::server
