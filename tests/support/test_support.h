// Moved to tools/harness/harness.h (shared by the tests and zstore-torture);
// tests keep including it here.
#pragma once

#include "tools/harness/harness.h"
