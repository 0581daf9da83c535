#include "client/cli/dafka_command.h"

#include <algorithm>
#include <atomic>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "client/cli/arguments.h"
#include "client/cli/printable.h"
#include "client/cli/stop_signal.h"
#include "client/cli/subcommand.h"
#include "client/dafka_consumer.h"
#include "client/dafka_producer.h"

namespace zstore::cli {
namespace {

namespace po = boost::program_options;
namespace dafka = client::dafka;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

struct Invocation {
  std::string command;  // produce or consume
  std::string topic;
  std::vector<std::string> towers;
  std::optional<milliseconds> timeout;
  std::optional<std::uint64_t> count;
  bool from_beginning = false;
  security::SocketSecurity security;
};

constexpr milliseconds kDefaultProduceTimeout{10000};
// A handshake failure that lasts this long (retries fail too) ends the command.
constexpr milliseconds kHandshakeGrace{1000};

const char* kUsage =
    "usage: zstore-cli dafka produce TOPIC [--tower tcp://HOST:P]... [--timeout-ms N]\n"
    "                                      [--curve-cert FILE --server-key FILE]\n"
    "       zstore-cli dafka consume TOPIC [--from-beginning] [--tower tcp://HOST:P]... [--count N]\n"
    "                                      [--timeout-ms N] [--curve-cert FILE --server-key FILE]\n"
    "\n"
    "produce  publish one record per line of stdin (without the newline); exit 0 once\n"
    "         a store acknowledged every record, 1 if that takes longer than\n"
    "         --timeout-ms after the end of input (default 10000)\n"
    "consume  print the content of each record of TOPIC on its own line, in order per\n"
    "         producer, until SIGINT/SIGTERM, --count records, or --timeout-ms (exit 1\n"
    "         if --count records did not arrive in time). Starts with the next records\n"
    "         unless --from-beginning asks the stores for everything they hold.\n"
    "\n"
    "Towers are found at tcp://HOST:P (XSUB P, XPUB P+1); default tcp://127.0.0.1:5580,\n"
    "the tower zstored embeds. A zstored with --curve-cert needs --curve-cert (our\n"
    "NAME.key_secret, NAME.key in its --curve-allow) and --server-key (its public key);\n"
    "a refused or wrong key ends the command with the reason. Text content is printed as is, anything else escaped\n"
    "(\\\\ \\n \\r \\t \\xHH). Exit status: 0 ok, 1 failed or timed out, 2 usage error.\n";

po::options_description visible_options() {
  po::options_description o("Options");
  o.add_options()                   //
      ("help,h", "show this help")  //
      ("tower,t", po::value<std::vector<std::string>>()->composing(),
       "tower tcp://HOST:P; repeat for several (default tcp://127.0.0.1:5580)")                              //
      ("timeout-ms", po::value<std::string>(), "produce: wait N ms for the ACKs; consume: stop after N ms")  //
      ("count", po::value<std::string>(), "consume: exit after N records")                                   //
      ("from-beginning", "consume: every record the stores hold, then new ones");
  add_curve_options(o);
  return o;
}

std::optional<Invocation> parse(const std::vector<std::string>& args) {
  po::variables_map vm = parse_command_line(args, visible_options());
  if (vm.count("help")) {
    std::cout << kUsage << "\n" << visible_options();
    return std::nullopt;
  }
  auto words = words_of(vm);
  if (words.empty()) throw UsageError("missing command (produce or consume)");
  Invocation inv;
  inv.command = words[0];
  if (inv.command != "produce" && inv.command != "consume") throw UsageError("unknown command '" + inv.command + "'");
  if (words.size() != 2)
    throw UsageError(inv.command + " takes 1 argument (TOPIC), got " + std::to_string(words.size() - 1));
  inv.topic = words[1];
  if (inv.topic.empty() || inv.topic.size() > 255) throw UsageError("TOPIC must be 1 to 255 bytes");
  inv.towers =
      vm.count("tower") ? vm["tower"].as<std::vector<std::string>>() : std::vector<std::string>{dafka::kDefaultTower};
  if (vm.count("timeout-ms")) inv.timeout = milliseconds(parse_number(vm, "timeout-ms", 1, 86400000));
  if (vm.count("count")) inv.count = parse_number(vm, "count", 1, UINT64_MAX);
  inv.from_beginning = vm.count("from-beginning") > 0;
  inv.security = curve_from(vm);
  if (inv.command == "produce" && (inv.count || inv.from_beginning))
    throw UsageError("--count and --from-beginning apply to consume only");
  return inv;
}

dafka::NodeOptions node_options(const Invocation& inv) {
  dafka::NodeOptions o;
  o.towers = inv.towers;
  o.security = inv.security;
  return o;
}

std::string towers_text(const Invocation& inv) {
  std::string out;
  for (const auto& t : inv.towers) out += (out.empty() ? "" : ", ") + t;
  return out;
}

int fail(const std::string& message) {
  std::cerr << "zstore-cli dafka: " << message << "\n";
  return kExitFailure;
}

// Tracks a node's handshake error: fatal once it lasted kHandshakeGrace.
class HandshakeWatch {
 public:
  // The error once it is fatal, else empty.
  std::string check(const std::string& error) {
    auto now = Clock::now();
    if (error.empty()) {
      failing_ = false;
      return {};
    }
    if (!failing_) since_ = now;
    failing_ = true;
    return now - since_ >= kHandshakeGrace ? error : std::string();
  }

 private:
  bool failing_ = false;
  Clock::time_point since_{};
};

// flush() in slices, giving up early on a lasting handshake failure (set
// into *error).
bool flush_or_fail(dafka::Producer& producer, milliseconds timeout, std::string* error) {
  HandshakeWatch watch;
  auto deadline = Clock::now() + timeout;
  while (true) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    if (producer.flush(std::clamp(left, milliseconds(0), milliseconds(100)))) return true;
    *error = watch.check(producer.handshake_error());
    if (!error->empty() || Clock::now() >= deadline) return false;
  }
}

int run_produce(const Invocation& inv) {
  dafka::ProducerOptions o;
  o.node = node_options(inv);
  dafka::Producer producer(o);
  std::uint64_t published = 0;
  std::string line;
  while (std::getline(std::cin, line)) {
    producer.publish(inv.topic, line);
    ++published;
  }
  const auto timeout = inv.timeout.value_or(kDefaultProduceTimeout);
  std::string error;
  if (flush_or_fail(producer, timeout, &error)) return kExitOk;
  if (!error.empty()) return fail(error);
  return fail(std::to_string(producer.unacked()) + " of " + std::to_string(published) +
              " record(s) not acknowledged by a store within " + std::to_string(timeout.count()) +
              " ms (towers: " + towers_text(inv) + ")" + curve_hint(inv.security));
}

int run_consume(const Invocation& inv) {
  StopSignal stop;
  dafka::ConsumerOptions o;
  o.node = node_options(inv);
  o.reset = inv.from_beginning ? dafka::ConsumerOptions::Reset::kEarliest : dafka::ConsumerOptions::Reset::kLatest;
  dafka::Consumer consumer(o);
  consumer.subscribe({inv.topic});

  std::atomic<bool> done{false};
  std::uint64_t printed = 0;  // the printer thread's until joined
  std::string error;          // likewise
  std::optional<Clock::time_point> deadline;
  if (inv.timeout) deadline = Clock::now() + *inv.timeout;
  std::thread printer([&] {
    HandshakeWatch watch;
    while (!done.load()) {
      if (deadline && Clock::now() >= *deadline) break;
      error = watch.check(consumer.handshake_error());
      if (!error.empty()) break;
      auto record = consumer.poll(milliseconds(100));
      if (!record) continue;
      std::cout << printable(record->content) << std::endl;
      if (inv.count && ++printed >= *inv.count) break;
    }
    stop.trigger();
  });
  stop.wait();
  done.store(true);
  printer.join();
  if (!error.empty()) return fail(error);
  if (inv.count && printed < *inv.count && stop.signal_number() == 0)
    return fail("received " + std::to_string(printed) + " of " + std::to_string(*inv.count) + " record(s) within " +
                std::to_string(inv.timeout->count()) + " ms (towers: " + towers_text(inv) + ")" +
                curve_hint(inv.security));
  return kExitOk;
}

}  // namespace

int run_dafka(const std::vector<std::string>& args) {
  try {
    auto inv = parse(args);
    if (!inv) return kExitOk;
    if (inv->command == "produce") return run_produce(*inv);
    return run_consume(*inv);
  } catch (const UsageError& e) {
    return usage_error("dafka", e.what());
  } catch (const std::invalid_argument& e) {  // a malformed --tower or topic
    return usage_error("dafka", e.what());
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}

}  // namespace zstore::cli
