// Fuzz target: zstored's message handlers (CHP collector and snapshot port,
// Dafka store input) on a temp store with storage faults, through
// ServerHarness (server_harness.h, which states the input format and the
// invariants checked). The harness is replaced every few thousand inputs so
// the map, and with it each full snapshot, stays small.
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "tests/fuzz/server_harness.h"

namespace {

zstore::fuzz::ServerHarness* harness = nullptr;

void shut_down() {
  delete harness;
  harness = nullptr;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (harness != nullptr && harness->inputs() >= 5000) shut_down();
  if (harness == nullptr) {
    harness = new zstore::fuzz::ServerHarness();
    static bool registered = (std::atexit(shut_down), true);
    (void)registered;
  }
  harness->run(data, size);
  return 0;
}
