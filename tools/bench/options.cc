#include "tools/bench/options.h"

#include <stdexcept>

#include <boost/program_options.hpp>

#include "tools/bench/load.h"

namespace zstore::bench {

namespace po = boost::program_options;

namespace {

// The load: its writers, messages, rate and keys.
void describe_load(po::options_description& d, Options& o) {
  d.add_options()("writers", po::value(&o.writers)->default_value(o.writers), "writer clients (threads)")(
      "value-bytes", po::value(&o.value_bytes)->default_value(o.value_bytes), "value / record content size (>= 20)")(
      "duration", po::value(&o.duration_s)->default_value(o.duration_s), "seconds measured")(
      "warmup", po::value(&o.warmup_s)->default_value(o.warmup_s), "seconds of load before measuring")(
      "window", po::value(&o.window)->default_value(o.window), "per writer: messages in flight at most")(
      "rate", po::value(&o.rate)->default_value(o.rate), "total messages/s (0: as fast as possible)")(
      "rate-fraction", po::value(&o.rate_fraction)->default_value(o.rate_fraction),
      "chp/dafka: then run again at this fraction (0..1) of the measured rate")(
      "shape", po::value(&o.shape)->default_value(o.shape), "relay: message shape, chp or dafka")(
      "keys", po::value(&o.keys)->default_value(o.keys),
      "snapshot, restart, storm, resync: keys loaded; store: writes applied")(
      "batch", po::value(&o.batch)->default_value(o.batch), "store: writes per apply (chp, dafka)")(
      "store-path", po::value(&o.store_path)->default_value(o.store_path),
      "store: chp (CHP writes), chp-floor (the same writes' chp_map entries alone), dafka (Dafka appends), "
      "snapshot (reading --keys keys) or replay (reading --records records after a restart)")(
      "key-space", po::value(&o.key_space)->default_value(o.key_space),
      "chp, store: distinct keys written (0: all new)")(
      "key-order", po::value(&o.key_order)->default_value(o.key_order),
      "chp, store: random (uniform over --key-space) or sequential (each writer in turn)");
}

// What one mode or another measures.
void describe_mode_flags(po::options_description& d, Options& o) {
  d.add_options()("subtree", po::value(&o.subtree)->default_value(o.subtree),
                  "snapshot: prefix of the subtree snapshot")(
      "writer-rate", po::value(&o.writer_rate)->default_value(o.writer_rate),
      "snapshot, storm, resync: updates/s of the concurrent writer")(
      "clients", po::value(&o.clients)->default_value(o.clients), "storm: clients mirroring the map")(
      "client-threads", po::value(&o.client_threads)->default_value(o.client_threads),
      "storm: threads running the clients")(
      "resume", po::value(&o.resume)->default_value(o.resume),
      "storm: clients reconnect with their last sequence (on), without (off), or both runs")(
      "ha", po::bool_switch(&o.ha), "storm: fail over an HA pair (default: kill -9 and restart one zstored)")(
      "deadline", po::value(&o.deadline_s)->default_value(o.deadline_s),
      "storm: seconds for every client to be current after the kill")(
      "replicas", po::value(&o.replicas)->default_value(o.replicas),
      "chain: read replicas in the chain after the standalone zstored (0: 2); storm: the clients are spread "
      "over this many read replicas of the server(s) instead of on them (0)")(
      "records", po::value(&o.records)->default_value(o.records), "replay: records produced then fetched");
}

// The server measured (ours or a running one) and the CPUs of each side.
void describe_servers(po::options_description& d, Options& o) {
  d.add_options()("server", po::value(&o.server), "host:P, CHP base port of a running zstored")(
      "dafka-server", po::value(&o.dafka_server), "host:D, publisher of a running Dafka store")(
      "tower", po::value(&o.tower), "host:T, the tower of that store")(
      "server-pid", po::value(&o.server_pid), "pid of the running zstored (to report its memory)")(
      "zstored", po::value(&o.zstored), "zstored binary (default: next to zstore-bench)")(
      "sync", po::value(&o.sync)->default_value(o.sync),
      "the sync policy of every zstored started and of the in-process databases (always, batch, none)")(
      "zstored-arg", po::value(&o.zstored_args)->composing(),
      "a flag for every zstored started, e.g. --zstored-arg=--shared-core (repeatable)")(
      "server-cpu", po::value(&o.server_cpu)->default_value(o.server_cpu), "CPU for zstored or the relay (-1: any)")(
      "client-cpu", po::value(&o.client_cpu)->default_value(o.client_cpu), "CPU for the load generator (-1: any)");
}

// What a run is compared with.
void describe_comparisons(po::options_description& d, Options& o) {
  d.add_options()("vs-relay", po::bool_switch(&o.vs_relay),
                  "also run the physical limit with the same load (the relay; for snapshot and replay a ZeroMQ-only "
                  "source); adds ratio_vs_relay")(
      "vs-floor", po::bool_switch(&o.vs_floor),
      "chp, dafka: also run the floor relay with the same load (the relay plus one write of each turn's "
      "messages before it forwards them: chp_map entries of KVSETs, or Dafka records in runs per partition; "
      "the least a durable server does); adds ratio_vs_floor and, paced, paced_p99_vs_floor")(
      "conditional", po::bool_switch(&o.conditional),
      "chp: after the plain run, the same load as conditional writes (WRITE? on the snapshot socket, each "
      "a read-modify-write of the writer's own keys: if-absent, then if-seq of its last outcome); adds "
      "conditional_per_s, conditional_vs_plain and the refused / failed outcomes (0 expected)")(
      "curve", po::bool_switch(&o.curve),
      "chp, dafka: zstored with CURVE (--curve-cert, --curve-allow; keys made in a temp dir) and CURVE "
      "clients (chp: writers and subscriber; dafka: producer nodes, whose beacons carry their keys, and the "
      "ACK subscriber), to compare with the plain run; the --vs-relay relay stays plain");
}

po::options_description describe(Options& o) {
  po::options_description desc(
      "Usage: zstore-bench relay|chp|snapshot|dafka|replay|restart|storm|resync|store|chain [options]\n"
      "Measures zstored (started on a temp dir unless --server) or the in-process relay.\nOptions");
  desc.add_options()("help,h", "this text");
  describe_load(desc, o);
  describe_mode_flags(desc, o);
  describe_servers(desc, o);
  describe_comparisons(desc, o);
  desc.add_options()("json", po::bool_switch(&o.json), "print one JSON object on the last line");
  return desc;
}

void check(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument(message);
}

void validate(const Options& o) {
  static const std::vector<std::string> modes = {"relay",   "chp",   "snapshot", "dafka", "replay",
                                                 "restart", "storm", "resync",   "store", "chain"};
  check(std::find(modes.begin(), modes.end(), o.mode) != modes.end(),
        "unknown mode '" + o.mode + "' (relay, chp, snapshot, dafka, replay, restart, storm, resync, store or chain)");
  check(o.writers >= 1 && o.writers <= 256, "--writers must be 1..256");
  check(o.value_bytes >= kMinValueBytes && o.value_bytes <= (16u << 20), "--value-bytes must be 20..16777216");
  check(o.duration_s > 0 && o.duration_s <= 3600, "--duration must be in (0, 3600] seconds");
  check(o.warmup_s >= 0 && o.warmup_s <= 600, "--warmup must be in [0, 600] seconds");
  check(o.window >= 1 && o.window <= 1000000, "--window must be 1..1000000");
  check(o.rate >= 0, "--rate must be >= 0");
  check(o.rate_fraction >= 0 && o.rate_fraction <= 1, "--rate-fraction must be in [0, 1]");
  check(o.shape == "chp" || o.shape == "dafka", "--shape must be chp or dafka");
  check(o.keys >= 1, "--keys must be >= 1");
  check(o.batch >= 1 && o.batch <= 100000, "--batch must be 1..100000");
  check(o.writer_rate > 0, "--writer-rate must be > 0");
  check(o.records >= 1, "--records must be >= 1");
  check(o.clients >= 1 && o.clients <= 10000, "--clients must be 1..10000");
  check(o.client_threads >= 1 && o.client_threads <= 64, "--client-threads must be 1..64");
  check(o.store_path == "chp" || o.store_path == "chp-floor" || o.store_path == "dafka" || o.store_path == "snapshot" ||
            o.store_path == "replay",
        "--store-path must be chp, chp-floor, dafka, snapshot or replay");
  check(o.key_order == "random" || o.key_order == "sequential", "--key-order must be random or sequential");
  check(o.resume == "on" || o.resume == "off" || o.resume == "both", "--resume must be on, off or both");
  check(o.deadline_s > 0, "--deadline must be > 0");
  check(o.replicas >= 0 && o.replicas <= 8, "--replicas must be 0..8");
  check(o.replicas == 0 || o.mode == "chain" || o.mode == "storm", "--replicas is for the chain and storm modes");
  check(o.mode != "chain" || o.server.empty(), "chain starts its own servers: it cannot use --server");
  check(o.mode != "storm" || o.server.empty(), "storm kills and restarts its own servers: it cannot use --server");
  check(!o.vs_floor || o.mode == "chp" || o.mode == "dafka", "--vs-floor is for the chp and dafka modes");
  check(o.server_cpu >= -1 && o.client_cpu >= -1, "--server-cpu and --client-cpu must be >= -1");
  bool dafka = o.mode == "dafka" || o.mode == "replay";
  check(!dafka || o.dafka_server.empty() == o.tower.empty(), "--dafka-server and --tower go together");
  check(o.mode != "restart" || o.server.empty(),
        "restart kills and restarts the server itself: it cannot use --server");
  check(o.mode != "replay" || o.dafka_server.empty(), "replay restarts the store itself: it cannot use --dafka-server");
  check(!o.conditional || o.mode == "chp", "--conditional is for the chp mode");
  check(!o.curve || o.mode == "chp" || o.mode == "dafka", "--curve applies to chp and dafka only");
  check(!o.curve || (o.server.empty() && o.dafka_server.empty()),
        "--curve starts its own zstored with fresh keys: it cannot use --server or --dafka-server");
}

storage::SyncPolicy g_sync = storage::SyncPolicy::kAlways;

}  // namespace

storage::SyncPolicy database_sync() { return g_sync; }

std::optional<Options> parse_options(const std::vector<std::string>& args, std::ostream& out) {
  Options o;
  po::options_description desc = describe(o);
  po::options_description all;
  all.add(desc).add_options()("mode", po::value(&o.mode));
  po::positional_options_description positional;
  positional.add("mode", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw std::invalid_argument(e.what());
  }
  if (vm.count("help") > 0) {
    out << desc << '\n';
    return std::nullopt;
  }
  check(!o.mode.empty(),
        "a mode is required: relay, chp, snapshot, dafka, replay, restart, storm, resync, store or chain");
  validate(o);
  auto sync = storage::parse_sync_policy(o.sync);
  check(sync.has_value(), "--sync must be always, batch or none");
  g_sync = *sync;
  o.zstored_args.insert(o.zstored_args.begin(), {"--sync", o.sync});
  return o;
}

}  // namespace zstore::bench
