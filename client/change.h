// Change: one modification of a CloneClient's local map, as passed to the
// change callback (a set, or a delete with deleted == true).
#pragma once

#include <cstdint>
#include <string>

namespace zstore::client {

// What caused a change.
enum class ChangeSource : std::uint8_t {
  kInitialSnapshot,  // the first snapshot the client loaded
  kResync,           // a later snapshot (failover, resync) differed from the map
  kUpdate,           // a live KVPUB from the server
};

struct Change {
  std::string key;
  std::string value;           // empty when deleted
  std::uint64_t sequence = 0;  // KVPUB sequence; for snapshots the entry's (or the snapshot's for deletes)
  std::string properties;      // raw "name=value\n"*, as the server sent them
  bool deleted = false;
  ChangeSource source = ChangeSource::kUpdate;
};

}  // namespace zstore::client
