// Dafka messages (rfc 46 as actually sent by zeromq/dafka; see
// specs/DAFKA-WIRE.md): one plain struct per message, no wire logic.
//
// Every message has a `topic`: the NUL-terminated prefix of frame 0 that
// ZeroMQ subscriptions match on. What it holds depends on the message (topic
// name, partition, or the address of the receiving node); each struct says.
// Addresses and partitions are node UUIDs as 32 uppercase hex characters.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace zstore::protocol::dafka {

// The message id is the first byte of frame 0.
enum class MsgId : char {
  kRecord = 'M',
  kDirectRecord = 'D',
  kFetch = 'F',
  kAck = 'K',
  kHead = 'H',
  kDirectHead = 'E',
  kGetHeads = 'G',
  kConsumerHello = 'W',
  kStoreHello = 'L',
};

// The RFC's name of an id ("RECORD", "DIRECT-RECORD", ...); "UNKNOWN" for a
// value outside the enum.
std::string_view to_string(MsgId id);

// Producer -> consumers and stores. Frame 1 carries the content.
struct Record {
  static constexpr MsgId kId = MsgId::kRecord;
  std::string topic;      // topic name
  std::string partition;  // producer address
  std::string subject;    // topic name again
  std::uint64_t sequence = 0;
  std::string content;  // any bytes, may be empty
  bool operator==(const Record&) const = default;
};

// Producer or store -> one consumer or store, answering a FETCH.
struct DirectRecord {
  static constexpr MsgId kId = MsgId::kDirectRecord;
  std::string topic;      // address of the requester
  std::string partition;  // producer address
  std::string subject;    // topic name
  std::uint64_t sequence = 0;
  std::string content;
  bool operator==(const DirectRecord&) const = default;
};

// Ask the owner of a partition (producer or store) for `count` records
// starting at `sequence`.
struct Fetch {
  static constexpr MsgId kId = MsgId::kFetch;
  std::string topic;    // partition (producer address)
  std::string address;  // sender, where DIRECT-RECORDs go
  std::string subject;  // topic name
  std::uint64_t sequence = 0;
  std::uint32_t count = 0;
  bool operator==(const Fetch&) const = default;
};

// Store -> producer: records up to `sequence` are stored (cumulative).
struct Ack {
  static constexpr MsgId kId = MsgId::kAck;
  std::string topic;    // partition (producer address)
  std::string subject;  // topic name
  std::uint64_t sequence = 0;
  bool operator==(const Ack&) const = default;
};

// Producer -> all: the last sequence it published in its partition.
struct Head {
  static constexpr MsgId kId = MsgId::kHead;
  std::string topic;      // topic name
  std::string partition;  // producer address
  std::string subject;    // topic name
  std::uint64_t sequence = 0;
  bool operator==(const Head&) const = default;
};

// Producer or store -> one consumer: a partition head it asked about.
struct DirectHead {
  static constexpr MsgId kId = MsgId::kDirectHead;
  std::string topic;      // consumer address
  std::string partition;  // producer address
  std::string subject;    // topic name
  std::uint64_t sequence = 0;
  bool operator==(const DirectHead&) const = default;
};

// Consumer -> stores and producers: send me the heads of this topic.
struct GetHeads {
  static constexpr MsgId kId = MsgId::kGetHeads;
  std::string topic;    // topic name asked about
  std::string address;  // consumer address
  bool operator==(const GetHeads&) const = default;
};

// Consumer -> one store, answering STORE-HELLO with its subjects.
struct ConsumerHello {
  static constexpr MsgId kId = MsgId::kConsumerHello;
  std::string topic;                  // store address
  std::string address;                // consumer address
  std::vector<std::string> subjects;  // may be empty
  bool operator==(const ConsumerHello&) const = default;
};

// Store -> one consumer, sent when the consumer subscribes to L+address.
struct StoreHello {
  static constexpr MsgId kId = MsgId::kStoreHello;
  std::string topic;    // consumer address
  std::string address;  // store address
  bool operator==(const StoreHello&) const = default;
};

using Message = std::variant<Record, DirectRecord, Fetch, Ack, Head, DirectHead, GetHeads, ConsumerHello, StoreHello>;

// The id of whichever message `msg` holds.
MsgId id_of(const Message& msg);

}  // namespace zstore::protocol::dafka
