#include "server/access/zap_handler.h"

#include <filesystem>
#include <system_error>

#include "security/curve_cert.h"
#include "server/access/chp_acl.h"
#include "transport/zmq_frames.h"

namespace zstore::server {
namespace {

constexpr const char* kZapEndpoint = "inproc://zeromq.zap.01";

void reply(zmq::socket_t& socket, std::string_view request_id, std::string_view code, std::string_view text,
           std::string_view user) {
  const std::string_view frames[] = {"1.0", request_id, code, text, user, ""};
  // Blocking: a REP that failed to send its reply could not receive again.
  transport::send(socket, protocol::FrameViews(frames));
}

}  // namespace

ZapHandler::ZapHandler(zmq::context_t& ctx, std::string allow_dir, std::string own_public_key, AuthMetrics& metrics)
    : ctx_(ctx), allow_dir_(std::move(allow_dir)), metrics_(metrics) {
  own_key_ = security::decode_key(own_public_key).value_or("");
}

ZapHandler::~ZapHandler() { stop(); }

std::string ZapHandler::reload() {
  std::map<std::string, std::string> names;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(allow_dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const auto& path = it->path();
    if (path.extension() != ".key") continue;
    if (path.stem() == kPeerName) {  // reserved: that name has every right (chp_acl.h)
      spdlog::warn(
          "CURVE allow list: skipping {}: the name '{}' is reserved for this server's own key; rename the file",
          path.string(), kPeerName);
      continue;
    }
    auto r = security::load_cert(path.string(), false);
    if (!r.cert) {
      spdlog::warn("CURVE allow list: skipping {}", r.error);
      continue;
    }
    names[*security::decode_key(r.cert->public_key)] = path.stem().string();
  }
  if (ec) return "cannot read --curve-allow directory " + allow_dir_ + ": " + ec.message();
  if (!own_key_.empty()) names[own_key_] = std::string(kPeerName);
  std::string removed;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [key, name] : names_) {
      if (!names.contains(key)) removed += (removed.empty() ? "" : ", ") + name;
    }
    names_ = std::move(names);
    spdlog::info("CURVE allow list: {} client key(s) from {}", names_.size() - (own_key_.empty() ? 0 : 1), allow_dir_);
  }
  if (!removed.empty()) {
    // After the new list is in force: the reconnections are judged by it.
    metrics_.revocations.add();
    spdlog::warn("CURVE allow list: key(s) of {} removed: ending every connection so that clients authenticate again",
                 removed);
  }
  return {};
}

std::size_t ZapHandler::allowed() const {
  std::lock_guard lock(mutex_);
  return names_.size();
}

std::string ZapHandler::name_of(const std::string& raw_key) const {
  std::lock_guard lock(mutex_);
  auto it = names_.find(raw_key);
  return it == names_.end() ? std::string() : it->second;
}

std::string ZapHandler::name_of_key(const std::string& z85_key) const {
  auto raw = security::decode_key(z85_key);
  return raw ? name_of(*raw) : std::string();
}

std::string ZapHandler::start() {
  if (auto err = reload(); !err.empty()) return err;
  socket_ = zmq::socket_t(ctx_, zmq::socket_type::rep);
  socket_.set(zmq::sockopt::linger, 0);
  socket_.bind(kZapEndpoint);
  reactor_.start([this] {
    reactor_.loop("ZAP handler", error_log_, loop_errors_, [this] {
      zmq::pollitem_t items[] = {reactor_.stop_item(), {socket_.handle(), 0, ZMQ_POLLIN, 0}};
      zmq::poll(items, 2, std::chrono::milliseconds(-1));
      if (items[0].revents & ZMQ_POLLIN) return false;
      if (items[1].revents & ZMQ_POLLIN) answer(socket_);
      return true;
    });
  });
  return {};
}

void ZapHandler::stop() {
  if (reactor_.stop()) socket_.close();
}

void ZapHandler::answer(zmq::socket_t& socket) {
  transport::Message msg;
  if (!transport::try_recv(socket, &msg)) return;
  const auto& f = msg.views;
  if (f.size() < 6) {  // not a ZAP request: answer so the REP socket stays usable
    reply(socket, f.size() > 1 ? f[1] : "", "500", "malformed ZAP request", "");
    return;
  }
  std::string domain(f[2]), address(f[3]), mechanism(f[5]);
  std::string key = f.size() > 6 ? std::string(f[6]) : std::string();
  std::string name = mechanism == "CURVE" && key.size() == 32 ? name_of(key) : std::string();
  if (!name.empty() && domain == kHaZapDomain && name != kPeerName) {
    metrics_.count_failure(domain);
    refusal_log_.log(spdlog::level::warn,
                     "CURVE: refused client '{}' from {} on {}: only the HA peer may connect there", name, address,
                     domain);
    reply(socket, f[1], "400", "only the HA peer may connect here", "");
    return;
  }
  if (!name.empty()) {
    reply(socket, f[1], "200", "OK", name);
    spdlog::debug("CURVE: client '{}' from {} admitted on {}", name, address, domain);
    return;
  }
  metrics_.count_failure(domain);
  std::string who = key.size() == 32 ? security::encode_key(key) : mechanism + " (no CURVE key)";
  refusal_log_.log(spdlog::level::warn, "CURVE: refused unknown client key {} from {} on {}", who, address, domain);
  reply(socket, f[1], "400", "client key not allowed", "");
}

}  // namespace zstore::server
