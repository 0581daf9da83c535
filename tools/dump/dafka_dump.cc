// zstore-dump dafka: one JSON object per record, or per partition a header
// line and one aligned "offset  content" line per record.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iomanip>
#include <vector>

#include "storage/dafka/dafka_log.h"
#include "storage/inspect/inspect.h"
#include "tools/dump/bytes_format.h"
#include "tools/dump/dumps.h"
#include "tools/dump/exit_codes.h"

namespace zstore::dump {
namespace {

constexpr int kMinOffsetWidth = 6;

bool selected(const storage::DafkaPartitionInfo& p, const DumpOptions& o) {
  return (!o.topic || p.subject == *o.topic) && (!o.partition || p.partition == *o.partition);
}

nlohmann::ordered_json record_json(const storage::DafkaRecord& r) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  put_bytes(j, "subject", r.subject);
  put_bytes(j, "partition", r.partition);
  j["offset"] = r.offset;
  put_bytes(j, "content", r.content);
  return j;
}

// Offsets are right-aligned to the width of the partition's largest one
// (the head, or the last record after a gap: bounded by head + max_ahead).
int offset_width(const storage::DafkaPartitionInfo& p, std::uint64_t max_ahead) {
  return std::max<int>(kMinOffsetWidth, static_cast<int>(std::to_string(p.next + max_ahead).size()));
}

void partition_header(const storage::DafkaPartitionInfo& p, std::ostream& out) {
  out << "subject " << text(p.subject) << "  partition " << text(p.partition) << "  head "
      << (p.next == 0 ? std::string("-") : std::to_string(p.next - 1)) << "  floor " << p.floor << "\n";
}

}  // namespace

int dump_dafka(storage::Database* db, const DumpOptions& options, std::ostream& out, std::ostream& err,
               Progress& progress) {
  std::vector<storage::DafkaPartitionInfo> partitions;
  storage::Status s = storage::dafka_partitions(db, &partitions);
  std::unique_ptr<storage::DafkaLog> log;
  if (s.ok()) s = storage::DafkaLog::Open(db, &log);
  if (!s.ok()) {
    err << "zstore-dump: " << s.message() << "\n";
    return kExitReadError;
  }
  const std::uint64_t limit = options.count.value_or(~std::uint64_t{0});
  for (const auto& p : partitions) {
    if (!selected(p, options) || limit == 0) continue;
    const bool text_format = options.format == Format::kText;
    if (text_format) partition_header(p, out);
    const int width = offset_width(p, log->max_ahead());
    auto cursor = log->read(p.subject, p.partition, options.from, ~std::uint64_t{0} - options.from);
    storage::DafkaRecord r;
    for (std::uint64_t n = 0; n < limit && cursor->next(&r); ++n) {
      if (text_format) {
        out << std::setw(width) << r.offset << "  " << text(r.content) << "\n";
      } else {
        out << record_json(r).dump() << "\n";
      }
      progress.tick();
    }
    if (!cursor->status().ok()) {
      err << "zstore-dump: " << cursor->status().message() << "\n";
      return kExitReadError;
    }
    if (text_format) out << "\n";
  }
  return kExitOk;
}

}  // namespace zstore::dump
