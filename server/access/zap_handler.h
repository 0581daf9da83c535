// ZapHandler: zstored's ZeroMQ authentication handler (rfc 27). It binds
// inproc://zeromq.zap.01 in the context the reactors use (so it must start
// before they bind and stop after they close) and answers every CURVE
// handshake on its own thread: 200 with the client's name as User-Id when
// the client's public key is in the allow list, else 400. The allow list is
// every `NAME.key` certificate in the --curve-allow directory (NAME names
// the client; `zstored.key` is skipped: that name is reserved), plus our own
// key as "zstored" (kPeerName, chp_acl.h: the members of a cluster share
// one server certificate and connect to each other with it). The HA state
// port (domain kHaZapDomain) admits our own key only. reload()
// re-reads the directory (SIGHUP); a reload that removes a key counts a
// revocation (AuthMetrics::revocations), on which the reactors end the
// connections of their bound sockets: the removed key is refused when it
// reconnects. Failures are counted per ZAP domain (the port) and logged,
// rate-limited, naming key and address.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include <zmq.hpp>

#include "server/access/auth_metrics.h"
#include "server/reactor/log.h"
#include "server/reactor/reactor_thread.h"

namespace zstore::server {

class ZapHandler {
 public:
  ZapHandler(zmq::context_t& ctx, std::string allow_dir, std::string own_public_key, AuthMetrics& metrics);
  ~ZapHandler();
  ZapHandler(const ZapHandler&) = delete;
  ZapHandler& operator=(const ZapHandler&) = delete;

  // Loads the allow list, binds and starts the thread. Returns an error text
  // (unreadable directory) or empty; throws zmq::error_t if it cannot bind.
  std::string start();
  void stop();
  // Re-reads the directory; thread-safe. Returns an error text or empty
  // (on error the previous list stays).
  std::string reload();
  std::size_t allowed() const;  // keys in the list, ours included
  // The name of a Z85 public key in the list, empty when it is not there
  // (or not a key). Thread-safe.
  std::string name_of_key(const std::string& z85_key) const;

 private:
  void answer(zmq::socket_t& socket);
  std::string name_of(const std::string& raw_key) const;  // empty: refused

  zmq::context_t& ctx_;
  std::string allow_dir_;
  std::string own_key_;  // raw 32 bytes
  AuthMetrics& metrics_;
  mutable std::mutex mutex_;
  std::map<std::string, std::string> names_;  // raw key -> client name
  RateLimiter refusal_log_;
  RateLimiter error_log_;
  std::atomic<std::uint64_t> loop_errors_{0};
  std::atomic<std::int64_t> heartbeat_ms_{0};
  zmq::socket_t socket_;  // the REP bound at the ZAP endpoint
  ReactorThread reactor_{heartbeat_ms_};
};

}  // namespace zstore::server
