#include "tools/bench/floor_relay.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <span>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <rocksdb/write_batch.h>

#include "protocol/dafka_codec.h"
#include "storage/chp/chp_map_batch.h"
#include "storage/chp/chp_store.h"
#include "storage/dafka/dafka_log.h"
#include "storage/dafka/dafka_record_batch.h"
#include "storage/db/database.h"
#include "tools/bench/options.h"
#include "tools/bench/relay.h"
#include "transport/zmq_frames.h"

namespace zstore::bench {
namespace {

using Ready = SourceThread::Ready;

// Messages a turn takes at most: zstored's default (ChpServerConfig::max_batch,
// DafkaStoreConfig::max_batch).
constexpr std::size_t kMaxBatch = 4096;

void require(const storage::Status& s, const char* what) {
  if (!s.ok()) throw std::runtime_error(std::string("floor relay: ") + what + ": " + s.message());
}

// The records of one Dafka partition that a turn stores, kept from turn to
// turn (the bench's writers each publish into their own partition).
struct PartitionRecords {
  std::string subject;
  std::string partition;
  std::string prefix;  // storage::dafka_partition_prefix
  std::vector<std::uint64_t> offsets;
  std::vector<std::string_view> contents;
};

// One turn's messages and the writes made from them; reused turn to turn
// so that a turn allocates nothing once they have grown.
class Turn {
 public:
  Turn(std::size_t max, Shape shape) : messages_(max), writes_(max), shape_(shape) {}

  // Receives every message waiting on sub, up to the drain limit.
  void drain(zmq::socket_t& sub) {
    count_ = 0;
    while (count_ < messages_.size() && transport::try_recv(sub, &messages_[count_])) ++count_;
  }

  // Writes the turn's messages in one batch (see floor_relay.h).
  void persist(storage::Database& db, rocksdb::WriteBatch& batch, std::uint64_t* sequence) {
    batch.Clear();
    if (shape_ == Shape::kChp) {
      put_chp(db, batch, sequence);
    } else {
      put_dafka(db, batch);
    }
    require(db.write(batch), "write");
  }

  // Forwards the turn's messages, their parts moved (no copy).
  void forward(zmq::socket_t& pub) {
    for (std::size_t i = 0; i < count_; ++i) {
      auto& parts = messages_[i].parts;
      for (std::size_t p = 0; p < parts.size(); ++p) {
        auto flags = p + 1 < parts.size() ? zmq::send_flags::sndmore : zmq::send_flags::none;
        (void)pub.send(parts[p], flags);
      }
    }
  }

  std::size_t count() const { return count_; }

 private:
  // The chp_map entry of each KVSET (key, sequence, uuid, properties,
  // body), each under a new sequence.
  void put_chp(storage::Database& db, rocksdb::WriteBatch& batch, std::uint64_t* sequence) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < count_; ++i) {
      const auto& v = messages_[i].views;
      if (v.size() != 5) continue;  // not a KVSET: forwarded, not stored
      storage::ChpWrite& w = writes_[n++];
      w.key.assign(v[0]);
      w.uuid.assign(v[2]);
      w.properties.assign(v[3]);
      w.value.assign(v[4]);
      w.sequence = ++*sequence;
    }
    storage::put_map_in_key_order(batch, db.handle(storage::Column::kChpMap), std::span(writes_.data(), n));
  }

  // Each RECORD's content under its partition and offset, as runs per
  // partition. A record below its partition's last one in the turn is not
  // stored (runs need ascending offsets; the bench's writers never send one).
  void put_dafka(storage::Database& db, rocksdb::WriteBatch& batch) {
    for (auto& p : partitions_) {
      p.offsets.clear();
      p.contents.clear();
    }
    for (std::size_t i = 0; i < count_; ++i) {
      auto decoded = protocol::dafka::decode_borrowing(messages_[i].frames());
      if (!decoded) continue;  // forwarded, not stored
      const auto* r = std::get_if<protocol::dafka::RecordView>(&decoded.value());
      if (r == nullptr) continue;
      PartitionRecords& p = partition(r->subject, r->partition);
      if (!p.offsets.empty() && r->sequence <= p.offsets.back()) continue;
      p.offsets.push_back(r->sequence);
      p.contents.push_back(r->content);
    }
    turn_partitions_.clear();
    for (const auto& p : partitions_) {
      if (!p.offsets.empty()) turn_partitions_.push_back({p.prefix, p.offsets, p.contents});
    }
    storage::put_dafka_records(batch, db, turn_partitions_);
  }

  PartitionRecords& partition(std::string_view subject, std::string_view name) {
    for (auto& p : partitions_) {
      if (p.subject == subject && p.partition == name) return p;
    }
    partitions_.push_back(
        {std::string(subject), std::string(name), storage::dafka_partition_prefix(subject, name), {}, {}});
    return partitions_.back();
  }

  std::vector<transport::Message> messages_;
  std::vector<storage::ChpWrite> writes_;
  std::vector<PartitionRecords> partitions_;
  std::vector<storage::DafkaPartitionRecords> turn_partitions_;  // those with records this turn
  Shape shape_;
  std::size_t count_ = 0;
};

void serve(zmq::context_t& context, const std::atomic<bool>& stop, const Ready& ready, const std::string& dir,
           Shape shape) {
  std::unique_ptr<storage::Database> db;
  storage::DatabaseOptions options;
  options.sync = database_sync();
  require(storage::Database::Open(dir, options, &db), "open database");
  zmq::socket_t sub(context, zmq::socket_type::sub);
  zmq::socket_t pub(context, zmq::socket_type::pub);
  ready(bind_relay_sockets(sub, pub));
  Turn turn(kMaxBatch, shape);
  rocksdb::WriteBatch batch;
  std::uint64_t sequence = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    zmq::pollitem_t item{sub.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(50));
    if (!(item.revents & ZMQ_POLLIN)) continue;
    turn.drain(sub);
    if (turn.count() == 0) continue;
    turn.persist(*db, batch, &sequence);
    turn.forward(pub);
  }
  require(db->close(), "close database");
}

}  // namespace

FloorRelay::RemovedDir::~RemovedDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path, ignored);
}

FloorRelay::FloorRelay(int cpu, std::filesystem::path dir, Shape shape)
    : dir_{std::move(dir)},
      thread_("floor relay", cpu,
              [this, shape](zmq::context_t& context, const std::atomic<bool>& stop, const Ready& ready) {
                if (std::filesystem::exists(dir_.path)) {
                  throw std::runtime_error("floor relay: " + dir_.path.string() + " exists");
                }
                serve(context, stop, ready, dir_.path.string(), shape);
              }) {}

}  // namespace zstore::bench
