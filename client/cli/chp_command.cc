#include "client/cli/chp_command.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "client/cli/arguments.h"
#include "client/cli/printable.h"
#include "client/cli/stop_signal.h"
#include "client/cli/subcommand.h"
#include "client/clone_client.h"
#include "client/confirmed_write.h"
#include "client/key_history.h"
#include "client/key_lookup.h"
#include "client/one_shot_snapshot.h"
#include "protocol/chp_codec.h"
#include "protocol/chp_writes.h"

namespace zstore::cli {
namespace {

namespace po = boost::program_options;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr const char* kDefaultServer = "tcp://127.0.0.1:5556";

// One parsed command line.
struct Invocation {
  std::string command;
  std::vector<std::string> args;  // positional words after the command
  std::vector<std::string> servers;
  milliseconds timeout{5000};
  milliseconds failover{3000};
  std::optional<std::string> subtree;
  std::optional<std::uint64_t> ttl;
  std::optional<std::uint64_t> count;
  protocol::chp::Precondition precondition;
  bool with_seq = false;
  std::uint64_t limit = 64;
  security::SocketSecurity security;
};

const char* kUsage =
    "usage: zstore-cli chp [options] get KEY [--with-seq]\n"
    "       zstore-cli chp [options] set KEY VALUE [--ttl N] [--if-seq N | --if-absent]\n"
    "       zstore-cli chp [options] del KEY [--if-seq N]\n"
    "       zstore-cli chp [options] watch [--subtree P] [--count N]\n"
    "       zstore-cli chp [options] snapshot [--subtree P]\n"
    "       zstore-cli chp [options] history KEY [--limit N]\n"
    "\n"
    "get       print KEY's value (that key only, not the keys it prefixes);\n"
    "          exit 3 if a server answered that it is absent\n"
    "set, del  write KEY; exit 0 once a server stored and published it, printing its\n"
    "          sequence (zstored; the Guide's servers confirm without one). --if-seq N:\n"
    "          only if KEY's current sequence is N; --if-absent: only if KEY does not\n"
    "          exist; exit 4, printing KEY's current sequence (0: absent), if not\n"
    "watch     print one line per update until SIGINT/SIGTERM (or --count)\n"
    "snapshot  print every key, sorted, then exit\n"
    "history   print KEY's versions still in the server's history, newest first, at most\n"
    "          --limit (default 64, at most 1000); exit 5 if the history holds none\n"
    "\n"
    "Output: get prints VALUE (--with-seq: 'SEQ VALUE'); watch prints 'SEQ KEY VALUE' or 'SEQ KEY (deleted)';\n"
    "snapshot prints 'KEY VALUE'; history prints 'SEQ TIME VALUE', 'SEQ TIME (deleted)' or\n"
    "'SEQ TIME (expired)', TIME when the update reached the server, UTC ('-' if unknown).\n"
    "Text is printed as is, anything else escaped\n"
    "(\\\\ \\n \\r \\t \\xHH). Exit status: 0 ok, 1 failed or timed out, 2 usage error,\n"
    "3 get: no such key, 4 set/del: the precondition did not hold, 5 history: no version of\n"
    "the key in the history. A failed CURVE handshake (key refused, server key mismatch,\n"
    "CURVE on one side only) ends the command at once with status 1 and the reason\n"
    "on stderr.\n";

po::options_description visible_options() {
  po::options_description o("Options");
  o.add_options()                   //
      ("help,h", "show this help")  //
      ("server,s", po::value<std::vector<std::string>>()->composing(),
       "CHP server tcp://HOST:P (snapshot port P; publisher P+1; collector P+2); repeat for a backup "
       "(at most 2). Default tcp://127.0.0.1:5556")                                                       //
      ("timeout-ms", po::value<std::string>(), "give up after N ms (default 5000; watch: initial sync)")  //
      ("failover-ms", po::value<std::string>(), "switch server after N ms of silence (default 3000)")     //
      ("ttl", po::value<std::string>(), "set: the key expires after N seconds")                           //
      ("if-seq", po::value<std::string>(), "set, del: only if the key's current sequence is N")           //
      ("if-absent", "set: only if the key does not exist")                                                //
      ("with-seq", "get: print the key's sequence before its value")                                      //
      ("subtree", po::value<std::string>(), "watch, snapshot: only keys starting with P")                 //
      ("count", po::value<std::string>(), "watch: exit after N updates")                                  //
      ("limit", po::value<std::string>(), "history: at most N versions, 1 to 1000 (default 64)");
  add_curve_options(o);
  return o;
}

// Positional words each command takes, and the options only some accept.
void check_shape(const Invocation& inv, const po::variables_map& vm) {
  struct Shape {
    std::string_view name;
    std::size_t args;
  };
  static constexpr Shape kShapes[] = {{"get", 1},   {"set", 2},      {"del", 1},
                                      {"watch", 0}, {"snapshot", 0}, {"history", 1}};
  const std::string& c = inv.command;
  const auto* shape = std::find_if(std::begin(kShapes), std::end(kShapes), [&](const Shape& s) { return s.name == c; });
  if (shape == std::end(kShapes)) throw UsageError("unknown command '" + c + "'");
  const std::size_t want = shape->args;
  if (inv.args.size() != want) {
    throw UsageError(c + " takes " + std::to_string(want) + " argument(s), got " + std::to_string(inv.args.size()));
  }
  if (vm.count("ttl") && c != "set") throw UsageError("--ttl applies to set only");
  if (vm.count("subtree") && c != "watch" && c != "snapshot") {
    throw UsageError("--subtree applies to watch and snapshot");
  }
  if (vm.count("count") && c != "watch") throw UsageError("--count applies to watch only");
  if (vm.count("if-seq") && c != "set" && c != "del") throw UsageError("--if-seq applies to set and del");
  if (vm.count("if-absent") && c != "set") throw UsageError("--if-absent applies to set only");
  if (vm.count("if-seq") && vm.count("if-absent")) throw UsageError("--if-seq and --if-absent exclude each other");
  if (vm.count("with-seq") && c != "get") throw UsageError("--with-seq applies to get only");
  if (vm.count("limit") && c != "history") throw UsageError("--limit applies to history only");
  if (!inv.args.empty() && inv.args[0].empty()) throw UsageError("KEY must not be empty");
  if (c == "set" && inv.args[1].empty()) throw UsageError("VALUE must not be empty (use del to delete a key)");
  if ((c == "set" || c == "del") && protocol::chp::is_reserved_key(inv.args[0])) {
    throw UsageError("'" + inv.args[0] + "' is reserved by CHP and cannot be written");
  }
}

Invocation to_invocation(const po::variables_map& vm) {
  Invocation inv;
  using Words = std::vector<std::string>;
  Words words = words_of(vm);
  if (words.empty()) throw UsageError("missing command (get, set, del, watch, snapshot or history)");
  inv.command = words[0];
  inv.args.assign(words.begin() + 1, words.end());
  inv.servers = vm.count("server") ? vm["server"].as<Words>() : Words{kDefaultServer};
  if (inv.servers.size() > 2) throw UsageError("at most two --server");
  if (vm.count("timeout-ms")) inv.timeout = milliseconds(parse_number(vm, "timeout-ms", 1, 86400000));
  if (vm.count("failover-ms")) inv.failover = milliseconds(parse_number(vm, "failover-ms", 1, 86400000));
  if (vm.count("ttl")) inv.ttl = parse_number(vm, "ttl", 0, 10ull * 365 * 24 * 3600);
  if (vm.count("count")) inv.count = parse_number(vm, "count", 1, UINT64_MAX);
  if (vm.count("subtree")) inv.subtree = vm["subtree"].as<std::string>();
  using Pre = protocol::chp::Precondition;
  if (vm.count("if-seq")) inv.precondition = {Pre::Kind::kSequence, parse_number(vm, "if-seq", 0, UINT64_MAX)};
  if (vm.count("if-absent")) inv.precondition = {Pre::Kind::kAbsent, 0};
  inv.with_seq = vm.count("with-seq") != 0;
  if (vm.count("limit")) inv.limit = parse_number(vm, "limit", 1, protocol::chp::kMaxHistoryLimit);
  inv.security = curve_from(vm);
  check_shape(inv, vm);
  return inv;
}

// Parses args; nullopt after printing --help.
std::optional<Invocation> parse(const std::vector<std::string>& args) {
  po::variables_map vm = parse_command_line(args, visible_options());
  if (vm.count("help")) {
    std::cout << kUsage << "\n" << visible_options();
    return std::nullopt;
  }
  return to_invocation(vm);
}

client::Options client_options(const Invocation& inv, std::string subtree) {
  client::Options o;
  o.servers = inv.servers;
  o.subtree = std::move(subtree);
  o.failover_timeout = inv.failover;
  o.security = inv.security;
  return o;
}

std::string servers_text(const Invocation& inv) {
  std::string out;
  for (const auto& s : inv.servers) out += (out.empty() ? "" : ", ") + s;
  return out + curve_hint(inv.security);
}

int fail(const std::string& message) {
  std::cerr << "zstore-cli chp: " << message << "\n";
  return kExitFailure;
}

// Synced, or failed: a failed security handshake with every server ends
// the wait at once, with its reason.
bool sync(const client::CloneClient& client, const Invocation& inv) {
  client.wait_for([&client] { return client.synced() || client.handshake_error().has_value(); }, inv.timeout);
  if (client.synced()) return true;
  if (auto why = client.handshake_error()) {
    fail(*why);
    return false;
  }
  fail("no CHP server answered within " + std::to_string(inv.timeout.count()) + " ms (" + servers_text(inv) + ")");
  return false;
}

milliseconds left(Clock::time_point deadline) {
  return std::max(milliseconds(0), std::chrono::duration_cast<milliseconds>(deadline - Clock::now()));
}

// ---------------------------------------------------------------------------

// One snapshot request, no subscriber: see client/key_lookup.h for what an
// exact lookup costs in CHP.
int run_get(const Invocation& inv) {
  const std::string& key = inv.args[0];
  auto found = client::lookup_key(client_options(inv, ""), key, inv.timeout);
  switch (found.result) {
    case client::KeyLookup::Result::kFound:
      if (inv.with_seq) std::cout << found.sequence << " ";
      std::cout << printable(found.value) << "\n";
      return kExitOk;
    case client::KeyLookup::Result::kAbsent:
      std::cerr << "zstore-cli chp: key not found: " << printable(key) << "\n";
      return kExitNotFound;
    case client::KeyLookup::Result::kHandshakeFailed:
      return fail(found.error);
    case client::KeyLookup::Result::kNoAnswer:
      break;
  }
  return fail("no CHP server answered within " + std::to_string(inv.timeout.count()) + " ms (" + servers_text(inv) +
              ")");
}

// set and del on a server of the Guide's (no WRITE?): done once our own
// KVPUB came back.
int run_published_write(const Invocation& inv, Clock::time_point deadline) {
  const std::string& key = inv.args[0];
  client::CloneClient client(client_options(inv, key));
  if (!sync(client, inv)) return kExitFailure;  // our SUB is live: we will see the KVPUB
  const std::string uuid = inv.command == "set" ? client.set(key, inv.args[1], inv.ttl.value_or(0)) : client.erase(key);
  if (client.wait_published(uuid, left(deadline))) return kExitOk;
  return fail(inv.command + " " + printable(key) + ": not confirmed by a server within " +
              std::to_string(inv.timeout.count()) + " ms");
}

// set and del: one confirmed write (client/confirmed_write.h), answered
// with its outcome.
int run_write(const Invocation& inv) {
  using R = client::WriteResult::Result;
  const auto deadline = Clock::now() + inv.timeout;
  const std::string& key = inv.args[0];
  const std::string value = inv.command == "set" ? inv.args[1] : "";
  auto done =
      client::confirmed_write(client_options(inv, ""), key, value, inv.ttl.value_or(0), inv.precondition, inv.timeout);
  const std::string what = inv.command + " " + printable(key);
  switch (done.result) {
    case R::kApplied:
      std::cout << done.sequence << "\n";
      return kExitOk;
    case R::kRefused:
      std::cout << done.sequence << "\n";
      std::cerr << "zstore-cli chp: " << what << ": refused, the key is "
                << (done.sequence == 0 ? std::string("absent") : "at sequence " + std::to_string(done.sequence))
                << "\n";
      return kExitPrecondition;
    case R::kUnsupported:
      if (inv.precondition.kind == protocol::chp::Precondition::Kind::kNone) return run_published_write(inv, deadline);
      return fail(what + ": " + done.server + " does not take conditional writes (not a zstored)");
    case R::kFailed:
      return fail(what + ": not stored: " + done.detail);
    case R::kHandshakeFailed:
      return fail(done.detail);
    case R::kUnknown:
      return fail(what + ": outcome unknown (sent, no answer within " + std::to_string(inv.timeout.count()) +
                  " ms): it may have been applied");
    case R::kNoAnswer:
      break;
  }
  return fail("no CHP server answered within " + std::to_string(inv.timeout.count()) + " ms (" + servers_text(inv) +
              ")");
}

// One snapshot request, no subscriber: printed as soon as KTHXBAI arrives.
int run_snapshot(const Invocation& inv) {
  std::map<std::string, std::string> map;
  auto on_entry = [&map](protocol::chp::KvMsg&& entry) {
    if (entry.body.empty()) {
      map.erase(entry.key);  // a delete in the stream (the reference server's)
    } else {
      map[std::move(entry.key)] = std::move(entry.body);
    }
    return true;
  };
  auto got = client::one_shot_snapshot(client_options(inv, ""), inv.subtree.value_or(""), inv.timeout, on_entry,
                                       [&map] { map.clear(); });
  if (got.result == client::OneShotSnapshot::Result::kHandshakeFailed) return fail(got.error);
  if (got.result != client::OneShotSnapshot::Result::kComplete) {
    return fail("no CHP server answered within " + std::to_string(inv.timeout.count()) + " ms (" + servers_text(inv) +
                ")");
  }
  std::ostringstream out;
  for (const auto& [key, value] : map) out << printable(key) << " " << printable(value) << "\n";
  std::cout << out.str() << std::flush;
  return kExitOk;
}

std::string history_line(const protocol::chp::KeyVersion& v) {
  using State = protocol::chp::KeyVersion::State;
  std::string what = v.state == State::kSet       ? printable(v.body)
                     : v.state == State::kDeleted ? std::string("(deleted)")
                                                  : std::string("(expired)");
  std::string when = v.written_ms == 0 ? std::string("-") : utc_time(v.written_ms);  // 0: unknown
  return std::to_string(v.sequence) + " " + when + " " + what;
}

// One HISTORY? (client/key_history.h), printed newest first.
int run_history(const Invocation& inv) {
  using R = client::KeyHistory::Result;
  const std::string& key = inv.args[0];
  auto got = client::key_history(client_options(inv, ""), key, inv.limit, inv.timeout);
  switch (got.result) {
    case R::kOk: {
      if (got.versions.empty()) {
        std::cerr << "zstore-cli chp: no history for " << printable(key) << " (none of its versions is in "
                  << got.server << "'s history)\n";
        return kExitNoHistory;
      }
      std::ostringstream out;
      for (const auto& v : got.versions) out << history_line(v) << "\n";
      std::cout << out.str() << std::flush;
      return kExitOk;
    }
    case R::kRefused:
      return fail("history " + printable(key) + ": refused by " + got.server + ": " + got.detail);
    case R::kFailed:
      return fail("history " + printable(key) + ": " + got.server + " failed: " + got.detail);
    case R::kUnsupported:
      return fail("history " + printable(key) + ": " + got.server +
                  " does not serve per-key history: the server keeps no per-key history; start zstored with "
                  "--chp-key-history (or it is not a zstored, or one older than it)");
    case R::kHandshakeFailed:
      return fail(got.detail);
    case R::kNoAnswer:
      break;
  }
  return fail("no CHP server answered within " + std::to_string(inv.timeout.count()) + " ms (" + servers_text(inv) +
              ")");
}

std::string watch_line(const client::Change& c) {
  return std::to_string(c.sequence) + " " + printable(c.key) + " " + (c.deleted ? "(deleted)" : printable(c.value));
}

int run_watch(const Invocation& inv) {
  StopSignal stop;
  std::mutex mu;
  std::uint64_t printed = 0;
  client::Options o = client_options(inv, inv.subtree.value_or(""));
  o.on_change = [&](const client::Change& c) {
    if (c.source == client::ChangeSource::kInitialSnapshot) return;
    std::lock_guard lock(mu);
    if (inv.count && printed >= *inv.count) return;
    std::cout << watch_line(c) << std::endl;
    if (inv.count && ++printed == *inv.count) stop.trigger();
  };
  client::CloneClient client(o);
  if (!sync(client, inv)) return kExitFailure;
  std::cerr << "zstore-cli chp: watching " << (inv.subtree ? "'" + printable(*inv.subtree) + "'" : "everything")
            << " from sequence " << client.sequence() << "\n";
  stop.wait();
  return kExitOk;
}

}  // namespace

int run_chp(const std::vector<std::string>& args) {
  try {
    auto inv = parse(args);
    if (!inv) return kExitOk;
    if (inv->command == "get") return run_get(*inv);
    if (inv->command == "snapshot") return run_snapshot(*inv);
    if (inv->command == "watch") return run_watch(*inv);
    if (inv->command == "history") return run_history(*inv);
    return run_write(*inv);
  } catch (const UsageError& e) {
    return usage_error("chp", e.what());
  } catch (const std::invalid_argument& e) {  // a malformed --server
    return usage_error("chp", e.what());
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}

}  // namespace zstore::cli
