// Fuzz target: the Dafka decoder on arbitrary frames; a decoded message that
// fits the encoder's limits must re-encode to frames that decode equal.
#include <cstdint>
#include <stdexcept>

#include "protocol/dafka_codec.h"
#include "tests/fuzz/fuzz_frames.h"

namespace dafka = zstore::protocol::dafka;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto frames = zstore::fuzz::frames_from_bytes(data, size);
  dafka::Limits limits;
  limits.max_content_bytes = 4096;
  limits.max_subjects = 64;
  auto decoded = dafka::decode(frames, limits);
  if (!decoded) return 0;
  zstore::protocol::Frames encoded;
  try {
    encoded = dafka::encode(decoded.value());
  } catch (const std::length_error&) {
    return 0;  // e.g. a subjects entry longer than the encoder writes
  }
  std::vector<std::string_view> views(encoded.begin(), encoded.end());
  auto again = dafka::decode(views, limits);
  ZSTORE_FUZZ_CHECK(again.ok());
  ZSTORE_FUZZ_CHECK(again.value() == decoded.value());
  return 0;
}
