#!/usr/bin/env bash
# The packages as an operator meets them, on a copy of this machine: a
# copy-on-write view of / (an overlay in a private mount and network
# namespace: nothing reaches the real system) in which
# installed_packages_check.sh installs them with apt, runs the hub and an
# agent as their units do, and purges them.
# Needs root; exits 77 (skipped) otherwise.
# Usage: deb_install_test.sh SOURCE_DIR DEB_DIR IP
set -euo pipefail

if [ "${1:-}" != --inside ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "skipped: needs root (mounts an overlay over / in a private namespace)"
    exit 77
  fi
  if ! mountpoint -q /; then  # a plain chroot: no private mount namespace can be made of it
    echo "skipped: / is not a mount point (a chroot?), so its mounts cannot be made private"
    exit 77
  fi
  # Everything lives on a tmpfs mounted on $base inside the namespace, which
  # vanishes with it: nothing is ever deleted through a bind mount of /dev.
  base=$(mktemp -d /tmp/cascade-deb-install.XXXXXX)
  status=0
  unshare --mount --net --propagation private -- bash "$0" --inside "$base" "$@" || status=$?
  rmdir "$base"
  exit $status
fi
base=$2 source=$3 debs=$4 ip=$5
root=$base/merged

# A writable view of this machine: / below, a tmpfs on top; /proc, /sys and
# /dev of this namespace; an empty /run, so the maintainer scripts see no
# running systemd (as in a container) and start nothing.
make_scratch_root() {
  mount -t tmpfs tmpfs "$base"
  mkdir -p "$base/upper" "$base/work" "$root"
  mount -t overlay overlay -o "lowerdir=/,upperdir=$base/upper,workdir=$base/work" "$root"
  mount -t proc proc "$root/proc"
  mount --rbind /sys "$root/sys"
  mount --rbind /dev "$root/dev"
  mount -t tmpfs tmpfs "$root/run"
  mount -t tmpfs tmpfs "$root/tmp"
  "$ip" link set lo up
}

make_scratch_root
bash "$source/tests/install/installed_packages_check.sh" "$root" "$debs"
