// SnapshotSync: one synchronisation with a server. Collects the KVSYNC
// entries of the current snapshot request and buffers the KVPUBs that arrive
// meanwhile, until KTHXBAI says at which sequence the snapshot was taken.
// Pure logic, owned by the agent thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/chp_codec.h"

namespace zstore::client {

// Whether key lies in subtree (a plain byte prefix, as CHP filters).
inline bool in_subtree(std::string_view key, std::string_view subtree) { return key.starts_with(subtree); }

// A complete snapshot plus the updates received while it was in flight.
struct LoadedSnapshot {
  // The latest entry per key; with resumed, the updates after our sequence
  // (an empty body deletes the key) to apply on top of the map we have.
  std::map<std::string, protocol::chp::KvMsg> entries;
  std::uint64_t sequence = 0;
  bool resumed = false;
  std::vector<protocol::chp::KvMsg> updates;  // in arrival order
};

// What a KTHXBAI's properties say about resume (docs/chp-extensions.md):
// the server keeps a history (history-from, so it reads the resume frame),
// and this reply was a resume (resumed=1), not a snapshot.
struct KthxbaiFacts {
  bool offers_resume = false;
  bool resumed = false;
  bool takes_writes = false;  // writes=1: the server answers WRITE? (protocol/chp_writes.h)
  bool key_history = false;   // key-history=1: the server answers HISTORY? (protocol/chp_key_history.h)
};
KthxbaiFacts read_kthxbai(std::string_view properties);

class SnapshotSync {
 public:
  SnapshotSync(std::string subtree, std::size_t max_buffered);

  // A new request replaces the previous one: its entries are forgotten, the
  // buffered updates kept (they came from the subscriber, not the request).
  void restart_request() { entries_.clear(); }

  // A KVSYNC of the current request; entries outside the subtree are ignored.
  void add_entry(protocol::chp::KvMsg entry);

  // A KVPUB received before the snapshot completed. False when the buffer is
  // full (the caller must start over: an update would otherwise be lost).
  [[nodiscard]] bool buffer_update(protocol::chp::KvMsg update);

  // KTHXBAI: hands over everything collected; the object is then empty.
  LoadedSnapshot finish(std::uint64_t sequence, bool resumed = false);

 private:
  std::string subtree_;
  std::size_t max_buffered_;
  std::map<std::string, protocol::chp::KvMsg> entries_;
  std::vector<protocol::chp::KvMsg> updates_;
};

}  // namespace zstore::client
