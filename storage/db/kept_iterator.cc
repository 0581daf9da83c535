// KeptIterator (kept_iterator.h): reuse while younger than max_age.
#include "storage/db/kept_iterator.h"

#include <rocksdb/db.h>
#include <rocksdb/options.h>

namespace zstore::storage {

rocksdb::Iterator* KeptIterator::get(Clock::time_point now, bool* fresh) {
  *fresh = it_ == nullptr || stale(now);
  return *fresh ? renew(now) : it_.get();
}

rocksdb::Iterator* KeptIterator::renew(Clock::time_point now) {
  it_.reset();  // first: the old one's pins go before the new one is made
  it_.reset(db_->NewIterator(rocksdb::ReadOptions(), cf_));
  made_ = now;
  return it_.get();
}

void KeptIterator::release_if_stale(Clock::time_point now) {
  if (it_ != nullptr && stale(now)) it_.reset();
}

}  // namespace zstore::storage
