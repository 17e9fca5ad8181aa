#!/bin/bash
# Who may use an agent's HTTP API when it listens on an address other hosts
# can reach: three hosts (network namespaces) on two subnets.
#
#   http_access_test.sh HUB AGENT
#
#        allowed 10.81.0.2 ----+
#                              agent host 10.81.0.1 / 10.81.1.1 (hub on its loopback,
#        other   10.81.1.2 ----+   cascade-agent --http 0.0.0.0:8500 --http-allow 10.81.0.0/24)
#
# From `allowed`, a request with the bearer token is answered and one without
# is 401; from `other`, the connection is closed before any answer, even with
# the token. The clients are Debian's Python (urllib), not ours.
#
# Needs root with CAP_NET_ADMIN (ip netns); exits 77 (ctest: skipped) otherwise.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../install/lib.sh
source "$here/../install/lib.sh"

[ $# -eq 2 ] || fail "usage: $0 HUB AGENT"
hub_bin=$1 agent_bin=$2
prefix="cascade-ht$$"
if [ "$(id -u)" -ne 0 ] || ! ip netns add "$prefix-srv" 2>/dev/null; then
  echo "skipped: needs CAP_NET_ADMIN (root, ip netns)"
  exit 77
fi
work=$(mktemp -d)
cleanup() {
  stop_started
  local ns
  for ns in $(ip netns list | grep -o "^$prefix-[^ ]*"); do ip netns del "$ns"; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

in_ns() {
  local ns=$1
  shift
  ip netns exec "$ns" "$@"
}
# link CLIENT_NS DEV SERVER_ADDR CLIENT_ADDR: a veth pair from the server host (device DEV)
# to a client host (device v-srv).
link() {
  ip netns add "$1" || return 1
  ip link add "$2" netns "$prefix-srv" type veth peer name v-srv netns "$1" || return 1
  in_ns "$prefix-srv" ip addr add "$3/24" dev "$2" && in_ns "$prefix-srv" ip link set "$2" up &&
    in_ns "$1" ip addr add "$4/24" dev v-srv && in_ns "$1" ip link set v-srv up &&
    in_ns "$1" ip link set lo up
}
in_ns "$prefix-srv" ip link set lo up || fail "no loopback in the server namespace"
link "$prefix-allowed" v-allowed 10.81.0.1 10.81.0.2 || fail "cannot link the allowed host"
link "$prefix-other" v-other 10.81.1.1 10.81.1.2 || fail "cannot link the other host"

token=0123456789abcdef0123456789abcdef
echo "app $token" >"$work/tokens"
chmod 600 "$work/tokens"
# `ip netns exec` itself, not the in_ns function: a function run with & is a
# subshell, and $! would be the subshell, not the daemon stop_started must stop.
ip netns exec "$prefix-srv" "$hub_bin" --listen tcp://127.0.0.1:7400 --data "$work/hub" --id hub \
  >"$work/hub.log" 2>&1 &
started $!
ip netns exec "$prefix-srv" "$agent_bin" --hub tcp://127.0.0.1:7400 --id sidecar --http 0.0.0.0:8500 \
  --http-allow 10.81.0.0/24 --http-token-file "$work/tokens" >"$work/agent.out" 2>"$work/agent.err" &
started $!
wait_for_output 10 grep -q "http listening on" "$work/agent.out" ||
  fail "the agent did not start its HTTP API: $(cat "$work/agent.err")"

# ask NS SERVER_ADDR [TOKEN]: prints the HTTP status of GET /api/v1/status, or
# "closed" when no answer came.
ask() {
  in_ns "$1" /usr/bin/python3 - "$2" "${3:-}" <<'PY'
import sys, urllib.request, urllib.error
request = urllib.request.Request("http://%s:8500/api/v1/status" % sys.argv[1])
if sys.argv[2]:
    request.add_header("Authorization", "Bearer " + sys.argv[2])
try:
    print(urllib.request.urlopen(request, timeout=5).status)
except urllib.error.HTTPError as e:
    print(e.code)
except Exception:
    print("closed")
PY
}

result=$(ask "$prefix-allowed" 10.81.0.1 "$token")
[ "$result" = 200 ] || fail "allowed host with the token: expected 200, got $result"
result=$(ask "$prefix-allowed" 10.81.0.1)
[ "$result" = 401 ] || fail "allowed host without a token: expected 401, got $result"
result=$(ask "$prefix-other" 10.81.1.1 "$token")
[ "$result" = closed ] || fail "host outside --http-allow: expected the connection closed, got $result"
grep -q "refused a connection from 10.81.1.2" "$work/agent.err" ||
  fail "the refused connection was not logged: $(cat "$work/agent.err")"
echo "allowed host with token: 200; without: 401; host outside --http-allow: closed, logged"
echo "1 passed, 0 failed"
