// Reader: how the Dafka codec (dafka_codec.cc) reads a message body's
// fields front to back. The first failure sticks: later reads return empty
// values, and error() reports the first problem, prefixed with the message
// name. Internal to zstore_protocol; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/byte_order.h"
#include "protocol/decode_result.h"

namespace zstore::protocol::dafka {

class Reader {
 public:
  Reader(std::string_view frame, std::size_t offset, std::string_view name)
      : frame_(frame), pos_(offset), name_(name) {}

  // A one-byte length, then that many bytes.
  std::string short_string(std::string_view field) { return std::string(short_view(field)); }
  // The same, as a view into the frame.
  std::string_view short_view(std::string_view field);

  // A big-endian number.
  template <typename T>
  T number(std::string_view field) {
    if (failed()) return 0;
    if (left() < sizeof(T)) {
      truncated(field, "needs " + std::to_string(sizeof(T)) + " bytes, " + std::to_string(left()) + " left");
      return 0;
    }
    T v = get_be<T>(frame_.substr(pos_, sizeof(T)));
    pos_ += sizeof(T);
    return v;
  }

  // A 4-byte count (at most max_count), then that many 4-byte-length strings.
  std::vector<std::string> strings(std::string_view field, std::size_t max_count);

  // Call after the last field: anything left over is an error.
  void finish();

  bool failed() const { return error_.has_value(); }
  DecodeError error() && { return std::move(*error_); }

 private:
  std::size_t left() const { return frame_.size() - pos_; }
  void truncated(std::string_view field, const std::string& why, std::optional<std::size_t> at = {});
  void fail(DecodeErrorKind kind, std::string detail);

  std::string_view frame_;
  std::size_t pos_;
  std::string_view name_;
  std::optional<DecodeError> error_;
};

}  // namespace zstore::protocol::dafka
