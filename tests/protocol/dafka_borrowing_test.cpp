// dafka::decode_borrowing: RECORD and DIRECT-RECORD as views into the
// frames, with exactly decode()'s checks and errors.
#include <boost/test/unit_test.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "protocol/dafka_codec.h"

namespace dafka = zstore::protocol::dafka;
using zstore::protocol::Frames;

namespace {

const std::string kAddrA = "0123456789ABCDEF0123456789ABCDEF";
const std::string kAddrB = "FEDCBA9876543210FEDCBA9876543210";

std::vector<std::string_view> views(const Frames& frames) { return {frames.begin(), frames.end()}; }

bool inside(std::string_view part, std::string_view whole) {
  return part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size();
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_record_is_decoded_into_views_of_its_frames) {
  const std::string content("a\0b\xff", 4);
  for (const dafka::Message& msg : {dafka::Message(dafka::Record{"hello", kAddrA, "topic", 7, content}),
                                    dafka::Message(dafka::DirectRecord{kAddrB, kAddrA, "topic", 8, content})}) {
    Frames frames = dafka::encode(msg);
    auto v = views(frames);
    auto owned = dafka::decode(v);
    BOOST_REQUIRE(owned);
    auto borrowed = dafka::decode_borrowing(v);
    BOOST_REQUIRE(borrowed);
    const auto* r = std::get_if<dafka::RecordView>(&*borrowed);
    BOOST_REQUIRE(r != nullptr);
    BOOST_CHECK(r->id == dafka::id_of(*owned));
    std::visit(
        [&](const auto& m) {
          if constexpr (requires { m.content; }) {
            BOOST_CHECK_EQUAL(r->topic, m.topic);
            BOOST_CHECK_EQUAL(r->partition, m.partition);
            BOOST_CHECK_EQUAL(r->subject, m.subject);
            BOOST_CHECK_EQUAL(r->sequence, m.sequence);
            BOOST_CHECK(r->content == m.content);
          } else {
            BOOST_FAIL("not a record");
          }
        },
        *owned);
    BOOST_CHECK(inside(r->partition, v[0]) && inside(r->subject, v[0]) && inside(r->topic, v[0]));
    BOOST_CHECK(r->content.data() == v[1].data());  // not copied
  }
}

BOOST_AUTO_TEST_CASE(other_messages_come_back_as_decode_returns_them) {
  for (const dafka::Message& msg : {dafka::Message(dafka::Fetch{kAddrA, kAddrB, "hello", 9, 3}),
                                    dafka::Message(dafka::Head{"hello", kAddrA, "hello", 11}),
                                    dafka::Message(dafka::ConsumerHello{kAddrA, kAddrB, {"a", "b"}})}) {
    Frames frames = dafka::encode(msg);
    auto borrowed = dafka::decode_borrowing(views(frames));
    BOOST_REQUIRE(borrowed);
    const auto* m = std::get_if<dafka::Message>(&*borrowed);
    BOOST_REQUIRE(m != nullptr);
    BOOST_CHECK(*m == msg);
  }
}

BOOST_AUTO_TEST_CASE(malformed_records_fail_as_decode_fails) {
  const Frames full = dafka::encode(dafka::Record{"hello", kAddrA, "topic", 7, "content"});
  std::vector<Frames> bad;
  for (std::size_t len = 0; len < full[0].size(); ++len) {
    bad.push_back(full);
    bad.back()[0].resize(len);
  }
  bad.push_back(full);
  bad.back()[0] += "x";  // trailing byte
  bad.push_back(full);
  bad.back().push_back("extra frame");
  bad.push_back({full[0]});  // content frame missing
  for (const auto& frames : bad) {
    auto v = views(frames);
    auto owned = dafka::decode(v);
    auto borrowed = dafka::decode_borrowing(v);
    BOOST_REQUIRE(!owned.ok());
    BOOST_REQUIRE(!borrowed.ok());
    BOOST_CHECK(borrowed.error().kind == owned.error().kind);
    BOOST_CHECK_EQUAL(borrowed.error().detail, owned.error().detail);
  }
  dafka::Limits small;
  small.max_content_bytes = 3;
  auto too_large = dafka::decode_borrowing(views(full), small);
  BOOST_REQUIRE(!too_large.ok());
  BOOST_CHECK(too_large.error().kind == zstore::protocol::DecodeErrorKind::kTooLarge);
}
