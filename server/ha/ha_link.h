// HaLink: the Binary Star state channel between the two servers of a pair.
// A PUB bound at our endpoint sends our state every heartbeat; a SUB
// connected to the peer receives its. A state message is the state's ASCII
// digit ("1".."4", all a reference bstar peer reads) and a second frame of
// CHP-style properties telling the sender's map (see HaPeerState); a
// one-frame message is accepted as the digit alone.
// Test seam: while the file named by cut_file exists, nothing is sent or
// received (a partition of the HA link; see tests/server/ha_partition_test).
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <zmq.hpp>

#include "security/curve_socket.h"
#include "server/ha/binary_star.h"
#include "storage/chp/chp_epochs.h"

namespace zstore::server {

// One state message: the state and what the sender says of its map.
struct HaPeerState {
  HaState state = HaState::kPrimary;
  bool has_facts = false;  // false: a digit alone (facts are defaults)
  MapFacts map;
  storage::ChpEpochs epochs;     // the epochs that led to map.last
  std::uint64_t reconciled = 0;  // the receiver's last sequence the sender took over (0: none)
  // Without CURVE, how a member tells its peer's requests on its CHP port
  // from anyone's (pair_routing_id below): the sender's pair token, and the
  // receiver's as the sender last heard it (empty: none yet).
  std::string pair_token;
  std::string heard_token;
};

// A new random pair token (32 hex digits), one per process start.
std::string new_pair_token();
// The routing id a member's follower or reconciler connects with to its
// peer's CHP port: the token and a number unique in this process, so a new
// connection never collides with one the peer has not yet seen close.
std::string pair_routing_id(std::string_view token);
// The token of such a routing id; empty for any other.
std::string_view pair_token_of(std::string_view routing_id);

// The properties frame of a state message, and back (nullopt: malformed).
std::string format_ha_facts(const HaPeerState& state);
std::optional<HaPeerState> parse_ha_message(std::string_view digit, const std::string* facts);

class HaLink {
 public:
  // Binds bind_endpoint, connects to peer_endpoint; throws zmq::error_t.
  HaLink(zmq::context_t& ctx, const std::string& bind_endpoint, const std::string& peer_endpoint,
         std::string cut_file = {}, security::SocketSecurity security = {});

  void send_state(const HaPeerState& state);
  // A well-formed peer state if one is waiting; malformed messages are
  // dropped and counted in *malformed.
  std::optional<HaPeerState> receive(std::uint64_t* malformed);
  zmq::socket_t& subscriber() { return sub_; }

 private:
  bool cut();

  zmq::socket_t pub_;
  zmq::socket_t sub_;
  std::string cut_file_;
  std::chrono::steady_clock::time_point next_cut_check_{};
  bool cut_ = false;
};

}  // namespace zstore::server
