# shellcheck shell=bash
# Helpers of tools/container-check that deal with images and ports, not
# with zstore: sourced, not executed. They use the caller's $work (a temp
# directory), $dangling_before (`podman images -q --filter dangling=true |
# sort` at the start, or "unset") and fail (prints and exits 1).

# Images without a tag (and without children) that appeared since
# $dangling_before was taken: the build stage's image (1 GB; the ccache cache
# mount makes the next build fast without it), the images the new build and
# new base images took their tags from, and what a failed build left. Removing
# one can leave its parent dangling: repeat until none is new.
remove_new_dangling() {
  [ "$dangling_before" != unset ] || return 0
  local new id removed=0 progress
  for _ in 1 2 3 4 5; do
    new=$(comm -13 <(echo "$dangling_before") <(podman images -q --filter dangling=true | sort))
    progress=0
    for id in $new; do
      if podman rmi "$id" >/dev/null 2>&1; then
        removed=$((removed + 1)) progress=1
      else
        echo "   could not remove untagged image $id"
      fi
    done
    [ "$progress" = 1 ] || break
  done
  [ "$removed" = 0 ] || echo "   removed $removed untagged image(s) of this run"
}

# The Debian mirror this machine's apt uses (the first URIs of
# /etc/apt/sources.list.d/*.sources, or the first deb line of sources.list):
# debootstrap takes its packages from where apt does.
zstore_debian_mirror() {
  local mirror
  mirror=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  [ -n "$mirror" ] || mirror=$(awk '$1 == "deb" { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
  [ -n "$mirror" ] || return 1
  echo "$mirror"
}

# debian:$1 and debian:$1-slim (a release, e.g. trixie) from Debian's archive.
make_base_images() {
  local release=$1 rootfs=$work/rootfs mirror
  [ -n "$work" ] && [ -d "$work" ] || fail "no work directory"
  mirror=$(zstore_debian_mirror) || fail "no Debian mirror in /etc/apt/sources.list(.d)"
  debootstrap --variant=minbase "$release" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log"; fail "debootstrap"; }
  # Everything below deletes inside $rootfs: make sure it is the new tree.
  [ "$rootfs" = "$work/rootfs" ] && [ "$work" != / ] && [ -f "$rootfs/etc/debian_version" ] ||
    fail "debootstrap left no root file system in '$rootfs'"
  # As Debian's images: no downloaded packages, no package lists.
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | podman import - "debian:$release" >/dev/null 2>"$work/import.log" ||
    { cat "$work/import.log"; fail "podman import debian:$release"; }
  # As Debian's -slim images: no documentation (but copyrights), man pages,
  # info or translations, now or from later apt-get installs.
  printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
    'path-exclude /usr/share/man/*' 'path-exclude /usr/share/info/*' 'path-exclude /usr/share/locale/*' \
    'path-include /usr/share/locale/locale.alias' >"$rootfs/etc/dpkg/dpkg.cfg.d/slim"
  find "$rootfs/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
  find "$rootfs/usr/share/man" "$rootfs/usr/share/info" -mindepth 1 -delete
  find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
  tar -C "$rootfs" -c . | podman import - "debian:$release-slim" >/dev/null 2>"$work/import.log" ||
    { cat "$work/import.log"; fail "podman import debian:$release-slim"; }
  rm -rf "$rootfs"
}
