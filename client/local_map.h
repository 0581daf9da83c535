// LocalMap: the client's copy of the (sub)map and the sequence it reflects,
// with the CHP rules for changing it: a snapshot replaces everything, and a
// KVPUB applies only when its sequence is above the last one. Pure logic:
// no sockets, no locking (ClientState guards it).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "client/change.h"
#include "protocol/chp_codec.h"

namespace zstore::client {

class LocalMap {
 public:
  // Replaces the whole map by snapshot (keyed entries, empty bodies skipped)
  // taken at `sequence`. Returns what differs from the previous map: deletes
  // for keys that disappeared, sets for new or changed entries.
  std::vector<Change> replace(const std::map<std::string, protocol::chp::KvMsg>& snapshot, std::uint64_t sequence,
                              ChangeSource source);

  // Applies a resume on top of the map: each update (the latest per key; an
  // empty body deletes), then the map reflects `sequence`. Returns the
  // changes.
  std::vector<Change> merge(const std::map<std::string, protocol::chp::KvMsg>& updates, std::uint64_t sequence,
                            ChangeSource source);

  enum class Outcome : std::uint8_t { kApplied, kStale };
  struct Applied {
    Outcome outcome = Outcome::kStale;
    std::optional<Change> change;  // empty for stale updates and deletes of absent keys
  };
  // Applies a KVPUB whose sequence is above sequence(); discards it otherwise.
  Applied apply(const protocol::chp::KvMsg& update);

  std::optional<std::string> get(std::string_view key) const;
  // The value and the sequence of the key's last update.
  std::optional<std::pair<std::string, std::uint64_t>> get_with_sequence(std::string_view key) const;
  std::map<std::string, std::string> values() const;
  std::uint64_t sequence() const { return sequence_; }
  std::size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::string value;
    std::string properties;
    std::uint64_t sequence = 0;
  };
  std::map<std::string, Entry, std::less<>> entries_;
  std::uint64_t sequence_ = 0;
};

}  // namespace zstore::client
