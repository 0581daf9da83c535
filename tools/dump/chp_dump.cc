// zstore-dump chp: one JSON object per key, or one text block per key.
#include <nlohmann/json.hpp>

#include "storage/chp/chp_store.h"
#include "tools/dump/bytes_format.h"
#include "tools/dump/dumps.h"
#include "tools/dump/exit_codes.h"

namespace zstore::dump {
namespace {

nlohmann::ordered_json chp_json(const storage::ChpRecord& r) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  put_bytes(j, "key", r.key);
  j["seq"] = r.entry.sequence;
  j["uuid"] = hex(r.entry.uuid);
  put_bytes(j, "props", r.entry.properties);
  put_bytes(j, "value", r.entry.value);
  j["expires_at"] =
      r.entry.expires_at_ms == 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.entry.expires_at_ms);
  return j;
}

void chp_text(const storage::ChpRecord& r, std::ostream& out) {
  const auto& e = r.entry;
  std::string expiry =
      e.expires_at_ms == 0 ? "-" : iso8601_ms(e.expires_at_ms) + " (" + std::to_string(e.expires_at_ms) + ")";
  out << "key         " << text(r.key) << "\n"
      << "seq         " << e.sequence << "\n"
      << "uuid        " << (e.uuid.empty() ? "-" : hex(e.uuid)) << "\n"
      << "expires_at  " << expiry << "\n"
      << "props       " << text(e.properties) << "\n"
      << "value       " << text(e.value) << "\n\n";
}

}  // namespace

int dump_chp(storage::Database* db, const DumpOptions& options, std::ostream& out, std::ostream& err,
             Progress& progress) {
  std::unique_ptr<storage::ChpStore> store;
  storage::Status s = storage::ChpStore::Open(db, &store);
  if (!s.ok()) {
    err << "zstore-dump: " << s.message() << "\n";
    return kExitReadError;
  }
  auto cursor = store->snapshot(options.prefix);
  storage::ChpRecord record;
  while (cursor->next(&record)) {
    if (options.format == Format::kJson) {
      out << chp_json(record).dump() << "\n";
    } else {
      chp_text(record, out);
    }
    progress.tick();
  }
  if (!cursor->status().ok()) {
    err << "zstore-dump: " << cursor->status().message() << "\n";
    return kExitReadError;
  }
  return kExitOk;
}

}  // namespace zstore::dump
