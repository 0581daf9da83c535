// ChpServer's access rules (--acl, chp_acl.h): who may write a key, read it
// in a snapshot, or receive its live updates, and who may send the HA
// pair's requests (only the peer, with or without --acl). Clients are named by the ZAP
// handler (the User-Id of their messages); without an ACL all pass.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "server/chp/chp_server.h"

namespace zstore::server {

namespace chp = protocol::chp;

namespace {

// The client name the ZAP handler gave the connection a message came on.
std::string client_name(const zmq::message_t& frame) {
  const char* name = zmq_msg_gets(frame.handle(), "User-Id");
  return name ? name : "";  // none: no ZAP (plain connection)
}

// The address a message's connection comes from (ZeroMQ's Peer-Address:
// the IP alone, no port); empty when not known (not TCP).
std::string address_of(const ReceivedMessage& msg) {
  if (msg.parts.empty()) return {};
  const char* address = zmq_msg_gets(msg.parts.back().handle(), "Peer-Address");
  return address ? address : "";
}

// The last frame: a ROUTER's first frame is the routing id it made itself,
// without the connection's metadata.
std::string name_of(const ReceivedMessage& msg) {
  return msg.parts.empty() ? std::string() : client_name(msg.parts.back());
}

}  // namespace

bool ChpServer::may_write(const ReceivedMessage& msg, std::string_view key) {
  if (!config_.acl) return true;
  std::string name = name_of(msg);
  if (config_.acl->current()->may_write(name, key)) return true;
  metrics_.acl_denied_writes.fetch_add(1, std::memory_order_relaxed);
  acl_log_.log(spdlog::level::warn, "ACL: dropped KVSET of '{}' from client '{}' (outside its w prefixes)", key, name);
  return false;
}

bool ChpServer::may_read(const ReceivedMessage& msg, std::string_view key) {
  if (!config_.acl) return true;
  std::string name = name_of(msg);
  if (config_.acl->current()->may_read(name, key)) return true;
  metrics_.acl_denied_history.fetch_add(1, std::memory_order_relaxed);
  acl_log_.log(spdlog::level::warn, "ACL: refused HISTORY? of '{}' from client '{}' (outside its r prefixes)", key,
               name);
  return false;
}

bool ChpServer::may_ask_as_peer(const ReceivedMessage& msg, std::string_view command) {
  std::string address = address_of(msg);
  std::string why;
  if (config_.security.curve()) {
    // The members share the server certificate; the ZAP handler names that key kPeerName.
    std::string name = name_of(msg);
    if (name == kPeerName) return true;
    why = "client '" + name + "' is not the HA peer's key";
  } else if (!ha_) {
    why = "no HA peer is configured";
  } else if (ha_->from_peer(msg.views[0], address, &why)) {
    return true;
  }
  metrics_.peer_requests_refused.fetch_add(1, std::memory_order_relaxed);
  if (config_.acl) metrics_.acl_denied_peer_requests.fetch_add(1, std::memory_order_relaxed);
  peer_request_log_.log(spdlog::level::warn, "refused {} from {}: only the HA peer may send it ({})", command,
                        address.empty() ? std::string("an unknown address") : address, why);
  return false;
}

SnapshotPump::KeyFilter ChpServer::read_filter(const ReceivedMessage& msg) const {
  if (!config_.acl) return {};
  // One rule set for the whole snapshot, even if a reload comes meanwhile.
  return [acl = config_.acl->current(), name = name_of(msg)](std::string_view key) { return acl->may_read(name, key); };
}

std::string ChpServer::snapshot_group(const ReceivedMessage& msg) const {
  if (config_.security.curve()) return "client '" + name_of(msg) + "'";
  std::string address = address_of(msg);
  return address.empty() ? std::string() : "address " + address;
}

void ChpServer::serve_subscriptions() {
  for (int i = 0; i < 256; ++i) {
    zmq::message_t msg;
    if (!publisher_.recv(msg, zmq::recv_flags::dontwait)) return;
    // Subscribe (1) or unsubscribe (0), then the prefix. Unsubscriptions are
    // ignored: a client's topics may overlap, and clients leave by closing.
    if (msg.size() == 0 || *static_cast<const char*>(msg.data()) != 1) continue;
    std::string_view requested(static_cast<const char*>(msg.data()) + 1, msg.size() - 1);
    std::string name = client_name(msg);
    auto topics = requested == chp::kHugz ? std::vector<std::string>{std::string(requested)}
                                          : config_.acl->current()->permitted_topics(name, requested);
    // Set right after the recv: XPUB_MANUAL applies it to that client's pipe.
    for (const auto& t : topics) publisher_.set(zmq::sockopt::subscribe, t);
    publisher_.set(zmq::sockopt::subscribe, std::string(chp::kHugz));  // HUGZ reach everyone
    if (topics.size() == 1 && topics[0] == requested) continue;
    metrics_.acl_denied_subscriptions.fetch_add(1, std::memory_order_relaxed);
    acl_log_.log(spdlog::level::warn, "ACL: subscription '{}' of client '{}' narrowed to {} permitted prefix(es)",
                 requested, name, topics.size());
  }
}

// A reload of the allow list that removed a key ends every connection to
// the three ports: clients reconnect by themselves and authenticate again,
// and the removed key is refused (ZAP judges it by the new list). Clients
// miss what is published meanwhile, and a KVSET sent meanwhile may be
// lost, as on any reconnect (CHP does not acknowledge a KVSET: a writer
// that must know waits for its KVPUB); a snapshot in flight is asked for
// again. The HA peer, which shares our key, reconnects too.
void ChpServer::follow_reloads() {
  for (BoundEndpoint* ep : {&router_ep_, &publisher_ep_, &collector_ep_}) ep->retry();
  if (revocations_.news()) {
    spdlog::warn("CURVE: a key left the allow list: ending every connection to {}, {} and {}", router_ep_.endpoint(),
                 publisher_ep_.endpoint(), collector_ep_.endpoint());
    for (BoundEndpoint* ep : {&router_ep_, &publisher_ep_, &collector_ep_}) ep->drop_connections();
    if (config_.acl) subscribed_under_ = config_.acl->current();  // everyone subscribes again anyway
  }
  if (config_.acl) follow_acl_reloads();
}

bool ChpServer::endpoint_unbound() const {
  return router_ep_.unbound() || publisher_ep_.unbound() || collector_ep_.unbound();
}

// XPUB_MANUAL sets a connection's topics once, when it subscribes, under
// the rules of that moment. A reload that changes anyone's r prefixes
// therefore ends every subscriber's connection (unbinding the publisher's
// endpoint does) and binds the endpoint again: clients reconnect and
// subscribe under the new rules, so a revoked prefix stops reaching them.
// They miss what is published meanwhile, as on any reconnect (a sequence
// gap, which zstore's client resumes). A reload that changes only w
// prefixes needs nothing: writes are checked per message.
void ChpServer::follow_acl_reloads() {
  std::uint64_t generation = config_.acl->generation();
  if (generation == acl_generation_) return;
  acl_generation_ = generation;
  auto rules = config_.acl->current();
  bool same = subscribed_under_->same_reads(*rules);
  subscribed_under_ = std::move(rules);
  if (same) return;
  metrics_.acl_resubscriptions.fetch_add(1, std::memory_order_relaxed);
  spdlog::warn("ACL: read rules changed: dropping every subscriber of {} so they subscribe again under them",
               publisher_ep_.endpoint());
  publisher_ep_.drop_connections();
}

}  // namespace zstore::server
