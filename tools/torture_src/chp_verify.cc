#include "tools/torture_src/chp_verify.h"

#include <set>

namespace zstore::torture {

namespace {

constexpr std::int64_t kEarlyExpiryToleranceMs = 50;

struct KeyCheck {
  const std::string& key;
  const std::vector<ChpOp>& ops;
  const SeenState* seen;  // nullptr: the reader never saw the key
  const SnapshotTaken& taken;
  const VerifyContext& ctx;
  Violations& violations;
  VerifyStats& stats;

  std::string where(std::size_t j) const {
    return key + " op #" + std::to_string(j) + " (of " + std::to_string(ops.size()) + ")";
  }
  std::string seen_text() const {
    if (!seen || !seen->op) return "nothing seen";
    return std::string(seen->expired ? "saw expiry of op #" : "saw op #") + std::to_string(*seen->op) + " at seq " +
           std::to_string(seen->sequence);
  }

  void present(const protocol::chp::KvMsg& kv, std::size_t j) const {
    const ChpOp& op = ops[j];
    if (op.value != kv.body) violations.add("corrupt value", where(j) + " body differs in the snapshot");
    if (op.ttl_s && taken.requested_ms > op.expires_ms() + ctx.ttl_slack_ms) {
      violations.add("ttl not expired", where(j) + " ttl " + std::to_string(op.ttl_s) + "s still in the snapshot " +
                                            std::to_string(taken.requested_ms - op.expires_ms()) + " ms after expiry");
    }
    if (!seen || !seen->op) return;
    std::size_t i = *seen->op;
    if (j < i) {
      violations.add("lost update", where(j) + " in the snapshot (seq " + std::to_string(kv.sequence) +
                                        ") but the reader " + seen_text());
    } else if (j == i && seen->expired) {
      violations.add("expired key back", where(j) + " in the snapshot but the reader " + seen_text());
    } else if (j == i && !ctx.partition && (ctx.ha ? kv.sequence < seen->sequence : kv.sequence != seen->sequence)) {
      violations.add("sequence changed",
                     where(j) + " at seq " + std::to_string(kv.sequence) + " but the reader " + seen_text());
    } else if (j > i && kv.sequence <= seen->sequence) {
      violations.add("sequence went back",
                     where(j) + " at seq " + std::to_string(kv.sequence) + " but the reader " + seen_text());
    }
  }

  // May the key be absent from the snapshot?
  bool may_be_absent() const {
    if (!seen || !seen->op) return true;
    std::size_t i = *seen->op;
    if (seen->expired || ops[i].is_delete()) return true;
    for (std::size_t k = i; k < ops.size(); ++k) {
      if (k > i && ops[k].is_delete()) return true;
      if (ops[k].ttl_s && ops[k].expires_ms() - kEarlyExpiryToleranceMs <= taken.completed_ms) {
        stats.ttl_expired++;
        return true;
      }
    }
    return false;
  }

  // A ttl set seen while the server was up, last op of its key, whose
  // deadline passed before the kill: its expiry must have been published.
  void expiry_published() const {
    if (!seen || !seen->op) return;
    std::size_t i = *seen->op;
    if (i + 1 != ops.size() || !ops[i].ttl_s) return;
    std::int64_t deadline = ops[i].expires_ms() + ctx.ttl_slack_ms;
    if (seen->op_seen_ms < ctx.up_since_ms || deadline >= ctx.killed_ms) return;
    stats.ttl_published++;
    if (!seen->expired) {
      violations.add("expiry not published", where(i) + " ttl " + std::to_string(ops[i].ttl_s) + "s: no delete seen " +
                                                 std::to_string(ctx.killed_ms - deadline) +
                                                 " ms after the deadline (server up all along)");
    }
  }
};

}  // namespace

VerifyStats verify_chp(const SnapshotTaken& taken, const std::map<std::string, SeenState>& seen,
                       std::uint64_t max_seen_sequence, const ChpHistory& history, const VerifyContext& ctx,
                       Violations& violations) {
  VerifyStats stats;
  const auto& snap = taken.snapshot;
  if (snap.sequence < max_seen_sequence) {
    violations.add("snapshot sequence went back", "snapshot at seq " + std::to_string(snap.sequence) +
                                                      " after KVPUB seq " + std::to_string(max_seen_sequence));
  }
  history.visit([&](const KeyOps& all) {
    for (const auto& [key, kv] : snap.entries) {
      if (kv.sequence > snap.sequence) {
        violations.add("entry after snapshot", key + " seq " + std::to_string(kv.sequence) + " > snapshot seq " +
                                                   std::to_string(snap.sequence));
      }
      auto it = all.find(key);
      if (it == all.end() && !unchecked_key(key)) {
        violations.add("unknown key", key + " in the snapshot was never written");
      }
    }
    for (const auto& [key, ops] : all) {
      auto s = seen.find(key);
      KeyCheck check{key, ops, s == seen.end() ? nullptr : &s->second, taken, ctx, violations, stats};
      check.expiry_published();
      auto e = snap.entries.find(key);
      ++stats.keys;
      if (e == snap.entries.end()) {
        if (!check.may_be_absent()) {
          violations.add("lost update", key + " missing from the snapshot (seq " + std::to_string(snap.sequence) +
                                            ") but the reader " + check.seen_text());
        }
        continue;
      }
      std::optional<std::size_t> j;
      for (std::size_t k = ops.size(); k-- > 0;) {
        if (ops[k].uuid == e->second.uuid) {
          j = k;
          break;
        }
      }
      if (!j) {
        violations.add("unknown value", key + " in the snapshot carries no op sent for it");
        continue;
      }
      check.present(e->second, *j);
    }
  });
  return stats;
}

}  // namespace zstore::torture
