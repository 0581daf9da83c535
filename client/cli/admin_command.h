// zstore-cli admin: talks to a running zstored's HTTP side (--http-port):
//   health            GET /healthz; exit 0 when healthy, 1 otherwise (the
//                     container HEALTHCHECK)
//   checkpoint NAME   POST /admin/checkpoint: the server writes a RocksDB
//                     checkpoint into NAME under its --backup-dir; exit 1 when refused
//                     (exists, bad name, no --backup-dir, 401) or on any failure.
// --token-file F sends the token of the server's --http-token-file.
// Exit 2 on a bad command line.
#pragma once

#include <string>
#include <vector>

namespace zstore::cli {

// Runs `zstore-cli admin ARGS...`; returns the process exit code.
int run_admin(const std::vector<std::string>& args);

}  // namespace zstore::cli
