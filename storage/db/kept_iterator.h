// KeptIterator: a RocksDB iterator over one column family, kept for reuse
// while it is younger than a maximum age.
//
// Making an iterator costs work that grows with the range deletes in the
// column's mutable memtable: RocksDB 7.8 fragments them all again after
// each new one. A caller that adds a range delete between each two reads
// (the CHP history trims) pays that at every read; a kept iterator pays it
// once per max_age. The price is a view frozen when the iterator was made:
// it sees no later write, and it pins the memtables and table files it saw
// until dropped. So a caller must tolerate a view up to max_age old (renew()
// when it needs newer data), reset() it when what it reads is rewritten,
// and call release_if_stale() now and then so an idle one pins nothing for
// long. Not thread-safe; the database must outlive it.
#pragma once

#include <chrono>
#include <memory>

#include <rocksdb/iterator.h>

namespace rocksdb {
class ColumnFamilyHandle;
class DB;
}  // namespace rocksdb

namespace zstore::storage {

class KeptIterator {
 public:
  using Clock = std::chrono::steady_clock;

  KeptIterator(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, Clock::duration max_age)
      : db_(db), cf_(cf), max_age_(max_age) {}

  // The kept iterator if it is younger than max_age at now, else a new one;
  // *fresh tells whether it was made by this call.
  rocksdb::Iterator* get(Clock::time_point now, bool* fresh);
  // A new iterator made at now, replacing any kept one.
  rocksdb::Iterator* renew(Clock::time_point now);
  // Drops the kept iterator if it is max_age old or older at now.
  void release_if_stale(Clock::time_point now);
  void reset() { it_.reset(); }
  bool holds() const { return it_ != nullptr; }

 private:
  // The held iterator has reached its maximum age.
  bool stale(Clock::time_point now) const { return now - made_ >= max_age_; }

  rocksdb::DB* db_;
  rocksdb::ColumnFamilyHandle* cf_;
  Clock::duration max_age_;
  std::unique_ptr<rocksdb::Iterator> it_;
  Clock::time_point made_;
};

}  // namespace zstore::storage
