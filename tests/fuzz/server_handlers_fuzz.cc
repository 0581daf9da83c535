// Fuzz target: zstored's message handlers (CHP collector and snapshot port,
// Dafka store input) on a temp store with storage faults, through
// ServerHarness (server_harness.h, which states the input format and the
// invariants checked). The harness is replaced every few thousand inputs so
// the map, and with it each full snapshot, stays small.
//
// The harness must be gone before exit() destroys static objects: RocksDB's
// background threads use function-local statics first built after the
// harness (a set of filter names, built at the first table open), and an
// atexit handler registered earlier runs after those are destroyed. A flush
// at exit then read a freed set (ASan, heap-use-after-free in a RocksDB
// thread). The standalone driver calls ZstoreFuzzShutdown before main
// returns; the atexit handler stays for libFuzzer, which has no such hook.
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

extern "C" void ZstoreFuzzShutdown() { shut_down(); }

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
