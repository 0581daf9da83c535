// zstored's signals: SIGINT and SIGTERM stop it, SIGHUP re-reads the CURVE
// allow list and the --acl rules (a bad file keeps what is in force).
#pragma once

#include "server/access/chp_acl.h"
#include "server/access/zap_handler.h"

namespace zstore::server {

// Blocks the handled signals in the calling thread and every thread it
// starts afterwards, so only wait_for_signal() receives them.
void block_handled_signals();

// Waits for SIGINT or SIGTERM (returned), reloading on each SIGHUP
// meanwhile; zap and acl may be null (nothing of theirs to reload).
int wait_for_signal(ZapHandler* zap, ChpAclFile* acl);

}  // namespace zstore::server
