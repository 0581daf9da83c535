// Moved to tools/harness/zstored.h (shared by the tests and zstore-torture);
// tests keep including it here.
#pragma once

#include "tools/harness/zstored.h"
