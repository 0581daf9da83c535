// zstore-cli admin: talks to a running zstored's HTTP side (--http-port):
//   health            GET /healthz; exit 0 when healthy, 1 otherwise (the
//                     container HEALTHCHECK)
//   checkpoint DIR    POST /admin/checkpoint: the server writes a RocksDB
//                     checkpoint into DIR on ITS host; exit 1 when refused
//                     (DIR exists, bad parent) or on any failure.
// Exit 2 on a bad command line.
#pragma once

#include <string>
#include <vector>

namespace zstore::cli {

// Runs `zstore-cli admin ARGS...`; returns the process exit code.
int run_admin(const std::vector<std::string>& args);

}  // namespace zstore::cli
