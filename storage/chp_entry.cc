#include "storage/chp_entry.h"

#include "protocol/byte_order.h"

namespace zstore::storage {

using protocol::get_be;
using protocol::put_be;

std::string encode_chp_entry(const ChpEntry& entry) {
  std::string out;
  out.reserve(8 + 8 + 1 + entry.uuid.size() + 4 + entry.properties.size() + entry.value.size());
  put_be<std::uint64_t>(out, entry.sequence);
  put_be<std::uint64_t>(out, entry.expires_at_ms);
  put_be<std::uint8_t>(out, static_cast<std::uint8_t>(entry.uuid.size()));
  out.append(entry.uuid);
  put_be<std::uint32_t>(out, static_cast<std::uint32_t>(entry.properties.size()));
  out.append(entry.properties);
  out.append(entry.value);
  return out;
}

bool decode_chp_entry(std::string_view bytes, ChpEntry* out) {
  if (bytes.size() < 17) return false;
  out->sequence = get_be<std::uint64_t>(bytes);
  out->expires_at_ms = get_be<std::uint64_t>(bytes.substr(8));
  std::size_t uuid_len = static_cast<unsigned char>(bytes[16]);
  bytes.remove_prefix(17);
  if (bytes.size() < uuid_len + 4) return false;
  out->uuid.assign(bytes.substr(0, uuid_len));
  bytes.remove_prefix(uuid_len);
  std::size_t props_len = get_be<std::uint32_t>(bytes);
  bytes.remove_prefix(4);
  if (bytes.size() < props_len) return false;
  out->properties.assign(bytes.substr(0, props_len));
  out->value.assign(bytes.substr(props_len));
  return true;
}

std::string encode_expiry_key(std::uint64_t expires_at_ms, std::string_view key) {
  std::string out;
  out.reserve(8 + key.size());
  put_be<std::uint64_t>(out, expires_at_ms);
  out.append(key);
  return out;
}

bool decode_expiry_key(std::string_view bytes, std::uint64_t* expires_at_ms, std::string_view* key) {
  if (bytes.size() < 8) return false;
  *expires_at_ms = get_be<std::uint64_t>(bytes);
  *key = bytes.substr(8);
  return true;
}

}  // namespace zstore::storage
