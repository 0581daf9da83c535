// WrittenOutbox: an answer the writer's pipe cannot take now waits, in
// order behind that writer's earlier ones, and goes once the pipe takes it;
// the bounds drop (and count) what is past them, and a gone writer's
// answers are dropped.
#include "server/chp/written_outbox.h"

#include <boost/test/unit_test.hpp>
#include <map>
#include <string>
#include <vector>

using zstore::protocol::chp::WriteOutcome;
using zstore::server::WrittenOutbox;
using zstore::transport::SendOutcome;

namespace {

// A ROUTER stand-in: each writer's pipe takes `room[writer]` more answers
// (absent: unlimited), or says the writer is gone.
struct FakeRouter {
  std::map<std::string, int> room;
  std::map<std::string, bool> gone;
  std::map<std::string, std::vector<std::uint64_t>> got;  // the sequences each writer received, in order

  WrittenOutbox::Send send() {
    return [this](const std::string& writer, const WriteOutcome& outcome) {
      if (gone[writer]) return SendOutcome::kUnroutable;
      auto it = room.find(writer);
      if (it != room.end()) {
        if (it->second == 0) return SendOutcome::kWouldBlock;
        --it->second;
      }
      got[writer].push_back(outcome.sequence);
      return SendOutcome::kSent;
    };
  }
};

WriteOutcome applied(std::uint64_t sequence) {
  return {WriteOutcome::Kind::kApplied, std::string(16, 'u'), sequence, {}};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(written_outbox)

BOOST_AUTO_TEST_CASE(an_answer_goes_at_once_when_the_pipe_takes_it) {
  FakeRouter router;
  WrittenOutbox outbox(router.send());
  BOOST_TEST(outbox.send("a", applied(1)) == 0u);
  BOOST_TEST(outbox.empty());
  BOOST_TEST(router.got["a"] == std::vector<std::uint64_t>{1});
}

BOOST_AUTO_TEST_CASE(a_full_pipe_keeps_answers_in_order_until_it_takes_them) {
  FakeRouter router;
  router.room["a"] = 1;
  WrittenOutbox outbox(router.send());
  for (std::uint64_t s = 1; s <= 4; ++s) BOOST_TEST(outbox.send("a", applied(s)) == 0u);
  BOOST_TEST(outbox.waiting() == 3u);
  BOOST_TEST(outbox.flush() == 0u);
  BOOST_TEST(outbox.stuck());  // nothing moved
  router.room["a"] = 1;        // the writer read one
  outbox.flush();
  BOOST_TEST(!outbox.stuck());
  BOOST_TEST(outbox.waiting() == 2u);
  router.room.erase("a");                          // it reads everything now
  BOOST_TEST(outbox.send("a", applied(5)) == 0u);  // behind the waiting ones, not before them
  BOOST_TEST(outbox.waiting() == 3u);
  outbox.flush();
  BOOST_TEST(outbox.empty());
  BOOST_TEST(router.got["a"] == (std::vector<std::uint64_t>{1, 2, 3, 4, 5}));
}

BOOST_AUTO_TEST_CASE(one_full_writer_does_not_hold_up_another) {
  FakeRouter router;
  router.room["slow"] = 0;
  WrittenOutbox outbox(router.send());
  outbox.send("slow", applied(1));
  outbox.send("fast", applied(2));
  BOOST_TEST(router.got["fast"] == std::vector<std::uint64_t>{2});
  BOOST_TEST(outbox.waiting() == 1u);
}

BOOST_AUTO_TEST_CASE(answers_past_a_bound_are_dropped_and_counted) {
  FakeRouter router;
  router.room["a"] = 0;
  router.room["b"] = 0;
  WrittenOutbox outbox(router.send(), /*per_writer=*/2, /*total=*/3);
  BOOST_TEST(outbox.send("a", applied(1)) == 0u);
  BOOST_TEST(outbox.send("a", applied(2)) == 0u);
  BOOST_TEST(outbox.send("a", applied(3)) == 1u);  // past a's bound
  BOOST_TEST(outbox.send("b", applied(4)) == 0u);
  BOOST_TEST(outbox.send("b", applied(5)) == 1u);  // past the total
  BOOST_TEST(outbox.waiting() == 3u);
  router.room.clear();
  outbox.flush();
  BOOST_TEST(router.got["a"] == (std::vector<std::uint64_t>{1, 2}));
  BOOST_TEST(router.got["b"] == std::vector<std::uint64_t>{4});
}

BOOST_AUTO_TEST_CASE(a_gone_writers_answers_are_dropped) {
  FakeRouter router;
  router.room["a"] = 0;
  WrittenOutbox outbox(router.send());
  outbox.send("a", applied(1));
  outbox.send("a", applied(2));
  router.gone["a"] = true;
  BOOST_TEST(outbox.flush() == 2u);
  BOOST_TEST(outbox.empty());
  BOOST_TEST(outbox.send("a", applied(3)) == 1u);  // gone already
  BOOST_TEST(outbox.empty());
}

BOOST_AUTO_TEST_SUITE_END()
