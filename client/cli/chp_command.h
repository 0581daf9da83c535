// zstore-cli chp: get, set, del, watch and snapshot against CHP servers,
// through the clone client. See chp_usage() for the exact syntax and output.
#pragma once

#include <string>
#include <vector>

namespace zstore::cli {

// Runs `zstore-cli chp ARGS...`; returns the process exit code.
int run_chp(const std::vector<std::string>& args);

}  // namespace zstore::cli
