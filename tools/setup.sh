# Shared set-up for tools/run and tools/test: installs the Debian packages
# zstore needs (only those missing) and configures + builds into $BUILD_DIR.
# Sourced, not executed.

ZSTORE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ZSTORE_ROOT/build}

# Build and runtime packages. Keep in sync with README.md and Dockerfile.
ZSTORE_PACKAGES=(
  g++ cmake make pkg-config ccache
  libzmq3-dev cppzmq-dev librocksdb-dev
  libboost-program-options-dev libboost-test-dev uuid-dev
  libspdlog-dev nlohmann-json3-dev libcpp-httplib-dev
)
# What only the test suite (tools/test) needs besides: pyzmq (for
# /usr/bin/python3; writes and reads CURVE certificates against ours in
# tests/security), promtool (ops_promtool_test), help2man (the man pages of
# the Debian package), lintian, dpkg-dev and systemd-analyze (package_test).
ZSTORE_TEST_PACKAGES=(
  python3-zmq prometheus help2man lintian dpkg-dev systemd
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
  cmake -S "$ZSTORE_ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" "${args[@]}" >/dev/null
  cmake --build "$BUILD_DIR" -j "${JOBS:-2}" "${target[@]}"
}
