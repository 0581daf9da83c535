// zstored's flags as Boost.Program_options describes them: describe() binds
// each flag to its ServerOptions field, or to RawFlags for the values
// finish() (options_checks.h) still converts (sync policy, ports, lists).
// Internal to server/options.
#pragma once

#include <boost/program_options.hpp>

#include <string>

#include "server/options/options.h"

namespace zstore::server {

struct RawFlags {
  std::string config;
  std::string sync = "always";
  std::string towers;
  std::string dafka_peers;
  std::string replica_of;
  unsigned chp_port = 5556, dafka_port = 5582, tower_port = 5580, http_port = 0;
};

// Every flag but the security ones, bound to o and raw (which must outlive it).
boost::program_options::options_description describe(ServerOptions& o, RawFlags& raw);
// The CURVE, ACL, HTTP token and backup flags, added to d.
void describe_security(boost::program_options::options_description& d, ServerOptions& o);

}  // namespace zstore::server
