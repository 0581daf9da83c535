// Cluster: the zstored processes under torture: one server, or a Binary
// Star pair (--ha), each with CHP, the Dafka store, its embedded tower and
// HTTP (/healthz) on free loopback ports and its own temporary data dir. A member can be
// SIGKILLed and restarted on the same data dir and ports.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tools/harness/zstored.h"

namespace zstore::torture {

class Cluster {
 public:
  // extra: more flags for every member.
  Cluster(bool ha, const std::vector<std::string>& extra);
  // Cuts (or heals) the HA link between the pair (zstored's test seam).
  void cut_ha_link(bool cut);
  int size() const { return static_cast<int>(members_.size()); }
  bool start(int member);
  void kill(int member);                         // SIGKILL, then reaps it
  std::vector<std::string> chp_servers() const;  // "tcp://127.0.0.1:P" each
  std::vector<std::string> towers() const;       // "tcp://127.0.0.1:T" each
  std::uint16_t chp_port(int member) const { return members_.at(member).zstored->chp_port(); }
  std::uint16_t http_port(int member) const { return members_.at(member).http_port; }
  std::string log_tail(int member, std::size_t bytes = 2000) const;
  // How many times text occurs in the member's logs (every start so far).
  std::size_t log_count(int member, const std::string& text) const;

 private:
  struct Member {
    std::uint16_t tower_port;
    std::uint16_t http_port;
    std::unique_ptr<testing::Zstored> zstored;
  };
  std::vector<Member> members_;
  testing::TempDir cut_dir_;
};

}  // namespace zstore::torture
