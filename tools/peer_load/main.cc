// zstore-peer-load WORKLOAD --port P [options]: see peer_load.h and
// docs/benchmarks.md. Prints one JSON object: acked writes/s in the
// measured window, p50/p99 ack latency, acked, failed and kept (the
// watcher's received count, or the records the store holds).
#include <algorithm>
#include <iostream>
#include <thread>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "tools/peer_load/peer_load.h"

namespace po = boost::program_options;
using namespace zstore::peer_load;

namespace {

Spec parse(int argc, char** argv) {
  Spec s;
  po::options_description d(
      "Usage: zstore-peer-load redis-pubsub|redis-stream|redis-log|nats-kv|nats-log|etcd --port P");
  d.add_options()("help,h", "this text")("port", po::value(&s.port)->required(), "the store's port on 127.0.0.1")(
      "writers", po::value(&s.writers)->default_value(s.writers), "writer connections (threads)")(
      "window", po::value(&s.window)->default_value(s.window), "per writer: writes not yet acked at most")(
      "etcd-inflight", po::value(&s.etcd_inflight)->default_value(s.etcd_inflight),
      "etcd: connections, one put outstanding on each (HTTP/1.1 has no pipelining)")(
      "warmup", po::value(&s.warmup_s)->default_value(s.warmup_s), "seconds before measuring")(
      "duration", po::value(&s.duration_s)->default_value(s.duration_s), "seconds measured")(
      "value-bytes", po::value(&s.value_bytes)->default_value(s.value_bytes), "value size (>= 8)")(
      "key-space", po::value(&s.key_space)->default_value(s.key_space), "distinct random keys");
  po::options_description all;
  all.add(d).add_options()("workload", po::value(&s.workload)->required());
  po::positional_options_description pos;
  pos.add("workload", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
  if (vm.count("help")) {
    std::cout << d << '\n';
    std::exit(0);
  }
  po::notify(vm);
  if (s.writers < 1 || s.writers > 256 || s.window < 1 || s.window > 100000 || s.etcd_inflight < 1 ||
      s.etcd_inflight > 1024 || s.value_bytes < 8 || s.value_bytes > (1u << 20) || s.duration_s <= 0 ||
      s.warmup_s < 0 || s.port < 1 || s.port > 65535)
    throw std::invalid_argument("an option is out of range (see --help)");
  return s;
}

std::unique_ptr<Workload> make(const Spec& s) {
  if (s.workload.rfind("redis-", 0) == 0 && s.workload != "redis-") return make_redis(s);
  if (s.workload == "nats-kv" || s.workload == "nats-log") return make_nats(s);
  if (s.workload == "etcd") return make_etcd(s);
  throw std::invalid_argument("unknown workload '" + s.workload + "'");
}

double quantile_ms(std::vector<std::uint32_t>& v, double q) {
  if (v.empty()) return 0;
  auto k = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k] / 1000.0;
}

// Waits (bounded) for the watcher to have seen every acked write.
void settle(Watch& watch, std::uint64_t acked) {
  std::int64_t deadline = now_ns() + 10'000'000'000;
  while (watch.received.load() < acked && now_ns() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

int run(const Spec& s) {
  auto w = make(s);
  w->setup();
  Watch watch;
  std::thread watcher([&] { w->watcher(watch); });
  for (std::int64_t deadline = now_ns() + 10'000'000'000; !watch.ready.load() && now_ns() < deadline;)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  Phases phases;
  phases.start_ns = now_ns() + static_cast<std::int64_t>(s.warmup_s * 1e9);
  phases.end_ns = phases.start_ns + static_cast<std::int64_t>(s.duration_s * 1e9);
  int threads = s.workload == "etcd" ? s.etcd_inflight : s.writers;
  std::vector<std::unique_ptr<Recorder>> recorders;
  std::vector<std::thread> writers;
  std::vector<std::string> errors(threads);
  for (int i = 0; i < threads; ++i) recorders.push_back(std::make_unique<Recorder>(phases));
  for (int i = 0; i < threads; ++i)
    writers.emplace_back([&, i] {
      try {
        w->writer(i, *recorders[i], phases);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  for (auto& t : writers) t.join();
  std::uint64_t acked = 0, window_acked = 0, failed = 0;
  std::vector<std::uint32_t> lat;
  for (auto& r : recorders) {
    acked += r->acked(), window_acked += r->window_acked(), failed += r->failed();
    lat.insert(lat.end(), r->latencies_us().begin(), r->latencies_us().end());
  }
  bool watched = s.workload != "redis-log" && s.workload != "nats-log";
  if (watched) settle(watch, acked);
  watch.stop.store(true);
  watcher.join();
  nlohmann::json j = {{"workload", s.workload},
                      {"per_s", window_acked / s.duration_s},
                      {"p50_ms", quantile_ms(lat, 0.50)},
                      {"p99_ms", quantile_ms(lat, 0.99)},
                      {"acked", acked},
                      {"failed", failed},
                      {"kept", w->kept(watch)},
                      {"watched", watched},
                      {"writers", threads},
                      {"window", s.workload == "etcd" ? 1 : s.window},
                      {"durability", w->durability()}};
  for (const auto& e : errors)
    if (!e.empty()) j["error"] = e;
  std::cout << j.dump() << '\n';
  return j.contains("error") || acked == 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "zstore-peer-load: " << e.what() << '\n';
    return 2;
  }
}
