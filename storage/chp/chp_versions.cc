#include "storage/chp/chp_versions.h"

#include "protocol/byte_order.h"

namespace zstore::storage {

std::string encode_version_prefix(std::string_view key) {
  std::string out;
  out.reserve(key.size() + kVersionKeyOverhead);
  protocol::put_be<std::uint32_t>(out, static_cast<std::uint32_t>(key.size()));
  out.append(key);
  return out;
}

std::string encode_version_key(std::string_view key, std::uint64_t sequence) {
  std::string out = encode_version_prefix(key);
  protocol::put_be<std::uint64_t>(out, sequence);
  return out;
}

void assign_version_key(std::string* out, std::string_view key, std::uint64_t sequence) {
  out->clear();
  protocol::put_be<std::uint32_t>(*out, static_cast<std::uint32_t>(key.size()));
  out->append(key);
  protocol::put_be<std::uint64_t>(*out, sequence);
}

bool decode_version_key(std::string_view bytes, std::string_view* key, std::uint64_t* sequence) {
  if (bytes.size() < kVersionKeyOverhead) return false;
  std::uint32_t len = protocol::get_be<std::uint32_t>(bytes);
  if (bytes.size() != kVersionKeyOverhead + std::size_t{len}) return false;
  *key = bytes.substr(4, len);
  *sequence = protocol::get_be<std::uint64_t>(bytes.substr(4 + len));
  return true;
}

bool decode_version_value(std::string_view bytes, ChpVersion* out) {
  if (bytes.size() < 8) return false;
  out->written_ms = protocol::get_be<std::uint64_t>(bytes);
  return decode_chp_entry(bytes.substr(8), &out->entry);
}

}  // namespace zstore::storage
