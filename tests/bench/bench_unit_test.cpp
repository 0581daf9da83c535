// zstore-bench pieces: percentiles, the report, the message body, the
// command line, memory reading, the relay and the floor relay with the load
// generator, and the read limits with the snapshot and replay probes.
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include <rocksdb/db.h>

#include "storage/dafka/dafka_log.h"
#include "storage/db/database.h"
#include "protocol/chp_writes.h"
#include "tools/bench/conditional.h"
#include "tools/bench/cpu_busy.h"
#include "tools/bench/floor_relay.h"
#include "tools/bench/latency.h"
#include "tools/bench/load.h"
#include "tools/bench/options.h"
#include "tools/bench/probes.h"
#include "tools/bench/read_limits.h"
#include "tools/bench/relay.h"
#include "tools/bench/report.h"
#include "tools/bench/source_thread.h"
#include "tools/bench/stopwatch.h"
#include "tools/bench/storm_clients.h"
#include "tools/bench/system.h"
#include "tools/bench/transports.h"
#include "tools/harness/harness.h"

using namespace zstore::bench;

BOOST_AUTO_TEST_CASE(quantiles_use_nearest_rank_and_window_filters) {
  Latencies latencies;
  BOOST_TEST(latencies.quantile_ms(0.99) == 0.0);
  for (int i = 1; i <= 1000; ++i) latencies.add(i, std::int64_t{i} * 1000000);  // 1..1000 ms
  BOOST_TEST(latencies.quantile_ms(0.5) == 500.0);
  BOOST_TEST(latencies.quantile_ms(0.99) == 990.0);
  BOOST_TEST(latencies.quantile_ms(0.999) == 999.0);
  BOOST_TEST(latencies.quantile_ms(1.0) == 1000.0);
  Latencies late = latencies.window(901, 2000);
  BOOST_TEST(late.size() == 100u);
  BOOST_TEST(late.quantile_ms(0.01) == 901.0);
}

BOOST_AUTO_TEST_CASE(report_prints_table_and_one_json_line_in_order) {
  Report report("chp");
  report.set("per_s", 1234.56789, "msg/s");
  report.set_text("shape", "dafka");
  report.set("p99_ms", 0.25, "ms");
  BOOST_TEST(report.number("per_s") == 1234.568);
  auto json = nlohmann::json::parse(report.json_line());
  BOOST_TEST(json["mode"] == "chp");
  BOOST_TEST(json["per_s"].get<double>() == 1234.568);
  BOOST_TEST(report.json_line().find('\n') == std::string::npos);
  BOOST_TEST(report.json_line().find("\"per_s\"") < report.json_line().find("\"p99_ms\""));
  std::ostringstream table;
  report.print_table(table);
  BOOST_TEST(table.str().find("1234.568 msg/s") != std::string::npos);
  BOOST_TEST(table.str().find("shape") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(messages_carry_time_writer_and_number) {
  LoadSpec spec;
  spec.writers = 3;
  spec.value_bytes = 100;
  auto frames = make_message(spec, 2, 7, "");
  BOOST_TEST_REQUIRE(frames.size() == 5u);
  BOOST_TEST(frames[0].size() == 16u);
  BOOST_TEST(frames[0] == "s3/0000000000023");  // index 7 * 3 + 2
  BOOST_TEST(frames[4].size() == 100u);
  std::int64_t sent = 0;
  std::uint32_t writer = 0;
  std::uint64_t n = 0;
  BOOST_TEST(read_body(frames[4], sent, writer, n));
  BOOST_TEST(writer == 2u);  // run 0
  spec.run = 9;
  BOOST_TEST(read_body(make_message(spec, 2, 7, "")[4], sent, writer, n));
  BOOST_TEST(writer == (9u << 16 | 2u));
  spec.run = 0;
  BOOST_TEST(n == 7u);
  BOOST_TEST(sent > 0);
  BOOST_TEST(!read_body(std::string(19, 'x'), sent, writer, n));
  spec.shape = Shape::kDafka;
  auto record = make_message(spec, 0, 5, random_address());
  BOOST_TEST(record.size() == 2u);
  BOOST_TEST(record[0][0] == 'M');
  BOOST_TEST(record[1].size() == 100u);
}

// --key-order random: keys spread uniformly over the key space, not in
// writer order; every run names the same keys.
BOOST_AUTO_TEST_CASE(random_key_order_spreads_uniformly_over_the_key_space) {
  LoadSpec spec;
  spec.writers = 2;
  spec.key_space = 1000;
  spec.random_keys = true;
  std::map<std::string, int> counts;
  int in_order = 0;
  for (std::uint64_t n = 0; n < 50'000; ++n) {
    for (int w = 0; w < 2; ++w) {
      std::string key = make_message(spec, w, n, "")[0];
      ++counts[key];
      if (n < 500) in_order += key == make_message(LoadSpec{.writers = 2, .key_space = 1000}, w, n, "")[0];
    }
  }
  BOOST_TEST(counts.size() == 1000u);  // every key of the space, no other
  int lo = 1 << 30, hi = 0;
  for (const auto& [key, c] : counts) lo = std::min(lo, c), hi = std::max(hi, c);
  BOOST_TEST(lo > 50);  // mean 100, sigma 10: the extremes of 1000 bins lie within 5 sigma
  BOOST_TEST(hi < 150);
  BOOST_TEST(in_order < 10);  // 1000 draws: ~1 matches the sequential key by chance
  BOOST_TEST(make_message(spec, 1, 42, "")[0] == make_message(spec, 1, 42, "")[0]);
}

BOOST_AUTO_TEST_CASE(board_ignores_other_runs_and_duplicates) {
  Board board(2, 16, 7);
  board.set_window(0, INT64_MAX);
  BOOST_TEST(!board.complete_tagged(8u << 16 | 1u, 5, 100, 50));  // a message of run 8
  BOOST_TEST(board.done(1) == 0u);
  BOOST_TEST(board.complete_tagged(7u << 16 | 1u, 5, 100, 50));
  BOOST_TEST(board.done(1) == 6u);
  BOOST_TEST(board.window_completed() == 6u);
  BOOST_TEST(board.complete_tagged(7u << 16 | 1u, 3, 120, 50));  // old: no change
  BOOST_TEST(board.done(1) == 6u);
  BOOST_TEST(board.done(0) == 0u);
  Latencies latencies = board.take_latencies();
  BOOST_TEST(latencies.size() == 1u);  // only message 5 had a known send time
  BOOST_TEST(latencies.quantile_ms(1.0) == 50e-6);
}

BOOST_AUTO_TEST_CASE(options_defaults_and_usage_errors) {
  std::ostringstream out;
  auto o = parse_options({"chp"}, out);
  BOOST_TEST_REQUIRE(o.has_value());
  BOOST_TEST(o->value_bytes == 100u);
  BOOST_TEST(o->keys == 1000000u);
  BOOST_TEST(o->server_cpu == 1);
  BOOST_TEST(o->key_order == "random");
  BOOST_TEST(!parse_options({"--help"}, out).has_value());
  BOOST_TEST(out.str().find("--vs-relay") != std::string::npos);
  for (std::vector<std::string> bad :
       std::vector<std::vector<std::string>>{{},
                                             {"nope"},
                                             {"chp", "--value-bytes", "10"},
                                             {"chp", "--writers", "0"},
                                             {"chp", "--bogus"},
                                             {"relay", "--shape", "x"},
                                             {"chp", "--rate-fraction", "2"},
                                             {"dafka", "--tower", "h:1"},
                                             {"replay", "--dafka-server", "h:1", "--tower", "h:2"},
                                             {"chp", "--duration", "abc"},
                                             {"chp", "--key-order", "shuffled"}}) {
    BOOST_CHECK_THROW(parse_options(bad, out), std::invalid_argument);
  }
  // --curve: chp and dafka only, with a zstored of the bench's own.
  BOOST_CHECK_THROW(parse_options({"snapshot", "--curve"}, out), std::invalid_argument);
  BOOST_CHECK_THROW(parse_options({"dafka", "--curve", "--dafka-server", "h:1", "--tower", "h:2"}, out),
                    std::invalid_argument);
  BOOST_TEST(parse_options({"dafka", "--curve"}, out).has_value());
}

BOOST_AUTO_TEST_CASE(memory_of_this_process_is_read) {
  auto use = memory_use(::getpid());
  BOOST_TEST_REQUIRE(use.has_value());
  BOOST_TEST(use->rss_kib > 0u);
  BOOST_TEST(use->hwm_kib >= use->rss_kib);
  BOOST_TEST(!memory_use(-5).has_value());
}

BOOST_AUTO_TEST_CASE(cpu_time_of_this_process_grows_with_work) {
  auto before = cpu_seconds(::getpid());
  BOOST_TEST_REQUIRE(before.has_value());
  // Busy until 0.1 s of CPU are counted (the machine may be shared: bounded
  // by wall time, not by a fixed amount of work).
  volatile std::uint64_t sink = 0;
  auto start = now_ns();
  std::optional<double> after = before;
  while (after && *after - *before < 0.1 && now_ns() - start < 10000000000) {
    for (int i = 0; i < 1000000; ++i) sink = sink + 1;
    after = cpu_seconds(::getpid());
  }
  BOOST_TEST_REQUIRE(after.has_value());
  BOOST_TEST(*after - *before >= 0.1);
  BOOST_TEST(!cpu_seconds(-5).has_value());
}

// A thread spinning on CPU 0 keeps it busy (other work there only adds to
// it); a span of a few ticks is not measured, nor a CPU not sampled.
BOOST_AUTO_TEST_CASE(cpu_busy_share_needs_enough_clock_ticks) {
  CpuBusySampler sampler(0);
  std::atomic<bool> stop{false};
  std::thread spinner([&] {
    pin_current_thread(0);
    volatile std::uint64_t sink = 0;
    while (!stop.load()) sink = sink + 1;
  });
  std::int64_t start = now_ns();
  std::int64_t end = start;
  std::optional<double> whole;
  bool measured = zstore::testing::wait_until([&] {
    end = now_ns();
    whole = sampler.busy(start, end);
    return whole.has_value();
  });
  stop.store(true);
  spinner.join();
  BOOST_TEST_REQUIRE(measured);
  BOOST_TEST(end - start >= std::int64_t{180000000});  // 20 ticks of 10 ms, give or take one sample
  BOOST_TEST(*whole > 0.8);
  BOOST_TEST(*whole <= 1.0);
  BOOST_TEST(!sampler.busy(start, start + 60000000).has_value());
  BOOST_TEST(!CpuBusySampler(-1).busy(start, end).has_value());
}

BOOST_AUTO_TEST_CASE(relay_carries_a_windowed_and_a_bounded_load) {
  zmq::context_t context(1);
  Relay relay(-1);
  PubSubTransport transport(context, relay.input(), relay.output());
  LoadSpec spec;
  spec.writers = 2;
  spec.window = 50;
  spec.warmup_s = 0.1;
  spec.duration_s = 0.5;
  LoadResult result = run_load(spec, transport);
  BOOST_TEST(result.rate() > 100.0);
  // Every message sent arrived before the run closed its sockets (libzmq
  // 4.3 can abort on a connection closed mid-message).
  BOOST_TEST(result.completed == result.sent);
  BOOST_TEST(result.latencies.window(result.window_start_ns, result.window_end_ns).size() > 50u);
  spec.total = 1001;
  spec.shape = Shape::kDafka;
  LoadResult bounded = run_load(spec, transport);
  BOOST_TEST(bounded.completed == 1001u);
  BOOST_TEST(bounded.sent == 1001u);
}

namespace {

// Runs 1001 messages of shape from 2 writers through a floor relay on dir,
// then calls check with its database, opened read-only while the relay
// still runs (a read-only open takes no lock).
void check_floor_database(const std::filesystem::path& dir, Shape shape,
                          const std::function<void(zstore::storage::Database&)>& check) {
  LoadSpec spec;
  spec.shape = shape;
  spec.writers = 2;
  spec.window = 50;
  spec.total = 1001;
  FloorRelay floor(-1, dir, shape);
  zmq::context_t context(1);  // after the relay, so that it ends first (as relay_run)
  PubSubTransport transport(context, floor.input(), floor.output());
  BOOST_TEST_REQUIRE(run_load(spec, transport).completed == 1001u);
  zstore::storage::DatabaseOptions options;
  options.read_only = true;
  std::unique_ptr<zstore::storage::Database> db;
  auto status = zstore::storage::Database::Open(dir.string(), options, &db);
  BOOST_TEST_REQUIRE(status.ok(), status.message());
  check(*db);
  BOOST_TEST(db->close().ok());
}

}  // namespace

// The floor relay stores each KVSET's chp_map entry before it forwards it:
// every key the load wrote (0..1000, each new) is in its database, and the
// database is gone after it.
BOOST_AUTO_TEST_CASE(floor_relay_persists_what_it_forwards_and_removes_its_database) {
  zstore::testing::TempDir parent;
  auto dir = parent.path() / "floor";
  check_floor_database(dir, Shape::kChp, [](zstore::storage::Database& db) {
    std::unique_ptr<rocksdb::Iterator> it(
        db.db()->NewIterator(rocksdb::ReadOptions(), db.handle(zstore::storage::Column::kChpMap)));
    std::size_t keys = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++keys;
    BOOST_TEST(keys == 1001u);
  });
  BOOST_TEST(!std::filesystem::exists(dir));
}

// The Dafka floor relay stores each RECORD under its partition and offset
// as zstored's DafkaLog does: every record of both writers (writer 0
// offsets 0..500, writer 1 0..499) reads back through DafkaLog::read with
// its content.
BOOST_AUTO_TEST_CASE(dafka_floor_relay_stores_every_record_as_the_store_reads_them) {
  zstore::testing::TempDir parent;
  check_floor_database(parent.path() / "floor", Shape::kDafka, [](zstore::storage::Database& db) {
    std::set<zstore::storage::DafkaPartitionKey> partitions;
    std::unique_ptr<rocksdb::Iterator> it(
        db.db()->NewIterator(rocksdb::ReadOptions(), db.handle(zstore::storage::Column::kDafkaRecords)));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      std::string_view key(it->key().data(), it->key().size());
      zstore::storage::DafkaPartitionKey p;
      std::uint64_t last = 0;
      BOOST_TEST_REQUIRE(zstore::storage::parse_dafka_record_key(key, &p, &last));
      partitions.insert(p);
    }
    it.reset();
    BOOST_TEST_REQUIRE(partitions.size() == 2u);
    std::unique_ptr<zstore::storage::DafkaLog> log;
    BOOST_TEST_REQUIRE(zstore::storage::DafkaLog::Open(&db, &log).ok());
    std::vector<std::uint64_t> counts;
    for (const auto& [subject, partition] : partitions) {
      BOOST_TEST(subject == kBenchTopic);
      auto cursor = log->read(subject, partition, 0, 1000);
      zstore::storage::DafkaRecordView r;
      std::uint64_t next = 0;
      while (cursor->next_view(&r)) {
        std::int64_t sent = 0;
        std::uint32_t tag = 0;
        std::uint64_t n = 0;
        BOOST_TEST_REQUIRE(read_body(r.content, sent, tag, n));
        BOOST_TEST_REQUIRE(r.offset == next);
        BOOST_TEST_REQUIRE(n == next);  // the record's own body, in order
        ++next;
      }
      BOOST_TEST(cursor->status().ok());
      counts.push_back(next);
    }
    std::sort(counts.begin(), counts.end());
    BOOST_TEST(counts == (std::vector<std::uint64_t>{500, 501}), boost::test_tools::per_element());
  });
}

// The storm's writer (tools/bench/storm.cc): KVSETs with a UUID, to every
// member's collector.
BOOST_AUTO_TEST_CASE(chp_kvsets_carry_a_uuid_of_their_own_when_asked) {
  LoadSpec spec;
  spec.writers = 2;
  BOOST_TEST(make_message(spec, 1, 7, "")[2].empty());
  spec.chp_uuids = true;
  std::string uuid = make_message(spec, 1, 7, "")[2];
  BOOST_TEST(uuid.size() == 16u);
  BOOST_TEST(make_message(spec, 1, 7, "")[2] == uuid);  // the same update, the same UUID
  BOOST_TEST(make_message(spec, 1, 8, "")[2] != uuid);
  BOOST_TEST(make_message(spec, 0, 7, "")[2] != uuid);
  spec.run = 3;
  BOOST_TEST(make_message(spec, 1, 7, "")[2] != uuid);
}

// A storm client's resume answered with the map is "ahead" only when the
// server's epochs do not hold the sequence it named: the backup took over
// at 98 of the old active's epoch, the client had seen 99.
BOOST_AUTO_TEST_CASE(storm_client_sees_when_its_sequence_is_unknown_to_the_server) {
  std::string props = "epochs=0:98,500:509\nhistory-from=1\n";
  BOOST_TEST(sequence_unknown_to(props, 99));
  BOOST_TEST(sequence_unknown_to(props, 510));
  BOOST_TEST(!sequence_unknown_to(props, 98));
  BOOST_TEST(!sequence_unknown_to(props, 500));
  BOOST_TEST(!sequence_unknown_to(props, 509));
  BOOST_TEST(!sequence_unknown_to("history-from=1\n", 99));  // a server naming no epochs: unknown
}

BOOST_AUTO_TEST_CASE(writers_reach_every_write_endpoint) {
  zmq::context_t context(1);
  Relay first(-1);
  Relay second(-1);
  // Written to both, read from the second only: it completes only if the
  // writers' PUBs reach the second relay too.
  PubSubTransport transport(context, std::vector<std::string>{first.input(), second.input()},
                            std::vector<std::string>{second.output()});
  LoadSpec spec;
  spec.writers = 2;
  spec.window = 50;
  spec.warmup_s = 0;
  spec.total = 300;
  LoadResult result = run_load(spec, transport);
  BOOST_TEST(result.completed == 300u);
}

// The server drops a WRITTEN its queue to the writer cannot take and never
// sends it again: a conditional writer waiting on that answer sends the
// write again (the same uuid) after a second, instead of waiting 30 s and
// failing the run. Here a fake server drops the first answer.
BOOST_AUTO_TEST_CASE(conditional_writer_sends_a_write_again_when_its_answer_is_lost) {
  namespace chp = zstore::protocol::chp;
  zmq::context_t context(1);
  zmq::socket_t server(context, zmq::socket_type::router);
  server.set(zmq::sockopt::linger, 0);
  server.bind("tcp://127.0.0.1:*");
  std::vector<std::string> uuids;
  std::vector<chp::Precondition> preconditions;
  std::thread fake([&] {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (uuids.size() < 3 && std::chrono::steady_clock::now() < deadline) {
      zmq::pollitem_t item{server.handle(), 0, ZMQ_POLLIN, 0};
      if (zmq::poll(&item, 1, std::chrono::milliseconds(100)) <= 0) continue;
      std::vector<zmq::message_t> parts;
      do {
        parts.emplace_back();
        (void)server.recv(parts.back());
      } while (parts.back().more());
      std::vector<std::string_view> views;
      for (std::size_t i = 1; i < parts.size(); ++i) views.emplace_back(parts[i].data<char>(), parts[i].size());
      auto request = chp::decode_write(views);
      if (!request.ok()) continue;
      uuids.emplace_back(request.value().uuid);
      preconditions.push_back(request.value().precondition);
      if (uuids.size() == 1) continue;  // this answer is lost
      chp::WriteOutcome outcome;
      outcome.kind = chp::WriteOutcome::Kind::kApplied;
      outcome.uuid = uuids.back();
      outcome.sequence = 41 + uuids.size();
      server.send(parts[0], zmq::send_flags::sndmore);
      send_frames(server, chp::encode_written(outcome));
    }
  });
  ConditionalTransport transport(context, server.get(zmq::sockopt::last_endpoint), "tcp://127.0.0.1:1");
  auto outlet = transport.open(0);
  const std::string first(16, '\x01');
  const std::string second(16, '\x02');
  auto started = std::chrono::steady_clock::now();
  outlet->send({"k", "", first, "", "v1"});
  BOOST_CHECK_NO_THROW(outlet->send({"k", "", second, "", "v2"}));  // waits for the first's answer
  BOOST_TEST_MESSAGE("the second write went after "
                     << std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() << " s");
  fake.join();
  BOOST_REQUIRE_EQUAL(uuids.size(), 3u);
  BOOST_TEST(uuids[0] == first);
  BOOST_TEST(uuids[1] == first);  // sent again
  BOOST_TEST(uuids[2] == second);
  BOOST_TEST((preconditions[0].kind == chp::Precondition::Kind::kAbsent));
  BOOST_TEST((preconditions[1].kind == chp::Precondition::Kind::kAbsent));  // the same write
  BOOST_TEST((preconditions[2].kind == chp::Precondition::Kind::kSequence));
  BOOST_TEST(preconditions[2].sequence == 43u);  // from the answer to the write sent again
  BOOST_TEST(transport.resent() == 1u);
}

BOOST_AUTO_TEST_CASE(snapshot_source_answers_each_icanhaz_with_every_key) {
  zmq::context_t context(1);
  SnapshotSource source(-1, 3000, 100);
  SnapshotTiming first = time_snapshot(context, source.endpoint(), "");
  BOOST_TEST(first.keys == 3000u);
  BOOST_TEST(first.seconds > 0.0);
  SnapshotTiming again = time_snapshot(context, source.endpoint(), "s0/");  // any subtree: all keys
  BOOST_TEST(again.keys == 3000u);
}

BOOST_AUTO_TEST_CASE(fetch_source_learns_the_node_from_its_beacon_and_answers_fetches) {
  zmq::context_t context(1);
  FetchSource source(-1, 100);
  // Two partitions; the first larger than one FETCH answer slice.
  const std::vector<std::string> partitions = {std::string(32, 'A'), std::string(32, 'B')};
  ReplayTiming replay = time_replay(context, source.tower(), source.publisher(), partitions, {5000, 7});
  BOOST_TEST(replay.records == 5007u);
  BOOST_TEST(replay.seconds > 0.0);
}

// The constructor's error, "" when it succeeded.
std::string source_thread_error(const SourceThread::Body& body) {
  try {
    SourceThread thread("probe", -1, body);
    return "";
  } catch (const std::runtime_error& e) {
    return e.what();
  }
}

BOOST_AUTO_TEST_CASE(source_thread_reports_a_body_that_fails_or_returns_before_ready) {
  using Ready = SourceThread::Ready;
  BOOST_TEST(source_thread_error([](zmq::context_t&, const std::atomic<bool>&, const Ready&) {
               throw std::runtime_error("boom");
             }) == "probe: boom");
  BOOST_TEST(source_thread_error([](zmq::context_t&, const std::atomic<bool>&, const Ready&) {}) ==
             "probe: returned before it was ready");
  BOOST_TEST(source_thread_error([](zmq::context_t&, const std::atomic<bool>& stop, const Ready& ready) {
               ready({"tcp://127.0.0.1:1"});
               while (!stop) std::this_thread::yield();
             }) == "");
}

// Spins until the calling thread has used `seconds` of CPU.
static void spin_cpu(double seconds) {
  double until = Stopwatch::thread_cpu_seconds() + seconds;
  volatile std::uint64_t sink = 0;
  while (Stopwatch::thread_cpu_seconds() < until) sink = sink + 1;
}

// A store mode's measure leaves out what runs through exclude() (the bench
// preparing its batches): its CPU from the thread's and the process's, its
// time from the wall time; what runs outside exclude() stays in.
BOOST_AUTO_TEST_CASE(stopwatch_leaves_excluded_sections_out) {
  auto start = std::chrono::steady_clock::now();
  Stopwatch watch;
  spin_cpu(0.05);
  watch.exclude([] { spin_cpu(0.3); });
  unmeasured(&watch, [] { spin_cpu(0.3); });
  StoreRun run;
  watch.stop(&run, 10);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  BOOST_TEST(run.messages == 10u);
  BOOST_TEST(run.thread_cpu >= 0.05);
  BOOST_TEST(run.thread_cpu < 0.3, run.thread_cpu);  // 0.65 with the sections counted
  BOOST_TEST(run.process_cpu >= run.thread_cpu - 0.001);
  BOOST_TEST(run.process_cpu < 0.3, run.process_cpu);
  // The sections took at least their 0.6 s of CPU in wall time.
  BOOST_TEST(run.seconds <= wall - 0.6, run.seconds << " of " << wall);
  bool ran = false;
  unmeasured(nullptr, [&] { ran = true; });
  BOOST_TEST(ran);
}
