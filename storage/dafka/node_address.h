// The Dafka node address of a data directory: 32 uppercase hex characters,
// kept in the meta column so a restarted zstored is the same Dafka node.
#pragma once

#include <string>
#include <string_view>

#include "storage/db/database.h"
#include "storage/db/status.h"

namespace zstore::storage {

inline constexpr std::string_view kMetaDafkaNodeAddress = "dafka_node_address";

// Sets *address to the stored address; when none is stored yet, stores
// `fresh` (a new address the caller generated) and returns it.
Status load_or_store_node_address(Database* db, std::string_view fresh, std::string* address);

}  // namespace zstore::storage
