#include "protocol/chp_key_history.h"

#include <iterator>

#include "protocol/byte_order.h"

namespace zstore::protocol::chp {
namespace {

using K = DecodeErrorKind;

DecodeError error(K kind, std::string detail) { return decode_error(kind, std::move(detail)); }

constexpr std::string_view kStates[] = {"set", "deleted", "expired"};
constexpr std::string_view kOutcomes[] = {"ok", "refused", "failed"};
constexpr std::size_t kMaxDetailBytes = 4096;

// The index of text in names, or names' size.
template <std::size_t N>
std::size_t find_name(const std::string_view (&names)[N], std::string_view text) {
  std::size_t i = 0;
  while (i < N && names[i] != text) ++i;
  return i;
}

}  // namespace

const char* to_string(KeyVersion::State state) { return kStates[static_cast<std::size_t>(state)].data(); }
const char* to_string(HistoryEnd::Outcome outcome) { return kOutcomes[static_cast<std::size_t>(outcome)].data(); }

Frames encode_history_request(const HistoryRequest& request) {
  return {std::string(kHistoryCommand), request.key, encode_sequence(request.limit)};
}

DecodeResult<HistoryRequest> decode_history_request(FrameViews frames, const Limits& limits) {
  if (frames.empty() || frames[0] != kHistoryCommand) return error(K::kUnknownId, "not a HISTORY?");
  if (frames.size() != 3) return error(K::kFrameCount, "HISTORY? needs 3 frames");
  if (frames[1].empty()) return error(K::kBadField, "HISTORY? with an empty key");
  if (frames[1].size() > limits.max_key_bytes) return error(K::kTooLarge, "HISTORY? key too large");
  if (frames[2].size() != kSequenceSize) return error(K::kBadField, "HISTORY? limit is not 8 bytes");
  std::uint64_t limit = get_be<std::uint64_t>(frames[2]);
  if (limit == 0 || limit > kMaxHistoryLimit) return error(K::kBadField, "HISTORY? limit is not 1..1000");
  return HistoryRequest{std::string(frames[1]), limit};
}

Frames encode_kvhist(const KeyVersion& v) {
  return {std::string(kKvHistCommand),
          v.key,
          encode_sequence(v.sequence),
          std::string(kStates[static_cast<std::size_t>(v.state)]),
          encode_sequence(v.written_ms),
          encode_sequence(v.expires_at_ms),
          v.properties,
          v.body};
}

DecodeResult<KeyVersion> decode_kvhist(FrameViews frames, const Limits& limits) {
  if (frames.empty() || frames[0] != kKvHistCommand) return error(K::kUnknownId, "not a KVHIST");
  if (frames.size() != 8) return error(K::kFrameCount, "KVHIST needs 8 frames");
  if (frames[1].empty() || frames[1].size() > limits.max_key_bytes) return error(K::kBadField, "KVHIST key");
  for (std::size_t i : {2, 4, 5}) {
    if (frames[i].size() != kSequenceSize) return error(K::kBadField, "KVHIST number is not 8 bytes");
  }
  std::size_t state = find_name(kStates, frames[3]);
  if (state == std::size(kStates)) return error(K::kBadField, "KVHIST with an unknown state");
  if (frames[6].size() > limits.max_properties_bytes) return error(K::kTooLarge, "KVHIST properties too large");
  if (frames[7].size() > limits.max_value_bytes) return error(K::kTooLarge, "KVHIST body too large");
  auto s = static_cast<KeyVersion::State>(state);
  if ((s == KeyVersion::State::kSet) == frames[7].empty()) {
    return error(K::kBadField, "KVHIST body must be non-empty exactly when set");
  }
  return KeyVersion{std::string(frames[1]),
                    get_be<std::uint64_t>(frames[2]),
                    s,
                    get_be<std::uint64_t>(frames[4]),
                    get_be<std::uint64_t>(frames[5]),
                    std::string(frames[6]),
                    std::string(frames[7])};
}

Frames encode_history_end(const HistoryEnd& end) {
  return {std::string(kHistoryEndCommand), end.key, std::string(kOutcomes[static_cast<std::size_t>(end.outcome)]),
          encode_sequence(end.count), end.detail};
}

DecodeResult<HistoryEnd> decode_history_end(FrameViews frames, const Limits& limits) {
  if (frames.empty() || frames[0] != kHistoryEndCommand) return error(K::kUnknownId, "not a HISTORYEND");
  if (frames.size() != 5) return error(K::kFrameCount, "HISTORYEND needs 5 frames");
  if (frames[1].size() > limits.max_key_bytes) return error(K::kTooLarge, "HISTORYEND key too large");
  std::size_t outcome = find_name(kOutcomes, frames[2]);
  if (outcome == std::size(kOutcomes)) return error(K::kBadField, "HISTORYEND with an unknown outcome");
  if (frames[3].size() != kSequenceSize) return error(K::kBadField, "HISTORYEND count is not 8 bytes");
  if (frames[4].size() > kMaxDetailBytes) return error(K::kTooLarge, "HISTORYEND detail too large");
  return HistoryEnd{std::string(frames[1]), static_cast<HistoryEnd::Outcome>(outcome), get_be<std::uint64_t>(frames[3]),
                    std::string(frames[4])};
}

}  // namespace zstore::protocol::chp
