# Shared set-up for tools/run and tools/test: installs the Debian packages
# zstore needs (only those missing) and configures + builds into $BUILD_DIR;
# and a free port block for the tools that start servers.
# Sourced, not executed.

ZSTORE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ZSTORE_ROOT/build}

# Package names that differ between Debian releases, chosen here and only
# here by the release this machine runs (VERSION_CODENAME in /etc/os-release;
# ZSTORE_RELEASE overrides it): the pkg-config implementation (Debian 13's
# pkg-config is a transitional package for pkgconf), the shared libraries the
# binaries link (the container's runtime stage installs exactly
# ZSTORE_RUNTIME_PACKAGES), the fuzzers' clang runtime and the formatter
# style_format_test checks with.
zstore_release_packages() {
  case "$1" in
    bookworm)
      ZSTORE_PKG_CONFIG_PACKAGE=pkg-config
      ZSTORE_RELEASE_RUNTIME_PACKAGES=(libboost-program-options1.74.0 libspdlog1.10 libfmt9 libcpp-httplib0.11)
      ZSTORE_FUZZ_PACKAGES=(clang libclang-rt-14-dev)
      ZSTORE_FORMAT_PACKAGES=(clang-format-14) ;;
    trixie)
      ZSTORE_PKG_CONFIG_PACKAGE=pkgconf
      ZSTORE_RELEASE_RUNTIME_PACKAGES=(libboost-program-options1.83.0 libspdlog1.15 libfmt10 libcpp-httplib0.18)
      ZSTORE_FUZZ_PACKAGES=(clang libclang-rt-19-dev)
      ZSTORE_FORMAT_PACKAGES=() ;;  # .clang-format is checked with 14 (tools/check-format)
    *)
      echo "zstore: Debian release '${1:-(none)}' is not one tools/setup.sh knows (bookworm, trixie);" \
           "add its package names to zstore_release_packages there" >&2
      return 1 ;;
  esac
}
ZSTORE_RELEASE=${ZSTORE_RELEASE:-$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")}
zstore_release_packages "$ZSTORE_RELEASE" || return 1

# Build packages. Keep in sync with README.md.
ZSTORE_PACKAGES=(
  g++ cmake make "$ZSTORE_PKG_CONFIG_PACKAGE" ccache
  libzmq3-dev cppzmq-dev librocksdb-dev
  libboost-dev libboost-program-options-dev libboost-test-dev uuid-dev libsodium-dev
  libspdlog-dev nlohmann-json3-dev libcpp-httplib-dev
)
# What the binaries need at run time (RocksDB is linked in from librocksdb.a;
# the compression libraries it calls are not): the Dockerfile's runtime stage
# installs this list, tools/docker-check checks it against a build.
ZSTORE_RUNTIME_PACKAGES=(
  libzmq5 libuuid1 libsodium23 "${ZSTORE_RELEASE_RUNTIME_PACKAGES[@]}"
  libsnappy1v5 liblz4-1 libzstd1 libbz2-1.0 zlib1g
)
# What only the test suite (tools/test) needs besides: pyzmq (for
# /usr/bin/python3; writes and reads CURVE certificates against ours in
# tests/security, and runs tools/probe-hostile), promtool (ops_promtool_test), help2man (the man pages of
# the Debian package), lintian, dpkg-dev and systemd-analyze (package_test),
# redis-server, the client libraries of zstore-peer-load and ss (iproute2:
# free ports) for bench_peers_smoke_test, clang-format-14 on Debian 12
# (style_format_test).
ZSTORE_TEST_PACKAGES=(
  python3-zmq prometheus help2man lintian dpkg-dev systemd
  redis-server libhiredis-dev libnats-dev iproute2 "${ZSTORE_FORMAT_PACKAGES[@]}"
)
# What tools/bench-peers runs zstored against (and bench_peers_smoke_test,
# with Redis, through ZSTORE_TEST_PACKAGES above): the stores and the
# client libraries zstore-peer-load drives them with.
ZSTORE_PEER_PACKAGES=(
  redis-server etcd-server etcd-client nats-server libhiredis-dev libnats-dev python3 iproute2
)

zstore_sudo() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Installs the packages of "$@" that dpkg does not list as installed.
zstore_install_packages() {
  local missing=()
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "zstore: installing ${missing[*]}" >&2
  zstore_sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive zstore_sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Configures and builds $BUILD_DIR with the extra cmake arguments "$@";
# each `--target NAME` builds only that target (several may be given).
zstore_build() {
  local args=() target=()
  while [ $# -gt 0 ]; do
    if [ "$1" = "--target" ]; then target+=(--target "$2"); shift 2; else args+=("$1"); shift; fi
  done
  cmake -S "$ZSTORE_ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" \
    -DZSTORE_DEB_PKG_CONFIG="$ZSTORE_PKG_CONFIG_PACKAGE" "${args[@]}" >/dev/null
  cmake --build "$BUILD_DIR" -j "${JOBS:-2}" "${target[@]}"
}

# Prints the first of $1 consecutive loopback ports below the kernel's
# ephemeral range (ip_local_port_range: no bind(0) and no outgoing
# connection takes a port there) with no socket on any of them now (ss,
# every state); only a process binding fixed ports can race us. For tools
# that must name ports before binding them (container port mappings, a
# zstored started with --chp-port P and P+k); the tests ask the kernel.
zstore_free_port_block() {
  local n=$1 low p i busy
  read -r low _ </proc/sys/net/ipv4/ip_local_port_range
  [ "$low" -gt $((10000 + n)) ] || { echo "ephemeral range starts at $low: no room below it" >&2; return 1; }
  for _ in $(seq 100); do
    p=$((10000 + RANDOM % (low - 10000 - n))) busy=0
    for ((i = 0; i < n; i++)); do
      # (Not `ss | grep -q`: under pipefail, grep leaving early can fail ss.)
      if [ -n "$(ss -Htan "( sport = :$((p + i)) )")" ]; then busy=1; break; fi
    done
    [ $busy = 0 ] && { echo "$p"; return 0; }
  done
  echo "no free port range" >&2
  return 1
}
