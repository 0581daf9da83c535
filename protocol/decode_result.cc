#include "protocol/decode_result.h"

namespace zstore::protocol {

const char* to_string(DecodeErrorKind kind) {
  switch (kind) {
    case DecodeErrorKind::kFrameCount:
      return "frame_count";
    case DecodeErrorKind::kTruncated:
      return "truncated";
    case DecodeErrorKind::kTrailing:
      return "trailing";
    case DecodeErrorKind::kBadVersion:
      return "bad_version";
    case DecodeErrorKind::kUnknownId:
      return "unknown_id";
    case DecodeErrorKind::kBadField:
      return "bad_field";
    case DecodeErrorKind::kTooLarge:
      return "too_large";
  }
  return "unknown";
}

}  // namespace zstore::protocol
