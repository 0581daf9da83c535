// PackedValues: reads a RocksDB value that packs several items, as Dafka
// record runs (dafka_log_internal.h) and CHP history blocks (chp_history.h)
// do: count u32 BE, then count x (length u32 BE | item). Items come out in
// order as views into the value, which must outlive the reader.
#pragma once

#include <cstdint>
#include <string_view>

#include "protocol/byte_order.h"

namespace zstore::storage {

class PackedValues {
 public:
  // Starts reading value; false when it is too short for its count or
  // packs no item.
  bool open(std::string_view value) {
    if (value.size() < 4) return false;
    left_ = protocol::get_be<std::uint32_t>(value);
    rest_ = value.substr(4);
    return left_ > 0;
  }
  // Items not yet read (right after open(): the count).
  std::uint32_t left() const { return left_; }
  // The next item; false when none is left or the bytes do not hold it.
  bool next(std::string_view* item) {
    if (left_ == 0 || rest_.size() < 4) return false;
    std::uint32_t length = protocol::get_be<std::uint32_t>(rest_);
    if (rest_.size() - 4 < length) return false;
    *item = rest_.substr(4, length);
    rest_.remove_prefix(4 + length);
    --left_;
    return true;
  }
  // Every item was read and no byte is left over.
  bool done() const { return left_ == 0 && rest_.empty(); }

 private:
  std::uint32_t left_ = 0;
  std::string_view rest_;
};

}  // namespace zstore::storage
