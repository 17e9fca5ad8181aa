#!/bin/bash
# A real network cut between two datacenters, and how fast their views
# converge after it heals (issue 11: links must not wait out TCP's backoff).
#
#   partition_heal_test.sh HUB AGENT CASCADECTL [CUT_SECONDS...]   (default cuts: 5 30 60)
#
# For each cut length, one set of network namespaces, all sets at once:
#
#        l2 (hubs l2-a :7400, l2-b :7401)        tier 2
#          |
#        router ---- dc1 (L1 hub, agents)        tier 1
#          |
#        dc2 (L1 hub, agents)                    tier 1
#
# Each L1 beats to both L2s (--upstream-mode all). A provider agent in each
# datacenter registers a service, a consumer agent in the other uses it.
# Then dc2 is cut off: two `ip rule ... blackhole` rules in the router drop
# every packet from and to dc2, silently (no ICMP), like a failed WAN link.
# During the cut each datacenter registers a new instance. At the heal the
# test polls the hubs (cascadectl resolve, 100 ms apart) until both L2s and
# dc1's L1 hold dc2's new instance and dc2's L1 holds dc1's, and prints the
# time from the heal. It fails when that takes longer than one beat interval
# (1 s) plus a margin of 0.5 s (polling period, the probes' process start,
# ZMTP handshake and the hubs' 20 ms commit).
#
# Needs root with CAP_NET_ADMIN (ip netns); exits 77 (ctest: skipped) otherwise.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../install/lib.sh
source "$here/../install/lib.sh"

[ $# -ge 3 ] || fail "usage: $0 HUB AGENT CASCADECTL [CUT_SECONDS...]"
hub_bin=$1 agent_bin=$2 ctl_bin=$3
shift 3
cuts=("$@")
[ ${#cuts[@]} -gt 0 ] || cuts=(5 30 60)

beat_ms=1000
bound_ms=1500      # beat interval + 0.5 s margin
give_up_ms=120000  # how long to keep measuring a slow heal before calling it lost

prefix="cascade-pt$$"
probe_ns="$prefix-probe"
if [ "$(id -u)" -ne 0 ] || ! ip netns add "$probe_ns" 2>/dev/null; then
  echo "skipped: needs CAP_NET_ADMIN (root, ip netns)"
  exit 77
fi
ip netns del "$probe_ns"

work=$(mktemp -d)
# Every process of every set is listed in $work/pids (the sets run in
# subshells), and every namespace carries $prefix: both go, even on failure.
cleanup() {
  stop_started
  local pid ns
  [ -f "$work/pids" ] && while read -r pid; do kill -KILL "$pid" 2>/dev/null; done <"$work/pids"
  for ns in $(ip netns list | grep -o "^$prefix-[^ ]*"); do ip netns del "$ns"; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

now_ms() { echo $(($(date +%s%N) / 1000000)); }
in_ns() {
  local ns=$1
  shift
  ip netns exec "$ns" "$@"
}

# link NS_A ADDR_A NS_B ADDR_B: a veth pair between two namespaces (/24 each end).
link() {
  ip link add "v-$4" netns "$1" type veth peer name "v-$2" netns "$3" || return 1
  in_ns "$1" ip addr add "$2/24" dev "v-$4" && in_ns "$1" ip link set "v-$4" up &&
    in_ns "$3" ip addr add "$4/24" dev "v-$2" && in_ns "$3" ip link set "v-$2" up
}

# make_set K: namespaces $prefix-K-{r,l2,dc1,dc2}; subnets 10.7K.{0,1,2}.0/24.
make_set() {
  local k=$1 ns
  for ns in r l2 dc1 dc2; do
    ip netns add "$prefix-$k-$ns" || return 1
    in_ns "$prefix-$k-$ns" ip link set lo up
  done
  in_ns "$prefix-$k-r" sh -c 'echo 1 > /proc/sys/net/ipv4/ip_forward'
  local net=10.7$k i=0
  for ns in l2 dc1 dc2; do
    link "$prefix-$k-r" "$net.$i.1" "$prefix-$k-$ns" "$net.$i.2" || return 1
    in_ns "$prefix-$k-$ns" ip route add default via "$net.$i.1" || return 1
    i=$((i + 1))
  done
}

# cut K add|del: drop (or stop dropping) every packet from and to dc2 of set K.
cut() {
  in_ns "$prefix-$1-r" ip rule "$2" from "10.7$1.2.0/24" blackhole priority 100 &&
    in_ns "$prefix-$1-r" ip rule "$2" to "10.7$1.2.0/24" blackhole priority 101
}

# start K NS NAME PROGRAM ARGS...: a process in a namespace, logged, stopped on exit.
start() {
  local k=$1 ns=$2 name=$3
  shift 3
  ip netns exec "$prefix-$k-$ns" "$@" >"$work/$k-$name.log" 2>&1 </dev/null &
  echo $! >>"$work/pids"
}

# The namespaces' 10.7x addresses are not loopback: plain text needs --insecure
# (secure by default), which is what this private test network means.
start_hubs() {
  local k=$1 net=10.7$1 dc i
  for i in a b; do
    local port=7400
    [ $i = b ] && port=7401
    mkdir -p "$work/$k-l2-$i"
    start "$k" l2 "l2-$i" "$hub_bin" --id "l2-$i" --tier 2 --listen "tcp://$net.0.2:$port" \
      --data "$work/$k-l2-$i" --beat-interval-ms $beat_ms --probe-held off --insecure
  done
  for dc in 1 2; do
    mkdir -p "$work/$k-l1-dc$dc"
    start "$k" "dc$dc" "l1-dc$dc" "$hub_bin" --id "l1-dc$dc" --tier 1 --zone "dc$dc" \
      --listen "tcp://$net.$dc.2:7400" --data "$work/$k-l1-dc$dc" --beat-interval-ms $beat_ms \
      --probe-held off --insecure \
      --upstream "tcp://$net.0.2:7400" --upstream "tcp://$net.0.2:7401" --upstream-mode all
  done
}

# agent K DC NAME ARGS...: a cascade-agent beating to its datacenter's L1.
agent() {
  local k=$1 dc=$2 name=$3
  shift 3
  start "$k" "dc$dc" "$name" "$agent_bin" --hub "tcp://10.7$k.$dc.2:7400" --id "$name" \
    --beat-interval-ms $beat_ms --insecure "$@"
}

# holds K NS HUB_ADDRESS SERVICE ADDRESS: the hub answers ADDRESS for SERVICE.
holds() {
  in_ns "$prefix-$1-$2" "$ctl_bin" --hub "tcp://$3" --timeout-ms 300 resolve "$4" 2>/dev/null |
    grep -qF "$5"
}

# views_converged K INSTANCE_NO: every hub holds the other datacenter's instance.
views_converged() {
  local k=$1 n=$2 net=10.7$1
  holds "$k" l2 "$net.0.2:7400" svc-dc2 "10.99.2.$n:80" &&
    holds "$k" l2 "$net.0.2:7401" svc-dc2 "10.99.2.$n:80" &&
    holds "$k" dc1 "$net.1.2:7400" svc-dc2 "10.99.2.$n:80" &&
    holds "$k" dc2 "$net.2.2:7400" svc-dc1 "10.99.1.$n:80"
}

# wait_converged K INSTANCE_NO LIMIT_MS: ms until views_converged, or -1 after LIMIT_MS.
wait_converged() {
  local start_ms elapsed
  start_ms=$(now_ms)
  while :; do
    views_converged "$1" "$2" && break
    elapsed=$(($(now_ms) - start_ms))
    [ "$elapsed" -lt "$3" ] || { echo -1; return; }
    sleep 0.1
  done
  echo $(($(now_ms) - start_ms))
}

# run_set K CUT_SECONDS: the whole scenario in set K; "K CUT HEAL_MS" on stdout.
run_set() {
  local k=$1 seconds=$2
  make_set "$k" || fail "set $k: could not build the namespaces"
  start_hubs "$k"
  agent "$k" 1 "prov-dc1-1" --register "svc-dc1=10.99.1.1:80"
  agent "$k" 2 "prov-dc2-1" --register "svc-dc2=10.99.2.1:80"
  agent "$k" 1 "cons-dc1" --use svc-dc2
  agent "$k" 2 "cons-dc2" --use svc-dc1
  [ "$(wait_converged "$k" 1 30000)" -ge 0 ] || fail "set $k: views never converged before the cut"
  cut "$k" add || fail "set $k: could not cut dc2 off"
  agent "$k" 1 "prov-dc1-2" --register "svc-dc1=10.99.1.2:80"
  agent "$k" 2 "prov-dc2-2" --register "svc-dc2=10.99.2.2:80"
  sleep "$seconds"
  cut "$k" del || fail "set $k: could not heal the cut"
  echo "$k $seconds $(wait_converged "$k" 2 $give_up_ms)"
}

for i in "${!cuts[@]}"; do
  run_set $((i + 1)) "${cuts[$i]}" >"$work/result-$((i + 1))" &
  started $!
done
wait "${background_pids[@]}"

status=0
for i in "${!cuts[@]}"; do
  read -r k seconds heal_ms <"$work/result-$((i + 1))" || {
    echo "set $((i + 1)) (${cuts[$i]} s cut): no result; its logs:"
    tail -n 5 "$work/$((i + 1))"-*.log
    status=1
    continue
  }
  if [ "$heal_ms" -lt 0 ]; then
    echo "FAIL: ${seconds} s cut: views had not converged ${give_up_ms} ms after the heal"
    status=1
  elif [ "$heal_ms" -gt $bound_ms ]; then
    echo "FAIL: ${seconds} s cut: views converged ${heal_ms} ms after the heal (bound ${bound_ms} ms)"
    status=1
  else
    echo "ok: ${seconds} s cut: views converged ${heal_ms} ms after the heal (bound ${bound_ms} ms)"
  fi
done
exit $status
