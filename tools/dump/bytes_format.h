// How zstore-dump writes stored bytes. JSON: a field holds the bytes as a
// string when they are valid UTF-8, otherwise their base64 (RFC 4648, with
// padding) and a sibling field "<name>_encoding": "base64". Text: as is when
// printable, otherwise escaped byte by byte (\\ \n \r \t \xHH), as zstore-cli.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace zstore::dump {

bool is_valid_utf8(std::string_view bytes);
std::string base64(std::string_view bytes);
std::string hex(std::string_view bytes);  // lowercase, two digits a byte

// Sets object[name] (and object[name + "_encoding"] when base64 is needed).
void put_bytes(nlohmann::ordered_json& object, const std::string& name, std::string_view bytes);

// One line of text: bytes as is when printable, else escaped.
std::string text(std::string_view bytes);

// "2026-11-23T08:00:00.123Z" for ms since the Unix epoch.
std::string iso8601_ms(std::uint64_t ms);

}  // namespace zstore::dump
