# Shell helpers of the install and package tests (sourced).

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# wait_for_file FILE SECONDS: until FILE exists and is not empty.
wait_for_file() {
  local file=$1 deadline=$((SECONDS + $2))
  until [ -s "$file" ]; do
    [ $SECONDS -lt "$deadline" ] || return 1
    sleep 0.05
  done
}

# wait_for_output SECONDS COMMAND...: until COMMAND succeeds; its last output on stdout.
wait_for_output() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    [ $SECONDS -lt "$deadline" ] || return 1
    sleep 0.1
  done
}

# Processes started with `started PID` are stopped (SIGTERM, then SIGKILL) on exit.
background_pids=()
started() { background_pids+=("$1"); }
stop_started() {
  local pid
  for pid in "${background_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${background_pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  background_pids=()
}

# verify_unit UNIT COMMAND...: COMMAND UNIT (a systemd-analyze verify) exits 0
# and says nothing: an unknown key or a bad value is only a warning to systemd.
verify_unit() {
  local unit=$1 said
  shift
  said=$("$@" "$unit" 2>&1) || fail "$unit does not verify: $said"
  [ -z "$said" ] || fail "$unit: $said"
  echo "$unit verifies"
}
