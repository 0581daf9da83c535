#include "tools/harness/zstored.h"

#include <signal.h>

#include <fstream>
#include <sstream>

namespace zstore::testing {

Zstored::Zstored(std::vector<std::string> extra) : chp_port_(free_port_range(3)), extra_(std::move(extra)) {}

Zstored::~Zstored() {
  if (process_ && process_->running()) {
    process_->kill(SIGKILL);
    process_->wait();
  }
}

std::string Zstored::chp_endpoint(int offset) const { return "tcp://127.0.0.1:" + std::to_string(chp_port_ + offset); }

bool Zstored::start(std::chrono::milliseconds timeout) {
  std::vector<std::string> args = {"--data-dir", data_.str(),  "--bind",
                                   "127.0.0.1",  "--chp-port", std::to_string(chp_port_)};
  bool has = [&] {
    for (const auto& a : extra_)
      if (a == "--dafka-port") return true;
    return false;
  }();
  if (!has) args.insert(args.end(), {"--dafka-port", "0", "--tower-port", "0"});
  args.insert(args.end(), extra_.begin(), extra_.end());
  auto log_file = logs_.path() / ("zstored-" + std::to_string(++starts_) + ".log");
  std::string program = bin_path("zstored");
  if (!launcher_.empty()) {
    args.insert(args.begin(), program);
    args.insert(args.begin(), launcher_.begin() + 1, launcher_.end());
    program = launcher_[0];
  }
  process_ = std::make_unique<Process>(program, args, log_file);
  return wait_until(
             [&] { return !process_->running() || process_->log().find("zstored started") != std::string::npos; },
             timeout) &&
         process_->running();
}

void Zstored::kill(int signal) {
  if (process_) process_->kill(signal);
}

int Zstored::wait_exit(std::chrono::milliseconds timeout) { return process_ ? process_->wait(timeout) : -1; }

std::string Zstored::log() const {
  std::string all;
  for (int i = 1; i <= starts_; ++i) {
    std::ifstream in(logs_.path() / ("zstored-" + std::to_string(i) + ".log"));
    std::stringstream ss;
    ss << in.rdbuf();
    all += ss.str();
  }
  return all;
}

void make_ha_pair(Zstored& primary, Zstored& backup, const std::vector<std::string>& common) {
  std::uint16_t ha = free_port_range(2);
  auto ep = [](int port) { return "tcp://127.0.0.1:" + std::to_string(port); };
  primary.add_args(
      {"--ha", "primary", "--ha-bind", ep(ha), "--ha-peer", ep(ha + 1), "--ha-peer-chp", ep(backup.chp_port())});
  backup.add_args(
      {"--ha", "backup", "--ha-bind", ep(ha + 1), "--ha-peer", ep(ha), "--ha-peer-chp", ep(primary.chp_port())});
  primary.add_args(common);
  backup.add_args(common);
}

}  // namespace zstore::testing
