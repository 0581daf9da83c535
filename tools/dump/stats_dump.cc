// zstore-dump stats: the database's totals as aligned text or one JSON object.
#include <nlohmann/json.hpp>

#include <iomanip>
#include <vector>

#include "storage/chp/chp_store.h"
#include "storage/inspect/inspect.h"
#include "storage/dafka/node_address.h"
#include "tools/dump/bytes_format.h"
#include "tools/dump/dumps.h"
#include "tools/dump/exit_codes.h"

namespace zstore::dump {
namespace {

constexpr storage::Column kColumns[] = {storage::Column::kMeta,       storage::Column::kChpMap,
                                        storage::Column::kChpExpiry,  storage::Column::kDafkaRecords,
                                        storage::Column::kDafkaHeads, storage::Column::kChpHistory,
                                        storage::Column::kDafkaTimes, storage::Column::kChpVersions};

struct Stats {
  std::string layout_version;
  std::string node_address;  // empty when none stored yet
  std::uint64_t chp_last_sequence = 0;
  bool chp_synced = true;  // false while an HA passive was reloading its map
  std::vector<storage::ColumnStats> columns;
  std::vector<storage::DafkaPartitionInfo> partitions;
};

storage::Status collect(storage::Database* db, Stats* out, Progress& progress) {
  storage::Status s = db->get_meta(storage::kMetaLayoutVersion, &out->layout_version);
  if (s.ok()) s = db->get_meta(storage::kMetaDafkaNodeAddress, &out->node_address);
  std::unique_ptr<storage::ChpStore> chp;
  if (s.ok()) s = storage::ChpStore::Open(db, &chp);
  if (!s.ok()) return s;
  out->chp_last_sequence = chp->last_sequence();
  out->chp_synced = chp->synced();
  for (auto column : kColumns) {
    storage::ColumnStats c;
    if (db->handle(column) == nullptr) {  // chp_history or dafka_times, in a database older than it
      out->columns.push_back(c);
      continue;
    }
    s = storage::column_stats(db, column, &c, [&progress] { progress.tick(); });
    if (!s.ok()) return s;
    out->columns.push_back(c);
  }
  return storage::dafka_partitions(db, &out->partitions);
}

nlohmann::ordered_json head_json(const storage::DafkaPartitionInfo& p) {
  return p.next == 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(p.next - 1);
}

nlohmann::ordered_json stats_json(const Stats& st) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["layout_version"] = st.layout_version;
  j["node_address"] =
      st.node_address.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(st.node_address);
  j["chp_last_sequence"] = st.chp_last_sequence;
  j["chp_synced"] = st.chp_synced;
  j["columns"] = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < st.columns.size(); ++i) {
    const auto& c = st.columns[i];
    j["columns"].push_back({{"name", std::string(storage::column_name(kColumns[i]))},
                            {"keys", c.keys},
                            {"key_bytes", c.key_bytes},
                            {"value_bytes", c.value_bytes},
                            {"sst_bytes", c.sst_bytes},
                            {"blob_bytes", c.blob_bytes}});
  }
  j["dafka_partitions"] = nlohmann::ordered_json::array();
  for (const auto& p : st.partitions) {
    nlohmann::ordered_json pj = nlohmann::ordered_json::object();
    put_bytes(pj, "subject", p.subject);
    put_bytes(pj, "partition", p.partition);
    pj["head"] = head_json(p);
    pj["next"] = p.next;
    pj["floor"] = p.floor;
    pj["records"] = p.records;
    pj["bytes"] = p.bytes;
    j["dafka_partitions"].push_back(std::move(pj));
  }
  return j;
}

void columns_text(const Stats& st, std::ostream& out) {
  out << std::left << std::setw(16) << "column family" << std::right << std::setw(12) << "keys" << std::setw(16)
      << "key bytes" << std::setw(16) << "value bytes" << std::setw(16) << "sst bytes" << std::setw(16) << "blob bytes"
      << "\n";
  for (std::size_t i = 0; i < st.columns.size(); ++i) {
    const auto& c = st.columns[i];
    out << std::left << std::setw(16) << storage::column_name(kColumns[i]) << std::right << std::setw(12) << c.keys
        << std::setw(16) << c.key_bytes << std::setw(16) << c.value_bytes << std::setw(16) << c.sst_bytes
        << std::setw(16) << c.blob_bytes << "\n";
  }
}

void partitions_text(const Stats& st, std::ostream& out) {
  std::size_t subject_width = 8, partition_width = 10;
  for (const auto& p : st.partitions) {
    subject_width = std::max(subject_width, text(p.subject).size());
    partition_width = std::max(partition_width, text(p.partition).size());
  }
  out << "dafka partitions    " << st.partitions.size() << "\n";
  if (st.partitions.empty()) return;
  out << std::left << std::setw(static_cast<int>(subject_width) + 2) << "subject"
      << std::setw(static_cast<int>(partition_width) + 2) << "partition" << std::right << std::setw(20) << "head"
      << std::setw(20) << "floor" << std::setw(14) << "records" << std::setw(16) << "bytes"
      << "\n";
  for (const auto& p : st.partitions) {
    out << std::left << std::setw(static_cast<int>(subject_width) + 2) << text(p.subject)
        << std::setw(static_cast<int>(partition_width) + 2) << text(p.partition) << std::right << std::setw(20)
        << (p.next == 0 ? std::string("-") : std::to_string(p.next - 1)) << std::setw(20) << p.floor << std::setw(14)
        << p.records << std::setw(16) << p.bytes << "\n";
  }
}

void stats_text(const Stats& st, std::ostream& out) {
  out << "layout version      " << st.layout_version << "\n"
      << "node address        " << (st.node_address.empty() ? "-" : text(st.node_address)) << "\n"
      << "chp last sequence   " << st.chp_last_sequence << "\n"
      << "chp map complete    " << (st.chp_synced ? "yes" : "no (an HA passive was reloading it)") << "\n\n";
  columns_text(st, out);
  out << "\n";
  partitions_text(st, out);
}

}  // namespace

int dump_stats(storage::Database* db, const DumpOptions& options, std::ostream& out, std::ostream& err,
               Progress& progress) {
  Stats st;
  storage::Status s = collect(db, &st, progress);
  if (!s.ok()) {
    err << "zstore-dump: " << s.message() << "\n";
    return kExitReadError;
  }
  if (options.format == Format::kJson) {
    out << stats_json(st).dump() << "\n";
  } else {
    stats_text(st, out);
  }
  return kExitOk;
}

}  // namespace zstore::dump
