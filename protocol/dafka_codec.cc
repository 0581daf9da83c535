#include "protocol/dafka_codec.h"

#include <limits>
#include <optional>
#include <stdexcept>
#include <utility>

#include "protocol/byte_order.h"
#include "protocol/dafka_reader.h"

namespace zstore::protocol::dafka {
namespace {

using K = DecodeErrorKind;

constexpr char kHexDigits[] = "0123456789ABCDEF";

std::optional<MsgId> msg_id_from_byte(char c) {
  switch (static_cast<MsgId>(c)) {
    case MsgId::kRecord:
    case MsgId::kDirectRecord:
    case MsgId::kFetch:
    case MsgId::kAck:
    case MsgId::kHead:
    case MsgId::kDirectHead:
    case MsgId::kGetHeads:
    case MsgId::kConsumerHello:
    case MsgId::kStoreHello:
      return static_cast<MsgId>(c);
  }
  return std::nullopt;
}

bool has_content_frame(MsgId id) { return id == MsgId::kRecord || id == MsgId::kDirectRecord; }

std::string byte_hex(char c) {
  auto b = static_cast<unsigned char>(c);
  return std::string("0x") + kHexDigits[b >> 4] + kHexDigits[b & 0xf];
}

// ---------------------------------------------------------------------------
// Encoding

class Writer {
 public:
  // Writes into *into (cleared, its capacity reused) or, without, into a
  // string of its own that take() hands over.
  Writer(MsgId id, std::string_view topic, std::string* into = nullptr)
      : name_(to_string(id)), out_(into ? *into : own_) {
    if (!is_valid_topic(topic)) {
      throw std::invalid_argument("dafka " + std::string(name_) + ": topic contains a NUL byte");
    }
    out_.clear();
    out_.reserve(topic.size() + 64);
    out_.push_back(static_cast<char>(id));
    out_.append(topic);
    out_.push_back('\0');
    out_.push_back(static_cast<char>(kVersion));
  }

  Writer& short_string(std::string_view s, std::string_view field) {
    if (!fits_short_string(s)) {
      throw std::length_error("dafka " + std::string(name_) + ": " + std::string(field) + " is " +
                              std::to_string(s.size()) + " bytes, a string field holds at most 255");
    }
    out_.push_back(static_cast<char>(s.size()));
    out_.append(s);
    return *this;
  }

  Writer& strings(const std::vector<std::string>& list, std::string_view field) {
    constexpr std::size_t kMax = std::numeric_limits<std::uint32_t>::max();
    if (list.size() > kMax) {
      throw std::length_error("dafka " + std::string(name_) + ": too many " + std::string(field));
    }
    put_be<std::uint32_t>(out_, static_cast<std::uint32_t>(list.size()));
    for (const auto& s : list) {
      if (s.size() > kMax) {
        throw std::length_error("dafka " + std::string(name_) + ": " + std::string(field) + " entry too long");
      }
      put_be<std::uint32_t>(out_, static_cast<std::uint32_t>(s.size()));
      out_.append(s);
    }
    return *this;
  }

  Writer& u64(std::uint64_t v) {
    put_be<std::uint64_t>(out_, v);
    return *this;
  }

  Writer& u32(std::uint32_t v) {
    put_be<std::uint32_t>(out_, v);
    return *this;
  }

  std::string take() { return std::move(out_); }

 private:
  std::string_view name_;
  std::string own_;
  std::string& out_;
};

// Shared by RECORD and DIRECT-RECORD.
template <typename R>
Frames encode_record(const R& msg) {
  Writer w(R::kId, msg.topic);
  w.short_string(msg.partition, "partition").short_string(msg.subject, "subject").u64(msg.sequence);
  Frames frames;
  frames.reserve(2);
  frames.push_back(w.take());
  frames.push_back(msg.content);
  return frames;
}

// Shared by HEAD and DIRECT-HEAD.
template <typename H>
Frames encode_head(const H& msg) {
  Writer w(H::kId, msg.topic);
  w.short_string(msg.partition, "partition").short_string(msg.subject, "subject").u64(msg.sequence);
  return {w.take()};
}

// ---------------------------------------------------------------------------
// Decoding (fields read by Reader, dafka_reader.h)

template <typename R>
R read_record(Reader& r, std::string topic, std::string_view content) {
  R msg;
  msg.topic = std::move(topic);
  msg.partition = r.short_string("partition");
  msg.subject = r.short_string("subject");
  msg.sequence = r.number<std::uint64_t>("sequence");
  msg.content = std::string(content);
  return msg;
}

template <typename H>
H read_head(Reader& r, std::string topic) {
  H msg;
  msg.topic = std::move(topic);
  msg.partition = r.short_string("partition");
  msg.subject = r.short_string("subject");
  msg.sequence = r.number<std::uint64_t>("sequence");
  return msg;
}

Message read_body(MsgId id, Reader& r, std::string topic, FrameViews frames, const Limits& limits) {
  switch (id) {
    case MsgId::kRecord:
      return read_record<Record>(r, std::move(topic), frames[1]);
    case MsgId::kDirectRecord:
      return read_record<DirectRecord>(r, std::move(topic), frames[1]);
    case MsgId::kFetch: {
      Fetch msg;
      msg.topic = std::move(topic);
      msg.address = r.short_string("address");
      msg.subject = r.short_string("subject");
      msg.sequence = r.number<std::uint64_t>("sequence");
      msg.count = r.number<std::uint32_t>("count");
      return msg;
    }
    case MsgId::kAck: {
      Ack msg;
      msg.topic = std::move(topic);
      msg.subject = r.short_string("subject");
      msg.sequence = r.number<std::uint64_t>("sequence");
      return msg;
    }
    case MsgId::kHead:
      return read_head<Head>(r, std::move(topic));
    case MsgId::kDirectHead:
      return read_head<DirectHead>(r, std::move(topic));
    case MsgId::kGetHeads:
      return GetHeads{std::move(topic), r.short_string("address")};
    case MsgId::kConsumerHello: {
      ConsumerHello msg;
      msg.topic = std::move(topic);
      msg.address = r.short_string("address");
      msg.subjects = r.strings("subjects", limits.max_subjects);
      return msg;
    }
    case MsgId::kStoreHello:
      return StoreHello{std::move(topic), r.short_string("address")};
  }
  return Message{};  // unreachable: callers pass a known id
}

}  // namespace

std::string_view to_string(MsgId id) {
  switch (id) {
    case MsgId::kRecord:
      return "RECORD";
    case MsgId::kDirectRecord:
      return "DIRECT-RECORD";
    case MsgId::kFetch:
      return "FETCH";
    case MsgId::kAck:
      return "ACK";
    case MsgId::kHead:
      return "HEAD";
    case MsgId::kDirectHead:
      return "DIRECT-HEAD";
    case MsgId::kGetHeads:
      return "GET-HEADS";
    case MsgId::kConsumerHello:
      return "CONSUMER-HELLO";
    case MsgId::kStoreHello:
      return "STORE-HELLO";
  }
  return "UNKNOWN";
}

MsgId id_of(const Message& msg) {
  return std::visit([](const auto& m) { return std::decay_t<decltype(m)>::kId; }, msg);
}

bool fits_short_string(std::string_view s) { return s.size() <= kMaxShortString; }

bool is_valid_topic(std::string_view topic) { return topic.find('\0') == std::string_view::npos; }

Frames encode(const Message& msg) {
  return std::visit([](const auto& m) { return encode(m); }, msg);
}

Frames encode(const Record& msg) { return encode_record(msg); }

Frames encode(const DirectRecord& msg) { return encode_record(msg); }

void encode_direct_record_header(std::string_view topic, std::string_view partition, std::string_view subject,
                                 std::uint64_t sequence, std::string* out) {
  Writer w(DirectRecord::kId, topic, out);
  w.short_string(partition, "partition").short_string(subject, "subject").u64(sequence);
}

void set_direct_record_sequence(std::uint64_t sequence, std::string* header) {
  if (header->size() < sizeof sequence) throw std::invalid_argument("dafka DIRECT-RECORD: not a header");
  store_be<std::uint64_t>(header->data() + header->size() - sizeof sequence, sequence);
}

Frames encode(const Fetch& msg) {
  Writer w(Fetch::kId, msg.topic);
  w.short_string(msg.address, "address").short_string(msg.subject, "subject").u64(msg.sequence).u32(msg.count);
  return {w.take()};
}

Frames encode(const Ack& msg) {
  Writer w(Ack::kId, msg.topic);
  w.short_string(msg.subject, "subject").u64(msg.sequence);
  return {w.take()};
}

Frames encode(const Head& msg) { return encode_head(msg); }

Frames encode(const DirectHead& msg) { return encode_head(msg); }

Frames encode(const GetHeads& msg) {
  Writer w(GetHeads::kId, msg.topic);
  w.short_string(msg.address, "address");
  return {w.take()};
}

Frames encode(const ConsumerHello& msg) {
  Writer w(ConsumerHello::kId, msg.topic);
  w.short_string(msg.address, "address").strings(msg.subjects, "subjects");
  return {w.take()};
}

Frames encode(const StoreHello& msg) {
  Writer w(StoreHello::kId, msg.topic);
  w.short_string(msg.address, "address");
  return {w.take()};
}

namespace {

// What decode() checks before the body: the id, the frame count and sizes,
// the topic and the version. body_at: where the body of frame 0 starts.
struct Envelope {
  MsgId id;
  std::string name;
  std::string_view topic;
  std::size_t body_at;
};

DecodeResult<Envelope> read_envelope(FrameViews frames, const Limits& limits) {
  if (frames.empty()) return decode_error(K::kFrameCount, "dafka message with no frames");
  const std::string_view head = frames[0];
  if (head.empty()) return decode_error(K::kTruncated, "dafka frame 0 is empty (no message id)");

  const std::optional<MsgId> id = msg_id_from_byte(head[0]);
  if (!id) return decode_error(K::kUnknownId, "unknown dafka message id " + byte_hex(head[0]));
  std::string name(to_string(*id));

  const std::size_t want_frames = has_content_frame(*id) ? 2 : 1;
  if (frames.size() != want_frames) {
    return decode_error(K::kFrameCount, name + ": expected " + std::to_string(want_frames) + " frames, got " +
                                            std::to_string(frames.size()));
  }
  if (head.size() > limits.max_frame_bytes) {
    return decode_error(K::kTooLarge, name + ": frame 0 of " + std::to_string(head.size()) + " bytes exceeds limit " +
                                          std::to_string(limits.max_frame_bytes));
  }
  if (want_frames == 2 && frames[1].size() > limits.max_content_bytes) {
    return decode_error(K::kTooLarge, name + ": content of " + std::to_string(frames[1].size()) +
                                          " bytes exceeds limit " + std::to_string(limits.max_content_bytes));
  }

  const std::size_t nul = head.find('\0', 1);
  if (nul == std::string_view::npos) {
    return decode_error(K::kTruncated, name + ": topic is not NUL-terminated");
  }
  if (nul + 1 >= head.size()) {
    return decode_error(K::kTruncated, name + ": version byte missing after topic");
  }
  const auto version = static_cast<unsigned char>(head[nul + 1]);
  if (version != kVersion) {
    return decode_error(K::kBadVersion, name + ": version " + std::to_string(version) + ", expected 1");
  }
  return Envelope{*id, std::move(name), head.substr(1, nul - 1), nul + 2};
}

}  // namespace

DecodeResult<Message> decode(FrameViews frames, const Limits& limits) {
  auto envelope = read_envelope(frames, limits);
  if (!envelope) return envelope.error();
  const Envelope& e = envelope.value();
  Reader reader(frames[0], e.body_at, e.name);
  Message msg = read_body(e.id, reader, std::string(e.topic), frames, limits);
  reader.finish();
  if (reader.failed()) return std::move(reader).error();
  return msg;
}

DecodeResult<Borrowed> decode_borrowing(FrameViews frames, const Limits& limits) {
  auto envelope = read_envelope(frames, limits);
  if (!envelope) return envelope.error();
  const Envelope& e = envelope.value();
  Reader reader(frames[0], e.body_at, e.name);
  Borrowed out;
  if (has_content_frame(e.id)) {
    RecordView v{e.id, e.topic, {}, {}, 0, frames[1]};
    v.partition = reader.short_view("partition");
    v.subject = reader.short_view("subject");
    v.sequence = reader.number<std::uint64_t>("sequence");
    out = v;
  } else {
    out = read_body(e.id, reader, std::string(e.topic), frames, limits);
  }
  reader.finish();
  if (reader.failed()) return std::move(reader).error();
  return out;
}

}  // namespace zstore::protocol::dafka
