// CHP checks after a restart: the fresh snapshot against what the reader saw
// and what the writers sent. Writers are paused while a snapshot is taken,
// so the only changes racing it are server-side expiries.
//
// Per key, with i = the last op the reader saw published (at sequence S):
//   - present op j: j > i at a sequence > S, or j == i at S (any sequence
//     >= S with HA, where a new active re-applies pending sets; any
//     sequence after a partition, where both members applied it); the body is
//     op j's byte for byte; not a ttl op whose ttl ran out + slack ago;
//   - absent: only if the reader saw it deleted or expired, or an op after
//     i is a delete or a ttl set that may have expired by the snapshot;
//   - the snapshot sequence >= every KVPUB sequence seen.
// And: a ttl set the reader saw, not followed by another op, whose deadline
// (ttl + slack) passed while that server stayed up, had its delete published.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "tools/harness/chp_peer.h"
#include "tools/torture_src/chp_history.h"
#include "tools/torture_src/chp_reader.h"
#include "tools/torture_src/violations.h"

namespace zstore::torture {

struct SnapshotTaken {
  testing::ChpSnapshot snapshot;
  std::int64_t requested_ms = 0;  // ICANHAZ? sent
  std::int64_t completed_ms = 0;  // KTHXBAI received
};

struct VerifyContext {
  bool ha = false;
  // Both members served during a partition: an op applied by each is
  // published twice, at unrelated sequences; the snapshot may hold either.
  bool partition = false;
  std::int64_t ttl_slack_ms = 1000;
  std::int64_t up_since_ms = 0;  // the killed server's last start
  std::int64_t killed_ms = 0;    // when it was killed
};

struct VerifyStats {
  std::size_t keys = 0;           // keys checked
  std::size_t ttl_expired = 0;    // absent because a ttl ran out (checked not early)
  std::size_t ttl_published = 0;  // expiries whose publication was checked
};

VerifyStats verify_chp(const SnapshotTaken& taken, const std::map<std::string, SeenState>& seen,
                       std::uint64_t max_seen_sequence, const ChpHistory& history, const VerifyContext& ctx,
                       Violations& violations);

}  // namespace zstore::torture
