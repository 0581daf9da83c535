// Fuzz target: tower/node beacon decoders on arbitrary frames; decoded
// beacons must re-encode and decode equal.
#include <cstdint>

#include "protocol/beacon.h"
#include "tests/fuzz/fuzz_frames.h"

namespace beacon = zstore::protocol::beacon;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto frames = zstore::fuzz::frames_from_bytes(data, size);
  (void)beacon::is_welcome(frames);
  if (auto node = beacon::decode_node_beacon(frames)) {
    auto encoded = beacon::encode(node.value());
    std::vector<std::string_view> views(encoded.begin(), encoded.end());
    auto again = beacon::decode_node_beacon(views);
    ZSTORE_FUZZ_CHECK(again.ok() && again.value() == node.value());
  }
  if (auto tower = beacon::decode_tower_beacon(frames)) {
    auto encoded = beacon::encode(tower.value());
    std::vector<std::string_view> views(encoded.begin(), encoded.end());
    auto again = beacon::decode_tower_beacon(views);
    ZSTORE_FUZZ_CHECK(again.ok() && again.value() == tower.value());
  }
  return 0;
}
