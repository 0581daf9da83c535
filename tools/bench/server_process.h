// ServerProcess: a zstored started by zstore-bench on free loopback ports and
// a temporary data directory (removed on destruction), with the default
// sync policy, optionally pinned to one CPU. Restarts keep the data dir and
// the ports. Its log goes to zstored.log beside the data dir.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "protocol/endpoint.h"
#include "security/curve_socket.h"

namespace zstore::bench {

struct ServerPorts {
  std::string host = "127.0.0.1";
  security::SocketSecurity security;  // how clients connect (CURVE keys); plain by default
  std::uint16_t chp = 0;              // CHP base P (P, P+1, P+2)
  std::uint16_t dafka = 0;            // Dafka store publisher
  std::uint16_t tower = 0;            // embedded tower (T, T+1)
  std::uint16_t http = 0;             // --http-port (0: none)
  std::string endpoint(std::uint16_t port) const { return protocol::tcp_endpoint(host, port); }
};

// Sends one ICANHAZ? (a subtree no benchmark key has) right away, retrying
// the connection every millisecond, and returns the seconds until its
// KTHXBAI, or a negative value on time-out or once `alive` returns false.
double time_first_kthxbai(const ServerPorts& ports, std::chrono::milliseconds timeout,
                          const std::function<bool()>& alive);

// Waits until a CHP server answers an ICANHAZ with KTHXBAI. False on time-out
// or as soon as `alive` (when given) returns false.
bool wait_chp_ready(const ServerPorts& ports, std::chrono::milliseconds timeout,
                    const std::function<bool()>& alive = {});

class ServerProcess {
 public:
  // zstored: the binary; cpu: CPU to pin it to (< 0: none); extra: more flags.
  ServerProcess(std::filesystem::path zstored, int cpu, std::vector<std::string> extra = {});
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // The CURVE keys clients (and the readiness probe) use; plain by default.
  void set_client_security(security::SocketSecurity security) { ports_.security = std::move(security); }
  // Appends flags for every later start (e.g. an HA pair naming each other).
  void add_args(const std::vector<std::string>& args) { extra_.insert(extra_.end(), args.begin(), args.end()); }
  // --log-level of later starts (default warn).
  void set_log_level(std::string level) { log_level_ = std::move(level); }
  // Starts it and waits until CHP answers. Throws std::runtime_error when it
  // exits or does not answer within 30 s (the message names the log).
  void start();
  // Starts it without waiting (restart timing probes CHP itself; an HA
  // backup alone never answers).
  void launch();
  // SIGTERM and wait for the exit (SIGKILL after 30 s). Returns the status.
  int stop();
  // SIGKILL (a crash) and reap it.
  void kill_hard();
  // Whether it still runs (false once it exited; reaps it then).
  bool running();
  // Its log, every start so far.
  std::string log_text() const;

  pid_t pid() const { return pid_; }
  const ServerPorts& ports() const { return ports_; }
  std::filesystem::path data_dir() const { return root_ / "data"; }

 private:
  std::filesystem::path zstored_;
  int cpu_;
  std::vector<std::string> extra_;
  std::string log_level_ = "warn";
  std::filesystem::path root_;
  ServerPorts ports_;
  pid_t pid_ = -1;
};

// The zstored next to this executable (build/bin/zstored).
std::filesystem::path default_zstored_path();

}  // namespace zstore::bench
