// How zstored's options become the settings of each part it starts: the
// CHP server, the Dafka store and the HTTP server.
// Pure translation, except where a setting names a file: those read it and
// throw std::runtime_error when it is unusable.
#pragma once

#include <memory>

#include "security/curve_socket.h"
#include "server/chp/chp_server.h"
#include "server/dafka/dafka_store.h"
#include "server/http/http_server.h"
#include "server/options/options.h"
#include "server/access/zap_handler.h"

namespace zstore::server {

// The --acl rules (null without --acl). Throws std::runtime_error on an
// unreadable or malformed file.
std::shared_ptr<ChpAclFile> open_acl(const ServerOptions& o);

ChpServerConfig chp_config(const ServerOptions& o, const security::SocketSecurity& security,
                           std::shared_ptr<ChpAclFile> acl);

// zap (may be null) names the peers' CURVE keys; without --towers the store
// beacons to our own embedded tower.
DafkaStoreConfig dafka_config(const ServerOptions& o, const security::SocketSecurity& security, const ZapHandler* zap);

// Throws std::runtime_error on an unusable token file or backup directory.
HttpConfig http_config(const ServerOptions& o);

}  // namespace zstore::server
