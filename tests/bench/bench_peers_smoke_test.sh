#!/usr/bin/env bash
# One short round of tools/bench-peers with one peer (Redis, appendfsync
# always, the XADD change stream) and zstored --sync always, against this
# build: the tool runs, the peer's watcher saw every acked write, and the
# last line is the JSON with both rows and zstored's ratio to the peer.
# Never the targets. Skipped (exit 77) only when redis-server is absent.
#   usage: bench_peers_smoke_test.sh ROOT BUILD_DIR
set -uo pipefail
root=$1 build=$2
if ! command -v redis-server >/dev/null; then
  echo "skipped: no redis-server on this machine (Debian redis-server; tools/test installs it)"
  exit 77
fi
out=$(BUILD_DIR=$build "$root/tools/bench-peers" --no-build --rounds 1 --duration 1 --warmup 0 \
        --peers redis_always_stream,zstored_always --key-space 1000 --window 100 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 0 ] || { echo "FAILED: tools/bench-peers exited $rc"; exit 1; }
tail -1 <<<"$out" | python3 -c '
import json, sys
j = json.load(sys.stdin)
rows = j["rows"]
for name in ("redis_always_stream", "zstored_always"):
    r = rows[name]
    assert r["per_s"] > 0, (name, r)
    assert r["complete"] and r["seen"][0] >= r["acked"][0] > 0, (name, r)
assert rows["redis_always_stream"]["durability"] == "fsynced before the ack", rows
assert j["ratios"]["zstored_always_vs_redis_always_stream"] > 0, j["ratios"]
assert "zstored_always_vs_fastest_same_class" in j["ratios"], j["ratios"]
print("ok: both rows measured, every acked write seen, ratio", j["ratios"]["zstored_always_vs_redis_always_stream"])
' || { echo "FAILED: the JSON line lacks a row, a count or the ratio"; exit 1; }
