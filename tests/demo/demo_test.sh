#!/usr/bin/env bash
# One check of a demo of deploy/, run as a user would run it; the output is shown in full.
# Usage: demo_test.sh CHECK BUILD_DIR   (CHECK: a function below)
set -euo pipefail
check=$1 build=$2
source=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp)
state=$(mktemp -d)
trap 'rm -rf "$out" "$state"' EXIT

# A suite run with -j2 on a busy machine is slower than a demo on an idle one: wait longer.
export TIMEOUT_S=${TIMEOUT_S:-60}

fail() { echo "FAILED: $*" >&2; exit 1; }
# The demo's output must hold LINE (a grep -E pattern) exactly N times.
expect_lines() {  # n, pattern
  local got
  got=$(grep -cE "$2" "$out" || true)
  [ "$got" = "$1" ] || fail "expected $1 lines matching '$2', got $got"
}

# Seven hubs and the proxy say `security: curve` in their status, and every step is reached
# (the fast-fail step needs two callers' keys to isolate: one key alone cannot; the traffic
# switch moves dc1's picks to dc1's provider alone, then back to dc2's).
tiers_demo_runs_with_curve() {
  bash "$source/deploy/tiers-demo.sh" "$build" 2>&1 | tee "$out"
  expect_lines 7 'security: curve$'
  expect_lines 0 'security: (loopback|insecure)'
  expect_lines 1 'isolated [0-9]+ ms: 2 failures from 2 callers'
  expect_lines 1 'both datacenters fail fast \(HTTP 503 degraded\)'
  expect_lines 1 'switched back on: both pick pay again'
  expect_lines 1 "dc1's consumers switched to dc1 [0-9]+ ms after the operator's command: app-dc1 picks 10\.1\.0\.20:8443\$"
  expect_lines 1 "switched back: dc1's consumers pick dc2's pay again [0-9]+ ms after the command: app-dc1 picks 10\.2\."
  expect_lines 1 '== Done'
}

# The launcher gives every hub of three-tier a key; each answers with Curve and reaches its
# upstream with its own key.
three_tier_topology_runs_with_curve() {
  CHECK=1 BUILD=$build bash "$source/deploy/topologies/run.sh" three-tier "$state" 2>&1 | tee "$out"
  expect_lines 5 'security: curve$'
  expect_lines 1 'every hub reaches its upstreams over Curve'
  [ "$(stat -c %a "$state/keys/l3-top.key")" = 600 ] || fail "l3-top.key is not mode 0600"
}

"$check"
