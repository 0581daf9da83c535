// WRITE? and WRITTEN (protocol/chp_writes.h): round trips, the precondition
// kept out of the stored properties, and malformed requests refused.
#include "protocol/chp_writes.h"

#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

namespace chp = zstore::protocol::chp;
using Pre = chp::Precondition;

namespace {

std::vector<std::string_view> views(const zstore::protocol::Frames& frames) {
  return std::vector<std::string_view>(frames.begin(), frames.end());
}

const std::string kUuid(16, 'u');

}  // namespace

BOOST_AUTO_TEST_CASE(a_write_round_trips_with_each_precondition) {
  for (Pre pre : {Pre{}, Pre{Pre::Kind::kSequence, 42}, Pre{Pre::Kind::kSequence, 0}, Pre{Pre::Kind::kAbsent, 0}}) {
    auto frames = chp::encode_write("/k", kUuid, "ttl=5\n", "v", pre);
    BOOST_TEST(frames.size() == 6u);
    auto v = views(frames);
    auto req = chp::decode_write(v);
    BOOST_REQUIRE(req.ok());
    BOOST_TEST(req->key == "/k");
    BOOST_TEST(req->uuid == kUuid);
    BOOST_TEST(req->body == "v");
    BOOST_TEST(req->ttl_seconds == 5u);
    BOOST_TEST(req->properties == "ttl=5\n");  // the precondition is not stored or published
    BOOST_TEST((req->precondition == pre));
  }
}

BOOST_AUTO_TEST_CASE(a_write_encoded_into_used_frames_keeps_nothing_of_the_last) {
  zstore::protocol::Frames out{"a", "b", "c", "d", "e", "f", "g"};  // more frames than a WRITE?
  chp::encode_write("/a/long/key", std::string(16, 'x'), "ttl=99\n", std::string(1000, 'v'),
                    Pre{Pre::Kind::kSequence, 1234567890123}, out);
  BOOST_TEST(out[4] == "ttl=99\nif-seq=1234567890123\n");
  chp::encode_write("/k", kUuid, "ttl=5\n", "v", Pre{Pre::Kind::kAbsent, 0}, out);
  const zstore::protocol::Frames expected{"WRITE?", "/k", std::string(8, '\0'), kUuid, "ttl=5\nif-absent=1\n", "v"};
  BOOST_TEST(out == expected);
  chp::encode_write("/k", kUuid, "", "", Pre{Pre::Kind::kSequence, 7}, out);
  BOOST_TEST(out[4] == "if-seq=7\n");
  BOOST_TEST(out[5].empty());  // a delete
}

BOOST_AUTO_TEST_CASE(malformed_writes_are_refused) {
  auto bad = [](zstore::protocol::Frames frames) {
    auto v = views(frames);
    return !chp::decode_write(v).ok();
  };
  auto with_props = [](std::string props, std::string body = "v") {
    return zstore::protocol::Frames{"WRITE?", "/k", chp::encode_sequence(0), kUuid, std::move(props), std::move(body)};
  };
  BOOST_TEST(bad(with_props("if-seq=1\nif-absent=1\n")));  // two preconditions
  BOOST_TEST(bad(with_props("if-seq=1\nif-seq=2\n")));
  BOOST_TEST(bad(with_props("if-seq=-1\n")));
  BOOST_TEST(bad(with_props("if-seq=12x\n")));
  BOOST_TEST(bad(with_props("if-seq=\n")));
  BOOST_TEST(bad(with_props("if-seq=99999999999999999999999\n")));
  BOOST_TEST(bad(with_props("if-absent=yes\n")));
  BOOST_TEST(bad(with_props("if-absent=1\n", "")));                         // a delete of what must not exist
  BOOST_TEST(bad({"WRITE?", "/k", chp::encode_sequence(0), "", "", "v"}));  // a retry needs a uuid
  BOOST_TEST(bad({"WRITE?", "KTHXBAI", chp::encode_sequence(0), kUuid, "", "v"}));
  BOOST_TEST(bad({"WRITE?", "/k", chp::encode_sequence(0), kUuid, ""}));
  BOOST_TEST(bad({"ICANHAZ?", "/k", chp::encode_sequence(0), kUuid, "", "v"}));
}

BOOST_AUTO_TEST_CASE(an_outcome_round_trips_and_a_bad_one_is_refused) {
  using K = chp::WriteOutcome::Kind;
  for (K kind : {K::kApplied, K::kRefused, K::kFailed, K::kNotActive, K::kUnknown}) {
    chp::WriteOutcome o{kind, kUuid, 77, kind == K::kFailed ? "why" : ""};
    auto frames = chp::encode_written(o);
    auto v = views(frames);
    auto back = chp::decode_written(v);
    BOOST_REQUIRE(back.ok());
    BOOST_TEST((*back == o));
  }
  BOOST_TEST(std::string(chp::to_string(K::kUnknown)) == "unknown");
  zstore::protocol::Frames unknown{"WRITTEN", kUuid, "maybe", chp::encode_sequence(1), ""};
  auto v = views(unknown);
  BOOST_TEST(!chp::decode_written(v).ok());
  zstore::protocol::Frames short_seq{"WRITTEN", kUuid, "applied", "1234", ""};
  auto w = views(short_seq);
  BOOST_TEST(!chp::decode_written(w).ok());
}

// The views a server sends are the bytes encode_written gives.
BOOST_AUTO_TEST_CASE(written_frames_are_encode_written_as_views) {
  using K = chp::WriteOutcome::Kind;
  for (const chp::WriteOutcome& o : {chp::WriteOutcome{K::kApplied, std::string(16, 'u'), 0x0102030405060708ull, ""},
                                     chp::WriteOutcome{K::kUnknown, std::string(16, 'v'), 0, "the fsync failed"}}) {
    chp::WrittenFrames views(o);
    auto encoded = chp::encode_written(o);
    BOOST_REQUIRE_EQUAL(views.frames().size(), encoded.size());
    for (std::size_t i = 0; i < encoded.size(); ++i) BOOST_TEST(views.frames()[i] == encoded[i], "frame " << i);
    auto decoded = chp::decode_written(views.frames());
    BOOST_REQUIRE(decoded.ok());
    BOOST_TEST((decoded.value() == o));
  }
}
