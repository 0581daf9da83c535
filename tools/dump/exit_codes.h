// Exit statuses of zstore-dump (documented in docs/dump.md).
#pragma once

namespace zstore::dump {

inline constexpr int kExitOk = 0;
inline constexpr int kExitReadError = 1;  // an I/O error (also while opening) or a corrupt entry
inline constexpr int kExitUsage = 2;      // bad flags, missing dir, not a zstore database, unknown layout

}  // namespace zstore::dump
