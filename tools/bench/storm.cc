#include "tools/bench/storm.h"

#include <unistd.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <thread>

#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "protocol/chp_codec.h"
#include "tools/bench/ha_pair.h"
#include "tools/bench/load.h"
#include "tools/bench/server_process.h"
#include "tools/bench/storm_clients.h"
#include "tools/bench/system.h"
#include "tools/bench/transports.h"
#include "tools/harness/harness.h"

namespace zstore::bench {

namespace chp = protocol::chp;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

// The paced writer beside the storm: it updates the hot 1 % of the keys
// (keys 0..K/100-1, the same names as the load) with KVSETs that carry a
// UUID, through a PUB to every member's collector (the survivor of a kill
// holds them too), and sees them come back from every member's publisher.
// The window lets it write on through a fail-over (run_load gives up after
// 30 s without progress).
LoadSpec storm_writer_spec(const Options& o) {
  LoadSpec spec = background_writer_spec(o.value_bytes, o.writer_rate);
  spec.key_letter = 's';
  spec.key_space = std::max<std::uint64_t>(1, o.keys / 100);
  spec.chp_uuids = true;
  spec.window = std::max<std::uint64_t>(1000, static_cast<std::uint64_t>(o.writer_rate * 60));
  return spec;
}

// The server's last sequence: the KTHXBAI of a snapshot of a subtree no key has.
std::uint64_t server_sequence(const std::string& endpoint) {
  zmq::context_t context(1);
  for (int attempt = 0; attempt < 50; ++attempt) {
    zmq::socket_t dealer(context, zmq::socket_type::dealer);
    dealer.set(zmq::sockopt::linger, 0);
    dealer.connect(endpoint);
    send_frames(dealer, chp::encode_icanhaz({"\x01sequence?", std::nullopt}));
    zmq::pollitem_t item{dealer.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, milliseconds(200)) <= 0) continue;
    std::vector<zmq::message_t> frames;
    (void)zmq::recv_multipart(dealer, std::back_inserter(frames));
    std::vector<std::string_view> views;
    for (auto& f : frames) views.emplace_back(f.data<char>(), f.size());
    auto reply = chp::decode_snapshot_reply(views);
    if (reply && std::holds_alternative<chp::Kthxbai>(*reply)) return std::get<chp::Kthxbai>(*reply).sequence;
  }
  throw std::runtime_error("no KTHXBAI from " + endpoint + " within 10 s");
}

void wait_round(const StormFleet& fleet, int clients, std::int64_t since_ns, double deadline_s) {
  while (!fleet.all_done()) {
    if (static_cast<double>(now_ns() - since_ns) * 1e-9 > deadline_s) {
      throw std::runtime_error(std::to_string(fleet.clients_done()) + " of " + std::to_string(clients) +
                               " clients current after " + std::to_string(deadline_s) + " s (--deadline)");
    }
    std::this_thread::sleep_for(milliseconds(2));
  }
}

// Every client's sequence reaches the server's current one through KVPUBs:
// they follow the updates, not just the snapshot.
void check_following(const StormFleet& fleet, const std::string& endpoint) {
  std::uint64_t target = server_sequence(endpoint);
  if (!testing::wait_until([&] { return fleet.min_sequence() >= target; }, seconds(60))) {
    throw std::runtime_error("clients stopped following: lowest sequence " + std::to_string(fleet.min_sequence()) +
                             " < server's " + std::to_string(target) + " after 60 s");
  }
}

// Kills the serving member (restarts it when alone) and times the storm.
void fail_over(Members& m, StormFleet& fleet, const Options& o, bool resume, Report& report) {
  int survivor = m.ha ? 1 - m.active : m.active;
  std::optional<double> cpu_before = m.ha ? cpu_seconds(m.at(survivor).pid()) : 0.0;
  std::optional<double> bench_before = cpu_seconds(::getpid());
  std::int64_t kill_ns = now_ns();
  m.at(m.active).kill_hard();
  if (!m.ha) m.at(survivor).launch();  // same data dir and ports
  fleet.request(m.endpoint(survivor), resume);
  wait_round(fleet, o.clients, kill_ns, o.deadline_s);
  auto cpu_after = cpu_seconds(m.at(survivor).pid());
  auto bench_after = cpu_seconds(::getpid());
  m.active = survivor;
  StormRound r = fleet.round();
  std::string p = resume ? "resume_" : "full_";
  report.set(p + "seconds", static_cast<double>(r.last_done_ns - kill_ns) * 1e-9, "s");
  report.set(p + "first_reply_seconds", static_cast<double>(r.first_reply_ns - kill_ns) * 1e-9, "s");
  report.set(p + "serve_seconds", static_cast<double>(r.last_done_ns - r.first_reply_ns) * 1e-9, "s");
  if (cpu_before && cpu_after) report.set(p + "server_cpu_s", *cpu_after - *cpu_before, "s");
  if (bench_before && bench_after) report.set(p + "bench_cpu_s", *bench_after - *bench_before, "s");
  report.set(p + "keys_sent", static_cast<double>(r.keys));
  report.set(p + "resumed_clients", r.resumed);
  report.set(p + "ahead_clients", r.ahead);
  check_following(fleet, m.endpoint(m.active));
}

void load_keys(Members& m, const Options& o, Report& report, std::ostream& log) {
  zmq::context_t context(1);
  PubSubTransport transport(context, m.endpoint(m.active, 2), m.endpoint(m.active, 1));
  LoadSpec load;
  load.writers = o.writers;
  load.value_bytes = o.value_bytes;
  load.window = o.window;
  load.total = o.keys;
  load.warmup_s = 0;
  log << "loading " << o.keys << " keys...\n";
  report.set("load_per_s", run_load(load, transport).rate(), "msg/s");
}

// CHP port P + offset of a replica.
std::string ep(ServerProcess& s, int offset) {
  return s.ports().endpoint(static_cast<std::uint16_t>(s.ports().chp + offset));
}

// --replicas read replicas of the member(s), each started once it holds the map.
std::vector<std::unique_ptr<ServerProcess>> start_replicas(Members& m, const Options& o) {
  std::vector<std::string> upstreams = m.all(0);
  std::string list = upstreams[0] + (upstreams.size() > 1 ? "," + upstreams[1] : "");
  auto path = o.zstored.empty() ? default_zstored_path() : std::filesystem::path(o.zstored);
  std::vector<std::unique_ptr<ServerProcess>> replicas;
  for (int i = 0; i < o.replicas; ++i) {
    std::vector<std::string> args = o.zstored_args;
    args.insert(args.end(), {"--replica-of", list, "--replica-silence-ms", "1000"});
    replicas.push_back(std::make_unique<ServerProcess>(path, o.server_cpu, args));
    replicas.back()->set_log_level("info");
    replicas.back()->start();  // answers once it holds the map
  }
  return replicas;
}

// Waits until every replica has resumed once more than resumes_before says
// and holds an update above at_kill; throws past deadline_s.
void wait_resumed(const std::vector<std::unique_ptr<ServerProcess>>& replicas, const std::vector<int>& resumes_before,
                  std::uint64_t at_kill, double deadline_s) {
  for (std::size_t i = 0; i < replicas.size(); ++i) {
    ServerProcess& r = *replicas[i];
    bool current = testing::wait_until(
        [&] {
          return count_of(r.log_text(), "replica: resumed from") > resumes_before[i] &&
                 server_sequence(ep(r, 0)) > at_kill;
        },
        milliseconds(static_cast<std::int64_t>(deadline_s * 1000)));
    if (!current) throw std::runtime_error("a replica did not resume from the survivor within --deadline");
  }
}

// replica_resumes and replica_full_syncs: what the replicas' logs tell.
void report_replica_syncs(Report& report, const std::vector<std::unique_ptr<ServerProcess>>& replicas) {
  int resumed = 0, synced = 0;
  for (auto& r : replicas) {
    resumed += count_of(r->log_text(), "replica: resumed from");
    synced += count_of(r->log_text(), "replica: synced from");
  }
  report.set("replica_resumes", resumed);
  report.set("replica_full_syncs", synced);  // o.replicas: only the first start of each
}

// --replicas R: R read replicas of the member(s) (each follows both of a
// pair, --replica-silence-ms 1000), each with clients/R of the clients.
// The kill leaves every client connected to its replica: only the
// replicas notice the silence and resume from the survivor. Timed: the
// kill -> every replica has resumed from the survivor and holds an update
// above the highest sequence any replica had at the kill, and the survivor's CPU
// meanwhile; then every client follows its replica's updates again.
void storm_through_replicas(Members& m, const Options& o, Report& report, std::ostream& log) {
  std::vector<std::unique_ptr<ServerProcess>> replicas = start_replicas(m, o);
  std::vector<std::unique_ptr<StormFleet>> fleets;
  int per = std::max(1, o.clients / o.replicas);
  for (int i = 0; i < o.replicas; ++i) {
    fleets.push_back(std::make_unique<StormFleet>(per, std::max(1, o.client_threads / o.replicas),
                                                  std::vector<std::string>{ep(*replicas[i], 1)}));
  }
  report.set("replicas", o.replicas);
  report.set("clients_per_replica", per);
  zmq::context_t writer_context(1);
  PubSubTransport writer_transport(writer_context, m.all(2), m.all(1));
  BackgroundLoad writer(storm_writer_spec(o), writer_transport);
  log << o.replicas << " replicas with " << per << " clients each; the clients take a full snapshot...\n";
  std::int64_t start = now_ns();
  for (int i = 0; i < o.replicas; ++i) fleets[i]->request(ep(*replicas[i], 0), false);
  for (auto& f : fleets) wait_round(*f, per, start, o.deadline_s);
  report.set("initial_seconds", static_cast<double>(now_ns() - start) * 1e-9, "s");
  std::this_thread::sleep_for(seconds(1));  // the writer's updates flow to the clients
  std::vector<int> resumes_before;
  for (auto& r : replicas) resumes_before.push_back(count_of(r->log_text(), "replica: resumed from"));
  int survivor = m.ha ? 1 - m.active : m.active;
  std::optional<double> cpu_before = m.ha ? cpu_seconds(m.at(survivor).pid()) : 0.0;
  std::optional<double> bench_before = cpu_seconds(::getpid());
  log << "kill -9 " << m.at(m.active).pid() << "; the replicas resume from the survivor...\n";
  std::int64_t kill_ns = now_ns();
  m.at(m.active).kill_hard();
  if (!m.ha) m.at(survivor).launch();
  std::uint64_t at_kill = 0;  // updates of the killed member still in flight may come after it
  for (auto& r : replicas) at_kill = std::max(at_kill, server_sequence(ep(*r, 0)));
  wait_resumed(replicas, resumes_before, at_kill, o.deadline_s);
  std::int64_t done_ns = now_ns();
  auto cpu_after = cpu_seconds(m.at(survivor).pid());
  auto bench_after = cpu_seconds(::getpid());
  m.active = survivor;
  report.set("replica_seconds", static_cast<double>(done_ns - kill_ns) * 1e-9, "s");
  if (cpu_before && cpu_after) report.set("replica_server_cpu_s", *cpu_after - *cpu_before, "s");
  if (bench_before && bench_after) report.set("replica_bench_cpu_s", *bench_after - *bench_before, "s");
  report_replica_syncs(report, replicas);
  for (int i = 0; i < o.replicas; ++i) check_following(*fleets[i], ep(*replicas[i], 0));
  report.set("writer_updates", static_cast<double>(writer.stop().sent));
  std::uint64_t gaps = 0;
  for (auto& f : fleets) gaps += f->gaps();
  report.set("client_gaps", static_cast<double>(gaps));
}

void set_ratio(Report& report, const std::string& name, const std::string& field) {
  double resume = report.number("resume_" + field);
  report.set(name, resume > 0 ? report.number("full_" + field) / resume : 0);
}

}  // namespace

Report storm_mode(const Options& o, std::ostream& log) {
  Report report("storm");
  report.set("clients", o.clients);
  report.set("keys", static_cast<double>(o.keys));
  report.set("value_bytes", static_cast<double>(o.value_bytes), "B");
  report.set("writer_rate", o.writer_rate, "msg/s");
  report.set_text("failover", o.ha ? "ha-pair" : "restart");
  Members m = start_members(o, log);
  load_keys(m, o, report, log);
  if (o.replicas > 0) {
    storm_through_replicas(m, o, report, log);
    return report;
  }
  StormFleet fleet(o.clients, o.client_threads, m.all(1));
  zmq::context_t writer_context(1);
  PubSubTransport writer_transport(writer_context, m.all(2), m.all(1));
  BackgroundLoad writer(storm_writer_spec(o), writer_transport);
  log << o.clients << " clients take a full snapshot...\n";
  std::int64_t start = now_ns();
  fleet.request(m.endpoint(m.active), false);
  wait_round(fleet, o.clients, start, o.deadline_s);
  report.set("initial_seconds", static_cast<double>(now_ns() - start) * 1e-9, "s");
  check_following(fleet, m.endpoint(m.active));
  std::vector<bool> runs;
  if (o.resume != "off") runs.push_back(true);
  if (o.resume != "on") runs.push_back(false);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (i > 0 && m.ha) {  // the killed member comes back as the passive
      ServerProcess& back = m.at(1 - m.active);
      int synced = count_of(back.log_text(), "HA follower: synced");
      back.launch();
      wait_synced(back, synced + 1, seconds(std::max(60, static_cast<int>(o.deadline_s))));
    }
    std::this_thread::sleep_for(seconds(1));  // the writer's updates flow to the clients
    log << "kill -9 " << m.at(m.active).pid() << ", clients reconnect "
        << (runs[i] ? "with resume" : "for full snapshots") << "...\n";
    fail_over(m, fleet, o, runs[i], report);
  }
  if (runs.size() == 2) {
    set_ratio(report, "time_ratio", "seconds");
    set_ratio(report, "cpu_ratio", "server_cpu_s");
    set_ratio(report, "serve_ratio", "serve_seconds");
  }
  report.set("writer_updates", static_cast<double>(writer.stop().sent));
  report.set("client_gaps", static_cast<double>(fleet.gaps()));
  if (auto use = memory_use(m.at(m.active).pid())) {
    report.set("server_rss_mib", static_cast<double>(use->rss_kib) / 1024.0, "MiB");
  }
  return report;
}

}  // namespace zstore::bench
