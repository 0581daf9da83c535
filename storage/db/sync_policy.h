// SyncPolicy: when the write-ahead log reaches stable storage.
//   kAlways: every batch is fsynced before it is acknowledged (one fsync
//            per batch: a reactor turn's updates together): nothing
//            acknowledged is ever lost. The default.
//   kBatch:  every batch is written to the OS before it is acknowledged,
//            so a killed server loses nothing, and the log is fsynced every
//            sync interval (default 100 ms): a power loss loses at most
//            about that much.
//   kNone:   as kBatch without the periodic fsync: a power loss or kernel
//            crash may lose every write not yet in a table file.
// Whatever the policy, Database::write_durable fsyncs what a restart needs.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace zstore::storage {

enum class SyncPolicy { kNone, kBatch, kAlways };

// Who makes one write durable: the policy (kAlways fsyncs it before the
// write returns), or its caller, who syncs the log (Database::sync_wal,
// server/jobs/wal_sync_queue.h) before it announces the write.
enum class WriteSync : std::uint8_t { kByPolicy, kByCaller };

std::optional<SyncPolicy> parse_sync_policy(std::string_view text);
std::string_view to_string(SyncPolicy policy);

}  // namespace zstore::storage
