// ChpOutcomes (chp_outcomes.h): remembered write outcomes in meta.
#include "storage/chp/chp_outcomes.h"

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/write_batch.h>

#include <cstring>
#include <memory>

#include "protocol/byte_order.h"
#include "storage/chp/chp_store.h"
#include "storage/db/database.h"
#include "storage/db/rocks_status.h"
#include "storage/db/slice.h"

namespace zstore::storage {
namespace {

constexpr std::size_t kOutcomeBytes = 8 + kOutcomeUuidBytes;

bool remembered(const ChpWrite& w, bool all) {
  return (all || w.remember_outcome) && w.sequence != 0 && w.uuid.size() == kOutcomeUuidBytes;
}

// Appends the outcomes of one entry's value to *out; false when malformed.
bool decode_entry(std::string_view value, std::vector<ChpOutcomes::Outcome>* out) {
  if (value.empty() || value.size() % kOutcomeBytes != 0) return false;
  for (std::size_t at = 0; at < value.size(); at += kOutcomeBytes) {
    ChpOutcomes::Outcome o;
    o.sequence = protocol::get_be<std::uint64_t>(value.substr(at, 8));
    std::memcpy(o.uuid.data(), value.data() + at + 8, kOutcomeUuidBytes);
    out->push_back(o);
  }
  return true;
}

}  // namespace

Status ChpOutcomes::load(Database* db) {
  entries_.clear();
  loaded_.clear();
  kept_ = 0;
  next_number_ = 1;
  std::string upper(kMetaChpOutcomesPrefix);
  upper.back() += 1;  // the first key past the prefix
  rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(db->db()->NewIterator(ro, db->handle(Column::kMeta)));
  for (it->Seek(slice(kMetaChpOutcomesPrefix)); it->Valid(); it->Next()) {
    std::size_t before = loaded_.size();
    if (!decode_entry(std::string_view(it->value().data(), it->value().size()), &loaded_)) {
      return Status::Corruption("corrupt remembered CHP write outcomes");
    }
    std::string_view key(it->key().data(), it->key().size());
    if (key.size() != kMetaChpOutcomesPrefix.size() + 8)
      return Status::Corruption("corrupt remembered CHP outcome key");
    next_number_ = protocol::get_be<std::uint64_t>(key.substr(kMetaChpOutcomesPrefix.size())) + 1;
    entries_.push_back({std::string(key), loaded_.size() - before});
    kept_ += loaded_.size() - before;
  }
  if (!it->status().ok()) return from_rocks(it->status(), "reading the remembered CHP write outcomes");
  return Status::Ok();
}

void ChpOutcomes::put(rocksdb::WriteBatch& batch, Database* db, std::span<const ChpWrite> writes, bool all) {
  staged_ = {{}, 0};
  staged_drops_ = 0;
  value_.clear();
  for (const auto& w : writes) {
    if (!remembered(w, all)) continue;
    if (staged_.count++ == 0) {
      staged_.key.assign(kMetaChpOutcomesPrefix);
      protocol::put_be<std::uint64_t>(staged_.key, next_number_);
    }
    protocol::put_be<std::uint64_t>(value_, w.sequence);
    value_.append(w.uuid);
  }
  if (staged_.count == 0) return;
  auto* meta = db->handle(Column::kMeta);
  batch.Put(meta, slice(staged_.key), slice(value_));
  // Keep at least capacity_: drop the oldest entries that are beyond it.
  std::size_t after = kept_ + staged_.count;
  while (staged_drops_ < entries_.size() && after - entries_[staged_drops_].count >= capacity_) {
    after -= entries_[staged_drops_].count;
    batch.Delete(meta, slice(entries_[staged_drops_].key));
    ++staged_drops_;
  }
}

void ChpOutcomes::committed() {
  if (staged_.count == 0) return;
  for (; staged_drops_ > 0; --staged_drops_) {
    kept_ -= entries_.front().count;
    entries_.pop_front();
  }
  kept_ += staged_.count;
  ++next_number_;
  entries_.push_back(std::move(staged_));
  staged_ = {{}, 0};
}

}  // namespace zstore::storage
