#include "storage/node_address.h"

#include <rocksdb/write_batch.h>

namespace zstore::storage {

Status load_or_store_node_address(Database* db, std::string_view fresh, std::string* address) {
  Status s = db->get_meta(kMetaDafkaNodeAddress, address);
  if (!s.ok() || !address->empty()) return s;
  rocksdb::WriteBatch batch;
  batch.Put(db->handle(Column::kMeta), rocksdb::Slice(kMetaDafkaNodeAddress.data(), kMetaDafkaNodeAddress.size()),
            rocksdb::Slice(fresh.data(), fresh.size()));
  s = db->write(batch);
  if (s.ok()) *address = fresh;
  return s;
}

}  // namespace zstore::storage
