#!/usr/bin/env bash
# The two-dc tier topology (deploy/topologies/two-dc) on loopback, step by step: an L2 pair,
# two L1 hubs in each of dc1 and dc2, and a cascading proxy in dc1. A dc2 provider of `pay` is
# discovered from dc1 through L2 and then served from dc1-a's cache; it crashes (kill -9) and
# disappears from dc1 one L1 lease later; with both L2 hubs stopped, dc1 still resolves its own
# `web` as usual and serves `pay` from its cache marked stale, until the L2 hubs come back. Two
# dc1 callers' failure reports isolate a dc2 address everywhere; then an operator switches `pay`
# off at L2 (config key degrade.pay) and applications in both datacenters fail fast, and back.
# Last, a datacenter traffic switch: one routing rule at dc1-a (cascadectl set-routes) moves
# dc1's consumers of `pay` from dc2's providers to a dc1 provider, and one more moves them back.
# Everything runs with CurveZMQ keys made at start in the run's temp dir (deploy/topologies/keys.sh):
# a key pair per hub, proxy and agent, and one operator key that every cascadectl call uses.
#
# Usage: deploy/tiers-demo.sh [BUILD_DIR]   (default: ./build)
#   KEEP=1       keep the temp dir (hub logs and state, agent output) instead of removing it
#   TIMEOUT_S=N  give up on any single wait after N seconds (default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=$(realpath -m "${1:-build}")  # absolute: the hubs run in the temp dir (their key paths)
HUB=$BUILD/bin/cascade-hub
AGENT=$BUILD/bin/cascade-agent
CTL=$BUILD/tools/cascadectl
TOPO=$PWD/deploy/topologies/two-dc
TIMEOUT_S=${TIMEOUT_S:-20}
KEEP=${KEEP:-0}

for bin in "$HUB" "$AGENT" "$CTL"; do
  [ -x "$bin" ] || { echo "missing $bin: build first (bash tools/build.sh)" >&2; exit 1; }
done

# Endpoints and timings are read from the topology's configs so the demo cannot drift from them.
# shellcheck source=deploy/topologies/keys.sh
source deploy/topologies/keys.sh
conf() { topo_conf "$TOPO/$1.toml" "$2"; }
ep() { conf "$1" listen; }
L2_A=$(ep l2-a) L2_B=$(ep l2-b)
DC1_A=$(ep dc1-a) DC1_B=$(ep dc1-b) DC2_A=$(ep dc2-a) DC2_B=$(ep dc2-b) PROXY=$(ep dc1-proxy)
L1_BEAT_MS=$(conf dc1-a beat-interval-ms) L1_LEASE_MS=$(conf dc1-a lease-ms)
L2_LEASE_MS=$(conf l2-a lease-ms)
CACHE_TTL_MS=$(( L2_LEASE_MS / 2 ))  # hub default: half the lease the upstream grants

WORK=$(mktemp -d /tmp/cascade-tiers.XXXXXX)
declare -A PID    # name -> pid of every process we started
ORDER=()          # names in start order
cleanup() {
  local i pid
  # One at a time in reverse start order: agents deregister while their hubs still answer,
  # then proxy, L1 and L2 hubs. Anything still running after 3 s is killed outright.
  for (( i=${#ORDER[@]}-1; i>=0; i-- )); do
    pid=${PID[${ORDER[i]}]}
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ "$KEEP" = 1 ]; then echo; echo "logs and state are in $WORK (kept)"
  else echo; echo "logs and state were in $WORK (removed; KEEP=1 keeps them)"; rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
now_ms() { date +%s%3N; }
indent() { sed 's/^/   /'; }
fail() {
  printf '\n\033[1;31mFAILED: %s\033[0m\n' "$*" >&2
  local f
  for f in "$WORK"/*.log; do [ -s "$f" ] && { echo "--- tail of $f" >&2; tail -n 5 "$f" >&2; }; done
  exit 1
}

# Runs CMD... until it succeeds, then sets WAITED_MS to the time since T0_MS. Bounded by TIMEOUT_S.
wait_until() {  # t0_ms, what we wait for, cmd...
  local t0=$1 what=$2; shift 2
  local deadline=$(( $(now_ms) + TIMEOUT_S * 1000 ))
  until "$@"; do
    [ "$(now_ms)" -lt "$deadline" ] || fail "$what: not reached after ${TIMEOUT_S} s"
    sleep 0.05
  done
  WAITED_MS=$(( $(now_ms) - t0 ))
}

# --- processes -------------------------------------------------------------------------------
start_hub() {  # name: the config $TOPO/name.toml; state and log go to the temp dir
  local name=$1
  rm -f "$WORK/$name/hub.endpoint"
  # In the temp dir, where the config's key paths lead. Made-up instance addresses (10.x):
  # never probed (--probe-held off).
  (cd "$WORK" && exec "$HUB" --config "$TOPO/$name.toml" --data "$WORK/$name" --probe-held off \
    >>"$WORK/$name.log" 2>&1) &
  PID[$name]=$!; [[ " ${ORDER[*]} " == *" $name "* ]] || ORDER+=("$name")
}
# A hub writes hub.endpoint once bound; a proxy only logs it.
hub_ready() {
  kill -0 "${PID[$1]}" 2>/dev/null || fail "$1 exited at start (port taken?)"
  [ -s "$WORK/$1/hub.endpoint" ] || grep -q 'proxy listening' "$WORK/$1.log"
}
start_agent() {  # name, then agent flags: each --hub EP gets the public key of the hub at EP
  local name=$1 arg prev='' keys=()
  shift
  for arg in "$@"; do
    [ "$prev" = --hub ] && keys+=(--hub-public-key "$arg=${HUB_PUB[$arg]}")
    prev=$arg
  done
  "$AGENT" --id "$name" --beat-interval-ms "$L1_BEAT_MS" --secret-key "$WORK/keys/$name.key" \
    "${keys[@]}" "$@" >"$WORK/$name.out" 2>"$WORK/$name.log" &
  PID[$name]=$!; ORDER+=("$name")
}
stop() {  # signal, name
  kill "-$1" "${PID[$2]}"
  local deadline=$(( $(now_ms) + TIMEOUT_S * 1000 ))
  while kill -0 "${PID[$2]}" 2>/dev/null; do
    [ "$(now_ms)" -lt "$deadline" ] || fail "$2 did not exit after SIG$1"
    sleep 0.02
  done
  wait "${PID[$2]}" 2>/dev/null || true
}

# --- questions to hubs -----------------------------------------------------------------------
ctl() { ctl_as "$CTL" "$WORK" operator "$@"; }  # ep, cascadectl args: as the operator
# Resolves SERVICE at EP into $WORK/answer.json; true if the answer lists ADDRESS.
has() {  # ep, service, address
  ctl "$1" --json resolve "$2" >"$WORK/answer.json" 2>/dev/null || true
  grep -q "\"address\": \"$3\"" "$WORK/answer.json"
}
# A top-level field of the last answer (instances' fields are indented deeper).
field() { sed -n "s/^  \"$1\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}\$/\1/p" "$WORK/answer.json"; }
stale_answer() { has "$@" && [ "$(field stale)" = true ]; }
fresh_answer() { has "$@" && [ "$(field stale)" = false ]; }
not_found() {  # ep, service: exit 1 is "no instances"; 3 (unreachable) must not count as gone
  local rc=0; ctl "$1" resolve "$2" >/dev/null 2>&1 || rc=$?; [ "$rc" = 1 ]
}
lower_hubs() {  # ep, how many
  ctl "$1" --json topology 2>/dev/null | grep -q "\"hubs\": $2\$"
}
# Checks what the demo is about rather than just printing it.
expect() {  # what, actual, wanted
  [ "$2" = "$3" ] || fail "expected $1 '$3', got '$2' (answer: $(tr -d ' \n' <"$WORK/answer.json"))"
}
summary() { ctl "$1" resolve "$2" | head -n 1; }
# An HTTP GET over bash's /dev/tcp (no HTTP client needed): the response's status code.
http_status() {  # host:port, path
  local fd code
  exec {fd}<>"/dev/tcp/${1%:*}/${1##*:}" || return 1
  printf 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' "$2" "$1" >&"$fd"
  code=$(head -n 1 <&"$fd" | cut -d' ' -f2)
  exec {fd}<&-
  echo "$code"
}
# An HTTP GET like http_status: the response's body (the lines after the header's blank line).
http_body() {  # host:port, path
  local fd
  exec {fd}<>"/dev/tcp/${1%:*}/${1##*:}" || return 1
  printf 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' "$2" "$1" >&"$fd"
  sed '1,/^\r\{0,1\}$/d' <&"$fd"
  exec {fd}<&-
}
pick_status() { http_status "$1" /api/v1/services/pay/pick; }  # the sidecar's http address
picks_are() { [ "$(pick_status "$APP_DC1")" = "$1" ] && [ "$(pick_status "$APP_DC2")" = "$1" ]; }
# True if the sidecar's answer for pay (its list and the rules it holds) contains TEXT.
sidecar_holds() {  # http address, text
  [[ $(http_body "$1" /api/v1/services/pay) == *"$2"* ]]
}
# One pick of pay through a sidecar: "ZONE ADDRESS" of the instance chosen ("" if none was).
pick_zone() {  # http address
  http_body "$1" /api/v1/services/pay/pick |
    sed -n 's/.*"instance":{.*"address":"\([^"]*\)".*"zone":"\([^"]*\)".*/\2 \1/p'
}
# True if four picks of pay through a sidecar all chose an instance in ZONE (round robin: each
# candidate at least once, there are at most two); PICKED lists the addresses chosen, PICKS_AT_MS
# is when the first of them was asked for (checking four takes a while on a busy machine).
picks_in() {  # http address, zone
  local got
  PICKED=()
  PICKS_AT_MS=$(now_ms)
  for _ in 1 2 3 4; do
    got=$(pick_zone "$1")
    PICKED+=("${got#* }")
    [ "${got%% *}" = "$2" ] || return 1
  done
}
# The operator's one command: pay's rule at dc1-a becomes '=> zone = ZONE'; then waits until
# app-dc1's picks all go there. SWITCHED_MS: from the command to the first of the four picks that
# showed it; REPLIED_MS: until cascadectl returned.
switch_dc1_to() {  # zone
  local t0
  t0=$(now_ms)
  ctl "$DC1_A" set-routes pay --rule "=> zone = $1" | indent
  REPLIED_MS=$(( $(now_ms) - t0 ))
  wait_until "$t0" "app-dc1 picking $1's pay" picks_in "$APP_DC1" "$1"
  SWITCHED_MS=$(( PICKS_AT_MS - t0 ))
}
picked() { printf '%s\n' "${PICKED[@]}" | sort -u | paste -sd ' ' -; }  # PICKED, each address once
http_address() {  # agent name: the address its --http API listens on
  sed -n 's/^http listening on //p' "$WORK/$1.out"
}
says_curve() { [ "$(hub_security "$CTL" "$WORK" "$(ep "$1")")" = curve ]; }  # name

HUBS=(l2-a l2-b dc1-a dc1-b dc2-a dc2-b dc1-proxy)  # in start order: upstreams first
for name in "${HUBS[@]}"; do
  port=$(ep "$name"); port=${port##*:}
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    fail "port $port ($name) is already in use: is another cascade network running?"
  fi
done

# ---------------------------------------------------------------------------------------------
step "Keys: a CurveZMQ key pair per hub, proxy and agent, and an operator key (in $WORK/keys)"
# The hubs' and proxy's keys and their authorised keys (L1 hubs as `hub` at the L2 pair, the
# proxy as `proxy` at dc1-a, the operator everywhere) come from the configs; the agents are
# added here with the services they may register or use.
topology_keys "$TOPO" "$WORK" "$CTL" dc1-proxy=query=pay
agent_key() {  # name, role and scopes, then the hubs that admit it
  local name=$1 words=$2 hub
  shift 2
  keygen_once "$CTL" "$name" "$WORK"
  # shellcheck disable=SC2086  # the role and scopes are words of the line
  for hub in "$@"; do authorize "$TOPO" "$WORK" "$hub" "$WORK/keys/$name.pub" "$name" $words; done
}
agent_key web-dc1 "agent register=web" dc1-a dc1-b
for name in pay-dc2 pay-dc2-new pay-dc2-b; do agent_key $name "agent register=pay" dc2-a dc2-b; done
agent_key pay-dc1 "agent register=pay" dc1-a dc1-b
agent_key consumer-dc1 "agent query=pay" dc1-proxy
# Two callers that report failed calls on pay: the hub counts reporters by key, so two keys.
for name in caller-a caller-b; do agent_key $name "agent query=pay" dc1-a; done
# Two applications' sidecars, one per datacenter, that follow the config group `ops`.
agent_key app-dc1 "agent query=pay" dc1-a dc1-b
agent_key app-dc2 "agent query=pay" dc2-a dc2-b
echo "   dc1-a admits:"; grep -v '^#' "$WORK/keys/dc1-a.authorized_keys" | cut -d' ' -f2- | indent
echo "   l2-a admits:";  grep -v '^#' "$WORK/keys/l2-a.authorized_keys" | cut -d' ' -f2- | indent

# ---------------------------------------------------------------------------------------------
step "Start the two-dc topology on loopback (L1: beat ${L1_BEAT_MS} ms, lease ${L1_LEASE_MS} ms; L2: lease ${L2_LEASE_MS} ms)"
t0=$(now_ms)
for name in "${HUBS[@]}"; do start_hub "$name"; done
for name in "${HUBS[@]}"; do
  wait_until "$t0" "$name listening" hub_ready "$name"
  # Its status, asked with the operator key, must say curve (a proxy answers once dc1-a does).
  wait_until "$t0" "$name answering with security: curve" says_curve "$name"
  if [ "$name" = dc1-proxy ]; then what="proxy -> dc1-a    "
  else what=$(printf 'tier %s  zone %-5s' "$(conf "$name" tier)" "$(conf "$name" zone)"); fi
  printf '   %-9s %s %s  security: curve\n' "$name" "$what" "$(ep "$name")"
done
for hub in "$DC1_A" "$DC1_B" "$DC2_A" "$DC2_B"; do wait_until "$t0" "$hub: both L2 up" upstreams_up "$CTL" "$WORK" "$hub" 2; done
for hub in "$L2_A" "$L2_B"; do wait_until "$t0" "$hub: holds all four L1 tiers" lower_hubs "$hub" 4; done
echo "   -> every L1 hub holds its tier at both L2 hubs (upstream-mode all) after $WAITED_MS ms"

step "A dc1 provider registers web at dc1-a (same-tier service, for later)"
t0=$(now_ms)
start_agent web-dc1 --hub "$DC1_A" --hub "$DC1_B" --register "web=10.1.0.10:8080,zone=dc1"
wait_until "$t0" "web at dc1-a" has "$DC1_A" web 10.1.0.10:8080
echo "   -> web resolvable at dc1-a after $WAITED_MS ms: $(summary "$DC1_A" web)"

# ---------------------------------------------------------------------------------------------
step "a. A dc2 provider registers pay (at dc2-a, dc2-b as fallback); dc1 discovers it through L2"
t0=$(now_ms)
start_agent pay-dc2 --hub "$DC2_A" --hub "$DC2_B" --register "pay=10.2.0.1:8443,zone=dc2"
wait_until "$t0" "pay at l2-a" has "$L2_A" pay 10.2.0.1:8443
wait_until "$t0" "pay at l2-b" has "$L2_B" pay 10.2.0.1:8443
echo "   -> dc2's aggregate carried pay to both L2 hubs after $WAITED_MS ms"
echo "   first lookup at dc1-a (dc1 has no pay: dc1-a asks L2):"
t0=$(now_ms)
first=$(ctl "$DC1_A" resolve pay) || fail "dc1-a does not find pay although both L2 hubs have it"
took=$(( $(now_ms) - t0 ))
indent <<<"$first"
[[ $first == *"(tier 2, upstream, "* ]] || fail "expected the first answer from upstream, tier 2"
echo "   -> source upstream, tier 2, answered in $took ms (cascadectl round trip, process start included)"

echo "   a consumer agent behind the dc1 proxy starts using pay:"
t0=$(now_ms)
start_agent consumer-dc1 --hub "$PROXY" --use pay --data "$WORK/consumer-dc1"
wait_until "$t0" "consumer-dc1 resolving pay" grep -q '^resolved pay' "$WORK/consumer-dc1.out"
indent <"$WORK/consumer-dc1.out" | sed 's/^   /   consumer-dc1: /'
echo "   -> resolved through dc1-proxy -> dc1-a after $WAITED_MS ms"

# ---------------------------------------------------------------------------------------------
step "b. The next lookups at dc1-a are served from its cache (TTL ${CACHE_TTL_MS} ms = half the L2 lease)"
for i in 1 2 3 4 5; do
  t0=$(now_ms)
  has "$DC1_A" pay 10.2.0.1:8443 || fail "pay vanished from dc1-a"
  took=$(( $(now_ms) - t0 ))
  expect source "$(field source)" cache
  echo "   lookup $i: source $(field source), tier $(field tier), entry $(field age_ms) ms old, answered in $took ms"
  sleep 0.2
done

# ---------------------------------------------------------------------------------------------
step "c. cascadectl topology of dc1-a"
ctl "$DC1_A" topology | indent
echo "   (l2-a: $(ctl "$L2_A" topology | grep '^children' | sed 's/  */ /g'))"

# ---------------------------------------------------------------------------------------------
step "d. The dc2 provider crashes (kill -9): how long until pay is gone at dc1-a"
stop KILL pay-dc2; t0=$(now_ms)
wait_until "$t0" "pay gone at dc1-a" not_found "$DC1_A" pay
bound=$(( L1_LEASE_MS + 2 * L1_BEAT_MS ))
echo "   -> pay gone at dc1-a after $WAITED_MS ms (dc2-a expires it one L1 lease, ${L1_LEASE_MS} ms, after its last beat; expected within $bound ms)"
[ "$WAITED_MS" -le "$bound" ] || echo "   !! slower than the expected $bound ms"
wait_until "$t0" "consumer-dc1 seeing pay gone" grep -q '^changed pay .*(0 instances' "$WORK/consumer-dc1.out"
echo "   consumer-dc1 saw after $WAITED_MS ms: $(grep '^changed pay .*(0 instances' "$WORK/consumer-dc1.out" | tail -n 1)"

# ---------------------------------------------------------------------------------------------
step "e. A new dc2 provider of pay; then both L2 hubs stop (SIGTERM) and come back"
t0=$(now_ms)
start_agent pay-dc2-new --hub "$DC2_A" --hub "$DC2_B" --register "pay=10.2.0.2:8443,zone=dc2"
wait_until "$t0" "new pay at dc1-a" has "$DC1_A" pay 10.2.0.2:8443
echo "   -> 10.2.0.2:8443 visible at dc1-a after $WAITED_MS ms"
wait_until "$t0" "consumer-dc1 seeing the new pay" grep -q '^changed pay .*10.2.0.2:8443' "$WORK/consumer-dc1.out"
echo "   -> consumer-dc1 has it after $WAITED_MS ms"

echo "   stopping l2-a and l2-b ..."
stop TERM l2-a; stop TERM l2-b; t0=$(now_ms)
wait_until "$t0" "pay served stale at dc1-a" stale_answer "$DC1_A" pay 10.2.0.2:8443
echo "   -> pay turns stale at dc1-a $WAITED_MS ms after L2 went away (its cache entry expired and no upper tier answers):"
ctl "$DC1_A" resolve pay | indent
expect source "$(field source)" cache
echo "   dc1's own service is untouched:"
t0=$(now_ms)
has "$DC1_A" web 10.1.0.10:8080 || fail "web does not resolve at dc1-a while L2 is down"
took=$(( $(now_ms) - t0 ))
expect source "$(field source)" local; expect stale "$(field stale)" false
echo "   $(summary "$DC1_A" web)  [answered in $took ms]"
echo "   dc1-a's upstreams now:"
ctl "$DC1_A" topology | sed -n '/^UPSTREAM/,$p' | indent

echo "   restarting l2-a and l2-b (same data directories) ..."
t0=$(now_ms)
start_hub l2-a; start_hub l2-b
wait_until "$t0" "l2-a listening" hub_ready l2-a
wait_until "$t0" "l2-b listening" hub_ready l2-b
wait_until "$t0" "pay fresh again at dc1-a" fresh_answer "$DC1_A" pay 10.2.0.2:8443
echo "   -> pay fresh again at dc1-a $WAITED_MS ms after the restart:"
ctl "$DC1_A" resolve pay | indent
wait_until "$t0" "dc1-a: both L2 up again" upstreams_up "$CTL" "$WORK" "$DC1_A" 2
echo "   -> both upstreams of dc1-a up after $WAITED_MS ms"

# ---------------------------------------------------------------------------------------------
step "f. Fast fail: two dc1 callers report timeouts on one dc2 pay address; who sees the isolation"
t0=$(now_ms)
start_agent pay-dc2-b --hub "$DC2_A" --hub "$DC2_B" --register "pay=10.2.0.3:8443,zone=dc2"
wait_until "$t0" "second pay at dc1-a" has "$DC1_A" pay 10.2.0.3:8443
wait_until "$t0" "consumer-dc1 holding both pay" grep -q '^changed pay .*10.2.0.3:8443' "$WORK/consumer-dc1.out"
echo "   pay has two instances (the cap never isolates more than half of them)"
t0=$(now_ms)
for caller in caller-a caller-b; do
  # Each caller with its own key: the hub signs a report with the key's name (--reporter, the
  # same name here, only labels cascadectl's output).
  ctl_as "$CTL" "$WORK" "$caller" "$DC1_A" report-failure pay 10.2.0.2:8443 --kind timeout \
    --reporter "$caller" | head -n 1 | indent
done
echo "   (dc1-a does not hold 10.2.0.2: the reports go up to L2 and down to dc2-a, which decides)"
wait_until "$t0" "consumer-dc1 seeing the isolation" grep -q '^changed pay .*10.2.0.2:8443\[UP,isolated\]' "$WORK/consumer-dc1.out"
echo "   -> consumer-dc1 (behind the dc1 proxy) was pushed the isolation $WAITED_MS ms after the first report"
echo "      (cascadectl start-up included; the push itself is not waiting for any beat):"
grep '^changed pay .*isolated' "$WORK/consumer-dc1.out" | head -n 1 | indent
echo "   cascadectl resolve at dc2-a hides it; --all shows why:"
ctl "$DC2_A" resolve pay --all | indent
echo "   dc2-a status: $(ctl "$DC2_A" --json status | grep -E '"(isolated|unconfirmed)"' | tr -d ' \n')"

# ---------------------------------------------------------------------------------------------
step "g. Degrade switch: an operator switches pay off at L2; applications in dc1 and dc2 fail fast"
# Each application asks its sidecar for a pay instance before every call
# (GET /api/v1/services/pay/pick); the library's Client::call() obeys the same key.
start_agent app-dc1 --hub "$DC1_A" --hub "$DC1_B" --use pay --config-group ops --http 127.0.0.1:0
start_agent app-dc2 --hub "$DC2_A" --hub "$DC2_B" --use pay --config-group ops --http 127.0.0.1:0
t0=$(now_ms)
wait_until "$t0" "the sidecars' HTTP APIs" eval '[ -n "$(http_address app-dc1)" ] && [ -n "$(http_address app-dc2)" ]'
APP_DC1=$(http_address app-dc1) APP_DC2=$(http_address app-dc2)
wait_until "$t0" "pay picked in both datacenters" picks_are 200
echo "   app-dc1 and app-dc2 pick a pay instance: HTTP 200"
t0=$(now_ms)
# One command at l2-a: each hub keeps its own keys, and an L1 beating to both hubs of the pair
# serves every key either holds (l2-a's value where both set one).
ctl "$L2_A" config set ops degrade.pay on | indent
wait_until "$t0" "both sidecars refusing pay" picks_are 503
echo "   -> both datacenters fail fast (HTTP 503 degraded) $WAITED_MS ms after the operator's command"
echo "      (pushed between beats: L2 -> dc1-a, dc2-a -> sidecars; cascadectl start-up included)"
ctl "$DC1_A" config get ops | indent
t0=$(now_ms)
ctl "$L2_A" config set ops degrade.pay off >/dev/null
wait_until "$t0" "both sidecars picking pay again" picks_are 200
echo "   -> switched back on: both pick pay again after $WAITED_MS ms"

# ---------------------------------------------------------------------------------------------
step "h. Datacenter traffic switch: dc1's consumers of pay move from dc2 to dc1 with one routing rule, and back"
# Routing rules live at the hub a consumer beats to and come to it with the service's list, a
# cross-tier list too (protocol section 5.12); no hub sends them up or down a tier. dc1's
# consumers of pay (app-dc1, and consumer-dc1 behind the proxy) beat to dc1-a, so the operator
# sets the rule there: one command, replacing the rule that was there.
# A rule only chooses among the instances of the list the hub serves. An L1 with a UP instance
# of its own answers for a service from its own tier (--min-local-up 1), but not while the
# service has a routing rule there: then it composes its own instances with L2's answer, every
# datacenter's, so a rule can send dc1's consumers to dc2 although dc1 has a provider.
echo "   dc1 gets a pay provider of its own; first the operator keeps dc1's consumers on dc2:"
t0=$(now_ms)
ctl "$DC1_A" set-routes pay --rule '=> zone = dc2' | indent
wait_until "$t0" "app-dc1 holding the rule '=> zone = dc2'" sidecar_holds "$APP_DC1" '"text":"=> zone = dc2"'
start_agent pay-dc1 --hub "$DC1_A" --hub "$DC1_B" --register "pay=10.1.0.20:8443,zone=dc1"
wait_until "$t0" "app-dc1 holding dc1's pay" sidecar_holds "$APP_DC1" '"address":"10.1.0.20:8443"'
echo "   10.1.0.20 beats to dc1-a; with a rule for pay there, dc1-a composes pay with L2's answer, both datacenters:"
ctl "$DC1_A" resolve pay | indent
picks_in "$APP_DC1" dc2 || fail "app-dc1 picked ${PICKED[*]}: expected dc2's pay only ('=> zone = dc2')"
echo "   app-dc1's picks all go to dc2 ($(picked)): the rule holds dc1's provider back"
switch_dc1_to dc1
echo "   -> dc1's consumers switched to dc1 $SWITCHED_MS ms after the operator's command: app-dc1 picks $(picked)"
echo "      (cascadectl replied after $REPLIED_MS ms, its start-up included; dc1-a pushes the rule to its"
echo "      consumers at once, between their beats; four picks checked after $WAITED_MS ms)"
picks_in "$APP_DC2" dc2 || fail "app-dc2 picked ${PICKED[*]}: expected dc2's pay only"
echo "   app-dc2 is untouched: it picks $(picked) (dc2-a answers for pay from its own tier, under its own rules: none)"
switch_dc1_to dc2
echo "   -> switched back: dc1's consumers pick dc2's pay again $SWITCHED_MS ms after the command: app-dc1 picks $(picked)"
echo "      (cascadectl replied after $REPLIED_MS ms; four picks checked after $WAITED_MS ms)"

step "Done"
