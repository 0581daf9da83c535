#include "storage/dafka/node_address.h"

#include <rocksdb/write_batch.h>

#include "storage/db/slice.h"

namespace zstore::storage {

Status load_or_store_node_address(Database* db, std::string_view fresh, std::string* address) {
  Status s = db->get_meta(kMetaDafkaNodeAddress, address);
  if (!s.ok() || !address->empty()) return s;
  rocksdb::WriteBatch batch;
  batch.Put(db->handle(Column::kMeta), slice(kMetaDafkaNodeAddress), slice(fresh));
  s = db->write_durable(batch);
  if (s.ok()) *address = fresh;
  return s;
}

}  // namespace zstore::storage
