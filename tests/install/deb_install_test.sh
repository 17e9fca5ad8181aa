#!/usr/bin/env bash
# The packages as an operator meets them, on a copy of this machine: dpkg
# installs them into a copy-on-write view of / (an overlay in a private mount
# and network namespace: nothing reaches the real system), the maintainer
# scripts create the cascade user and /var/lib/cascade, the installed units
# verify, the hub and an agent run exactly as their units run them (the unit's
# ExecStart, as the cascade user, the installed default configs) and talk to
# each other, the agent deregisters on SIGTERM, and purging removes it all.
# Needs root; exits 77 (skipped) otherwise.
# Usage: deb_install_test.sh SOURCE_DIR DEB_DIR SYSTEMD_ANALYZE IP
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
base=$2 source=$3 debs=$4 systemd_analyze=$5 ip=$6
. "$source/tests/install/lib.sh"
trap stop_started EXIT
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

in_root() { chroot "$root" "$@"; }

# The unit's ExecStart for INSTANCE, as the cascade user, in the background,
# with the state directory systemd would make (StateDirectory=, WorkingDirectory=).
start_unit() {
  local unit=$1 instance=${2:-} command state
  command=$(sed -n 's/^ExecStart=//p' "$root/lib/systemd/system/$unit" | sed "s/%i/$instance/g")
  state=$(sed -n 's/^StateDirectory=//p' "$root/lib/systemd/system/$unit" | sed "s/%i/$instance/g")
  in_root install -d -o cascade -g cascade -m 0750 "/var/lib/$state"
  echo "$unit${instance:+ ($instance)}: $command"
  chroot "$root" setpriv --reuid=cascade --regid=cascade --init-groups \
    /bin/sh -c "cd /var/lib/$state && exec $command" \
    >"$base/$unit$instance.log" 2>&1 &
  started $!
}

resolve_example() {
  in_root cascadectl --hub tcp://127.0.0.1:7400 resolve example --json 2>/dev/null
}
example_listed() { resolve_example | grep -q '"127.0.0.1:8080"'; }
# cascadectl resolve exits 1 for "not found" (an answer, with no instances).
example_gone() {
  local answer status=0
  answer=$(resolve_example) || status=$?
  [ $status -eq 1 ] && grep -q '"instances": \[\]' <<<"$answer"
}

make_scratch_root
cp "$debs"/*.deb "$root/tmp/"

echo "== dpkg -i"
in_root sh -c 'dpkg -i /tmp/*.deb' >"$base/dpkg-install.log" 2>&1 ||
  { cat "$base/dpkg-install.log"; fail "dpkg -i"; }
in_root getent passwd cascade || fail "postinst made no cascade user"
[ "$(in_root stat -c '%U:%G %a' /var/lib/cascade)" = "cascade:cascade 750" ] ||
  fail "/var/lib/cascade: $(in_root stat -c '%U:%G %a' /var/lib/cascade)"

echo "== systemd-analyze verify, installed"
for unit in cascade-hub.service cascade-hub@dc1-a.service cascade-agent@example.service; do
  verify_unit "$unit" in_root "$systemd_analyze" verify
done

echo "== the hub and an agent, as their units start them"
start_unit cascade-hub.service
hub_pid=${background_pids[-1]}
start_unit cascade-agent@.service example
agent_pid=${background_pids[-1]}
wait_for_output 15 example_listed ||
  { cat "$base"/*.log; fail "the agent's instance never reached the hub"; }
resolve_example
in_root test -s /var/lib/cascade/hub/hub.db || fail "no /var/lib/cascade/hub/hub.db"
[ "$(in_root stat -c %U /var/lib/cascade/hub/hub.db)" = cascade ] || fail "hub.db not the cascade user's"

echo "== SIGTERM: the agent deregisters, the hub commits and exits 0"
kill -TERM "$agent_pid"
wait "$agent_pid" || fail "the agent exited $?"
example_gone || fail "the instance is still listed after the agent stopped"
kill -TERM "$hub_pid"
wait "$hub_pid" || fail "the hub exited $?"
background_pids=()

echo "== dpkg --purge"
in_root dpkg --purge cascade-agent cascade-hub libcascade-dev >"$base/dpkg-purge.log" 2>&1 ||
  { cat "$base/dpkg-purge.log"; fail "dpkg --purge"; }
for gone in /usr/bin/cascade-hub /etc/cascade /var/lib/cascade /usr/include/cascade; do
  ! in_root test -e "$gone" || fail "$gone is left after purge"
done
echo "PASS"
