// FdBudget: how many connections zstored may accept so that, with them all
// open, the database still has its file descriptors (storage::kDatabaseFds)
// and the process its own (kProcessFds). raise_fd_limit() lifts
// RLIMIT_NOFILE's soft limit to the hard limit; plan_connections() derives
// the total cap from it, or refuses a configured cap that does not fit.
#pragma once

#include <cstdint>
#include <string>

#include "storage/db/database.h"

namespace zstore::server {

// ZeroMQ's own fds (an eventfd per socket, epoll per I/O thread), the HTTP
// server's listener, log files, and connections over a cap accepted but not
// yet closed by libzmq. The HTTP connections (--http-max-connections) are
// kept on top.
inline constexpr std::uint64_t kProcessFds = 256;
inline constexpr std::uint64_t kReservedFds = storage::kDatabaseFds + kProcessFds;

// Raises the soft RLIMIT_NOFILE to the hard one; the soft limit in force
// after (the old one if raising failed).
std::uint64_t raise_fd_limit();

struct ConnectionPlan {
  std::uint64_t total = 0;  // the cap on connections across every port
  std::string error;        // not empty: the configured cap does not fit
};

// requested 0: the soft limit less kReservedFds and http_fds (the HTTP
// server's cap, 0 without HTTP). A requested cap above that, or no room
// at all, is an error naming the numbers (zstored refuses to start).
ConnectionPlan plan_connections(std::uint64_t soft_limit, std::uint64_t requested, std::uint64_t http_fds);

}  // namespace zstore::server
