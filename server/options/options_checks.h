// The checks of zstored's options once parsed: finish() converts the raw
// values (sync policy, ports, lists of towers, peers and upstreams) and
// checks every option and their combinations (HA, replica, security, the
// exposure beyond loopback). Internal to server/options.
#pragma once

#include <optional>
#include <string>

#include "server/options/options.h"
#include "server/options/options_flags.h"

namespace zstore::server {

// Fills what raw holds into o; the first problem found, as the message to
// print, or nullopt when o is ready to run.
std::optional<std::string> finish(ServerOptions& o, const RawFlags& raw);

}  // namespace zstore::server
