#include "protocol/dafka_reader.h"

#include <utility>

namespace zstore::protocol::dafka {

using K = DecodeErrorKind;

std::string_view Reader::short_view(std::string_view field) {
  if (failed()) return {};
  if (left() < 1) {
    truncated(field, "length byte missing");
    return {};
  }
  std::size_t n = static_cast<unsigned char>(frame_[pos_]);
  if (left() - 1 < n) {
    truncated(field, "length " + std::to_string(n) + " but " + std::to_string(left() - 1) + " bytes left");
    return {};
  }
  std::string_view out = frame_.substr(pos_ + 1, n);
  pos_ += 1 + n;
  return out;
}

std::vector<std::string> Reader::strings(std::string_view field, std::size_t max_count) {
  std::vector<std::string> out;
  const std::size_t count_at = pos_;
  const std::uint32_t count = number<std::uint32_t>(std::string(field) + " count");
  if (failed()) return out;
  // Each entry needs at least its 4-byte length: refuse a count the frame
  // cannot hold before reserving anything for it.
  if (count > left() / 4) {
    truncated(field,
              "count " + std::to_string(count) + " needs at least " + std::to_string(std::uint64_t{count} * 4) +
                  " bytes, " + std::to_string(left()) + " left",
              count_at);
    return out;
  }
  if (count > max_count) {
    fail(K::kTooLarge,
         std::string(field) + " count " + std::to_string(count) + " exceeds limit " + std::to_string(max_count));
    return out;
  }
  out.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::string entry = std::string(field) + "[" + std::to_string(i) + "]";
    const std::size_t entry_at = pos_;
    const std::uint32_t n = number<std::uint32_t>(entry + " length");
    if (failed()) return out;
    if (n > left()) {
      truncated(entry, "length " + std::to_string(n) + " but " + std::to_string(left()) + " bytes left", entry_at);
      return out;
    }
    out.emplace_back(frame_.substr(pos_, n));
    pos_ += n;
  }
  return out;
}

void Reader::finish() {
  if (failed() || left() == 0) return;
  fail(K::kTrailing, std::to_string(left()) + " trailing bytes after the last field at byte " + std::to_string(pos_));
}

void Reader::truncated(std::string_view field, const std::string& why, std::optional<std::size_t> at) {
  fail(K::kTruncated, std::string(field) + " truncated at byte " + std::to_string(at.value_or(pos_)) + ": " + why);
}

void Reader::fail(K kind, std::string detail) {
  error_ = decode_error(kind, std::string(name_) + ": " + std::move(detail));
}

}  // namespace zstore::protocol::dafka
