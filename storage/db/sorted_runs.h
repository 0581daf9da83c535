// The parts of SortedRunsRepFactory's memtable (sorted_runs_rep.h): sorted
// runs of memtable entries, their comparison, their merge, and an iterator
// over several runs merged on the fly. Internal to storage/db.
//
// An entry is what RocksDB's MemTable::Add writes and memtablerep.h calls a
// frozen format: a varint32 length, the internal key (the user key, then 8
// bytes little-endian: sequence << 8 | type), then the value.
#pragma once

#include <rocksdb/memtablerep.h>
#include <rocksdb/slice.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "storage/db/bytewise.h"

namespace zstore::storage::sorted_runs {

using Entry = const char*;
using Run = std::vector<Entry>;
using RunPtr = std::shared_ptr<const Run>;
using KeyComparator = rocksdb::MemTableRep::KeyComparator;

// Compares entries with each other or with an internal key, as RocksDB's
// memtable KeyComparator does: user keys in the column family's order,
// then sequences, newest first. With bytewise user keys it compares inline
// (compare_bytes and a load), not through the KeyComparator's virtual calls
// and the user comparator's: a flush or a merge compares each entry several
// times.
// Inline: each merge step and binary-search probe is one comparison.
class EntryCompare {
 public:
  EntryCompare(const KeyComparator& cmp, bool bytewise) : cmp_(&cmp), bytewise_(bytewise) {}
  int operator()(Entry a, Entry b) const {
    return bytewise_ ? compare_bytewise(internal_key_of(a), internal_key_of(b)) : (*cmp_)(a, b);
  }
  int operator()(Entry a, const rocksdb::Slice& internal_key) const {
    return bytewise_ ? compare_bytewise(internal_key_of(a), internal_key) : (*cmp_)(a, internal_key);
  }

 private:
  // The internal key of an entry (its varint32 length: one byte below 128).
  static rocksdb::Slice internal_key_of(Entry e) {
    auto first = static_cast<unsigned char>(e[0]);
    if (first < 0x80) return rocksdb::Slice(e + 1, first);
    return rocksdb::GetLengthPrefixedSlice(e);
  }
  // The sequence of an internal key: its 8-byte little-endian trailer
  // (sequence << 8 | type), without the type.
  static std::uint64_t sequence(const rocksdb::Slice& ikey) {
    const auto* p = reinterpret_cast<const unsigned char*>(ikey.data() + ikey.size() - 8);
    std::uint64_t trailer = 0;
    for (int i = 7; i >= 0; --i) trailer = (trailer << 8) | p[i];
    return trailer >> 8;
  }
  static int compare_bytewise(const rocksdb::Slice& a, const rocksdb::Slice& b) {
    int r = compare_bytes(a.data(), a.size() - 8, b.data(), b.size() - 8);
    if (r != 0) return r;
    std::uint64_t sa = sequence(a);
    std::uint64_t sb = sequence(b);
    return sa > sb ? -1 : (sa < sb ? 1 : 0);
  }

  const KeyComparator* cmp_;
  bool bytewise_;
};

// The first entry of run not before target (an internal key).
std::ptrdiff_t lower_bound(const Run& run, const EntryCompare& cmp, const rocksdb::Slice& target);
// The first entry of run after target.
std::ptrdiff_t upper_bound(const Run& run, const EntryCompare& cmp, const rocksdb::Slice& target);
// a and b (each sorted, no entry in both) as one sorted run.
RunPtr merge_runs(const Run& a, const Run& b, const EntryCompare& cmp);

// Told when a MergedIterator's storage may be used again: after the
// iterator and all its members are destroyed (a base destroyed last).
class StorageRelease {
 public:
  using Release = void (*)(void* owner, void* storage);
  StorageRelease(Release release, void* owner, void* storage) : release_(release), owner_(owner), storage_(storage) {}
  StorageRelease(const StorageRelease&) = delete;
  StorageRelease& operator=(const StorageRelease&) = delete;
  ~StorageRelease() { release_(owner_, storage_); }

 private:
  Release release_;
  void* owner_;
  void* storage_;
};

// The runs of one view merged on the fly. No entry is in two runs (an
// entry's internal key holds its unique sequence number), which keeps the
// turns between directions simple. It is always built in storage its
// owner keeps (see SortedRunsRep): RocksDB destroys a memtable iterator in
// place, and a `delete` of one frees nothing (a no-op operator delete); the
// owner is told through StorageRelease.
class MergedIterator final : private StorageRelease, public rocksdb::MemTableRep::Iterator {
 public:
  MergedIterator(StorageRelease::Release release, void* owner, void* storage, const EntryCompare& cmp,
                 std::vector<RunPtr> runs);

  static void operator delete(void*) {}

  bool Valid() const override { return current_ >= 0; }
  const char* key() const override { return at(current_); }
  void Next() override;
  void Prev() override;
  void Seek(const rocksdb::Slice& internal_key, const char* memtable_key) override;
  void SeekForPrev(const rocksdb::Slice& internal_key, const char* memtable_key) override;
  void SeekToFirst() override;
  void SeekToLast() override;

 private:
  bool in_range(std::size_t r) const { return pos_[r] >= 0 && static_cast<std::size_t>(pos_[r]) < runs_[r]->size(); }
  Entry at(std::ptrdiff_t r) const {
    return (*runs_[static_cast<std::size_t>(r)])[static_cast<std::size_t>(pos_[static_cast<std::size_t>(r)])];
  }
  void pick(int direction);

  const EntryCompare cmp_;
  const std::vector<RunPtr> runs_;
  // Going forward: each run's first entry not before the current one
  // (size() when none). Going backward: its last entry not after it (-1).
  std::vector<std::ptrdiff_t> pos_;
  std::ptrdiff_t current_ = -1;  // the run holding the current entry
  bool forward_ = true;
};

}  // namespace zstore::storage::sorted_runs
