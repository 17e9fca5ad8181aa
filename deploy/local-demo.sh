#!/usr/bin/env bash
# A one-machine cascade network on loopback that shows, step by step, what the
# registry does: one hub, three providers of one service and one of another, a
# consumer agent keeping its service fresh; then a provider crashes (kill -9)
# and expires by lease, another stops gracefully and is gone at once, and the
# hub itself is killed and restarted from its SQLite state.
#
# Usage: deploy/local-demo.sh [BUILD_DIR]   (default: ./build)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
HUB=$BUILD/bin/cascade-hub
AGENT=$BUILD/bin/cascade-agent
CTL=$BUILD/tools/cascadectl
BEAT_MS=1000
LEASE_MS=3000
SERVICE='healthmanager-HealthManagerServerWorker-/hm/cache/q'
OTHER='runtimenotify-RuntimeNotifyServerWorker-/rtntf/oper'

WORK=$(mktemp -d /tmp/cascade-demo.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  echo; echo "logs and state were in $WORK (removed)"; rm -rf "$WORK"
}
trap cleanup EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
now_ms() { date +%s%3N; }

start_hub() {
  rm -f "$WORK/hub/hub.endpoint"
  # The demo's instances have made-up addresses (10.0.0.x): the hub must never
  # dial them, so it does not probe held agents (--probe-held off).
  "$HUB" --id demo-hub --listen "tcp://127.0.0.1:${PORT:-*}" --data "$WORK/hub" \
    --beat-interval-ms $BEAT_MS --lease-ms $LEASE_MS --probe-held off >>"$WORK/hub.log" 2>&1 &
  HUB_PID=$!; pids+=($HUB_PID)
  for _ in $(seq 100); do [ -s "$WORK/hub/hub.endpoint" ] && break; sleep 0.05; done
  EP=$(cat "$WORK/hub/hub.endpoint")
  PORT=${EP##*:}
}

start_agent() {  # name, then agent flags
  local name=$1; shift
  "$AGENT" --hub "$EP" --id "$name" --beat-interval-ms $BEAT_MS "$@" >"$WORK/$name.out" 2>"$WORK/$name.log" &
  local pid=$!; pids+=($pid); eval "PID_${name//-/_}=$pid"
}

# Waits until `cascadectl resolve SERVICE --json` does (or does not) mention ADDRESS; prints the time taken.
wait_for() {  # present|absent, address, started_ms
  local want=$1 addr=$2 t0=$3
  while :; do
    if "$CTL" --hub "$EP" --json resolve "$SERVICE" 2>/dev/null | grep -q "\"$addr\""; then [ "$want" = present ] && break
    else [ "$want" = absent ] && break; fi
    sleep 0.05
  done
  echo "   -> $addr $want after $(( $(now_ms) - t0 )) ms"
}

step "Start a hub (beat ${BEAT_MS} ms, lease ${LEASE_MS} ms)"
start_hub
echo "   hub listening on $EP, state in $WORK/hub/hub.db"

step "Start three providers of $SERVICE and one of $OTHER"
start_agent provider-a --register "$SERVICE=10.0.0.1:8080,weight=100,zone=dc1-a"
start_agent provider-b --register "$SERVICE=10.0.0.2:8080,weight=50,zone=dc1-b"
start_agent provider-c --register "$SERVICE=10.0.0.3:8080,weight=100,zone=dc1-a" --register "$OTHER=10.0.0.3:9090"
start_agent provider-d --register "$OTHER=10.0.0.4:9090"
t0=$(now_ms); wait_for present 10.0.0.3:8080 "$t0"

step "A consumer agent resolves the service once, then keeps it fresh through its beats"
start_agent consumer --use "$SERVICE" --data "$WORK/consumer"
for _ in $(seq 100); do grep -q resolved "$WORK/consumer.out" 2>/dev/null && break; sleep 0.05; done
sed 's/^/   consumer: /' "$WORK/consumer.out"

step "cascadectl services / resolve"
"$CTL" --hub "$EP" services | sed 's/^/   /'
echo
"$CTL" --hub "$EP" resolve "$SERVICE" | sed 's/^/   /'

step "provider-a crashes (kill -9): it expires one lease after its last beat"
kill -9 "$PID_provider_a"; t0=$(now_ms); wait "$PID_provider_a" 2>/dev/null || true
wait_for absent 10.0.0.1:8080 "$t0"
sleep $(( BEAT_MS * 2 / 1000 ))
echo "   consumer saw:"; tail -n 1 "$WORK/consumer.out" | sed 's/^/   /'

step "provider-b stops gracefully (SIGTERM): deregistered in one acknowledged message, gone at once"
kill -TERM "$PID_provider_b"; t0=$(now_ms)
wait_for absent 10.0.0.2:8080 "$t0"
grep -h deregistered "$WORK/provider-b.log" | sed 's/^/   provider-b: /'

step "The hub is killed (kill -9) and restarted on the same port and data directory"
kill -9 "$HUB_PID"; wait "$HUB_PID" 2>/dev/null || true
echo "   (killed; while it is down the agents miss beats and the consumer serves from its cache)"
start_hub; t0=$(now_ms)
"$CTL" --hub "$EP" resolve "$SERVICE" | sed 's/^/   /'
echo "   -> answered at once from its SQLite snapshot ($(( $(now_ms) - t0 )) ms after start); epoch now:"
"$CTL" --hub "$EP" --json status | grep '"epoch"' | sed 's/^ */   /'

step "Live agents notice the new hub epoch and keep their registrations; counters:"
sleep $(( (BEAT_MS * 3) / 1000 ))
"$CTL" --hub "$EP" status | grep -E "^(hub|epoch|nodes|instances|beats |full_sets|nodes_expired|deregistrations)" | sed 's/^/   /'

step "Done"
