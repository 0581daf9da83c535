// DafkaLog::append against a model: random batches of records of a few
// partitions, in and out of order, with duplicates within and across
// batches, records beyond gaps and too far ahead. After every batch each
// outcome, head and first record after a gap equals the model's, and after
// a reopen the stored offsets are exactly the model's.
#include <boost/test/unit_test.hpp>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "storage/dafka_log.h"
#include "tests/support/test_support.h"

using zstore::storage::DafkaAppend;
using zstore::storage::DafkaLog;
using zstore::storage::DafkaRecord;
using zstore::storage::Database;
using zstore::storage::DatabaseOptions;

namespace {

constexpr std::uint64_t kMaxAhead = 40;
const std::vector<std::pair<std::string, std::string>> kPartitions = {
    {"hello", "0123456789ABCDEF0123456789ABCDEF"},
    {"hello", "FEDCBA9876543210FEDCBA9876543210"},
    {"hellp", "0123456789ABCDEF0123456789ABCDEF"},
};

// The model: every stored offset of each partition.
struct Model {
  std::vector<std::set<std::uint64_t>> stored{kPartitions.size()};

  std::uint64_t next(std::size_t p) const {
    std::uint64_t n = 0;
    while (stored[p].contains(n)) ++n;
    return n;
  }
  std::vector<DafkaAppend> append(const std::vector<std::pair<std::size_t, std::uint64_t>>& batch) {
    auto before = stored;
    std::vector<DafkaAppend> out;
    for (auto [p, offset] : batch) {
      std::uint64_t head_next = 0;
      while (before[p].contains(head_next)) ++head_next;
      if (stored[p].contains(offset)) {
        out.push_back(DafkaAppend::kDuplicate);
      } else if (offset - head_next > kMaxAhead) {
        out.push_back(DafkaAppend::kTooFar);
      } else {
        stored[p].insert(offset);
        out.push_back(DafkaAppend::kStored);
      }
    }
    return out;
  }
  std::optional<std::uint64_t> first_after_gap(std::size_t p) const {
    auto it = stored[p].upper_bound(next(p));
    if (it == stored[p].end()) return std::nullopt;
    return *it;
  }
};

void check_state(DafkaLog& log, const Model& model) {
  for (std::size_t p = 0; p < kPartitions.size(); ++p) {
    const auto& [subject, partition] = kPartitions[p];
    std::uint64_t next = model.next(p);
    auto head = log.head(subject, partition);
    BOOST_REQUIRE_EQUAL(head.has_value(), next > 0);
    if (head) BOOST_REQUIRE_EQUAL(*head, next - 1);
    BOOST_REQUIRE(log.first_after_gap(subject, partition) == model.first_after_gap(p));
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(random_batches_match_the_model_and_survive_a_reopen) {
  zstore::testing::TempDir dir;
  std::unique_ptr<Database> db;
  std::unique_ptr<DafkaLog> log;
  BOOST_REQUIRE(Database::Open(dir.str(), DatabaseOptions{}, &db).ok());
  BOOST_REQUIRE(DafkaLog::Open(db.get(), &log, kMaxAhead).ok());
  Model model;
  std::mt19937 rng(12345);
  for (int round = 0; round < 400; ++round) {
    std::vector<std::pair<std::size_t, std::uint64_t>> batch;
    std::size_t n = 1 + rng() % 40;
    for (std::size_t i = 0; i < n; ++i) {
      std::size_t p = rng() % kPartitions.size();
      std::uint64_t base = model.next(p);
      // Mostly the next offsets in order, some behind (duplicates), some ahead (gaps, too far).
      std::uint64_t offset = base + (rng() % 4 == 0 ? rng() % (2 * kMaxAhead) : i % 8);
      if (rng() % 8 == 0 && base > 0) offset = rng() % base;
      batch.emplace_back(p, offset);
    }
    std::vector<DafkaRecord> records;
    for (auto [p, offset] : batch) {
      records.push_back({kPartitions[p].first, kPartitions[p].second, offset, "c" + std::to_string(offset)});
    }
    std::vector<DafkaAppend> outcomes;
    BOOST_REQUIRE(log->append(records, &outcomes).ok());
    auto expected = model.append(batch);
    BOOST_REQUIRE_MESSAGE(outcomes == expected, "outcomes differ in round " << round);
    check_state(*log, model);
  }
  log.reset();
  BOOST_REQUIRE(db->close().ok());
  db.reset();
  BOOST_REQUIRE(Database::Open(dir.str(), DatabaseOptions{}, &db).ok());
  BOOST_REQUIRE(DafkaLog::Open(db.get(), &log, kMaxAhead).ok());
  check_state(*log, model);
  for (std::size_t p = 0; p < kPartitions.size(); ++p) {
    std::set<std::uint64_t> read;
    auto cursor = log->read(kPartitions[p].first, kPartitions[p].second, 0, ~std::uint64_t{0});
    DafkaRecord r;
    while (cursor->next(&r)) {
      BOOST_REQUIRE_EQUAL(r.content, "c" + std::to_string(r.offset));
      read.insert(r.offset);
    }
    BOOST_REQUIRE(cursor->status().ok());
    BOOST_CHECK(read == model.stored[p]);
    BOOST_TEST_MESSAGE("partition " << p << ": " << read.size() << " records, head " << model.next(p));
  }
}
