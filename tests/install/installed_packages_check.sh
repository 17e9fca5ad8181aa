#!/usr/bin/env bash
# What an operator does with the packages, in the Debian root ROOT: apt
# installs them (resolving Depends: from what ROOT has or its archive), the
# maintainer scripts create the cascade user and /var/lib/cascade, the
# installed units verify, the hub and the example agent run exactly as their
# units run them (the unit's ExecStart, as the cascade user, the installed
# default configs) and talk to each other, the agent deregisters on SIGTERM,
# the hub exits 0, and purging removes it all. With --consumer SOURCE_DIR, a
# program is also built in ROOT against the installed libcascade-dev
# (tests/install/consumer) and run against the installed hub.
#
# The caller provides ROOT with /proc, /sys and /dev mounted, an empty /run
# (maintainer scripts then start nothing, as in a container) and a network
# namespace of its own with loopback up: the hub listens on 127.0.0.1:7400.
# Usage: installed_packages_check.sh [--consumer SOURCE_DIR] ROOT DEB_DIR
set -euo pipefail
consumer_source=
if [ "${1:-}" = --consumer ]; then
  consumer_source=$2
  shift 2
fi
root=$1 debs=$2
. "$(dirname "$0")/lib.sh"
trap stop_started EXIT
logs=$(mktemp -d "$root/tmp/cascade-check.XXXXXX")

in_root() { chroot "$root" "$@"; }

# in_root_logged NAME COMMAND...: COMMAND in ROOT; its output shown only when it fails.
in_root_logged() {
  local name=$1
  shift
  in_root "$@" >"$logs/$name.log" 2>&1 || { cat "$logs/$name.log"; fail "$name: $*"; }
}

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
    >"$logs/$unit$instance.log" 2>&1 &
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

install_packages() {
  echo "== apt-get install ./cascade-hub_*.deb ./cascade-agent_*.deb ./libcascade-dev_*.deb"
  local deb packages=()
  mkdir -p "$logs/debs"
  cp "$debs"/*.deb "$logs/debs/"
  for deb in "$logs"/debs/*.deb; do packages+=("${deb#"$root"}"); done
  in_root_logged apt-install env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${packages[@]}"
  in_root getent passwd cascade || fail "postinst made no cascade user"
  [ "$(in_root stat -c '%U:%G %a' /var/lib/cascade)" = "cascade:cascade 750" ] ||
    fail "/var/lib/cascade: $(in_root stat -c '%U:%G %a' /var/lib/cascade)"
}

verify_installed_units() {
  echo "== systemd-analyze verify, installed"
  if ! in_root test -x /usr/bin/systemd-analyze; then
    echo "(no systemd in this root: not verified here)"
    return
  fi
  # verify looks the units' Documentation= man pages up with man, where there is one.
  local man=()
  in_root test -x /usr/bin/man || { man=(--man=no); echo "(no man in this root: man pages not looked up)"; }
  for unit in cascade-hub.service cascade-hub@dc1-a.service cascade-agent@example.service; do
    verify_unit "$unit" in_root systemd-analyze verify "${man[@]}"
  done
}

run_hub_and_agent() {
  echo "== the hub and an agent, as their units start them"
  start_unit cascade-hub.service
  hub_pid=${background_pids[-1]}
  start_unit cascade-agent@.service example
  agent_pid=${background_pids[-1]}
  wait_for_output 15 example_listed ||
    { cat "$logs"/*.log; fail "the agent's instance never reached the hub"; }
  resolve_example | grep -E '"(hub|address)"'
  in_root test -s /var/lib/cascade/hub/hub.db || fail "no /var/lib/cascade/hub/hub.db"
  [ "$(in_root stat -c %U /var/lib/cascade/hub/hub.db)" = cascade ] || fail "hub.db not the cascade user's"
}

# An application built in ROOT against the installed library, run against the hub.
build_and_run_consumer() {
  echo "== an application built against the installed libcascade-dev"
  in_root_logged apt-install-toolchain env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends cmake g++ make
  cp -r "$consumer_source/tests/install/consumer" "$logs/consumer"
  local inside=${logs#"$root"}
  in_root_logged consumer-configure cmake -S "$inside/consumer" -B "$inside/consumer-build"
  in_root_logged consumer-build cmake --build "$inside/consumer-build" -j2
  in_root "$inside/consumer-build/consumer" tcp://127.0.0.1:7400 install-demo=127.0.0.1:9100
}

stop_agent_and_hub() {
  echo "== SIGTERM: the agent deregisters, the hub commits and exits 0"
  kill -TERM "$agent_pid"
  wait "$agent_pid" || fail "the agent exited $?"
  wait_for_output 5 example_gone || fail "the instance is still listed after the agent stopped"
  kill -TERM "$hub_pid"
  wait "$hub_pid" || fail "the hub exited $?"
  background_pids=()
}

purge_packages() {
  echo "== apt-get purge"
  in_root_logged apt-purge apt-get purge -y cascade-agent cascade-hub libcascade-dev
  for gone in /usr/bin/cascade-hub /etc/cascade /var/lib/cascade /usr/include/cascade; do
    ! in_root test -e "$gone" || fail "$gone is left after purge"
  done
}

install_packages
verify_installed_units
run_hub_and_agent
[ -z "$consumer_source" ] || build_and_run_consumer
stop_agent_and_hub
purge_packages
rm -rf "$logs"
echo "PASS"
