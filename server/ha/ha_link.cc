#include "server/ha/ha_link.h"

#include <atomic>
#include <filesystem>
#include <random>

#include "protocol/chp_codec.h"
#include "server/access/chp_acl.h"
#include "server/reactor/zmq_frames.h"

namespace zstore::server {

namespace chp = protocol::chp;

std::string format_ha_facts(const HaPeerState& state) {
  return chp::format_properties({{"synced", state.map.synced ? "1" : "0"},
                                 {"last", std::to_string(state.map.last)},
                                 {std::string(chp::kEpochsProperty), storage::format_epochs(state.epochs)},
                                 {"reconciled", std::to_string(state.reconciled)},
                                 {"pair-token", state.pair_token},
                                 {"heard-token", state.heard_token}});
}

namespace {
constexpr std::string_view kPairIdPrefix = "zstore-pair:";
constexpr std::size_t kTokenSize = 32;

bool is_token(std::string_view s) {
  return s.empty() || (s.size() == kTokenSize && s.find_first_not_of("0123456789abcdef") == std::string_view::npos);
}
}  // namespace

std::string new_pair_token() {
  std::random_device random;
  std::string token;
  for (std::size_t i = 0; i < kTokenSize; ++i) token += "0123456789abcdef"[random() % 16];
  return token;
}

std::string pair_routing_id(std::string_view token) {
  static std::atomic<std::uint64_t> next{0};
  return std::string(kPairIdPrefix) + std::string(token) + ":" + std::to_string(next.fetch_add(1));
}

std::string_view pair_token_of(std::string_view routing_id) {
  if (!routing_id.starts_with(kPairIdPrefix)) return {};
  routing_id.remove_prefix(kPairIdPrefix.size());
  if (routing_id.size() <= kTokenSize || routing_id[kTokenSize] != ':') return {};
  return routing_id.substr(0, kTokenSize);
}

namespace {

bool parse_u64(const std::string& s, std::uint64_t* out) {
  if (s.empty() || s.size() > 20 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  try {
    *out = std::stoull(s);
  } catch (const std::out_of_range&) {
    return false;
  }
  return true;
}

}  // namespace

std::optional<HaPeerState> parse_ha_message(std::string_view digit, const std::string* facts) {
  HaPeerState out;
  auto state = parse_ha_state(digit);
  if (!state) return std::nullopt;
  out.state = *state;
  if (facts == nullptr) return out;
  auto props = chp::parse_properties(*facts);
  if (!props) return std::nullopt;
  bool synced = false, last = false, epochs = false;
  for (const auto& [name, value] : *props) {
    if (name == "synced" && (value == "0" || value == "1")) {
      out.map.synced = value == "1";
      synced = true;
    } else if (name == "last") {
      last = parse_u64(value, &out.map.last);
      if (!last) return std::nullopt;
    } else if (name == chp::kEpochsProperty) {
      auto parsed = storage::parse_epochs(value);
      if (!parsed) return std::nullopt;
      out.epochs = std::move(*parsed);
      epochs = true;
    } else if (name == "reconciled") {
      if (!parse_u64(value, &out.reconciled)) return std::nullopt;
    } else if (name == "pair-token" || name == "heard-token") {
      if (!is_token(value)) return std::nullopt;
      (name == "pair-token" ? out.pair_token : out.heard_token) = value;
    }
  }
  if (!synced || !last || !epochs) return std::nullopt;
  out.has_facts = true;
  return out;
}

HaLink::HaLink(zmq::context_t& ctx, const std::string& bind_endpoint, const std::string& peer_endpoint,
               std::string cut_file, security::SocketSecurity security)
    : pub_(ctx, zmq::socket_type::pub), sub_(ctx, zmq::socket_type::sub), cut_file_(std::move(cut_file)) {
  pub_.set(zmq::sockopt::linger, 0);
  sub_.set(zmq::sockopt::linger, 0);
  sub_.set(zmq::sockopt::subscribe, "");
  sub_.set(zmq::sockopt::maxmsgsize, std::int64_t{4096});
  sub_.set(zmq::sockopt::rcvhwm, 100);
  security.as_server(pub_, kHaZapDomain);
  security.as_client(sub_);
  pub_.bind(bind_endpoint);
  sub_.connect(peer_endpoint);
}

bool HaLink::cut() {
  if (cut_file_.empty()) return false;
  auto now = std::chrono::steady_clock::now();
  if (now >= next_cut_check_) {
    std::error_code ec;
    cut_ = std::filesystem::exists(cut_file_, ec);
    next_cut_check_ = now + std::chrono::milliseconds(20);
  }
  return cut_;
}

void HaLink::send_state(const HaPeerState& state) {
  if (cut()) return;
  char digit = static_cast<char>('0' + static_cast<int>(state.state));
  (void)try_send(pub_, {std::string(1, digit), format_ha_facts(state)});
}

std::optional<HaPeerState> HaLink::receive(std::uint64_t* malformed) {
  ReceivedMessage msg;
  while (try_recv(sub_, &msg)) {
    if (cut()) continue;  // dropped: the link is cut
    if (msg.views.size() == 1 || msg.views.size() == 2) {
      std::string facts = msg.views.size() == 2 ? std::string(msg.views[1]) : std::string();
      if (auto state = parse_ha_message(msg.views[0], msg.views.size() == 2 ? &facts : nullptr)) return state;
    }
    ++*malformed;
  }
  return std::nullopt;
}

}  // namespace zstore::server
