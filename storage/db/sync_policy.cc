#include "storage/db/sync_policy.h"

namespace zstore::storage {

std::optional<SyncPolicy> parse_sync_policy(std::string_view text) {
  if (text == "none") return SyncPolicy::kNone;
  if (text == "batch") return SyncPolicy::kBatch;
  if (text == "always") return SyncPolicy::kAlways;
  return std::nullopt;
}

std::string_view to_string(SyncPolicy policy) {
  switch (policy) {
    case SyncPolicy::kNone:
      return "none";
    case SyncPolicy::kBatch:
      return "batch";
    case SyncPolicy::kAlways:
      return "always";
  }
  return "unknown";
}

}  // namespace zstore::storage
