// make_info_log: RocksDB's informational log (the LOG file of a data dir),
// written with plain buffered stdio whose errors are ignored. RocksDB's own
// file logger asserts (aborting the process in Debian's build) on the line
// after a failed write, so a full disk would kill the server through its
// diagnostics. At open, an existing LOG becomes LOG.old.<microseconds> and
// only the newest keep_old of those are kept, as RocksDB does.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace rocksdb {
class Logger;
}

namespace zstore::storage {

// Null when dir's LOG cannot be opened (then RocksDB logs nowhere).
std::shared_ptr<rocksdb::Logger> make_info_log(const std::string& dir, std::size_t keep_old);

}  // namespace zstore::storage
