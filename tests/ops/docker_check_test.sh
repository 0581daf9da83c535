#!/usr/bin/env bash
# Tests tools/docker-check itself: it passes on the real Dockerfile against
# this build, and fails (naming the problem) on broken copies of it or of
# tools/setup.sh: a runtime package removed, a misspelt package, a COPY of a
# file that is not built, a base image of a release setup.sh does not know.
#   usage: docker_check_test.sh ROOT BUILD_DIR real|broken [SANITIZER]
# real: the real Dockerfile passes; broken: the broken copies fail. A
# sanitizer build links libasan/libtsan, which no image ships (the image is
# built in Release): there `real` is skipped (exit 77, ctest's SKIP_RETURN_CODE).
set -uo pipefail
root=$1 build=$2 part=$3 sanitizer=${4:-}
case "$part" in
  real|broken) ;;
  *) echo "usage: docker_check_test.sh ROOT BUILD_DIR real|broken [SANITIZER]"; exit 2 ;;
esac
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

if [ "$part" = real ]; then
  if [ -n "$sanitizer" ]; then
    echo "skipped: real Dockerfile passes ($sanitizer build links sanitizer runtimes)"
    exit 77
  fi
  expect "real Dockerfile passes" 0 "docker-check: OK" "$root/Dockerfile"
  exit $status
fi

# The runtime packages come from tools/setup.sh (ZSTORE_RUNTIME_PACKAGES,
# for this machine's release): broken copies of it go into a build context
# of their own (the other files the Dockerfile copies are linked in).
context() {  # context NAME: $tmp/NAME with the real files and a setup.sh to edit
  mkdir -p "$tmp/$1/tools"
  ln -s "$root/tools/docker-entrypoint" "$tmp/$1/tools/docker-entrypoint"
  cp "$root/tools/setup.sh" "$tmp/$1/tools/setup.sh"
  echo "$tmp/$1"
}
expect_context() {  # expect_context NAME WANT_RC PATTERN CONTEXT
  local saved=$root
  root=$4
  expect "$1" "$2" "$3" "$saved/Dockerfile"
  root=$saved
}
httplib=$(bash -c 'source "$1" && printf "%s\n" "${ZSTORE_RUNTIME_PACKAGES[@]}"' _ "$root/tools/setup.sh" | grep '^libcpp-httplib')
[ -n "$httplib" ] || { echo "FAILED: no libcpp-httplib package in ZSTORE_RUNTIME_PACKAGES"; exit 1; }
ctx=$(context missing-package)
sed -i "s/ $httplib\b//" "$ctx/tools/setup.sh"
grep -q "$httplib" "$ctx/tools/setup.sh" && { echo "FAILED: could not remove $httplib"; exit 1; }
expect_context "missing runtime package" 1 "is in package $httplib, which the runtime stage does not install" "$ctx"

ctx=$(context unknown-package)
sed -i 's#libzmq5 libuuid1 #libzmq5 libuuid1 libzstore-no-such-package9 #' "$ctx/tools/setup.sh"
expect_context "unknown package" 1 "does not know package 'libzstore-no-such-package9'" "$ctx"

sed 's#/src/build/bin/zstore-cli #/src/build/bin/zstore-cli /src/build/bin/zstore-missing #' "$root/Dockerfile" >"$tmp/missing-file"
expect "missing copied file" 1 "zstore-missing does not exist" "$tmp/missing-file"

sed 's#COPY \. \.#COPY . .\nCOPY no-such-dir/ /etc/zstore/#' "$root/Dockerfile" >"$tmp/missing-context-file"
expect "missing build-context file" 1 "no-such-dir/.*does not exist" "$tmp/missing-context-file"

sed 's#^FROM debian:[a-z]*-slim#FROM debian:buster-slim#' "$root/Dockerfile" >"$tmp/unknown-release"
expect "unknown release" 1 "does not know release 'buster'" "$tmp/unknown-release"

sed '/^COPY tools\/setup.sh /d' "$root/Dockerfile" >"$tmp/no-setup-copy"
expect "runtime stage without setup.sh" 1 "does not COPY tools/setup.sh" "$tmp/no-setup-copy"

exit $status
