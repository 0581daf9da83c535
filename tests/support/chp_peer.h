// Moved to tools/harness/chp_peer.h (shared by the tests and zstore-torture);
// tests keep including it here.
#pragma once

#include "tools/harness/chp_peer.h"
