// zstore-cli keygen NAME [--dir DIR]: makes a CURVE key pair and writes it
// as ZeroMQ certificate files DIR/NAME.key (public: give it to the other
// side, e.g. into a server's --curve-allow directory) and DIR/NAME.key_secret
// (secret, mode 0600), the format czmq and pyzmq read and write. Prints the
// public key. Never overwrites a file: exit 1 if either exists or on any
// write error, 2 on a bad command line or NAME.
#pragma once

#include <string>
#include <vector>

namespace zstore::cli {

int run_keygen(const std::vector<std::string>& args);

}  // namespace zstore::cli
