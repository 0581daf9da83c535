// Fuzz target: every CHP decoder on arbitrary frames; a decoded message must
// re-encode to frames that decode to the same message.
#include <cstdint>

#include "protocol/chp_codec.h"
#include "tests/fuzz/fuzz_frames.h"

namespace chp = zstore::protocol::chp;

namespace {

template <typename Decoded, typename Decode>
void check_round_trip(const Decoded& first, const zstore::protocol::Frames& encoded, Decode decode) {
  std::vector<std::string_view> views(encoded.begin(), encoded.end());
  auto again = decode(views);
  ZSTORE_FUZZ_CHECK(again.ok());
  ZSTORE_FUZZ_CHECK(again.value() == first);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto frames = zstore::fuzz::frames_from_bytes(data, size);
  chp::Limits limits;
  limits.max_value_bytes = 4096;

  if (auto r = chp::decode_icanhaz(frames, limits)) {
    check_round_trip(r.value(), chp::encode_icanhaz(r.value()), [&](auto f) { return chp::decode_icanhaz(f, limits); });
  }
  if (auto r = chp::decode_kvset(frames, limits)) {
    check_round_trip(r.value(), chp::encode_kvmsg(r.value()), [&](auto f) { return chp::decode_kvset(f, limits); });
  }
  if (auto r = chp::decode_update(frames, limits)) {
    auto encoded = std::holds_alternative<chp::Hugz>(r.value()) ? chp::encode_hugz(std::get<chp::Hugz>(r.value()))
                                                                : chp::encode_kvmsg(std::get<chp::KvMsg>(r.value()));
    check_round_trip(r.value(), encoded, [&](auto f) { return chp::decode_update(f, limits); });
  }
  if (auto r = chp::decode_snapshot_reply(frames, limits)) {
    auto encoded = std::holds_alternative<chp::Kthxbai>(r.value())
                       ? chp::encode_kthxbai(std::get<chp::Kthxbai>(r.value()))
                       : chp::encode_kvmsg(std::get<chp::KvMsg>(r.value()));
    check_round_trip(r.value(), encoded, [&](auto f) { return chp::decode_snapshot_reply(f, limits); });
  }
  if (!frames.empty()) {
    if (auto props = chp::parse_properties(frames[0])) {
      auto again = chp::parse_properties(chp::format_properties(props.value()));
      ZSTORE_FUZZ_CHECK(again.ok() && again.value() == props.value());
    }
    (void)chp::ttl_seconds(frames[0], limits);
  }
  return 0;
}
