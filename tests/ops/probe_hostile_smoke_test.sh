#!/usr/bin/env bash
# Smoke test of tools/probe-hostile: a tiny run (--scale 0.01) of three
# probes prints a header, one table row per probe that ran (none "could not
# run"), and exits 0 (all passed) or 1 (a verdict FAIL: the 2 s checks also
# measure a loaded machine, so a verdict is not what this test checks).
#   usage: probe_hostile_smoke_test.sh ROOT BIN_DIR
set -uo pipefail
root=$1 bin=$2
out=$(timeout 120 "$root/tools/probe-hostile" --zstored "$bin/zstored" --cli "$bin/zstore-cli" --scale 0.01 \
  --probes fd-1024,http-100m-token,slowloris-2 2>&1)
rc=$?
echo "$out"
fail() { echo "FAILED: $1" >&2; exit 1; }
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "exit status $rc"
grep -q '^| probe | what was done |' <<<"$out" || fail "no table header"
for p in fd-1024 http-100m-token slowloris-2; do
  grep -Eq "^\| $p \| [^|]+ \| [0-9]+ \| [0-9]+ \| [0-9]+ \| healthz [0-9]+/[0-9]+ " <<<"$out" || fail "no row for $p"
done
if grep -q "could not run" <<<"$out"; then fail "a probe could not run"; fi
"$root/tools/probe-hostile" --probes bogus >/dev/null 2>&1
[ $? -eq 2 ] || fail "an unknown probe is not a usage error"
echo "probe-hostile smoke test passed"
