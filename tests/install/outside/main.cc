// outside CHP_ENDPOINT TOWER_ENDPOINT: sets a key through the clone client
// and reads it back from the server's publication, then publishes a Dafka
// record, waits for a store's ACK and reads it back with a consumer.
// Prints "outside: ok" and exits 0, or names the failed step and exits 1.
#include <zstore/client/clone_client.h>
#include <zstore/client/dafka_consumer.h>
#include <zstore/client/dafka_producer.h>

#include <chrono>
#include <iostream>
#include <string>

namespace zc = zstore::client;
using namespace std::chrono_literals;

static int fail(const std::string& step) {
  std::cerr << "outside: " << step << " failed\n";
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 3) return fail("usage: outside CHP_ENDPOINT TOWER_ENDPOINT;");
  const std::string chp = argv[1], tower = argv[2];

  zc::Options options;
  options.servers = {chp};
  zc::CloneClient clone(options);
  if (!clone.wait_synced(20s)) return fail("clone snapshot");
  std::string uuid = clone.set("/outside/key", "from-outside");
  if (!clone.wait_published(uuid, 20s)) return fail("clone set");
  if (clone.get("/outside/key").value_or("") != "from-outside") return fail("clone get");

  zc::dafka::ProducerOptions producer_options;
  producer_options.node.towers = {tower};
  zc::dafka::Producer producer(producer_options);
  producer.publish("outside-topic", "record-from-outside");
  if (!producer.flush(30s)) return fail("dafka produce (no ACK)");

  zc::dafka::ConsumerOptions consumer_options;
  consumer_options.node.towers = {tower};
  consumer_options.reset = zc::dafka::ConsumerOptions::Reset::kEarliest;
  zc::dafka::Consumer consumer(consumer_options);
  consumer.subscribe({"outside-topic"});
  // Other producers' records of the topic (an earlier run) may come first.
  auto deadline = std::chrono::steady_clock::now() + 30s;
  bool found = false;
  while (!found && std::chrono::steady_clock::now() < deadline) {
    auto record = consumer.poll(1s);
    found = record && record->partition == producer.address() && record->content == "record-from-outside";
  }
  if (!found) return fail("dafka consume");
  std::cout << "outside: ok\n";
  return 0;
}
