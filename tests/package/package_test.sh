#!/usr/bin/env bash
# The Debian packages (cmake/ZstorePackage.cmake) built by cpack from this
# build and checked: contents, conffiles, maintainer scripts, lintian (no
# error or warning), `systemd-analyze verify` of the unit, and the packaged
# zstored started with the packaged config (paths moved into a temp dir).
#   package_test.sh SOURCE_DIR BUILD_DIR static|shared
# (the third: how the build links RocksDB, ZSTORE_ROCKSDB_STATIC)
set -euo pipefail
src=$1 build=$2 rocksdb=$3
work=$(mktemp -d)
zpid=""
cleanup() {
  if [ -n "$zpid" ]; then kill -KILL "$zpid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

( cd "$work" && cpack --config "$build/CPackConfig.cmake" -B "$work/out" >"$work/cpack.log" 2>&1 ) ||
  { cat "$work/cpack.log"; fail "cpack"; }
deb=$(ls "$work"/out/zstore_*.deb) || fail "no zstore_*.deb"
dev=$(ls "$work"/out/libzstore-dev_*.deb) || fail "no libzstore-dev_*.deb"
echo "built $(basename "$deb") $(basename "$dev")"

# Contents.
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$work/files"
for f in /usr/bin/zstored /usr/bin/zstore-cli /usr/bin/zstore-dump /usr/lib/systemd/system/zstored.service \
         /etc/zstore/zstored.conf /usr/share/man/man1/zstored.1.gz /usr/share/man/man1/zstore-cli.1.gz \
         /usr/share/man/man1/zstore-dump.1.gz /usr/share/doc/zstore/copyright; do
  grep -qx "$f" "$work/files" || fail "$f not in $(basename "$deb")"
done
if grep -E 'zstore-bench|zstore-torture|\.a$|/include/' "$work/files"; then fail "development or test files in zstore"; fi
dpkg-deb -c "$dev" >"$work/dev-files"
grep -q 'usr/include/zstore/client/clone_client.h' "$work/dev-files" || fail "headers not in libzstore-dev"
grep -q 'zstoreConfig.cmake' "$work/dev-files" || fail "CMake package not in libzstore-dev"
grep -q 'pkgconfig/zstore-client.pc' "$work/dev-files" || fail "zstore-client.pc not in libzstore-dev"

# Control: conffile, dependencies, maintainer scripts.
dpkg-deb -e "$deb" "$work/control"
grep -qx /etc/zstore/zstored.conf "$work/control/conffiles" || fail "zstored.conf is not a conffile"
# dpkg-shlibdeps computed them: libzmq5, and librocksdb or, with RocksDB
# linked from librocksdb.a (ZSTORE_ROCKSDB_STATIC, the default), not it but
# the compression libraries it calls.
depends=$(grep '^Depends:' "$work/control/control")
[[ $depends == *libzmq5* ]] || fail "no libzmq5 in $depends"
case $rocksdb in
  static) [[ $depends != *librocksdb* && $depends == *libsnappy1v5* ]] ||
            fail "RocksDB linked statically: want libsnappy1v5 and no librocksdb in $depends"
          # The binaries carry RocksDB: the copyright file says so, and its license.
          dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/share/doc/zstore/copyright >"$work/copyright"
          grep -q 'librocksdb.a' "$work/copyright" && grep -q '^License: GPL-2 or Apache-2.0' "$work/copyright" ||
            fail "copyright does not say the binaries contain RocksDB" ;;
  shared) [[ $depends == *librocksdb* ]] || fail "no librocksdb in $depends" ;;
  *) fail "third argument: static or shared, not '$rocksdb'" ;;
esac
grep -q 'adduser --system' "$work/control/postinst" || fail "postinst creates no user"
# The unit only under /usr (merged /usr: lintian's aliased-location on Debian 13).
if grep -E '^/lib/' "$work/files"; then fail "files under /lib in $(basename "$deb")"; fi
# libzstore-dev: pkg-config by the name of this release (pkgconf on Debian 13).
dev_depends=$(dpkg-deb -f "$dev" Depends)
[[ $dev_depends == *pkg*conf* || $dev_depends == *pkg-config* ]] || fail "no pkg-config provider in $dev_depends"
echo "libzstore-dev Depends: $dev_depends"

# lintian: no error, no warning.
lintian --fail-on error,warning --suppress-tags-from-file /dev/null "$deb" "$dev" >"$work/lintian.log" 2>&1 ||
  { cat "$work/lintian.log"; fail "lintian"; }
cat "$work/lintian.log"
echo "lintian: clean"

# The unit, against the packaged tree (ExecStart must exist there).
mkdir -p "$work/root"
dpkg-deb -x "$deb" "$work/root"
# The man pages are the programs' --help.
zcat "$work/root/usr/share/man/man1/zstored.1.gz" | grep -q 'data\\-dir' || fail "zstored.1 lacks --data-dir"
zcat "$work/root/usr/share/man/man1/zstore-dump.1.gz" | grep -q 'chp' || fail "zstore-dump.1 lacks chp"
unit=$work/root/usr/lib/systemd/system/zstored.service
grep -q '^User=zstore$' "$unit" || fail "unit: no own user"
for setting in StateDirectory=zstore ProtectSystem=strict NoNewPrivileges=yes Restart=on-failure; do
  grep -qx "$setting" "$unit" || fail "unit: no $setting"
done
grep -q '^LimitNOFILE=' "$unit" || fail "unit: no LimitNOFILE"
# The units it refers to (targets, slices) come from this machine; the man
# pages were checked above.
mkdir -p "$work/units"
cp -a "$work/root/." "$work/units/"
cp -an /usr/lib/systemd/system/*.target /usr/lib/systemd/system/*.slice "$work/units/usr/lib/systemd/system/"
systemd-analyze verify --man=no --root="$work/units" /usr/lib/systemd/system/zstored.service >"$work/verify.log" 2>&1 ||
  { cat "$work/verify.log"; fail "systemd-analyze verify"; }
if grep -v -e '^$' "$work/verify.log"; then fail "systemd-analyze verify printed the above"; fi
echo "systemd-analyze verify: clean"
# Hardening: systemd's exposure score (0 safest .. 10) at most 2.5.
systemd-analyze security --offline=yes --threshold=25 --root="$work/units" /usr/lib/systemd/system/zstored.service \
  >"$work/security.log" 2>&1 || { cat "$work/security.log"; fail "systemd-analyze security: exposure above 2.5"; }
grep 'Overall exposure' "$work/security.log"

# The packaged zstored with the packaged config: paths and ports moved to
# the temp dir and ports free now (command line over config file).
"$work/root/usr/bin/zstored" --help >/dev/null || fail "packaged zstored --help"
"$work/root/usr/bin/zstored" --config "$work/root/etc/zstore/zstored.conf" --data-dir "$work/data" \
  --chp-port 0 --dafka-port 0 --tower-port 0 --http-port 0 >"$work/zstored.log" 2>&1 &
zpid=$!
for _ in $(seq 1 200); do
  grep -q 'zstored started' "$work/zstored.log" && break
  kill -0 "$zpid" 2>/dev/null || break
  sleep 0.1  # a turn of a 20 s wait for the start line
done
grep -q 'zstored started' "$work/zstored.log" || { cat "$work/zstored.log"; fail "packaged zstored did not start"; }
kill -TERM "$zpid"
wait "$zpid" || { cat "$work/zstored.log"; fail "packaged zstored did not exit 0 on SIGTERM"; }
zpid=""
echo "package_test: OK"
