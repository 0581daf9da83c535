#include "tests/fuzz/server_harness.h"

#include <uuid/uuid.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iterator>

#include <spdlog/spdlog.h>
#include <zmq_addon.hpp>

#include "protocol/beacon.h"
#include "protocol/dafka_codec.h"
#include "tests/fuzz/fuzz_frames.h"
#include "tests/support/test_support.h"

namespace zstore::fuzz {

namespace chp = protocol::chp;
namespace dafka = protocol::dafka;
using namespace std::chrono_literals;

namespace {

const std::string kSentinelSubject = "fuzz-sentinel";

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "server_handlers_fuzz: invariant failed: %s\n", what.c_str());
  std::fflush(stderr);
  __builtin_trap();
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string random_address() {
  uuid_t u;
  uuid_generate(u);
  return dafka::make_address(u);
}

template <typename Frames>
void send_frames(zmq::socket_t& socket, const Frames& frames) {
  for (std::size_t i = 0; i < frames.size(); ++i) {
    socket.send(zmq::buffer(frames[i].data(), frames[i].size()),
                i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }
}

// One message within timeout_ms, as owned parts; empty on time-out.
std::vector<zmq::message_t> receive(zmq::socket_t& socket, int timeout_ms) {
  std::vector<zmq::message_t> parts;
  zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
  try {
    if (zmq::poll(&item, 1, std::chrono::milliseconds(timeout_ms)) <= 0) return parts;
  } catch (const zmq::error_t& e) {
    if (e.num() != EINTR) throw;
    return parts;  // libFuzzer's timer signal: callers loop until their deadline
  }
  if (!zmq::recv_multipart(socket, std::back_inserter(parts))) parts.clear();
  return parts;
}

std::vector<std::string_view> views(const std::vector<zmq::message_t>& parts) {
  std::vector<std::string_view> v;
  for (const auto& p : parts) v.emplace_back(static_cast<const char*>(p.data()), p.size());
  return v;
}

zmq::socket_t socket(zmq::context_t& ctx, zmq::socket_type type) {
  zmq::socket_t s(ctx, type);
  s.set(zmq::sockopt::linger, 0);
  return s;
}

}  // namespace

ServerHarness::ServerHarness() {
  spdlog::set_level(spdlog::level::critical);  // malformed input and faults are the point: not news
  char tmpl[] = "/tmp/zstore-fuzz-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) fail("cannot create a temporary directory");
  dir_ = tmpl;
  storage::DatabaseOptions options;
  options.sync = storage::SyncPolicy::kNone;
  options.env = storage::make_fault_env(faults_);
  options.resume_interval = 0ms;
  if (auto s = storage::Database::Open(dir_, options, &db_); !s.ok()) fail(s.message());
  if (auto s = storage::ChpStore::Open(db_.get(), &chp_store_); !s.ok()) fail(s.message());
  if (auto s = storage::DafkaLog::Open(db_.get(), &dafka_log_); !s.ok()) fail(s.message());
  start_servers();
  connect_clients();
  sync_snapshots(false);
  sync_chp(true);
  sync_dafka();
}

ServerHarness::~ServerHarness() {
  if (std::getenv("ZSTORE_FUZZ_STATS") != nullptr) {
    std::fprintf(stderr,
                 "server_handlers_fuzz: %llu inputs; CHP %llu KVSETs sent, %llu published, %llu refused, %llu "
                 "malformed; Dafka %llu stored, %llu refused, %llu malformed, %llu invalid\n",
                 static_cast<unsigned long long>(inputs_), static_cast<unsigned long long>(kvsets_sent_),
                 static_cast<unsigned long long>(kvpubs_seen_),
                 static_cast<unsigned long long>(chp_metrics_.write_failures.load()),
                 static_cast<unsigned long long>(chp_metrics_.malformed.total()),
                 static_cast<unsigned long long>(dafka_metrics_.records_stored.load()),
                 static_cast<unsigned long long>(dafka_metrics_.write_failures.load()),
                 static_cast<unsigned long long>(dafka_metrics_.malformed.total()),
                 static_cast<unsigned long long>(dafka_metrics_.invalid.load()));
  }
  faults_->disarm();
  for (auto* s : {&chp_pub_, &chp_dealer_, &chp_sub_, &node_pub_, &node_beacon_, &node_sub_}) s->close();
  if (dafka_) dafka_->stop();
  if (tower_) tower_->stop();
  if (chp_) chp_->stop();
  dafka_.reset();
  tower_.reset();
  chp_.reset();
  dafka_log_.reset();
  chp_store_.reset();
  if (db_) (void)db_->close();
  db_.reset();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void ServerHarness::start_servers() {
  server::ChpServerConfig chp;
  chp_port_ = testing::free_port_range(3);
  chp.port = chp_port_;
  chp.hugz_interval = 100ms;
  chp.expiry_interval = std::chrono::hours(24);  // no expiry during a run: exact accounting
  chp_ = std::make_unique<server::ChpServer>(ctx_, *chp_store_, chp, chp_metrics_);
  chp_->start();

  tower_port_ = testing::free_port_range(2);
  tower_ = std::make_unique<server::Tower>(ctx_, "127.0.0.1", tower_port_, tower_metrics_);
  tower_->start();
  server::DafkaStoreConfig config;
  config.port = testing::free_port();
  config.towers = {"tcp://127.0.0.1:" + std::to_string(tower_port_)};
  config.beacon_interval = 100ms;
  config.beacon_timeout = std::chrono::hours(1);  // a stalled fuzzer does not lose its peer
  config.fetch_retry = 200ms;
  store_address_ = random_address();
  dafka_ = std::make_unique<server::DafkaStore>(ctx_, *dafka_log_, store_address_, config, dafka_metrics_);
  dafka_->start();
}

void ServerHarness::connect_clients() {
  std::string chp_base = "tcp://127.0.0.1:";
  chp_pub_ = socket(ctx_, zmq::socket_type::pub);
  chp_pub_.set(zmq::sockopt::sndhwm, 0);
  chp_pub_.connect(chp_base + std::to_string(chp_port_ + 2));
  chp_dealer_ = socket(ctx_, zmq::socket_type::dealer);
  chp_dealer_.connect(chp_base + std::to_string(chp_port_));
  chp_sub_ = socket(ctx_, zmq::socket_type::sub);
  chp_sub_.set(zmq::sockopt::rcvhwm, 0);
  chp_sub_.set(zmq::sockopt::subscribe, "");
  chp_sub_.connect(chp_base + std::to_string(chp_port_ + 1));

  node_address_ = random_address();
  sentinel_partition_ = random_address();
  node_port_ = testing::free_port();
  node_pub_ = socket(ctx_, zmq::socket_type::pub);
  node_pub_.set(zmq::sockopt::sndhwm, 0);
  node_pub_.bind("tcp://127.0.0.1:" + std::to_string(node_port_));
  node_beacon_ = socket(ctx_, zmq::socket_type::pub);
  node_beacon_.connect("tcp://127.0.0.1:" + std::to_string(tower_port_));
  node_sub_ = socket(ctx_, zmq::socket_type::sub);
  node_sub_.set(zmq::sockopt::subscribe, dafka::subscription(dafka::MsgId::kAck, ""));
  node_sub_.set(zmq::sockopt::subscribe, dafka::subscription(dafka::MsgId::kDirectHead, node_address_));
  node_sub_.connect(dafka_->endpoint());
}

void ServerHarness::run(const std::uint8_t* data, std::size_t size) {
  ++inputs_;
  std::size_t pos = 0;
  for (int ops = 0; pos + 1 < size && ops < 16; ++ops) {
    std::uint8_t kind = data[pos] % 4;
    std::size_t len = std::min<std::size_t>(data[pos + 1], size - pos - 2);
    const std::uint8_t* payload = data + pos + 2;
    pos += 2 + len;
    auto frames = frames_from_bytes(payload, len);
    if (kind == 3) {
      settle();  // what was sent so far meets the fault state it was sent under
      set_faults(len > 0 ? payload[0] : 0);
    } else if (!frames.empty()) {
      if (kind == 0) send_collector(frames);
      if (kind == 1) send_snapshot_request(frames);
      if (kind == 2) send_dafka(frames);
    }
  }
  settle();
  faults_->disarm();
  sync_chp(false);       // writes work again
  sync_snapshots(true);  // a snapshot now has the last published sequence
  sync_dafka();
}

// Waits until both reactors handled everything sent so far, with reads only
// (they work under faults), checking the CHP accounting.
void ServerHarness::settle() {
  sync_snapshots(false);  // every snapshot request handled (and counted)
  settle_chp();
  settle_dafka();
}

// Each KVSET is published, refused or malformed: waits for the sum to reach
// the number sent (it only grows; past it or stuck below it is a failure).
void ServerHarness::settle_chp() {
  auto balance = [&] {
    auto malformed =
        static_cast<std::int64_t>(chp_metrics_.malformed.total()) - static_cast<std::int64_t>(bad_requests_sent_);
    return static_cast<std::int64_t>(kvpubs_seen_ + chp_metrics_.write_failures) + malformed -
           static_cast<std::int64_t>(kvsets_sent_);
  };
  auto deadline = now_ms() + 20000;
  while (balance() < 0 && now_ms() < deadline) {
    auto parts = receive(chp_sub_, 10);
    if (parts.empty()) continue;
    auto update = chp::decode_update(views(parts));
    if (!update) fail("the publisher sent an undecodable message: " + update.error().detail);
    on_update(*update);
  }
  if (balance() != 0) {
    fail("CHP accounting: " + std::to_string(kvpubs_seen_) + " published + " +
         std::to_string(chp_metrics_.write_failures.load()) + " refused + malformed (balance " +
         std::to_string(balance()) + ") != " + std::to_string(kvsets_sent_) + " sent");
  }
}

// GET-HEADS for the sentinel subject is answered (from disk, so also under
// faults) after everything received before it was written or refused.
void ServerHarness::settle_dafka() {
  auto deadline = now_ms() + 20000;
  std::int64_t next_send = 0;
  while (now_ms() < deadline) {
    beacon();
    if (now_ms() >= next_send) {
      send_frames(node_pub_, dafka::encode(dafka::GetHeads{kSentinelSubject, node_address_}));
      next_send = now_ms() + 200;
    }
    auto parts = receive(node_sub_, 20);
    if (parts.empty()) continue;
    auto m = dafka::decode(views(parts));
    if (!m) fail("the store sent an undecodable message: " + m.error().detail);
    bool unused = false;
    on_dafka(*m, ~std::uint64_t{0}, &unused);
    if (auto* h = std::get_if<dafka::DirectHead>(&*m); h && h->topic == node_address_) return;
  }
  fail("the Dafka store answered no GET-HEADS within 20 s");
}

void ServerHarness::set_faults(std::uint8_t how) {
  switch (how % 3) {
    case 0:
      faults_->disarm();
      break;
    case 1:
      faults_->arm(storage::FaultFiles::kWal, storage::FaultOps::kWrites, storage::FaultError::kNoSpace);
      break;
    default:
      faults_->arm(storage::FaultFiles::kTable, storage::FaultOps::kWrites, storage::FaultError::kNoSpace);
  }
}

void ServerHarness::send_collector(const std::vector<std::string_view>& frames) {
  send_frames(chp_pub_, frames);
  ++kvsets_sent_;
}

void ServerHarness::send_snapshot_request(const std::vector<std::string_view>& frames) {
  auto req = chp::decode_icanhaz(frames);
  if (req) {
    outstanding_.insert(req->subtree);
  } else {
    ++bad_requests_sent_;
  }
  send_frames(chp_dealer_, frames);
}

void ServerHarness::send_dafka(const std::vector<std::string_view>& frames) {
  if (auto m = dafka::decode(frames)) {
    if (auto* r = std::get_if<dafka::Record>(&*m)) note_sent({r->subject, r->partition}, r->sequence);
  }
  send_frames(node_pub_, frames);
}

void ServerHarness::note_sent(const PartitionKey& key, std::uint64_t offset) {
  Sent& s = sent_[key];
  if (offset < s.contiguous) return;
  s.offsets.insert(offset);
  while (!s.offsets.empty() && *s.offsets.begin() == s.contiguous) {
    s.offsets.erase(s.offsets.begin());
    ++s.contiguous;
  }
}

// A sentinel KVSET (a new key each try) until its KVPUB arrives; then every
// earlier KVSET has been handled, so the accounting must balance.
// At start the PUB may drop sentinels until it is connected: they are not
// counted as sent.
void ServerHarness::sync_chp(bool connecting) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    std::string key =
        "\xff\xff"
        "fuzz-sentinel-" +
        std::to_string(++sentinels_);
    send_frames(chp_pub_, chp::encode_kvmsg({key, 0, std::string(16, 's'), "", "1"}));
    ++kvsets_sent_;
    if (!read_updates_until(key, 1000)) continue;
    if (connecting) kvsets_sent_ = kvpubs_seen_;
    settle_chp();
    return;
  }
  fail("the CHP server published no sentinel within 20 s");
}

bool ServerHarness::read_updates_until(const std::string& key, int timeout_ms) {
  auto deadline = now_ms() + timeout_ms;
  while (now_ms() < deadline) {
    auto parts = receive(chp_sub_, static_cast<int>(deadline - now_ms()));
    if (parts.empty()) continue;
    auto update = chp::decode_update(views(parts));
    if (!update) fail("the publisher sent an undecodable message: " + update.error().detail);
    on_update(*update);
    if (auto* kv = std::get_if<chp::KvMsg>(&*update); kv && kv->key == key) return true;
  }
  return false;
}

void ServerHarness::on_update(const chp::Update& update) {
  if (auto* hugz = std::get_if<chp::Hugz>(&update)) {
    if (hugz->sequence != last_sequence_) {
      fail("HUGZ sequence " + std::to_string(hugz->sequence) + " after KVPUB " + std::to_string(last_sequence_));
    }
    return;
  }
  const auto& kv = std::get<chp::KvMsg>(update);
  if (kv.sequence != last_sequence_ + 1) {
    fail("KVPUB sequence " + std::to_string(kv.sequence) + " after " + std::to_string(last_sequence_));
  }
  last_sequence_ = kv.sequence;
  ++kvpubs_seen_;
}

// A sentinel ICANHAZ? (its own subtree) until its KTHXBAI arrives, checking
// every reply on the way.
void ServerHarness::sync_snapshots(bool exact) {
  std::string subtree =
      "\xff\xfe"
      "fuzz-snapshot-" +
      std::to_string(++sentinels_);
  send_frames(chp_dealer_, chp::encode_icanhaz({subtree, std::nullopt}));
  outstanding_.insert(subtree);
  auto deadline = now_ms() + 20000;
  while (now_ms() < deadline) {
    auto parts = receive(chp_dealer_, static_cast<int>(deadline - now_ms()));
    if (parts.empty()) continue;
    auto reply = chp::decode_snapshot_reply(views(parts));
    if (!reply) fail("the snapshot port sent an undecodable reply: " + reply.error().detail);
    auto* done = std::get_if<chp::Kthxbai>(&*reply);
    on_snapshot_reply(*reply);
    if (done && done->subtree == subtree) {
      if (exact && done->sequence != last_sequence_) {
        fail("snapshot sequence " + std::to_string(done->sequence) + " != last KVPUB " +
             std::to_string(last_sequence_));
      }
      return;
    }
  }
  fail("no KTHXBAI for a snapshot request within 20 s");
}

void ServerHarness::on_snapshot_reply(const chp::SnapshotReply& reply) {
  std::uint64_t published = chp_metrics_.last_sequence;
  if (auto* kv = std::get_if<chp::KvMsg>(&reply)) {
    bool within = false;
    for (const auto& s : outstanding_) within = within || kv->key.starts_with(s);
    if (!within) fail("KVSYNC for a key outside every requested subtree");
    if (kv->sequence > published) fail("KVSYNC sequence ahead of the published sequence");
    return;
  }
  const auto& done = std::get<chp::Kthxbai>(reply);
  auto it = outstanding_.find(done.subtree);
  if (it == outstanding_.end()) fail("KTHXBAI for a subtree nobody asked for");
  outstanding_.erase(it);
  if (done.sequence > published) fail("KTHXBAI sequence ahead of the published sequence");
}

// A sentinel RECORD on a partition of its own until the store ACKs it,
// checking every ACK on the way.
void ServerHarness::sync_dafka() {
  std::uint64_t offset = sentinel_offset_++;
  dafka::Record record{kSentinelSubject, sentinel_partition_, kSentinelSubject, offset, "sentinel"};
  note_sent({kSentinelSubject, sentinel_partition_}, offset);
  auto deadline = now_ms() + 20000;
  std::int64_t next_send = 0;
  bool done = false;
  while (!done && now_ms() < deadline) {
    beacon();
    if (now_ms() >= next_send) {
      send_frames(node_pub_, dafka::encode(record));
      next_send = now_ms() + 200;
    }
    auto parts = receive(node_sub_, 20);
    if (parts.empty()) continue;
    auto m = dafka::decode(views(parts));
    if (!m) fail("the store sent an undecodable message: " + m.error().detail);
    on_dafka(*m, offset, &done);
  }
  if (!done) fail("the Dafka store ACKed no sentinel within 20 s");
}

void ServerHarness::on_dafka(const dafka::Message& msg, std::uint64_t want, bool* done) {
  auto* ack = std::get_if<dafka::Ack>(&msg);
  if (ack == nullptr) return;
  auto it = sent_.find({ack->subject, ack->topic});
  if (it == sent_.end() || ack->sequence >= it->second.contiguous) {
    fail("ACK of offset " + std::to_string(ack->sequence) + " on a partition not sent contiguously up to it");
  }
  if (ack->topic == sentinel_partition_ && ack->sequence == want) *done = true;
}

void ServerHarness::beacon() {
  if (now_ms() - last_beacon_ms_ < 100) return;
  last_beacon_ms_ = now_ms();
  send_frames(node_beacon_,
              protocol::beacon::encode(protocol::beacon::NodeBeacon{node_address_, "127.0.0.1", node_port_}));
}

}  // namespace zstore::fuzz
