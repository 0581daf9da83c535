// DafkaStore's consumer side: FETCH answered from the log (pumped a slice
// a turn by pump_fetches, in dafka_store.cc), the partition heads a consumer asks for, and STORE-HELLO to a consumer
// that subscribes to it.
#include <algorithm>

#include "server/dafka/dafka_store.h"
#include "server/reactor/zmq_frames.h"

namespace zstore::server {

namespace dafka = protocol::dafka;

void DafkaStore::on_fetch(dafka::Fetch&& fetch) {
  if (fetch.count == 0 || !log_.known(fetch.subject, fetch.topic)) return;
  std::uint32_t count = std::min(fetch.count, config_.max_fetch_count);
  // Below the floor, retention deleted the records: answered from the floor
  // on (the requester sees the gap, as Kafka's auto.offset.reset=earliest).
  std::uint64_t from = std::max(fetch.sequence, log_.floor(fetch.subject, fetch.topic));
  auto cursor = log_.read(fetch.subject, fetch.topic, from, count);
  // An answer that stops short of our head (the requester's window, or our
  // cap) ends with a DIRECT-HEAD of it, so a consumer with a bounded FETCH
  // window (the reference one stops at 100,000) asks for the rest.
  protocol::Frames trailer;
  auto head = log_.head(fetch.subject, fetch.topic);
  if (head && from < *head && *head - from >= count) {
    trailer = dafka::encode(dafka::DirectHead{fetch.address, fetch.topic, fetch.subject, *head});
  }
  if (!fetches_.start(std::move(fetch.address), std::move(cursor), std::move(trailer))) {
    report_invalid("FETCH: too many FETCHes being answered");
    return;
  }
  metrics_.fetches_served.fetch_add(1, std::memory_order_relaxed);
}

void DafkaStore::send_heads(const std::string& consumer, const std::string& subject) {
  for (const auto& h : log_.heads(subject)) {
    if (send(dafka::encode(dafka::DirectHead{consumer, h.partition, subject, h.head}))) {
      metrics_.direct_heads_sent.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

void DafkaStore::on_subscriptions() {
  ReceivedMessage msg;
  for (int i = 0; i < 1024 && try_recv(xpub_, &msg); ++i) {
    if (msg.views.size() != 1 || msg.views[0].size() < 2 || msg.views[0][0] != 1) continue;
    std::string_view topic = msg.views[0].substr(1);
    if (topic[0] != static_cast<char>(dafka::MsgId::kStoreHello)) continue;
    std::string consumer(topic.substr(1));
    if (!dafka::is_valid_address(consumer)) continue;  // a prefix subscription, not a hello
    if (send(dafka::encode(dafka::StoreHello{consumer, address_}))) {
      metrics_.store_hellos_sent.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

}  // namespace zstore::server
