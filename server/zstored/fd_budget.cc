#include "server/zstored/fd_budget.h"

#include <sys/resource.h>

namespace zstore::server {

std::uint64_t raise_fd_limit() {
  rlimit l{};
  if (getrlimit(RLIMIT_NOFILE, &l) != 0) return 0;
  if (l.rlim_cur != l.rlim_max) {
    rlimit raised = l;
    raised.rlim_cur = l.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) l = raised;
  }
  return l.rlim_cur == RLIM_INFINITY ? UINT64_MAX : static_cast<std::uint64_t>(l.rlim_cur);
}

ConnectionPlan plan_connections(std::uint64_t soft_limit, std::uint64_t requested, std::uint64_t http_fds) {
  ConnectionPlan plan;
  const std::uint64_t reserved = kReservedFds + http_fds;
  std::uint64_t room = soft_limit > reserved ? soft_limit - reserved : 0;
  if (requested > room || room == 0) {
    plan.error = "--max-connections " + std::to_string(requested) + ", the " + std::to_string(kReservedFds) +
                 " file descriptors kept for the database and the process and the " + std::to_string(http_fds) +
                 " of --http-max-connections need a file descriptor limit of at "
                 "least " +
                 std::to_string((requested ? requested : 1) + reserved) + " (RLIMIT_NOFILE is " +
                 std::to_string(soft_limit) + ": raise LimitNOFILE or ulimit -n)";
    return plan;
  }
  plan.total = requested != 0 ? requested : room;
  return plan;
}

}  // namespace zstore::server
