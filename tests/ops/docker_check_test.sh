#!/usr/bin/env bash
# Tests tools/docker-check itself: it passes on the real Dockerfile against
# this build, and fails (naming the problem) on broken copies of it: a
# runtime package removed, a COPY of a file that is not built, a misspelt
# package.  usage: docker_check_test.sh ROOT BUILD_DIR [SANITIZER]
# A sanitizer build links libasan/libtsan, which no image ships (the image is
# built in Release): there only the broken copies are checked.
set -uo pipefail
root=$1 build=$2 sanitizer=${3:-}
check="$root/tools/docker-check"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

expect() {  # expect NAME WANT_RC PATTERN DOCKERFILE
  local name=$1 want=$2 pattern=$3 file=$4 out rc
  out=$("$check" --root "$root" --build-dir "$build" --dockerfile "$file" 2>&1)
  rc=$?
  if [ "$rc" -ne "$want" ] || ! grep -q -- "$pattern" <<<"$out"; then
    echo "FAILED: $name: exit $rc (want $want), output lacks '$pattern':"
    echo "$out"
    status=1
  else
    echo "ok: $name"
  fi
}

if [ -z "$sanitizer" ]; then
  expect "real Dockerfile passes" 0 "docker-check: OK" "$root/Dockerfile"
else
  echo "skipped: real Dockerfile passes ($sanitizer build links sanitizer runtimes)"
fi

sed '/libcpp-httplib0.11/d' "$root/Dockerfile" >"$tmp/missing-package"
grep -q libcpp-httplib "$tmp/missing-package" && { echo "FAILED: could not remove the package"; exit 1; }
expect "missing runtime package" 1 "libcpp-httplib.so.0.11 is in package libcpp-httplib0.11, which the runtime stage does not install" \
  "$tmp/missing-package"

sed 's#/src/build/bin/zstore-cli #/src/build/bin/zstore-cli /src/build/bin/zstore-missing #' "$root/Dockerfile" >"$tmp/missing-file"
expect "missing copied file" 1 "zstore-missing does not exist" "$tmp/missing-file"

sed 's#COPY \. \.#COPY . .\nCOPY no-such-dir/ /etc/zstore/#' "$root/Dockerfile" >"$tmp/missing-context-file"
expect "missing build-context file" 1 "no-such-dir/.*does not exist" "$tmp/missing-context-file"

sed 's#libuuid1 #libuuid1 libzstore-no-such-package9 #' "$root/Dockerfile" >"$tmp/unknown-package"
expect "unknown package" 1 "does not know package 'libzstore-no-such-package9'" "$tmp/unknown-package"

exit $status
