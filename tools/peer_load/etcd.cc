// etcd's v3 API through its JSON gateway (the /v3/ paths on the client
// port, which etcd serves itself) with cpp-httplib, the HTTP client zstore-cli
// already uses: no gRPC stubs to generate. HTTP/1.1 carries one request at
// a time per connection, so etcd's window is --etcd-inflight connections,
// each on its own writer thread with one put outstanding. The watcher is a
// prefix watch (POST /v3/watch) that resumes from the last revision seen.
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "tools/peer_load/peer_load.h"

namespace zstore::peer_load {

namespace {

std::string base64(const std::string& in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8 | (unsigned char)in[i + 2];
    out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], t[v & 63]};
  }
  if (i + 1 == in.size()) {
    unsigned v = (unsigned char)in[i] << 16;
    out += {t[v >> 18], t[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == in.size()) {
    unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8;
    out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], '='};
  }
  return out;
}

class Etcd : public Workload {
 public:
  explicit Etcd(const Spec& spec) : spec_(spec), value_(base64(make_value(spec))) {}

  void setup() override {}

  void writer(int index, Recorder& recorder, const Phases& phases) override {
    httplib::Client cli("127.0.0.1", spec_.port);
    cli.set_keep_alive(true);
    Keys keys(spec_.key_space, 7919u * static_cast<unsigned>(index + 1));
    while (phases.sending(now_ns())) {
      std::string body = R"({"key":")" + base64(keys.next()) + R"(","value":")" + value_ + R"("})";
      std::int64_t t = now_ns();
      auto res = cli.Post("/v3/kv/put", body, "application/json");
      if (!res) throw std::runtime_error("etcd: put: " + httplib::to_string(res.error()));
      if (res->status == 200)
        recorder.ack(t);
      else
        recorder.fail();
    }
  }

  void watcher(Watch& watch) override {
    std::int64_t next_revision = 0;
    std::string buffer;
    while (!watch.stop.load()) {
      httplib::Client cli("127.0.0.1", spec_.port);
      cli.set_read_timeout(0, 300000);
      nlohmann::json create = {{"key", base64("key:")}, {"range_end", base64("key;")}};
      if (next_revision > 0) create["start_revision"] = next_revision;
      httplib::Request req;
      req.method = "POST";
      req.path = "/v3/watch";
      req.body = nlohmann::json{{"create_request", create}}.dump();
      req.set_header("Content-Type", "application/json");
      req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
        buffer.append(data, n);
        for (std::size_t end; (end = buffer.find('\n')) != std::string::npos; buffer.erase(0, end + 1))
          count(nlohmann::json::parse(buffer.substr(0, end), nullptr, false), watch, next_revision);
        return !watch.stop.load();
      };
      httplib::Response res;
      httplib::Error error;
      cli.send(req, res, error);
      buffer.clear();
    }
  }

  std::string durability() const override { return "fsynced before the ack (raft WAL)"; }

 private:
  static void count(const nlohmann::json& j, Watch& watch, std::int64_t& next_revision) {
    if (!j.is_object() || !j.contains("result")) return;
    const auto& r = j["result"];
    if (r.value("created", false)) watch.ready.store(true);
    if (!r.contains("events")) return;
    for (const auto& e : r["events"]) {
      watch.received.fetch_add(1);
      next_revision = std::stoll(e["kv"].value("mod_revision", "0")) + 1;
    }
  }

  Spec spec_;
  std::string value_;
};

}  // namespace

std::unique_ptr<Workload> make_etcd(const Spec& spec) { return std::make_unique<Etcd>(spec); }

}  // namespace zstore::peer_load
