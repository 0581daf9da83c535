#include "tools/bench/ha_pair.h"

#include <stdexcept>

#include "tools/harness/harness.h"

namespace zstore::bench {

using std::chrono::seconds;

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Waits until `server` logged its `times`-th completed sync as a passive.
void wait_synced(ServerProcess& server, int times, seconds timeout) {
  auto synced = [&] { return count_of(server.log_text(), "HA follower: synced") >= times; };
  if (!testing::wait_until(synced, timeout)) {
    throw std::runtime_error("the HA passive did not sync within " + std::to_string(timeout.count()) +
                             " s; its log: " + server.log_text().substr(0, 2000));
  }
}

Members start_members(const Options& o, std::ostream& log) {
  Members m;
  m.ha = o.ha;
  auto path = o.zstored.empty() ? default_zstored_path() : std::filesystem::path(o.zstored);
  for (int i = 0; i < (o.ha ? 2 : 1); ++i)
    m.servers.push_back(std::make_unique<ServerProcess>(path, o.server_cpu, o.zstored_args));
  if (!o.ha) {
    m.at(0).start();
    log << "zstored " << m.at(0).pid() << '\n';
    return m;
  }
  std::uint16_t state = testing::free_port_range(2);
  auto ep = [](std::uint16_t port) { return "tcp://127.0.0.1:" + std::to_string(port); };
  for (int i = 0; i < 2; ++i) {
    m.at(i).set_log_level("info");
    m.at(i).add_args({"--ha", i == 0 ? "primary" : "backup", "--ha-bind", ep(static_cast<std::uint16_t>(state + i)),
                      "--ha-peer", ep(static_cast<std::uint16_t>(state + 1 - i)), "--ha-peer-chp", m.endpoint(1 - i),
                      "--ha-heartbeat-ms", std::to_string(kHaHeartbeatMs)});
    m.at(i).launch();
  }
  if (!wait_chp_ready(m.at(0).ports(), seconds(30))) throw std::runtime_error("the HA primary does not serve");
  wait_synced(m.at(1), 1, seconds(60));
  log << "HA pair: primary " << m.at(0).pid() << ", backup " << m.at(1).pid() << '\n';
  return m;
}

}  // namespace zstore::bench
