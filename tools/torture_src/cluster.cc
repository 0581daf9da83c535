#include "tools/torture_src/cluster.h"

#include <signal.h>

#include <filesystem>
#include <fstream>

namespace zstore::torture {

namespace {

std::string ep(std::uint16_t port) { return "tcp://127.0.0.1:" + std::to_string(port); }

}  // namespace

Cluster::Cluster(bool ha, const std::vector<std::string>& extra) {
  for (int i = 0; i < (ha ? 2 : 1); ++i) {
    std::uint16_t tower = testing::free_port_range(3);  // tower XSUB, XPUB, store publisher
    std::uint16_t http = testing::free_port();
    std::vector<std::string> args{"--tower-port",         std::to_string(tower),
                                  "--dafka-port",         std::to_string(tower + 2),
                                  "--http-port",          std::to_string(http),
                                  "--beacon-interval-ms", "200",
                                  "--beacon-timeout-ms",  "2000",
                                  "--hugz-interval-ms",   "200"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto z = std::make_unique<testing::Zstored>(args);
    members_.push_back(Member{tower, http, std::move(z)});
  }
  if (!ha) return;
  std::string cut = (cut_dir_.path() / "cut").string();
  testing::make_ha_pair(*members_[0].zstored, *members_[1].zstored,
                        {"--ha-heartbeat-ms", "200", "--ha-test-cut-file", cut});
}

void Cluster::cut_ha_link(bool cut) {
  auto file = cut_dir_.path() / "cut";
  if (cut) {
    std::ofstream(file) << "cut\n";
  } else {
    std::filesystem::remove(file);
  }
}

bool Cluster::start(int member) { return members_.at(member).zstored->start(std::chrono::seconds(30)); }

void Cluster::kill(int member) {
  auto& z = *members_.at(member).zstored;
  z.kill(SIGKILL);
  z.wait_exit(std::chrono::seconds(10));
}

std::vector<std::string> Cluster::chp_servers() const {
  std::vector<std::string> out;
  for (const auto& m : members_) out.push_back(m.zstored->chp_endpoint());
  return out;
}

std::vector<std::string> Cluster::towers() const {
  std::vector<std::string> out;
  for (const auto& m : members_) out.push_back(ep(m.tower_port));
  return out;
}

std::size_t Cluster::log_count(int member, const std::string& text) const {
  std::string log = members_.at(member).zstored->log();
  std::size_t n = 0;
  for (auto pos = log.find(text); pos != std::string::npos; pos = log.find(text, pos + text.size())) ++n;
  return n;
}

std::string Cluster::log_tail(int member, std::size_t bytes) const {
  std::string log = members_.at(member).zstored->log();
  return log.size() > bytes ? log.substr(log.size() - bytes) : log;
}

}  // namespace zstore::torture
