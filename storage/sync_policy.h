// SyncPolicy: when the write-ahead log reaches stable storage.
//   kNone:   every batch is written to the OS before it is acknowledged, so
//            a killed server loses nothing; a power loss or kernel crash may
//            lose the most recent writes.
//   kBatch:  as kNone, plus the log is fsynced every sync interval
//            (default 100 ms): a power loss loses at most that much.
//   kAlways: every batch is fsynced before it is acknowledged: nothing
//            acknowledged is ever lost.
#pragma once

#include <optional>
#include <string_view>

namespace zstore::storage {

enum class SyncPolicy { kNone, kBatch, kAlways };

std::optional<SyncPolicy> parse_sync_policy(std::string_view text);
std::string_view to_string(SyncPolicy policy);

}  // namespace zstore::storage
