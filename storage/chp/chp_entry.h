// ChpEntry: the stored form of one CHP key, and the key encodings of the
// chp_map and chp_expiry column families.
//   chp_map value:  seq u64 BE | expires_at_ms u64 BE (0 = none) |
//                   uuid_len u8 | uuid | props_len u32 BE | props | value
//   chp_expiry key: expires_at_ms u64 BE | map key   (value empty)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace zstore::storage {

struct ChpEntry {
  std::uint64_t sequence = 0;
  std::uint64_t expires_at_ms = 0;  // absolute, ms since the Unix epoch; 0 = never
  std::string uuid;
  std::string properties;
  std::string value;
  bool operator==(const ChpEntry&) const = default;
};

std::string encode_chp_entry(const ChpEntry& entry);

// An entry's encoding as pieces: two small buffers of its own and views of
// the caller's strings (which must outlive it). Joined, the pieces equal
// encode_chp_entry(); writers gather them instead of building the string.
class ChpEntryPieces {
 public:
  static constexpr std::size_t kCount = 5;
  ChpEntryPieces(std::uint64_t sequence, std::uint64_t expires_at_ms, std::string_view uuid,
                 std::string_view properties, std::string_view value);
  ChpEntryPieces(const ChpEntryPieces&) = delete;  // pieces point into this object
  ChpEntryPieces& operator=(const ChpEntryPieces&) = delete;
  const std::string_view* pieces() const { return pieces_; }
  std::string_view uuid() const { return pieces_[1]; }
  std::string_view value() const { return pieces_[kCount - 1]; }

 private:
  char header_[17];  // sequence, expiry, uuid length
  char properties_length_[4];
  std::string_view pieces_[kCount];
};
// An entry whose strings point into its encoding (valid while it is).
struct ChpEntryView {
  std::uint64_t sequence = 0;
  std::uint64_t expires_at_ms = 0;
  std::string_view uuid;
  std::string_view properties;
  std::string_view value;
};

// Copies view into *out, reusing its strings' buffers.
void assign_chp_entry(const ChpEntryView& view, ChpEntry* out);

// Returns false (leaving *out unspecified) when bytes are not a valid entry.
bool decode_chp_entry(std::string_view bytes, ChpEntryView* out);
bool decode_chp_entry(std::string_view bytes, ChpEntry* out);

// The expiry of an encoded entry, read without decoding the rest (a write
// checking the key's previous entry); false when bytes are too short.
bool chp_entry_expiry(std::string_view bytes, std::uint64_t* expires_at_ms);
// The same with the entry's sequence (a scan building the key index).
bool chp_entry_head(std::string_view bytes, std::uint64_t* sequence, std::uint64_t* expires_at_ms);

std::string encode_expiry_key(std::uint64_t expires_at_ms, std::string_view key);
bool decode_expiry_key(std::string_view bytes, std::uint64_t* expires_at_ms, std::string_view* key);

}  // namespace zstore::storage
