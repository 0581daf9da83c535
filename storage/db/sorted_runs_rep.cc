// SortedRunsRepFactory (sorted_runs_rep.h): a memtable as a sorted tail and
// immutable sorted runs, merged like a binary counter.
//
// Only RocksDB's installed memtablerep.h is used. Two of its contracts name
// classes that are not installed, and this is how the representation keeps
// to them without those classes:
// - GetIterator(arena): RocksDB destroys the iterator in place (no delete)
//   and frees the arena later. The representation builds its iterators in
//   slots of its own instead (IteratorSlots), reused once their iterator is
//   destroyed and freed with the representation.
// - Get(LookupKey): the representation keeps MemTableRep's default, which
//   seeks an iterator from GetDynamicPrefixIterator(); RocksDB 7.8 never
//   destroys that one (9.x deletes it), so each thread keeps one in place
//   (GetIteratorSlot), destroyed by its next Get or the thread's end.
#include "storage/db/sorted_runs_rep.h"

#include <rocksdb/comparator.h>
#include <rocksdb/slice.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "storage/db/sorted_runs.h"

namespace zstore::storage {
namespace {

using sorted_runs::Entry;
using sorted_runs::EntryCompare;
using sorted_runs::KeyComparator;
using sorted_runs::MergedIterator;
using sorted_runs::Run;
using sorted_runs::RunPtr;

// Storage for one MergedIterator.
struct alignas(MergedIterator) IteratorStorage {
  std::byte bytes[sizeof(MergedIterator)];
};

// The representation's iterator slots: one per live iterator, reused when
// it is destroyed. No memtable iterator outlives its memtable (it reads the
// memtable's entries); if one were still alive when the representation is
// destroyed, its slots are kept, so its destruction writes nowhere freed.
class IteratorSlots {
 public:
  IteratorSlots() = default;
  IteratorSlots(const IteratorSlots&) = delete;
  IteratorSlots& operator=(const IteratorSlots&) = delete;

  void* take() {
    std::lock_guard<std::mutex> l(mu_);
    if (free_.empty()) {
      slots_.push_back(std::make_unique<IteratorStorage>());
      free_.reserve(slots_.size());  // give_back never allocates
      return slots_.back()->bytes;
    }
    void* storage = free_.back();
    free_.pop_back();
    return storage;
  }

  static void give_back(void* owner, void* storage) {
    auto* self = static_cast<IteratorSlots*>(owner);
    std::lock_guard<std::mutex> l(self->mu_);
    self->free_.push_back(storage);
  }

  // Whether every slot is free: no iterator of the representation is alive.
  bool all_free() const {
    std::lock_guard<std::mutex> l(mu_);
    return free_.size() == slots_.size();
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<IteratorStorage>> slots_;
  std::vector<void*> free_;
};

// A thread's iterator for MemTableRep::Get (see the top of this file).
class GetIteratorSlot {
 public:
  GetIteratorSlot() = default;
  GetIteratorSlot(const GetIteratorSlot&) = delete;
  GetIteratorSlot& operator=(const GetIteratorSlot&) = delete;
  ~GetIteratorSlot() { destroy_live(); }

  MergedIterator* make(const EntryCompare& cmp, std::vector<RunPtr> runs) {
    destroy_live();  // the previous Get's, when RocksDB left it
    live_ = new (storage_.bytes) MergedIterator(&GetIteratorSlot::released, this, storage_.bytes, cmp, std::move(runs));
    return live_;
  }

 private:
  void destroy_live() {
    if (live_ != nullptr) live_->~MergedIterator();  // calls released()
  }
  static void released(void* owner, void*) { static_cast<GetIteratorSlot*>(owner)->live_ = nullptr; }

  IteratorStorage storage_;
  MergedIterator* live_ = nullptr;
};

thread_local GetIteratorSlot get_iterator_slot;

class SortedRunsRep final : public rocksdb::MemTableRep {
 public:
  SortedRunsRep(const KeyComparator& cmp, bool bytewise, rocksdb::Allocator* allocator, std::size_t tail_entries)
      : rocksdb::MemTableRep(allocator),
        cmp_(cmp, bytewise),
        tail_entries_(std::max<std::size_t>(tail_entries, 1)),
        slots_(std::make_unique<IteratorSlots>()) {
    tail_.reserve(tail_entries_);
    account();
  }

  ~SortedRunsRep() override {
    if (!slots_->all_free()) {
      std::fprintf(stderr, "zstore: a memtable iterator outlived its memtable; its storage is kept\n");
      (void)slots_.release();
    }
  }

  void Insert(rocksdb::KeyHandle handle) override {
    auto entry = static_cast<Entry>(handle);
    std::lock_guard<std::mutex> writer(insert_mu_);
    // Only writers change tail_, and they hold insert_mu_: reading it here
    // needs no mu_.
    auto at = std::upper_bound(tail_.begin(), tail_.end(), entry, [&](Entry a, Entry b) { return cmp_(a, b) < 0; });
    {
      std::lock_guard<std::mutex> l(mu_);
      tail_.insert(at, entry);
      tail_view_.reset();
    }
    if (tail_.size() >= tail_entries_) seal_tail();
  }

  void InsertConcurrently(rocksdb::KeyHandle handle) override { Insert(handle); }

  bool Contains(const char* key) const override {
    rocksdb::Slice target = rocksdb::GetLengthPrefixedSlice(key);
    for (const RunPtr& run : view()) {
      std::ptrdiff_t i = sorted_runs::lower_bound(*run, cmp_, target);
      if (static_cast<std::size_t>(i) < run->size() && cmp_((*run)[static_cast<std::size_t>(i)], target) == 0) {
        return true;
      }
    }
    return false;
  }

  // Exact: the entries from start_ikey up to end_ikey (internal keys).
  std::uint64_t ApproximateNumEntries(const rocksdb::Slice& start_ikey, const rocksdb::Slice& end_ikey) override {
    std::uint64_t n = 0;
    for (const RunPtr& run : view()) {
      std::ptrdiff_t from = sorted_runs::lower_bound(*run, cmp_, start_ikey);
      std::ptrdiff_t to = sorted_runs::lower_bound(*run, cmp_, end_ikey);
      if (to > from) n += static_cast<std::uint64_t>(to - from);
    }
    return n;
  }

  // The runs' entry arrays, as of the last insert: RocksDB requires a
  // memtable's usage to stay the same once it is immutable, so the
  // iterator slots (a few, of a hundred bytes each) are not counted.
  std::size_t ApproximateMemoryUsage() override { return memory_.load(std::memory_order_relaxed); }

  Iterator* GetIterator(rocksdb::Arena*) override {
    void* storage = slots_->take();
    return new (storage) MergedIterator(&IteratorSlots::give_back, slots_.get(), storage, cmp_, view());
  }

  // Called with no arena only by MemTableRep::Get's default.
  Iterator* GetDynamicPrefixIterator(rocksdb::Arena* arena) override {
    if (arena != nullptr) return GetIterator(arena);
    return get_iterator_slot.make(cmp_, view());
  }

 private:
  // What a reader sees now: the runs and a copy of the tail. Kept until
  // the next insert, so the reads between two writes (a batch's lookups, a
  // MultiGet) share one copy.
  std::vector<RunPtr> view() const {
    std::lock_guard<std::mutex> l(mu_);
    if (!tail_view_ && !tail_.empty()) tail_view_ = std::make_shared<const Run>(tail_);
    std::vector<RunPtr> runs;
    runs.reserve(runs_.size() + 1);
    runs = runs_;
    if (tail_view_) runs.push_back(tail_view_);
    return runs;
  }

  // The full tail becomes a run, merged with every newer run not larger
  // than it. Runs are immutable: the merge runs outside mu_, while readers
  // still see the tail and the old runs, and is published in one step.
  // Requires insert_mu_.
  void seal_tail() {
    RunPtr merged = std::make_shared<const Run>(tail_);
    std::size_t keep = runs_.size();
    while (keep > 0 && runs_[keep - 1]->size() <= merged->size()) {
      merged = sorted_runs::merge_runs(*runs_[keep - 1], *merged, cmp_);
      --keep;
    }
    {
      std::lock_guard<std::mutex> l(mu_);
      runs_.resize(keep);
      runs_.push_back(std::move(merged));
      tail_.clear();
      tail_view_.reset();
    }
    account();
  }

  // Requires insert_mu_ (or the constructor).
  void account() {
    std::size_t entries = tail_.capacity();
    for (const RunPtr& run : runs_) entries += run->capacity();
    memory_.store(sizeof(*this) + entries * sizeof(Entry), std::memory_order_relaxed);
  }

  const EntryCompare cmp_;
  const std::size_t tail_entries_;
  std::unique_ptr<IteratorSlots> slots_;
  std::mutex insert_mu_;      // serialises writers (RocksDB's concurrent memtable writes)
  mutable std::mutex mu_;     // guards tail_ and runs_ against readers
  Run tail_;                  // sorted, fewer than tail_entries_ entries
  mutable RunPtr tail_view_;  // a copy of tail_ for readers, or none
  std::vector<RunPtr> runs_;  // older and larger runs first
  std::atomic<std::size_t> memory_{0};
};

}  // namespace

SortedRunsRepFactory::SortedRunsRepFactory(std::size_t tail_entries, const rocksdb::Comparator* user_comparator)
    : tail_entries_(tail_entries), bytewise_(user_comparator == rocksdb::BytewiseComparator()) {}

rocksdb::MemTableRep* SortedRunsRepFactory::CreateMemTableRep(const rocksdb::MemTableRep::KeyComparator& compare,
                                                              rocksdb::Allocator* allocator,
                                                              const rocksdb::SliceTransform*, rocksdb::Logger*) {
  return new SortedRunsRep(compare, bytewise_, allocator, tail_entries_);
}

}  // namespace zstore::storage
