#!/usr/bin/env bash
# Runs every hub (and proxy) of one topology of deploy/topologies on loopback, with keys: makes a
# key pair per hub and an operator key in the state directory (keys.sh), writes each hub's
# authorised keys, starts the hubs there (the configs' `data` and key paths are relative to it),
# shows each one's `security` from its status, and runs until Ctrl-C. Run it again with the same
# state directory and it keeps the keys and the hubs' state.
#
# Usage: deploy/topologies/run.sh TOPOLOGY [STATE_DIR]   (two-dc or three-tier;
#                                                          default state dir /tmp/cascade-TOPOLOGY)
#   BUILD=DIR    the build tree (default: ./build)
#   CHECK=1      stop once every hub answers with Curve, instead of running until Ctrl-C (tests)
#   TIMEOUT_S=N  give up on a hub that does not answer after N seconds (default 20)
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ $# -lt 1 ] || [ ! -d "deploy/topologies/$1" ]; then
  echo "usage: deploy/topologies/run.sh TOPOLOGY [STATE_DIR]; topologies:" \
    "$(find deploy/topologies -mindepth 1 -maxdepth 1 -type d -printf '%f ')" >&2
  exit 2
fi
TOPO=$PWD/deploy/topologies/$1
STATE=$(realpath -m "${2:-/tmp/cascade-$1}")
BUILD=$(realpath -m "${BUILD:-build}")
HUB=$BUILD/bin/cascade-hub
CTL=$BUILD/tools/cascadectl
TIMEOUT_S=${TIMEOUT_S:-20}
# shellcheck source=deploy/topologies/keys.sh
source deploy/topologies/keys.sh
for bin in "$HUB" "$CTL"; do
  [ -x "$bin" ] || { echo "missing $bin: build first (bash tools/build.sh)" >&2; exit 1; }
done

mkdir -p "$STATE"
topology_keys "$TOPO" "$STATE" "$CTL"

pids=()
stop_all() {  # newest first: lower tiers stop before the hubs they beat to
  local i
  for (( i=${#pids[@]}-1; i>=0; i-- )); do kill "${pids[i]}" 2>/dev/null || true; done
  wait 2>/dev/null || true
  echo "stopped; keys, state and logs stay in $STATE"
}
trap stop_all EXIT
trap 'exit 130' INT TERM

# Upper tiers first (a proxy has no tier: last), so no hub starts dialling an upstream not yet there.
mapfile -t names < <(for toml in "$TOPO"/*.toml; do
  echo "$(topo_conf "$toml" tier) $(basename "$toml" .toml)"
done | sort -k1,1nr -k2 | cut -d' ' -f2)
for name in "${names[@]}"; do
  (cd "$STATE" && exec "$HUB" --config "$TOPO/$name.toml") >>"$STATE/$name.log" 2>&1 &
  pids+=($!)
done

echo "$1: ${#names[@]} hubs in $STATE (logs: NAME.log, keys: keys/)"
for i in "${!names[@]}"; do
  name=${names[i]} ep=$(topo_conf "$TOPO/${names[i]}.toml" listen)
  deadline=$(( SECONDS + TIMEOUT_S ))
  until [ "$(hub_security "$CTL" "$STATE" "$ep")" = curve ]; do
    kill -0 "${pids[i]}" 2>/dev/null || { echo "$name exited: see $STATE/$name.log" >&2; exit 1; }
    [ "$SECONDS" -lt "$deadline" ] || { echo "$name: no answer with Curve at $ep" >&2; exit 1; }
    sleep 0.1
  done
  printf '  %-10s %s  security: curve\n' "$name" "$ep"
done
# Curve end to end: every hub reaches all its upstreams (its key admitted there as `hub`).
for name in "${names[@]}"; do
  ep=$(topo_conf "$TOPO/$name.toml" listen)
  n_up=$(topo_list "$TOPO/$name.toml" upstream | grep -c . || true)
  # A proxy's topology is its hub's; the top tier has no upstream.
  if [ "$(topo_conf "$TOPO/$name.toml" proxy)" = true ] || [ "$n_up" = 0 ]; then continue; fi
  deadline=$(( SECONDS + TIMEOUT_S ))
  until upstreams_up "$CTL" "$STATE" "$ep" "$n_up"; do
    [ "$SECONDS" -lt "$deadline" ] || { echo "$name: upstreams not reached, see $STATE" >&2; exit 1; }
    sleep 0.1
  done
done
echo "every hub reaches its upstreams over Curve"
echo "as the operator: $CTL --hub ENDPOINT --secret-key $STATE/keys/operator.key" \
  "--hub-public-key $STATE/$(topo_conf "$TOPO/${names[0]}.toml" secret-key | sed 's/\.key$/.pub/')"
echo "  (another hub: its own .pub, named by its config's secret-key; an agent: cascadectl keygen,"
echo "  a line in the hub's keys/NAME.authorized_keys, kill -HUP; the lines are rewritten at start)"
[ "${CHECK:-0}" = 1 ] && exit 0
echo "running; Ctrl-C stops every hub"
wait
