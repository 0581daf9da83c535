// slice(): a string_view as a rocksdb::Slice, without a copy (the viewed
// bytes must outlive the slice). For storage/'s own sources.
#pragma once

#include <string_view>

#include <rocksdb/slice.h>

namespace zstore::storage {

inline rocksdb::Slice slice(std::string_view s) { return rocksdb::Slice(s.data(), s.size()); }

}  // namespace zstore::storage
