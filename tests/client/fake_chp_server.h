// FakeChpServer: a scripted CHP server for client tests, run by its own
// thread: ROUTER at P, PUB at P+1, SUB at P+2 on 127.0.0.1 (P from
// free_port_range). By default it acts like a tiny real server: KVSETs are
// stored under the next sequence and republished as KVPUBs, ICANHAZ? is
// answered from the map, and HUGZ goes out every 20 ms. Tests change that
// with a request hook, set_heartbeat and set_echo.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "protocol/chp_codec.h"

namespace zstore::testing {

class FakeChpServer {
 public:
  // Runs on the server thread for each ICANHAZ? (number counts from 1).
  // The default hook calls answer(identity, subtree).
  using RequestHook =
      std::function<void(FakeChpServer& server, const std::string& identity, const std::string& subtree, int number)>;

  explicit FakeChpServer(zmq::context_t& ctx);
  ~FakeChpServer();
  FakeChpServer(const FakeChpServer&) = delete;
  FakeChpServer& operator=(const FakeChpServer&) = delete;

  std::string endpoint() const;  // "tcp://127.0.0.1:P"

  // ---- thread-safe controls
  void set_heartbeat(bool on) { heartbeat_ = on; }
  void set_echo(bool on) { echo_ = on; }  // store and republish KVSETs
  void set_request_hook(RequestHook hook);
  // Stores key=value (empty = delete) under the next sequence and publishes it.
  std::uint64_t store(const std::string& key, const std::string& value, const std::string& properties = "",
                      const std::string& uuid = "");
  // Replaces the map and sequence without publishing anything.
  void reset_map(const std::map<std::string, std::string>& entries, std::uint64_t sequence);
  // Publishes raw frames on the PUB socket (queued, in order).
  void publish(protocol::Frames frames);
  // Runs fn on the server thread (queued, in order).
  void run_on_server(std::function<void(FakeChpServer&)> fn);

  std::uint64_t sequence() const;
  std::vector<protocol::Frames> kvsets() const;  // raw KVSETs received
  int requests() const { return requests_; }
  std::vector<std::string> request_subtrees() const;
  // Each request's resume frame (zstore's extension), nullopt for 2 frames.
  std::vector<std::optional<std::uint64_t>> request_resumes() const;
  // Properties frame of the KTHXBAIs answer() sends (default: none, as the
  // reference servers).
  void set_kthxbai_properties(std::string properties);

  // ---- server thread only (request hooks, run_on_server)
  void answer(const std::string& identity, const std::string& subtree);
  // False when the identity is not connected (ROUTER_MANDATORY) or busy.
  bool send_to(const std::string& identity, const protocol::Frames& frames);
  void publish_now(const protocol::Frames& frames);

 private:
  void loop();
  void on_request();
  void on_kvset();
  void run_commands();
  void heartbeat();

  std::uint16_t port_;
  zmq::socket_t router_;
  zmq::socket_t pub_;
  zmq::socket_t sub_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> heartbeat_{true};
  std::atomic<bool> echo_{true};
  std::atomic<int> requests_{0};
  std::chrono::steady_clock::time_point last_hugz_;

  mutable std::mutex mu_;  // guards everything below
  RequestHook hook_;
  std::map<std::string, protocol::chp::KvMsg> map_;
  std::uint64_t sequence_ = 0;
  std::vector<protocol::Frames> kvsets_;
  std::vector<std::string> subtrees_;
  std::vector<std::optional<std::uint64_t>> resumes_;
  std::string kthxbai_properties_;
  std::deque<std::function<void(FakeChpServer&)>> commands_;

  std::thread thread_;
};

}  // namespace zstore::testing
