#include "tools/torture_src/chp_counters.h"

#include <optional>
#include <utility>

#include "client/clone_client.h"
#include "tools/harness/harness.h"

namespace zstore::torture {
namespace {

using Kind = client::WriteOutcome::Kind;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// An outcome still unknown this long after the write (every restart of a
// cycle included) is a violation: the client must learn it.
constexpr std::chrono::seconds kResolveWithin{60};

client::Options counter_client(const std::vector<std::string>& servers) {
  client::Options o;
  o.servers = servers;
  o.failover_timeout = 1000ms;
  o.snapshot_retry_max = 500ms;
  o.subtree = kCounterKey;
  return o;
}

// The write's outcome, sending it again (same UUID) while it is unknown.
client::WriteOutcome resolve(client::CloneClient& c, const client::PendingWrite& write, bool* was_unknown) {
  auto outcome = write.wait_for(3s);
  *was_unknown = outcome.kind == Kind::kUnknown;
  auto until = Clock::now() + testing::scaled(kResolveWithin);
  while (outcome.kind == Kind::kUnknown && Clock::now() < until) outcome = c.retry(write).wait_for(3s);
  return outcome;
}

}  // namespace

ChpCounters::ChpCounters(std::vector<std::string> servers, int clients, Violations& violations)
    : servers_(std::move(servers)), violations_(violations) {
  {
    client::CloneClient setup(counter_client(servers_));
    bool unknown = false;
    auto outcome = setup.wait_synced(testing::scaled(20s)) ? resolve(setup, setup.write(kCounterKey, "0"), &unknown)
                                                           : client::WriteOutcome{};
    if (outcome.kind != Kind::kApplied) {
      violations_.add("counter",
                      std::string("its 0 was not applied: ") + client::to_string(outcome.kind) + " " + outcome.detail);
      return;
    }
  }
  for (int i = 0; i < clients; ++i) threads_.emplace_back([this] { run(); });
}

ChpCounters::~ChpCounters() { stop(); }

void ChpCounters::stop() {
  stop_ = true;
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void ChpCounters::run() {
  client::CloneClient c(counter_client(servers_));
  std::uint64_t refused_at = 0;  // the sequence a refusal named: read no older one (up to 1 s)
  while (!stop_) {
    std::optional<std::pair<std::string, std::uint64_t>> seen;
    auto current = [&] {
      seen = c.get_with_sequence(kCounterKey);
      return (seen && seen->second >= refused_at) || stop_.load();
    };
    if (!c.wait_for(current, 1s)) refused_at = 0;  // not seen in time (a resync): read what the map has
    if (!seen || stop_) {
      continue;  // resyncing (a restart): wait for the map
    }
    long next = std::stol(seen->first) + 1;
    auto write = c.write(kCounterKey, std::to_string(next), client::WriteOptions::if_sequence(seen->second));
    bool was_unknown = false;
    auto outcome = resolve(c, write, &was_unknown);
    std::lock_guard lock(mu_);
    tally_.unknown += was_unknown ? 1 : 0;
    tally_.resolved += was_unknown && outcome.kind != Kind::kUnknown ? 1 : 0;
    switch (outcome.kind) {
      case Kind::kApplied:
        ++tally_.applied;
        ++tally_.written[next];
        break;
      case Kind::kRefused:
        ++tally_.refused;
        refused_at = outcome.sequence;
        break;  // another client's increment came first
      case Kind::kFailed:
        ++tally_.failed;
        break;  // never applied (e.g. storage refused it)
      case Kind::kUnknown:
        violations_.add("counter", "the outcome of an increment to " + std::to_string(next) + " stayed unknown");
        break;
    }
  }
}

void ChpCounters::verify(std::chrono::milliseconds timeout) {
  if (threads_.empty()) return;  // the 0 failed: reported
  client::CloneClient reader(counter_client(servers_));
  std::optional<std::string> value;
  if (!reader.wait_synced(testing::scaled(timeout)) || !(value = reader.get(kCounterKey))) {
    violations_.add("counter", "no value read from the servers");
    return;
  }
  std::lock_guard lock(mu_);
  long final_value = std::stol(*value);
  if (final_value != tally_.applied) {
    violations_.add("counter",
                    "value " + *value + " after " + std::to_string(tally_.applied) + " increments reported applied");
  }
  for (const auto& [v, n] : tally_.written) {
    if (n > 1)
      violations_.add("counter", "the value " + std::to_string(v) + " was applied " + std::to_string(n) + " times");
  }
  for (long v = 1; v <= tally_.applied; ++v) {
    if (!tally_.written.contains(v)) {
      violations_.add("counter", "no applied increment wrote " + std::to_string(v));
      break;  // one line: the rest follow from it
    }
  }
}

std::string ChpCounters::summary() const {
  std::lock_guard lock(mu_);
  return "applied " + std::to_string(tally_.applied) + ", refused " + std::to_string(tally_.refused) + ", unknown " +
         std::to_string(tally_.unknown) + " (" + std::to_string(tally_.resolved) + " resolved), failed " +
         std::to_string(tally_.failed);
}

}  // namespace zstore::torture
