#include "server/ha_link.h"

#include "server/zmq_frames.h"

namespace zstore::server {

HaLink::HaLink(zmq::context_t& ctx, const std::string& bind_endpoint, const std::string& peer_endpoint)
    : pub_(ctx, zmq::socket_type::pub), sub_(ctx, zmq::socket_type::sub) {
  pub_.set(zmq::sockopt::linger, 0);
  sub_.set(zmq::sockopt::linger, 0);
  sub_.set(zmq::sockopt::subscribe, "");
  sub_.set(zmq::sockopt::maxmsgsize, std::int64_t{64});
  pub_.bind(bind_endpoint);
  sub_.connect(peer_endpoint);
}

void HaLink::send_state(HaState state) {
  char digit = static_cast<char>('0' + static_cast<int>(state));
  (void)try_send(pub_, {std::string(1, digit)});
}

std::optional<HaState> HaLink::receive(std::uint64_t* malformed) {
  ReceivedMessage msg;
  while (try_recv(sub_, &msg)) {
    if (msg.views.size() == 1) {
      if (auto state = parse_ha_state(msg.views[0])) return state;
    }
    ++*malformed;
  }
  return std::nullopt;
}

}  // namespace zstore::server
