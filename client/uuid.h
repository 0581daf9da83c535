// Random 16-byte UUIDs (RFC 4122 version 4, from libuuid) for KVSETs.
#pragma once

#include <string>

namespace zstore::client {

// A fresh random UUID as 16 raw bytes. Thread-safe.
std::string random_uuid();

}  // namespace zstore::client
