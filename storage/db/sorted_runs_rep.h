// SortedRunsRepFactory: a RocksDB memtable representation for keys written
// in random order. Instead of a skip list, whose every insert walks about
// twenty nodes scattered over the memtable's arena (one cache miss each),
// an insert goes into a small sorted tail; a full tail becomes a sorted
// run, and runs of equal size are merged like a binary counter, so each
// entry is compared about log2(entries / tail) times, in sequential merges
// that prefetch ahead. Readers (Get, iterators, a flush) see a consistent
// view: the immutable runs, shared, and a copy of the tail, merged on the
// fly. Inserts are serialised by the representation itself, so it also
// takes RocksDB's concurrent memtable writes. Written against RocksDB's
// installed memtablerep.h only (see sorted_runs_rep.cc for how it keeps
// its iterators without RocksDB's private arena).
#pragma once

#include <rocksdb/comparator.h>
#include <rocksdb/memtablerep.h>

#include <cstddef>

namespace zstore::storage {

class SortedRunsRepFactory final : public rocksdb::MemTableRepFactory {
 public:
  // tail_entries: the size of the sorted tail, and of the smallest run.
  // user_comparator: the column family's comparator; when it is RocksDB's
  // BytewiseComparator(), entries are compared inline (EntryCompare in
  // sorted_runs.h), else through the KeyComparator RocksDB hands over.
  explicit SortedRunsRepFactory(std::size_t tail_entries = kDefaultTailEntries,
                                const rocksdb::Comparator* user_comparator = nullptr);

  static constexpr std::size_t kDefaultTailEntries = 256;

  using rocksdb::MemTableRepFactory::CreateMemTableRep;
  rocksdb::MemTableRep* CreateMemTableRep(const rocksdb::MemTableRep::KeyComparator& compare,
                                          rocksdb::Allocator* allocator, const rocksdb::SliceTransform* transform,
                                          rocksdb::Logger* logger) override;
  const char* Name() const override { return "ZstoreSortedRunsRepFactory"; }
  bool IsInsertConcurrentlySupported() const override { return true; }
  bool CanHandleDuplicatedKey() const override { return false; }

 private:
  std::size_t tail_entries_;
  bool bytewise_;
};

}  // namespace zstore::storage
