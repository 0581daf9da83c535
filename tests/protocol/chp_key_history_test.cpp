// HISTORY?, KVHIST and HISTORYEND (protocol/chp_key_history.h): round
// trips, and every truncation, excess frame and bad field refused.
#include "protocol/chp_key_history.h"

#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

namespace chp = zstore::protocol::chp;
using State = chp::KeyVersion::State;
using Outcome = chp::HistoryEnd::Outcome;

namespace {

std::vector<std::string_view> views(const zstore::protocol::Frames& frames) {
  return std::vector<std::string_view>(frames.begin(), frames.end());
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_history_request_round_trips) {
  for (std::uint64_t limit : {std::uint64_t{1}, std::uint64_t{64}, chp::kMaxHistoryLimit}) {
    chp::HistoryRequest req{"/a/key", limit};
    auto frames = chp::encode_history_request(req);
    BOOST_TEST(frames.size() == 3u);
    auto v = views(frames);
    auto got = chp::decode_history_request(v);
    BOOST_REQUIRE(got.ok());
    BOOST_TEST((*got == req));
  }
}

BOOST_AUTO_TEST_CASE(malformed_history_requests_are_refused) {
  auto bad = [](zstore::protocol::Frames frames) {
    auto v = views(frames);
    return !chp::decode_history_request(v).ok();
  };
  auto good = chp::encode_history_request({"/k", 5});
  for (std::size_t n = 0; n < good.size(); ++n) {  // every truncation
    BOOST_TEST(bad(zstore::protocol::Frames(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n))));
  }
  auto extra = good;
  extra.push_back("x");
  BOOST_TEST(bad(extra));
  BOOST_TEST(bad({"HISTORY?", "", chp::encode_sequence(5)}));    // empty key
  BOOST_TEST(bad({"HISTORY?", "/k", chp::encode_sequence(0)}));  // limit 0
  BOOST_TEST(bad({"HISTORY?", "/k", chp::encode_sequence(chp::kMaxHistoryLimit + 1)}));
  BOOST_TEST(bad({"HISTORY?", "/k", "1234567"}));  // 7-byte limit
  BOOST_TEST(bad({"HISTORY?", "/k", "123456789"}));
  BOOST_TEST(bad({"ICANHAZ?", "/k", chp::encode_sequence(5)}));
  chp::Limits small;
  small.max_key_bytes = 4;
  auto long_key = chp::encode_history_request({"/long", 5});
  auto v = views(long_key);
  BOOST_TEST(!chp::decode_history_request(v, small).ok());
}

BOOST_AUTO_TEST_CASE(versions_round_trip_in_each_state) {
  std::vector<chp::KeyVersion> all = {
      {"/k", 9, State::kSet, 1764666704123, 0, "ttl=0\n", "value"},
      {"/k", 8, State::kSet, 0, 1764666709000, "ttl=5\n", std::string("\0\xff", 2)},
      {"/k", 7, State::kDeleted, 1764666704000, 0, "", ""},
      {"/k", 6, State::kExpired, 1764666703000, 0, "", ""},
  };
  for (const auto& version : all) {
    auto frames = chp::encode_kvhist(version);
    BOOST_TEST(frames.size() == 8u);
    auto v = views(frames);
    auto got = chp::decode_kvhist(v);
    BOOST_REQUIRE(got.ok());
    BOOST_TEST((*got == version));
  }
}

BOOST_AUTO_TEST_CASE(malformed_versions_are_refused) {
  auto bad = [](zstore::protocol::Frames frames) {
    auto v = views(frames);
    return !chp::decode_kvhist(v).ok();
  };
  auto good = chp::encode_kvhist({"/k", 9, State::kSet, 1, 0, "", "v"});
  for (std::size_t n = 0; n < good.size(); ++n) {
    BOOST_TEST(bad(zstore::protocol::Frames(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n))));
  }
  auto extra = good;
  extra.push_back("");
  BOOST_TEST(bad(extra));
  for (std::size_t i : {2, 4, 5}) {
    auto short_number = good;
    short_number[i] = "1234";
    BOOST_TEST(bad(short_number));
  }
  auto unknown = good;
  unknown[3] = "gone";
  BOOST_TEST(bad(unknown));
  auto empty_set = good;
  empty_set[7] = "";
  BOOST_TEST(bad(empty_set));  // a set has a value
  auto deleted_with_body = chp::encode_kvhist({"/k", 9, State::kDeleted, 1, 0, "", ""});
  deleted_with_body[7] = "v";
  BOOST_TEST(bad(deleted_with_body));
  auto no_key = good;
  no_key[1] = "";
  BOOST_TEST(bad(no_key));
}

BOOST_AUTO_TEST_CASE(history_ends_round_trip_and_malformed_ones_are_refused) {
  for (Outcome o : {Outcome::kOk, Outcome::kRefused, Outcome::kFailed}) {
    chp::HistoryEnd end{"/k", o, 3, o == Outcome::kOk ? "" : "why"};
    auto frames = chp::encode_history_end(end);
    BOOST_TEST(frames.size() == 5u);
    auto v = views(frames);
    auto got = chp::decode_history_end(v);
    BOOST_REQUIRE(got.ok());
    BOOST_TEST((*got == end));
  }
  auto bad = [](zstore::protocol::Frames frames) {
    auto v = views(frames);
    return !chp::decode_history_end(v).ok();
  };
  auto good = chp::encode_history_end({"/k", Outcome::kOk, 0, ""});
  for (std::size_t n = 0; n < good.size(); ++n) {
    BOOST_TEST(bad(zstore::protocol::Frames(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n))));
  }
  auto extra = good;
  extra.push_back("");
  BOOST_TEST(bad(extra));
  auto unknown = good;
  unknown[2] = "maybe";
  BOOST_TEST(bad(unknown));
  auto short_count = good;
  short_count[3] = "1";
  BOOST_TEST(bad(short_count));
  auto long_detail = good;
  long_detail[4] = std::string(5000, 'x');
  BOOST_TEST(bad(long_detail));
}
