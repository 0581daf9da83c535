// CloneAgent: the CloneClient's background thread. It owns every socket:
// per server an XPUB to its collector (P+2; the XPUB tells when the server's
// SUB listens, so no KVSET is sent into the void), and for the server in use
// a SUB to its publisher (P+1) and one DEALER per snapshot request (P).
// It talks to the API only through its inproc pipe and the ClientState.
// Each socket has a HandshakeMonitor (a WatchedSocket): a failed security
// handshake with a server is recorded in the ClientState until that server
// speaks again.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <zmq.hpp>

#include "client/client_state.h"
#include "client/options.h"
#include "client/server_endpoints.h"
#include "client/snapshot_sync.h"
#include "protocol/chp_codec.h"
#include "security/watched_socket.h"

namespace zstore::client {

// Commands on the pipe from CloneClient to the agent.
inline constexpr std::string_view kPipeSet = "SET";      // then the 5 KVSET frames
inline constexpr std::string_view kPipeStop = "STOP";    // alone
inline constexpr std::string_view kPipeWrite = "WRITE";  // then the 6 WRITE? frames (a confirmed write)

class CloneAgent {
 public:
  static constexpr std::size_t kPipeSlack = 4096;              // more than the API pipe holds (two HWMs of 1000)
  static constexpr std::size_t kMaxBufferedUpdates = 1000000;  // KVPUBs held while a snapshot loads

  // pipe: the agent's end of the command pipe (PAIR), already bound.
  CloneAgent(zmq::context_t& ctx, const Options& options, std::vector<ServerEndpoints> servers, ClientState& state,
             zmq::socket_t pipe);

  // Runs until STOP arrives on the pipe, then closes every socket (linger 0).
  // Never throws: errors are counted in ClientStats.
  void run();

 private:
  using Clock = std::chrono::steady_clock;
  using SessionCause = ClientState::SessionCause;

  // Session with the server in use: wait for the first message on the SUB
  // (proof that the subscription is live), request a snapshot, then apply
  // updates live. A server silent while we subscribe may be a Binary Star
  // passive whose peer died: it takes over only when a client "votes" with an
  // ICANHAZ?, so kSubscribing sends one every failover_timeout/2 and ignores
  // its reply (taken before our subscription was proven live, it could miss
  // updates); the request that counts is the one sent after the proof.
  enum class Phase : std::uint8_t { kSubscribing, kRequesting, kLive };

  struct Collector {
    security::WatchedSocket socket;
    std::set<std::string> topics;  // the server's subscriptions; empty = not listening
    std::deque<protocol::Frames> pending;
  };

  bool step();  // one poll round; false once STOP arrived
  bool on_pipe();
  void note_unsent();  // the fewest writes queued for one server, for set()
  void on_subscriber();
  void on_snapshot_socket();
  void on_collector(Collector& collector);
  void on_timers();
  void check_handshakes();
  void check_handshake(std::size_t index, security::WatchedSocket& socket);
  void heard_from(std::size_t index);  // a server spoke: its handshake works

  void handle_update(protocol::chp::Update update);
  void handle_kvpub(protocol::chp::KvMsg msg);
  void handle_reply(protocol::chp::SnapshotReply reply);
  void load_snapshot(std::uint64_t sequence, bool resumed);
  void on_gap();

  void start_session(std::size_t index, SessionCause cause);
  void send_request();
  void send_vote();
  void ask();  // a fresh DEALER and an ICANHAZ? on it
  std::chrono::milliseconds vote_interval() const;
  void abandon_request(const std::string& why);
  void forward_kvset(protocol::Frames frames);
  void flush(Collector& collector);
  void notify(const std::vector<Change>& changes);
  void count_malformed(const protocol::DecodeError& error);
  void count_agent_error(const std::string& what);

  // Confirmed writes (clone_agent_writes.cc): WRITE? on a DEALER of their
  // own to the server in use, once its KTHXBAI said writes=1; re-sent (same
  // UUID) after silence, a not-active answer or a new session, until
  // answered or no handle wants them.
  void take_write(protocol::Frames request);
  void open_writer(bool takes_writes);
  void send_writes();
  void on_writer();
  void write_timers(Clock::time_point now);
  std::optional<Clock::time_point> next_write_deadline() const;

  Clock::time_point next_deadline() const;
  zmq::socket_t make_socket(zmq::socket_type type);
  security::WatchedSocket watch(zmq::socket_t socket);
  void close_all();

  zmq::context_t& ctx_;
  Options options_;
  std::vector<ServerEndpoints> servers_;
  ClientState& state_;
  zmq::socket_t pipe_;
  std::vector<Collector> collectors_;

  std::size_t current_ = 0;
  std::uint64_t session_ = 0;     // bumped by start_session
  std::uint64_t stream_max_ = 0;  // highest sequence seen on this session's SUB
  Phase phase_ = Phase::kSubscribing;
  security::WatchedSocket sub_;
  security::WatchedSocket dealer_;  // open only while a request is outstanding
  std::vector<bool> refused_;       // per server: its last handshake failed
  SnapshotSync sync_;
  Clock::time_point last_heard_;
  Clock::time_point request_deadline_;         // kRequesting: retry; kSubscribing: next vote
  std::chrono::milliseconds request_wait_{0};  // silence allowed for the outstanding request
  std::chrono::milliseconds next_wait_{0};     // for the next one (doubling)
  std::optional<Clock::time_point> flush_retry_;
  bool resumable_ = false;  // a server of the list announced history-from

  struct InFlight {
    protocol::Frames request;
    bool sent = false;
    Clock::time_point resend_at{};
  };
  std::map<std::string, InFlight> writes_;  // by uuid
  security::WatchedSocket writer_;          // this session's, once writes are taken
  enum class WritesTaken : std::uint8_t { kUnknown, kYes, kNo };
  WritesTaken writes_taken_ = WritesTaken::kUnknown;
};

}  // namespace zstore::client
