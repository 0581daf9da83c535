// ConditionalTransport: the chp load sent as confirmed, conditional writes
// (WRITE? on the snapshot socket, docs/chp-extensions.md), each a
// read-modify-write of the writer's own keys: a write carries if-absent=1
// for a key the writer has not written yet, else if-seq=N with N the
// sequence its last write of that key was applied at (from its WRITTEN).
// A write of a key whose previous write is still unanswered waits for that
// answer first, as a client doing get-then-set would, and sends that
// write again (the same uuid) each second its answer does not come. Keys are the load's
// with the first byte replaced by the writer's own letter, so no two
// writers share a key. Completion is the KVPUB, as in the plain run (the
// same SUB receiver), so the two rates compare the same thing.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include <zmq.hpp>

#include "tools/bench/transports.h"

namespace zstore::bench {

class ConditionalTransport : public PubSubTransport {
 public:
  // snapshot: the server's snapshot (ROUTER) endpoint; publisher: its KVPUB endpoint.
  ConditionalTransport(zmq::context_t& context, std::string snapshot, std::string publisher,
                       security::SocketSecurity security = {});
  std::unique_ptr<Outlet> open(int writer) override;

  // Outcomes seen, all writers and runs: refused and failed should stay 0
  // (nobody else writes a writer's keys).
  std::uint64_t applied() const { return applied_.load(); }
  std::uint64_t refused() const { return refused_.load(); }
  std::uint64_t failed() const { return failed_.load(); }
  // Writes sent again after a second without their WRITTEN (which the
  // server drops when its queue to the writer is full).
  std::uint64_t resent() const { return resent_.load(); }
  // Writes that first waited for the answer to their key's unanswered
  // write (the writer sends nothing meanwhile).
  std::uint64_t waited() const { return waited_.load(); }

 private:
  zmq::context_t& context_;
  std::string snapshot_;
  security::SocketSecurity security_;
  std::atomic<std::uint64_t> applied_{0}, refused_{0}, failed_{0}, resent_{0}, waited_{0};
  friend class WriteOutlet;
};

}  // namespace zstore::bench
