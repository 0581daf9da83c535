// zstore-cli dafka: produce records from stdin and consume them to stdout
// through the Dafka client (client/dafka_producer.h, dafka_consumer.h).
#pragma once

#include <string>
#include <vector>

namespace zstore::cli {

// Runs `zstore-cli dafka ARGS...`; returns the process exit code.
int run_dafka(const std::vector<std::string>& args);

}  // namespace zstore::cli
