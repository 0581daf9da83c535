// ChpWriteRequests: the WRITE? requests (protocol/chp_writes.h) a CHP
// reactor took in one turn, decided together against the store: a request
// whose precondition holds becomes a write of the turn's batch, one that
// does not is refused with the key's current sequence. Keys in one group
// are distinct (the caller decides the group before adding a key again), so
// each precondition is judged against the map as it is before the batch,
// and the batch is applied atomically with the sequences it assigns.
// Applied outcomes are remembered by UUID (the last `remembered` of them):
// a retry gets the first outcome instead of a second write. Not
// thread-safe: one reactor's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "protocol/chp_writes.h"
#include "server/chp/remembered_outcomes.h"
#include "storage/chp/chp_store.h"

namespace zstore::server {

class ChpWriteRequests {
 public:
  explicit ChpWriteRequests(std::size_t remembered = 65536);

  struct Reply {
    std::string identity;  // the requester's ROUTER identity
    protocol::chp::WriteOutcome outcome;
  };

  // An applied write's outcome, for a retry of the same UUID.
  std::optional<protocol::chp::WriteOutcome> earlier(std::string_view uuid) const;
  bool has_key(std::string_view key) const { return keys_.count(std::string(key)) != 0; }
  bool empty() const { return requests_.empty(); }
  // Adds a request (its key not in the group: has_key()).
  void add(std::string identity, storage::ChpWrite write, protocol::chp::Precondition precondition);

  // Judges each request at now_ms (a key past its expiry is absent): moves
  // the writes to apply into *writes (cleared first) and returns the
  // refusals, and the failures to read the store. The group is then
  // waiting for applied() or failed().
  std::vector<Reply> decide(storage::ChpStore& store, std::uint64_t now_ms, std::vector<storage::ChpWrite>* writes);
  // After writes were applied (their sequences set): their replies, each
  // remembered. Ends the group.
  std::vector<Reply> applied(const std::vector<storage::ChpWrite>& writes);
  // After the batch failed: a failed reply for each write. Ends the group.
  std::vector<Reply> failed(const std::string& why);
  // An update this member stored from its active (a passive's follower): a
  // retry of its uuid after a failover is answered applied at sequence.
  void remember_applied(std::string_view uuid, std::uint64_t sequence);

 private:
  struct Request {
    std::string identity;
    storage::ChpWrite write;
    protocol::chp::Precondition precondition;
  };

  std::vector<Request> requests_;
  std::unordered_set<std::string> keys_;
  struct Deciding {
    std::string identity;
    std::string uuid;
  };
  std::vector<Deciding> deciding_;  // the writes decide() let through, in order
  RememberedOutcomes outcomes_;     // applied write's uuid -> its sequence
};

}  // namespace zstore::server
