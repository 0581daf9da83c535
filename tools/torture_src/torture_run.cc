#include "tools/torture_src/torture_run.h"

#include <chrono>
#include <stdexcept>
#include <optional>
#include <random>
#include <thread>

#include "client/clone_client.h"
#include "protocol/endpoint.h"
#include "tools/harness/chp_peer.h"
#include "tools/torture_src/chp_history.h"
#include "tools/torture_src/chp_reader.h"
#include "tools/torture_src/chp_counters.h"
#include "tools/torture_src/chp_verify.h"
#include "tools/torture_src/chp_writers.h"
#include "tools/torture_src/cluster.h"
#include "tools/torture_src/dafka_load.h"
#include "tools/torture_src/good_client.h"
#include "tools/torture_src/hostile_clients.h"
#include "tools/torture_src/violations.h"

namespace zstore::torture {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kSynced = "HA follower: synced from";

std::vector<std::string> with_offset(const std::vector<std::string>& bases, int offset) {
  std::vector<std::string> out;
  for (const auto& b : bases) {
    auto endpoint = protocol::tcp_endpoint_at_offset(b, static_cast<std::uint16_t>(offset));
    if (!endpoint) {
      throw std::invalid_argument("not a tcp://host:port endpoint with room for +" + std::to_string(offset) + ": '" +
                                  b + "'");
    }
    out.push_back(std::move(*endpoint));
  }
  return out;
}

// Asks each server in turn (a Binary Star passive does not answer; asking
// is also the vote that lets it take over) until one sends a snapshot.
std::optional<SnapshotTaken> take_snapshot(zmq::context_t& ctx, const std::vector<std::string>& servers,
                                           std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    for (const auto& s : servers) {
      auto server = protocol::parse_tcp_endpoint(s);
      if (!server) throw std::invalid_argument("not a tcp://host:port endpoint: '" + s + "'");
      testing::ChpPeer peer(ctx, "tcp://" + server->host, server->port);
      SnapshotTaken t;
      t.requested_ms = now_ms();
      auto snap = peer.snapshot("", 1000ms);
      if (!snap) continue;
      t.completed_ms = now_ms();
      t.snapshot = std::move(*snap);
      return t;
    }
  }
  return std::nullopt;
}

std::vector<std::string> server_flags(const TortureOptions& o) {
  std::vector<std::string> flags;
  if (o.power_cut) flags.push_back("--test-power-cut");
  if (!o.sync.empty()) flags.insert(flags.end(), {"--sync", o.sync});
  return flags;
}

class Torture {
 public:
  Torture(const TortureOptions& options, std::ostream& out, const std::atomic<bool>& stop)
      : options_(options), out_(out), stop_(stop), rng_(options.seed), cluster_(options.ha, server_flags(options)) {}

  int run();

 private:
  bool cycle(int n);
  void start_hostile();
  void print_hostile();
  // The fault of a cycle; each returns with the writers paused and every
  // member running (false: a member did not restart). *what tells the log.
  bool fault_one(std::string* what, std::int64_t* killed_ms);
  bool fault_both(std::string* what, std::int64_t* killed_ms);
  bool fault_staggered(std::string* what, std::int64_t* killed_ms);
  bool fault_partition(std::string* what, std::int64_t* killed_ms);
  bool restart(int member);
  bool partition() const { return options_.ha && options_.ha_fault == HaFault::kPartition; }
  void wait_up(std::chrono::milliseconds d);
  VerifyStats check_chp(const std::optional<SnapshotTaken>& taken, const std::map<std::string, SeenState>& seen,
                        std::uint64_t max_seq, std::int64_t killed_ms);
  void check_follower(client::CloneClient& follower, std::uint64_t sequence);
  void print_member_logs();
  std::size_t syncs() const { return cluster_.log_count(0, kSynced) + cluster_.log_count(1, kSynced); }
  void wait_synced(std::size_t syncs_before);
  void wait_pair_synced(std::size_t syncs_before);

  TortureOptions options_;
  std::ostream& out_;
  const std::atomic<bool>& stop_;
  std::mt19937_64 rng_;
  Cluster cluster_;
  zmq::context_t ctx_;
  ChpHistory history_;
  Violations violations_;
  std::unique_ptr<ChpReader> reader_;
  std::unique_ptr<ChpWriters> writers_;
  std::unique_ptr<DafkaLoad> dafka_;
  std::unique_ptr<client::CloneClient> follower_;
  std::unique_ptr<HostileClients> hostile_;  // --hostile
  std::unique_ptr<GoodClient> good_;         // --hostile: timed beside them
  std::unique_ptr<ChpCounters> counters_;    // --counters
  std::int64_t up_since_ms_ = 0;
  int cycles_ = 0;           // completed kill/restart/verify cycles
  std::size_t printed_ = 0;  // violations printed so far
  std::size_t ttl_expired_ = 0;
  std::size_t ttl_published_ = 0;
};

int Torture::run() {
  for (int m = 0; m < cluster_.size(); ++m) {
    if (!cluster_.start(m)) {
      out_ << "zstored did not start:\n" << cluster_.log_tail(m) << "\n";
      return 1;
    }
  }
  if (options_.wait_synced) wait_synced(0);  // the backup starts passive
  up_since_ms_ = now_ms();
  auto servers = cluster_.chp_servers();
  Divergence divergence = !options_.ha || options_.ha_fault == HaFault::kOne ? Divergence::kNone
                          : partition()                                      ? Divergence::kPartition
                                                                             : Divergence::kStale;
  reader_ = std::make_unique<ChpReader>(ctx_, with_offset(servers, 1), history_, violations_, options_.ha, divergence);
  writers_ = std::make_unique<ChpWriters>(ctx_, with_offset(servers, 2), history_,
                                          WriterOptions{3, 128, 16, options_.seed, partition()});
  dafka_ = std::make_unique<DafkaLoad>(cluster_.towers(), options_.seed);
  client::Options co;
  co.servers = servers;
  co.failover_timeout = 1000ms;
  follower_ = std::make_unique<client::CloneClient>(co);
  if (options_.hostile > 0) start_hostile();
  if (options_.counters > 0) counters_ = std::make_unique<ChpCounters>(servers, options_.counters, violations_);

  auto end = Clock::now() + std::chrono::milliseconds(static_cast<std::int64_t>(options_.minutes * 60000));
  bool ok = true;
  while (ok && !stop_ && Clock::now() < end) ok = cycle(cycles_ + 1);
  writers_.reset();
  print_hostile();
  if (counters_) {
    counters_->stop();
    counters_->verify(20s);
    out_ << "counter: " << counters_->summary() << "\n";
  }
  std::size_t found = violations_.count();
  out_ << "cycles: " << cycles_ << " violations: " << found << " kvsets sent: " << history_.size()
       << " kvpubs seen: " << reader_->kvpubs() << " dafka published: " << dafka_->published()
       << " acked: " << dafka_->acked() << " ttl expiries checked: " << ttl_expired_
       << " ttl publications checked: " << ttl_published_;
  if (options_.ha) out_ << " older ops republished at takeover: " << reader_->republished();
  out_ << "\n";
  printed_ += violations_.print(out_, printed_);
  return ok && found == 0 ? 0 : 1;
}

void Torture::start_hostile() {
  HostileOptions ho;
  ho.clients = options_.hostile;
  ho.kinds = options_.hostile_kinds;
  ho.max_connections = options_.hostile_connections;
  hostile_ = std::make_unique<HostileClients>(HostileTargets{cluster_.chp_port(0), cluster_.http_port(0)}, ho);
  good_ = std::make_unique<GoodClient>(ctx_, cluster_.chp_port(0), cluster_.http_port(0), violations_);
}

// Stops them (the good client adds its last violations) and says what they did.
void Torture::print_hostile() {
  if (!hostile_) return;
  std::string good = good_->summary();
  good_.reset();
  out_ << "hostile clients: " << hostile_->summary() << "\n"
       << "good client while they ran: " << good << std::endl;
  hostile_.reset();
}

void Torture::wait_up(std::chrono::milliseconds d) {
  auto until = Clock::now() + d;
  while (Clock::now() < until && !stop_) {
    std::this_thread::sleep_for(std::min<Clock::duration>(until - Clock::now(), 50ms));
  }
}

bool Torture::restart(int member) {
  if (cluster_.start(member)) return true;
  out_ << "zstored did not restart:\n" << cluster_.log_tail(member) << "\n";
  return false;
}

bool Torture::fault_one(std::string* what, std::int64_t* killed_ms) {
  int member = static_cast<int>(rng_() % static_cast<std::uint64_t>(cluster_.size()));
  *killed_ms = now_ms();
  cluster_.kill(member);
  writers_->pause();
  *what = "killed member " + std::to_string(member);
  return restart(member);
}

bool Torture::fault_both(std::string* what, std::int64_t* killed_ms) {
  int first = static_cast<int>(rng_() % 2);
  *killed_ms = now_ms();
  cluster_.kill(first);
  cluster_.kill(1 - first);
  writers_->pause();
  int up = static_cast<int>(rng_() % 2);
  *what = "killed both, restarted " + std::to_string(up) + " then " + std::to_string(1 - up);
  return restart(up) && restart(1 - up);
}

bool Torture::fault_staggered(std::string* what, std::int64_t* killed_ms) {
  std::uniform_int_distribution<int> serve(options_.min_up_ms, options_.max_up_ms);
  int first = static_cast<int>(rng_() % 2);
  *killed_ms = now_ms();
  cluster_.kill(first);
  (void)take_snapshot(ctx_, cluster_.chp_servers(), 10s);  // the vote that makes the survivor take over
  wait_up(std::chrono::milliseconds(serve(rng_)));         // it serves the writers alone
  cluster_.kill(1 - first);
  writers_->pause();
  int up = static_cast<int>(rng_() % 2);
  std::uniform_int_distribution<int> gap(0, 1500);
  *what = "killed " + std::to_string(first) + ", survivor served, killed " + std::to_string(1 - first) +
          ", restarted " + std::to_string(up) + " then " + std::to_string(1 - up);
  if (!restart(up)) return false;
  wait_up(std::chrono::milliseconds(gap(rng_)));
  return restart(1 - up);
}

bool Torture::fault_partition(std::string* what, std::int64_t* killed_ms) {
  std::uniform_int_distribution<int> serve(options_.min_up_ms, options_.max_up_ms);
  std::size_t handovers = cluster_.log_count(0, "handed over") + cluster_.log_count(1, "handed over");
  *killed_ms = now_ms();
  cluster_.cut_ha_link(true);
  // Votes on both sides until both serve (the passive takes over once its
  // peer looks dead).
  auto servers = cluster_.chp_servers();
  int serving = 0;
  auto deadline = Clock::now() + 10s;
  for (int m = 0; m < 2 && Clock::now() < deadline;) {
    if (take_snapshot(ctx_, {servers[m]}, 1s)) {
      ++serving;
      ++m;
    }
  }
  wait_up(std::chrono::milliseconds(serve(rng_)));  // both serve the writers
  writers_->pause();
  cluster_.cut_ha_link(false);
  bool handed = false;
  auto until = Clock::now() + 15s;
  while (!handed && Clock::now() < until) {
    handed = cluster_.log_count(0, "handed over") + cluster_.log_count(1, "handed over") > handovers;
    std::this_thread::sleep_for(20ms);
  }
  *what = "partitioned with " + std::to_string(serving) + " serving, healed" +
          (handed ? "" : " (no hand-over logged within 15 s)");
  return true;
}

bool Torture::cycle(int n) {
  std::uniform_int_distribution<int> up(options_.min_up_ms, options_.max_up_ms);
  wait_up(std::chrono::milliseconds(up(rng_)));
  if (stop_) return true;
  std::size_t before = violations_.count();
  std::size_t synced_before = options_.ha ? syncs() : 0;
  std::string what;
  std::int64_t killed_ms = 0;
  bool ok = false;
  if (good_) good_->pause();  // a kill is not a slow answer
  switch (options_.ha ? options_.ha_fault : HaFault::kOne) {
    case HaFault::kOne:
      ok = fault_one(&what, &killed_ms);
      break;
    case HaFault::kBoth:
      ok = fault_both(&what, &killed_ms);
      break;
    case HaFault::kStaggered:
      ok = fault_staggered(&what, &killed_ms);
      break;
    case HaFault::kPartition:
      ok = fault_partition(&what, &killed_ms);
      break;
  }
  if (!ok) {
    out_ << "cycle " << n << ": " << what << ": a member did not restart\n";
    return false;
  }
  // "Nothing is lost once both members are up and synced": after a fault
  // of the whole pair, the passive hands over what only it has, then
  // resyncs; the check waits for that.
  if (options_.ha && options_.ha_fault != HaFault::kOne) wait_pair_synced(synced_before);
  auto seen = reader_->seen();
  auto max_seq = reader_->max_sequence();
  auto taken = take_snapshot(ctx_, cluster_.chp_servers(), 30s);
  VerifyStats stats = check_chp(taken, seen, max_seq, killed_ms);
  ttl_expired_ += stats.ttl_expired;
  ttl_published_ += stats.ttl_published;
  up_since_ms_ = now_ms();
  std::uint64_t acked = dafka_->acked();
  std::uint64_t replayed = dafka_->verify(acked, 30s, violations_);
  if (taken) check_follower(*follower_, taken->snapshot.sequence);
  out_ << "cycle " << n << ": " << what << ", snapshot "
       << (taken ? std::to_string(taken->snapshot.entries.size()) + " keys at seq " +
                       std::to_string(taken->snapshot.sequence)
                 : std::string("none"))
       << ", ttl " << stats.ttl_expired << "/" << stats.ttl_published << ", dafka replayed " << replayed << "/" << acked
       << ", new violations " << violations_.count() - before << std::endl;
  printed_ += violations_.print(out_, printed_);
  if (violations_.count() > before) print_member_logs();
  if (options_.wait_synced) wait_synced(synced_before);  // after a restart one member is the passive
  writers_->resume();
  if (good_) good_->resume();
  ++cycles_;
  return true;
}

VerifyStats Torture::check_chp(const std::optional<SnapshotTaken>& taken, const std::map<std::string, SeenState>& seen,
                               std::uint64_t max_seq, std::int64_t killed_ms) {
  if (!taken) {
    violations_.add("no snapshot", "no server answered ICANHAZ? within 30 s after the restart");
    return {};
  }
  VerifyContext ctx;
  ctx.ha = options_.ha;
  ctx.partition = partition();
  ctx.up_since_ms = up_since_ms_;
  ctx.killed_ms = killed_ms;
  return verify_chp(*taken, seen, max_seq, history_, ctx, violations_);
}

void Torture::check_follower(client::CloneClient& follower, std::uint64_t sequence) {
  if (!follower.wait_for([&] { return follower.synced() && follower.sequence() >= sequence; }, 30s)) {
    violations_.add("clone client stuck", "not synced at seq >= " + std::to_string(sequence) + " within 30 s (at " +
                                              std::to_string(follower.sequence()) + ")");
  }
}

// What each member decided around the cycle that found a violation: the
// ends of their logs, for the report.
void Torture::print_member_logs() {
  for (int m = 0; m < cluster_.size(); ++m) {
    out_ << "--- member " << m << " log (end) ---\n" << cluster_.log_tail(m, 8000) << "\n";
  }
  out_ << "--- end of logs ---" << std::endl;
}

// A member must log a completed sync after the fault, within 30 s (with a
// vote now and then: a pair whose members both restarted elects without
// one, but a primary alone waits for a client).
void Torture::wait_pair_synced(std::size_t syncs_before) {
  auto deadline = Clock::now() + 30s;
  while (syncs() <= syncs_before) {
    if (Clock::now() > deadline) {
      violations_.add("pair not synced", "no member completed a sync within 30 s of the fault");
      return;
    }
    (void)take_snapshot(ctx_, cluster_.chp_servers(), 200ms);
  }
}

// With --wait-synced the load only runs while the passive is synced, which
// leaves a passive joining under load (docs/torture.md) out of a run.
void Torture::wait_synced(std::size_t syncs_before) {
  auto deadline = Clock::now() + 30s;
  while (syncs() <= syncs_before) {
    if (Clock::now() > deadline) {
      out_ << "warning: no member logged a completed sync within 30 s" << std::endl;
      return;
    }
    std::this_thread::sleep_for(20ms);
  }
}

}  // namespace

int run_torture(const TortureOptions& options, std::ostream& out, const std::atomic<bool>& stop) {
  Torture t(options, out, stop);
  return t.run();
}

}  // namespace zstore::torture
