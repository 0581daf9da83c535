// Remembered write outcomes (chp_outcomes.h): kept in the batch that
// applies them, read back after a reopen oldest first, only for the writes
// that ask (or every write while a passive follows), bounded, and nothing
// of a batch that failed.
#include "storage/chp/chp_outcomes.h"

#include <rocksdb/write_batch.h>

#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "tests/storage/chp/chp_store_fixture.h"
#include "tests/support/test_support.h"

using zstore::storage::ChpOutcomes;
using zstore::testing::TempDir;

namespace {

ChpWrite confirmed(std::string key, std::string value, char uuid_byte, bool remember = true) {
  ChpWrite w = put(std::move(key), std::move(value));
  w.uuid = std::string(16, uuid_byte);
  w.remember_outcome = remember;
  return w;
}

// The (uuid's first byte, sequence) of each outcome.
std::vector<std::pair<char, std::uint64_t>> summary(const std::vector<ChpOutcomes::Outcome>& outcomes) {
  std::vector<std::pair<char, std::uint64_t>> out;
  for (const auto& o : outcomes) out.emplace_back(o.uuid[0], o.sequence);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(outcomes_of_confirmed_writes_survive_a_reopen_and_plain_ones_are_not_kept) {
  TempDir dir;
  std::vector<std::uint64_t> seqs;
  {
    auto o = open_store(dir.str());
    BOOST_TEST(o->take_remembered_outcomes().empty());
    seqs = apply(*o, {confirmed("/a", "1", 'a'), confirmed("/b", "1", 'b', false), confirmed("/c", "", 'c')});
    auto more = apply(*o, {confirmed("/a", "2", 'd')});  // overwrites /a: its first outcome stays
    seqs.push_back(more[0]);
    close_store(o);
  }
  auto o = open_store(dir.str());
  std::vector<std::pair<char, std::uint64_t>> want{{'a', seqs[0]}, {'c', seqs[2]}, {'d', seqs[3]}};
  BOOST_TEST((summary(o->take_remembered_outcomes()) == want));
  BOOST_TEST(o->take_remembered_outcomes().empty());  // taken once
}

BOOST_AUTO_TEST_CASE(a_following_store_remembers_every_update_with_a_uuid) {
  TempDir dir;
  std::vector<std::uint64_t> seqs;
  {
    auto o = open_store(dir.str());
    o->remember_every_outcome(true);
    ChpWrite expiry = put("/x", "");  // an expiry's delete: no uuid, nothing to remember
    seqs = apply(*o, {confirmed("/p", "1", 'p', false), expiry});
    o->remember_every_outcome(false);
    apply(*o, {confirmed("/q", "1", 'q', false)});
    close_store(o);
  }
  auto o = open_store(dir.str());
  std::vector<std::pair<char, std::uint64_t>> want{{'p', seqs[0]}};
  BOOST_TEST((summary(o->take_remembered_outcomes()) == want));
}

// Capacity 4, batches of 3: the oldest entries go once the rest hold 4.
BOOST_AUTO_TEST_CASE(the_oldest_outcomes_are_dropped_past_the_capacity) {
  TempDir dir;
  auto o = open_store(dir.str());
  ChpOutcomes outcomes(4);
  std::uint64_t seq = 0;
  for (int b = 0; b < 5; ++b) {
    std::vector<ChpWrite> writes;
    for (int i = 0; i < 3; ++i) {
      writes.push_back(confirmed("/k", "v", static_cast<char>('a' + 3 * b + i)));
      writes.back().sequence = ++seq;
    }
    rocksdb::WriteBatch batch;
    outcomes.put(batch, o.db.get(), writes, false);
    BOOST_REQUIRE(o.db->write(batch).ok());
    outcomes.committed();
    BOOST_TEST(outcomes.kept() >= std::min<std::size_t>(4, seq));
    BOOST_TEST(outcomes.kept() <= 4u + 3u);
  }
  ChpOutcomes read(4);
  BOOST_REQUIRE(read.load(o.db.get()).ok());
  BOOST_TEST(read.kept() == outcomes.kept());
  auto loaded = read.take_loaded();
  BOOST_REQUIRE(!loaded.empty());
  BOOST_TEST(loaded.back().sequence == seq);  // the newest kept, in order
  BOOST_TEST(loaded.front().sequence == seq - loaded.size() + 1);
  BOOST_TEST(loaded.size() == 6u);  // the last two batches: one more would leave only 3
}

// A batch that was never written leaves nothing behind: the next put()
// replaces what it staged.
BOOST_AUTO_TEST_CASE(a_batch_that_failed_is_not_counted) {
  TempDir dir;
  auto o = open_store(dir.str());
  ChpOutcomes outcomes(4);
  std::vector<ChpWrite> lost{confirmed("/k", "v", 'l')};
  lost[0].sequence = 1;
  rocksdb::WriteBatch dropped;
  outcomes.put(dropped, o.db.get(), lost, false);  // not written, not committed
  std::vector<ChpWrite> kept{confirmed("/k", "v", 'k')};
  kept[0].sequence = 2;
  rocksdb::WriteBatch batch;
  outcomes.put(batch, o.db.get(), kept, false);
  BOOST_REQUIRE(o.db->write(batch).ok());
  outcomes.committed();
  BOOST_TEST(outcomes.kept() == 1u);
  ChpOutcomes read;
  BOOST_REQUIRE(read.load(o.db.get()).ok());
  std::vector<std::pair<char, std::uint64_t>> want{{'k', 2}};
  BOOST_TEST((summary(read.take_loaded()) == want));
}
