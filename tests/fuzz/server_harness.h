// ServerHarness: zstored's CHP server and Dafka store running in-process on a
// temporary store (with the fault Env), driven over loopback by the fuzz
// target server_handlers_fuzz. One harness per process; each input is a
// sequence of operations (see run()). After every input it synchronises
// with both reactors through sentinel messages and checks invariants,
// trapping (a fuzzer finding) with a message on stderr when one fails:
//  - every KVSET is published, refused by a write failure, or counted
//    malformed: published + write failures + malformed == KVSETs sent;
//  - KVPUB sequences are 1, 2, 3, ... with no gap or repeat, and HUGZ carry
//    the last one; nothing refused is published;
//  - every snapshot reply is well-formed, within its subtree and not ahead
//    of the published sequence; a snapshot taken after the last KVPUB has
//    exactly its sequence;
//  - the store ACKs a partition only up to offsets that were all sent to it;
//  - both reactors answer within a deadline (no hang, no crash).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <zmq.hpp>

#include "protocol/chp_codec.h"
#include "server/chp/chp_server.h"
#include "server/dafka/dafka_store.h"
#include "server/dafka/tower.h"
#include "storage/chp/chp_store.h"
#include "storage/dafka/dafka_log.h"
#include "storage/db/database.h"
#include "storage/faults/fault_env.h"

namespace zstore::fuzz {

class ServerHarness {
 public:
  ServerHarness();
  ~ServerHarness();
  ServerHarness(const ServerHarness&) = delete;
  ServerHarness& operator=(const ServerHarness&) = delete;

  // Runs one input: operations [kind][length][length bytes], the bytes split
  // into frames as by frames_from_bytes. kind % 4: 0 a message to the CHP
  // collector, 1 a request on the snapshot port, 2 a Dafka message to the
  // store, 3 storage faults (first byte % 3: clear, ENOSPC on the log, on
  // table files). Then clears the faults, synchronises and checks.
  void run(const std::uint8_t* data, std::size_t size);
  std::uint64_t inputs() const { return inputs_; }

 private:
  using PartitionKey = std::pair<std::string, std::string>;  // (subject, partition)
  struct Sent {
    std::set<std::uint64_t> offsets;  // beyond contiguous
    std::uint64_t contiguous = 0;     // offsets 0 .. contiguous-1 all sent
  };

  void start_servers();
  void connect_clients();
  void send_collector(const std::vector<std::string_view>& frames);
  void send_snapshot_request(const std::vector<std::string_view>& frames);
  void send_dafka(const std::vector<std::string_view>& frames);
  void set_faults(std::uint8_t how);
  void settle();
  void settle_chp();
  void settle_dafka();
  void sync_chp(bool connecting);
  void sync_snapshots(bool exact);
  void sync_dafka();
  void beacon();
  // Reads the publisher until a KVPUB with key arrives (true) or timeout.
  bool read_updates_until(const std::string& key, int timeout_ms);
  void on_update(const protocol::chp::Update& update);
  void on_snapshot_reply(const protocol::chp::SnapshotReply& reply);
  void on_dafka(const protocol::dafka::Message& msg, std::uint64_t want, bool* done);
  void note_sent(const PartitionKey& key, std::uint64_t offset);

  std::string dir_;
  std::shared_ptr<storage::WriteFaults> faults_ = std::make_shared<storage::WriteFaults>();
  std::unique_ptr<storage::Database> db_;
  std::unique_ptr<storage::ChpStore> chp_store_;
  std::unique_ptr<storage::DafkaLog> dafka_log_;
  zmq::context_t ctx_;
  server::ChpMetrics chp_metrics_;
  server::DafkaMetrics dafka_metrics_;
  server::TowerMetrics tower_metrics_;
  std::unique_ptr<server::ChpServer> chp_;
  std::unique_ptr<server::Tower> tower_;
  std::unique_ptr<server::DafkaStore> dafka_;
  std::uint16_t chp_port_ = 0;
  std::uint16_t tower_port_ = 0;
  std::uint16_t node_port_ = 0;
  std::string store_address_;
  std::string node_address_;
  std::string sentinel_partition_;

  zmq::socket_t chp_pub_;     // to the collector
  zmq::socket_t chp_dealer_;  // to the snapshot port
  zmq::socket_t chp_sub_;     // from the publisher
  zmq::socket_t node_pub_;    // Dafka messages to the store
  zmq::socket_t node_beacon_;
  zmq::socket_t node_sub_;  // ACKs from the store

  std::uint64_t inputs_ = 0;
  std::uint64_t sentinels_ = 0;
  std::uint64_t bad_requests_sent_ = 0;     // snapshot requests the server counts as malformed
  std::multiset<std::string> outstanding_;  // subtrees of snapshots requested, not finished
  std::uint64_t kvsets_sent_ = 0;           // including sentinels
  std::uint64_t kvpubs_seen_ = 0;
  std::uint64_t last_sequence_ = 0;    // of the last KVPUB
  std::uint64_t sentinel_offset_ = 0;  // next offset of the Dafka sentinel partition
  std::map<PartitionKey, Sent> sent_;
  std::int64_t last_beacon_ms_ = 0;
};

}  // namespace zstore::fuzz
