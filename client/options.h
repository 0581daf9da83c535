// Options of a CloneClient: which CHP servers to use, which subtree to mirror,
// how fast to fail over and retry, and whom to tell about changes.
// A CloneClient copies its Options at construction; they never change after.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "client/change.h"
#include "security/curve_socket.h"

namespace zmq {
class context_t;
}

namespace zstore::client {

struct Options {
  // One or two servers, each "tcp://host:P": snapshot port P, publisher P+1,
  // collector P+2. Updates go to every server; the map is read from one.
  std::vector<std::string> servers;

  // Key prefix to mirror ("" = the whole map; by convention "/a/b/").
  std::string subtree;

  // Silence (no HUGZ, KVPUB or snapshot traffic) after which the client
  // switches to the next server and resynchronises. While a server has not
  // yet spoken, the client "votes" for it (Binary Star: a passive server
  // takes over on a client request once its peer is dead) with an ICANHAZ?
  // every failover_timeout / 2. Keep it well above the servers' HUGZ
  // interval (zstored: --hugz-interval-ms, 1 s by default), twice it at
  // least: a new session whose subscription lands just after a HUGZ hears
  // the next one only an interval later, and with a timeout equal to the
  // interval it restarts before then, in the same phase, again and again.
  std::chrono::milliseconds failover_timeout{3000};

  // A snapshot request left unanswered this long is sent again, on a fresh
  // connection; the delay doubles up to the cap and retries never stop.
  std::chrono::milliseconds snapshot_retry_initial{100};
  std::chrono::milliseconds snapshot_retry_max{2000};

  // Resume (docs/chp-extensions.md): after a failover, reconnect or gap,
  // ask for only the updates after our last applied sequence, once a server
  // of the list has announced that it keeps a history (KTHXBAI
  // "history-from"); the full snapshot otherwise. Turn it off for a server
  // list that mixes zstored with a reference clone server (which misreads
  // the extra request frame).
  bool resume = true;

  // Updates the subscriber queues while the application is slow; past it
  // the server drops updates for us and the client detects the gap by
  // sequence and resumes (or takes a snapshot). Bounds the client's memory.
  int max_queued_updates = 100000;

  // Writes (set, erase) handed to the client that no server has taken yet
  // (none connected or listening, or the network behind): at this many
  // set() waits up to write_wait for room, then throws WriteQueueFull
  // instead of queueing more. Nothing queued is dropped.
  std::size_t max_unsent_writes = 100000;
  std::chrono::milliseconds write_wait{10000};

  // Called on the client's background thread for every change to the local
  // map, after the map was updated. It may call the client's read methods;
  // it must not block for long. Exceptions it throws are counted and dropped.
  std::function<void(const Change&)> on_change;

  // ZeroMQ context to create sockets in; nullptr = the client owns one.
  // A borrowed context must outlive the client.
  zmq::context_t* context = nullptr;

  // CURVE (rfc 26): our certificate (with its secret key) and the server's
  // public key, for every connection; no cert = plain. A server that does
  // not know our key, a wrong server key, or CURVE on one side only shows
  // in CloneClient::handshake_error(); the client keeps retrying (and
  // failing over) as for a server that is down.
  security::SocketSecurity security;
};

}  // namespace zstore::client
