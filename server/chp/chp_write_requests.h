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
#include <span>
#include <string>
#include <string_view>
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
  bool has_key(std::string_view key) const;
  bool empty() const { return n_ == 0; }
  // Adds a request for key (not in the group: has_key()) and returns its
  // write, key set, to be filled in: every other field is as an earlier
  // group left it (assign each). The writes' buffers are kept from group to
  // group, so a request allocates only where it outgrows them.
  storage::ChpWrite& add(std::string_view identity, std::string_view key, protocol::chp::Precondition precondition);

  // Judges each request at now_ms (a key past its expiry is absent): the
  // writes to apply are swapped into the first n slots of *writes (grown
  // as needed; the slots hand their buffers to later requests) and n is
  // returned; the refusals, and the failures to read the store, are
  // appended to *replies. The group is then waiting for applied() or
  // failed().
  std::size_t decide(storage::ChpStore& store, std::uint64_t now_ms, std::vector<storage::ChpWrite>* writes,
                     std::vector<Reply>* replies);
  // After the writes decide() let through were applied (their sequences
  // set): their replies, each remembered. Ends the group.
  std::vector<Reply> applied(std::span<const storage::ChpWrite> writes);
  // The same replies, not remembered yet: writes that wait for their fsync
  // (remember_applied() each once it returned). Ends the group.
  std::vector<Reply> applied_unsynced(std::span<const storage::ChpWrite> writes);
  // After the batch of those writes failed: a failed reply for each. Ends
  // the group.
  std::vector<Reply> failed(std::span<const storage::ChpWrite> writes, const std::string& why);
  // An update this member stored from its active (a passive's follower): a
  // retry of its uuid after a failover is answered applied at sequence.
  void remember_applied(std::string_view uuid, std::uint64_t sequence);

 private:
  struct Request {
    std::string identity;
    storage::ChpWrite write;
    protocol::chp::Precondition precondition;
  };
  struct Verdict {
    bool apply = false;  // else answered now, with kind and sequence
    protocol::chp::WriteOutcome::Kind kind = protocol::chp::WriteOutcome::Kind::kFailed;
    std::uint64_t sequence = 0;
  };
  static Verdict judge(std::string_view uuid, const protocol::chp::Precondition& precondition,
                       const storage::ChpKeyVersion& version, std::uint64_t now_ms);
  // The slot of key_slots_ holding key's request (index + 1), or the empty
  // one where it would go.
  std::size_t key_slot(std::string_view key) const;
  void index_keys();  // rebuilds key_slots_ at twice its size for the requests so far

  std::vector<Request> requests_;  // the first n_ are the group's; the rest keep buffers
  std::size_t n_ = 0;
  std::vector<std::uint32_t> key_slots_;  // open addressing over the group's keys: request index + 1, 0 empty
  std::vector<std::string> deciding_;     // the identities of the writes decide() let through, in order
  std::size_t deciding_n_ = 0;
  RememberedOutcomes outcomes_;  // applied write's uuid -> its sequence
};

}  // namespace zstore::server
