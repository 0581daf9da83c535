// DecodeResult<T>: either a decoded message or a DecodeError saying what was
// wrong with the peer's bytes. Decoders return it and never throw or assert
// on network input.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace zstore::protocol {

// Broad class of a malformed message, used to count drops by kind.
enum class DecodeErrorKind : std::uint8_t {
  kFrameCount,  // wrong number of frames
  kTruncated,   // a field runs past the end of its frame
  kTrailing,    // bytes left over after the last field
  kBadVersion,  // protocol version is not the one we speak
  kUnknownId,   // message id / command name we do not know
  kBadField,    // a field has an invalid value (length, sequence size, ...)
  kTooLarge,    // a field exceeds a configured or protocol limit
};

// Stable lowercase name of a kind, for logs and metric labels.
const char* to_string(DecodeErrorKind kind);

struct DecodeError {
  DecodeErrorKind kind;
  std::string detail;  // human-readable: what was wrong and where
};

template <typename T>
class [[nodiscard]] DecodeResult {
 public:
  DecodeResult(T value) : v_(std::move(value)) {}            // NOLINT: implicit by design
  DecodeResult(DecodeError error) : v_(std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // Precondition: ok().
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  // Precondition: !ok().
  const DecodeError& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, DecodeError> v_;
};

inline DecodeError decode_error(DecodeErrorKind kind, std::string detail) {
  return DecodeError{kind, std::move(detail)};
}

}  // namespace zstore::protocol
