#include "client/server_request.h"

#include <algorithm>

namespace zstore::client {

using std::chrono::milliseconds;

milliseconds time_until(RequestClock::time_point t) {
  return std::max(milliseconds(0), std::chrono::duration_cast<milliseconds>(t - RequestClock::now()));
}

namespace {

security::WatchedSocket connect(zmq::context_t& ctx, const security::SocketSecurity& security,
                                const std::string& endpoint) {
  zmq::socket_t socket(ctx, zmq::socket_type::dealer);
  socket.set(zmq::sockopt::linger, 0);
  security.as_client(socket);
  security::WatchedSocket dealer(ctx, std::move(socket), security.curve());
  dealer.socket().connect(endpoint);
  return dealer;
}

}  // namespace

ServerRequest::ServerRequest(zmq::context_t& ctx, const security::SocketSecurity& security,
                             const std::string& snapshot_endpoint)
    : dealer_(connect(ctx, security, snapshot_endpoint)) {}

void ServerRequest::send(const protocol::Frames& frames) { transport::send(dealer_.socket(), frames); }

ServerRequest::Received ServerRequest::receive(RequestClock::time_point until, transport::Message* msg,
                                               std::string* why) {
  while (true) {
    zmq::pollitem_t items[] = {{dealer_.socket().handle(), 0, ZMQ_POLLIN, 0},
                               {dealer_.monitor().events().handle(), 0, ZMQ_POLLIN, 0}};
    if (zmq::poll(items, 2, time_until(until)) == 0) return Received::kSilent;
    if (auto failure = dealer_.monitor().poll()) {
      *why = failure->message;
      return Received::kHandshakeFailed;
    }
    if ((items[0].revents & ZMQ_POLLIN) == 0) continue;
    if (transport::try_recv(dealer_.socket(), msg)) return Received::kMessage;
  }
}

}  // namespace zstore::client
