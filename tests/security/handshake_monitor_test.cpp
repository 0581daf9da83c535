// HandshakeMonitor over real sockets: a CURVE ROUTER with zstored's ZAP
// handler on 127.0.0.1, and DEALER clients with an allowed key, an unknown
// key, a wrong server key, or no CURVE at all; each failure is named within
// a bounded time, and the allowed key's handshake succeeds.
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <optional>
#include <string>

#include <zmq.hpp>

#include "security/curve_cert.h"
#include "security/curve_socket.h"
#include "security/handshake_monitor.h"
#include "server/access/auth_metrics.h"
#include "server/access/zap_handler.h"
#include "tests/support/curve_keys.h"
#include "tests/support/test_support.h"

using zstore::security::HandshakeFailure;
using zstore::security::HandshakeMonitor;
using zstore::security::HandshakeProblem;
using zstore::security::SocketSecurity;
using zstore::testing::CurveKeys;
using namespace std::chrono_literals;

namespace {

// A CURVE (or plain) ROUTER on 127.0.0.1, judged by the real ZAP handler.
struct Server {
  zmq::context_t ctx;
  CurveKeys keys{{"alice", "mallory"}, {"alice"}};
  zstore::server::AuthMetrics metrics;
  zstore::server::ZapHandler zap{ctx, keys.allow_dir().string(), keys.server.public_key, metrics};
  zmq::socket_t router{ctx, zmq::socket_type::router};
  std::string endpoint;

  explicit Server(bool curve) {
    BOOST_REQUIRE_EQUAL(zap.start(), "");
    router.set(zmq::sockopt::linger, 0);
    if (curve) SocketSecurity{keys.server, ""}.as_server(router, "test");
    router.bind("tcp://127.0.0.1:0");
    endpoint = router.get(zmq::sockopt::last_endpoint);
  }
  ~Server() {
    router.close();
    zap.stop();
  }
};

struct Outcome {
  std::optional<HandshakeFailure> failure;
  bool succeeded = false;
};

// Connects a DEALER with `security` and watches until a failure or a
// success, for at most 10 s.
Outcome connect_and_watch(Server& server, const SocketSecurity& security) {
  zmq::socket_t dealer(server.ctx, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  security.as_client(dealer);
  HandshakeMonitor monitor(server.ctx, dealer, security.curve());
  dealer.connect(server.endpoint);
  Outcome out;
  const auto deadline = std::chrono::steady_clock::now() + zstore::testing::scaled(10s);
  while (std::chrono::steady_clock::now() < deadline && !out.failure && !monitor.succeeded()) {
    zmq::pollitem_t item{monitor.events().handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, 100ms);
    out.failure = monitor.poll();
  }
  out.succeeded = monitor.succeeded();
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(an_allowed_key_handshakes_without_failure) {
  Server server(true);
  auto out = connect_and_watch(server, server.keys.as("alice"));
  BOOST_TEST(out.succeeded);
  BOOST_TEST(!out.failure.has_value());
}

BOOST_AUTO_TEST_CASE(an_unknown_key_is_reported_as_refused) {
  Server server(true);
  auto out = connect_and_watch(server, server.keys.as("mallory"));
  BOOST_REQUIRE(out.failure.has_value());
  BOOST_TEST(static_cast<int>(out.failure->problem) == static_cast<int>(HandshakeProblem::kKeyRefused));
  BOOST_TEST(out.failure->endpoint == server.endpoint);
  BOOST_TEST(out.failure->message.find("refused our key (not in its allow list)") != std::string::npos);
  BOOST_TEST(out.failure->message.find(server.endpoint) != std::string::npos);
  BOOST_TEST(!out.succeeded);
}

BOOST_AUTO_TEST_CASE(a_wrong_server_key_is_reported_as_a_mismatch) {
  Server server(true);
  SocketSecurity wrong = server.keys.as("alice");
  wrong.server_key = zstore::security::generate_cert().public_key;
  auto out = connect_and_watch(server, wrong);
  BOOST_REQUIRE(out.failure.has_value());
  BOOST_TEST(static_cast<int>(out.failure->problem) == static_cast<int>(HandshakeProblem::kServerKeyMismatch));
  BOOST_TEST(out.failure->message.find("server key mismatch") != std::string::npos, out.failure->message);
}

BOOST_AUTO_TEST_CASE(a_plaintext_client_of_a_curve_server_is_told_the_mechanisms_differ) {
  Server server(true);
  auto out = connect_and_watch(server, SocketSecurity{});
  BOOST_REQUIRE(out.failure.has_value());
  BOOST_TEST(static_cast<int>(out.failure->problem) == static_cast<int>(HandshakeProblem::kMechanismMismatch));
  BOOST_TEST(out.failure->message.find("mechanism mismatch") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_curve_client_of_a_plain_server_is_told_the_mechanisms_differ) {
  Server server(false);
  auto out = connect_and_watch(server, server.keys.as("alice"));
  BOOST_REQUIRE(out.failure.has_value());
  // A race: we read the server's NULL greeting (mechanism mismatch), or its
  // hang-up resets the connection first (a key mismatch whose text names a
  // plain server as the other cause).
  if (out.failure->problem == HandshakeProblem::kServerKeyMismatch) {
    BOOST_TEST(out.failure->message.find("or the server does not use CURVE") != std::string::npos);
  } else {
    BOOST_TEST(static_cast<int>(out.failure->problem) == static_cast<int>(HandshakeProblem::kMechanismMismatch));
  }
}

BOOST_AUTO_TEST_CASE(a_plain_handshake_succeeds_quietly) {
  Server server(false);
  auto out = connect_and_watch(server, SocketSecurity{});
  BOOST_TEST(out.succeeded);
  BOOST_TEST(!out.failure.has_value());
}

BOOST_AUTO_TEST_CASE(describe_names_the_endpoint_and_the_detail) {
  auto text = zstore::security::describe(HandshakeProblem::kOther, "tcp://h:1", "ZAP status 500");
  BOOST_TEST(text == "CURVE handshake with tcp://h:1: failed (ZAP status 500)");
}
