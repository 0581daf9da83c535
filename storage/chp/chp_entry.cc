#include "storage/chp/chp_entry.h"

#include "protocol/byte_order.h"

namespace zstore::storage {

using protocol::get_be;
using protocol::put_be;

using protocol::store_be;

ChpEntryPieces::ChpEntryPieces(std::uint64_t sequence, std::uint64_t expires_at_ms, std::string_view uuid,
                               std::string_view properties, std::string_view value)
    : pieces_{std::string_view(header_, sizeof(header_)), uuid,
              std::string_view(properties_length_, sizeof(properties_length_)), properties, value} {
  store_be<std::uint64_t>(header_, sequence);
  store_be<std::uint64_t>(header_ + 8, expires_at_ms);
  store_be<std::uint8_t>(header_ + 16, static_cast<std::uint8_t>(uuid.size()));
  store_be<std::uint32_t>(properties_length_, static_cast<std::uint32_t>(properties.size()));
}

std::string encode_chp_entry(const ChpEntry& entry) {
  ChpEntryPieces pieces(entry.sequence, entry.expires_at_ms, entry.uuid, entry.properties, entry.value);
  std::size_t size = 0;
  for (std::size_t i = 0; i < ChpEntryPieces::kCount; ++i) size += pieces.pieces()[i].size();
  std::string out;
  out.reserve(size);
  for (std::size_t i = 0; i < ChpEntryPieces::kCount; ++i) out.append(pieces.pieces()[i]);
  return out;
}

bool chp_entry_expiry(std::string_view bytes, std::uint64_t* expires_at_ms) {
  if (bytes.size() < 16) return false;
  *expires_at_ms = get_be<std::uint64_t>(bytes.substr(8));
  return true;
}

bool chp_entry_head(std::string_view bytes, std::uint64_t* sequence, std::uint64_t* expires_at_ms) {
  if (!chp_entry_expiry(bytes, expires_at_ms)) return false;
  *sequence = get_be<std::uint64_t>(bytes);
  return true;
}

bool decode_chp_entry(std::string_view bytes, ChpEntryView* out) {
  if (bytes.size() < 17) return false;
  out->sequence = get_be<std::uint64_t>(bytes);
  out->expires_at_ms = get_be<std::uint64_t>(bytes.substr(8));
  std::size_t uuid_len = static_cast<unsigned char>(bytes[16]);
  bytes.remove_prefix(17);
  if (bytes.size() < uuid_len + 4) return false;
  out->uuid = bytes.substr(0, uuid_len);
  bytes.remove_prefix(uuid_len);
  std::size_t props_len = get_be<std::uint32_t>(bytes);
  bytes.remove_prefix(4);
  if (bytes.size() < props_len) return false;
  out->properties = bytes.substr(0, props_len);
  out->value = bytes.substr(props_len);
  return true;
}

void assign_chp_entry(const ChpEntryView& view, ChpEntry* out) {
  out->sequence = view.sequence;
  out->expires_at_ms = view.expires_at_ms;
  out->uuid.assign(view.uuid);  // assign(): a reused entry keeps its buffers
  out->properties.assign(view.properties);
  out->value.assign(view.value);
}

bool decode_chp_entry(std::string_view bytes, ChpEntry* out) {
  ChpEntryView v;
  if (!decode_chp_entry(bytes, &v)) return false;
  assign_chp_entry(v, out);
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
