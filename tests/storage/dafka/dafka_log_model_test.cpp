// DafkaLog::append against a reference model written from the contract in
// dafka_log.h, not from the implementation: each partition is a map from
// offset to content; its head is found by walking offsets up from 0, the
// first record after a gap by walking the map in order. Random batches of a
// few partitions, in and out of order, with duplicates (with other content)
// within and across batches, records beyond gaps and too far ahead. After
// every batch each outcome, head, first record after a gap and the heads of
// a subject equal the model's, and random range reads return the model's
// records with their first content; after a reopen all of it still holds.
#include <boost/test/unit_test.hpp>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "storage/dafka/dafka_log.h"
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

using Records = std::map<std::uint64_t, std::string>;  // offset -> content

// Highest offset h with 0..h all stored; nullopt while 0 is missing.
std::optional<std::uint64_t> model_head(const Records& r) {
  if (!r.contains(0)) return std::nullopt;
  std::uint64_t h = 0;
  while (r.contains(h + 1)) ++h;
  return h;
}

// The lowest stored offset with a missing offset below it.
std::optional<std::uint64_t> model_first_after_gap(const Records& r) {
  std::uint64_t expected = 0;
  for (const auto& entry : r) {
    if (entry.first != expected) return entry.first;
    ++expected;
  }
  return std::nullopt;
}

struct Model {
  std::vector<Records> partitions{kPartitions.size()};

  // The contract: a record already stored (before or earlier in the batch)
  // is a duplicate and keeps its first content; one more than max_ahead
  // offsets past the next expected offset (head + 1, or 0 without a head) as
  // it was before the batch is refused; anything else is stored.
  std::vector<DafkaAppend> append(const std::vector<std::pair<std::size_t, DafkaRecord>>& batch) {
    std::vector<std::uint64_t> last_accepted;
    for (const auto& records : partitions) {
      auto head = model_head(records);
      last_accepted.push_back((head ? *head + 1 : 0) + kMaxAhead);
    }
    std::vector<DafkaAppend> out;
    for (const auto& [p, record] : batch) {
      if (partitions[p].contains(record.offset)) {
        out.push_back(DafkaAppend::kDuplicate);
      } else if (record.offset > last_accepted[p]) {
        out.push_back(DafkaAppend::kTooFar);
      } else {
        partitions[p][record.offset] = record.content;
        out.push_back(DafkaAppend::kStored);
      }
    }
    return out;
  }
};

void check_range(DafkaLog& log, const Model& model, std::size_t p, std::uint64_t from, std::uint64_t count) {
  const auto& [subject, partition] = kPartitions[p];
  Records read;
  auto cursor = log.read(subject, partition, from, count);
  DafkaRecord r;
  while (cursor->next(&r)) {
    BOOST_REQUIRE(r.subject == subject && r.partition == partition);
    BOOST_REQUIRE_MESSAGE(read.emplace(r.offset, r.content).second, "offset " << r.offset << " read twice");
  }
  BOOST_REQUIRE(cursor->status().ok());
  Records expected;
  for (const auto& [offset, content] : model.partitions[p]) {
    if (offset >= from && offset - from < count) expected.emplace(offset, content);
  }
  BOOST_REQUIRE_MESSAGE(read == expected, "partition " << p << ", read(" << from << ", " << count << ") differs");
}

void check_state(DafkaLog& log, const Model& model, std::mt19937& rng) {
  std::map<std::string, std::map<std::string, std::uint64_t>> heads;  // subject -> partition -> head
  for (std::size_t p = 0; p < kPartitions.size(); ++p) {
    const auto& [subject, partition] = kPartitions[p];
    const Records& records = model.partitions[p];
    auto head = model_head(records);
    BOOST_REQUIRE(log.head(subject, partition) == head);
    BOOST_REQUIRE(log.first_after_gap(subject, partition) == model_first_after_gap(records));
    BOOST_REQUIRE_EQUAL(log.known(subject, partition), !records.empty());
    if (head) heads[subject][partition] = *head;
    check_range(log, model, p, 0, ~std::uint64_t{0});
    check_range(log, model, p, rng() % 100, rng() % 30);
  }
  for (const auto& subject : {"hello", "hellp"}) {
    std::map<std::string, std::uint64_t> got;
    for (const auto& h : log.heads(subject)) got[h.partition] = h.head;
    BOOST_REQUIRE(got == heads[subject]);
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
  std::map<DafkaAppend, int> seen;  // how often each outcome came up: every one must
  for (int round = 0; round < 400; ++round) {
    std::vector<std::pair<std::size_t, DafkaRecord>> batch;
    std::size_t n = 1 + rng() % 40;
    for (std::size_t i = 0; i < n; ++i) {
      std::size_t p = rng() % kPartitions.size();
      auto head = model_head(model.partitions[p]);
      std::uint64_t base = head ? *head + 1 : 0;
      // Mostly the next offsets in order, some behind (duplicates), some ahead (gaps, too far).
      std::uint64_t offset = base + (rng() % 4 == 0 ? rng() % (2 * kMaxAhead + 4) : i % 8);
      if (rng() % 8 == 0 && base > 0) offset = rng() % base;
      std::string content = "c" + std::to_string(offset) + "-r" + std::to_string(round) + "-" + std::to_string(i);
      batch.emplace_back(p, DafkaRecord{kPartitions[p].first, kPartitions[p].second, offset, content});
    }
    std::vector<DafkaRecord> records;
    for (const auto& entry : batch) records.push_back(entry.second);
    std::vector<DafkaAppend> outcomes;
    BOOST_REQUIRE(log->append(records, &outcomes).ok());
    auto expected = model.append(batch);
    BOOST_REQUIRE_MESSAGE(outcomes == expected, "outcomes differ in round " << round);
    for (auto o : outcomes) ++seen[o];
    check_state(*log, model, rng);
  }
  BOOST_TEST_MESSAGE("stored " << seen[DafkaAppend::kStored] << ", duplicate " << seen[DafkaAppend::kDuplicate]
                               << ", too far " << seen[DafkaAppend::kTooFar]);
  BOOST_CHECK(seen[DafkaAppend::kStored] > 100 && seen[DafkaAppend::kDuplicate] > 100 &&
              seen[DafkaAppend::kTooFar] > 10);
  log.reset();
  BOOST_REQUIRE(db->close().ok());
  db.reset();
  BOOST_REQUIRE(Database::Open(dir.str(), DatabaseOptions{}, &db).ok());
  BOOST_REQUIRE(DafkaLog::Open(db.get(), &log, kMaxAhead).ok());
  check_state(*log, model, rng);
  for (std::size_t p = 0; p < kPartitions.size(); ++p) {
    auto head = model_head(model.partitions[p]);
    BOOST_TEST_MESSAGE("partition " << p << ": " << model.partitions[p].size() << " records, head "
                                    << (head ? std::to_string(*head) : "none"));
  }
}
