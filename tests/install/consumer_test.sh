#!/usr/bin/env bash
# An application outside cascade's tree builds against cascade as installed
# and talks to a hub: the dev and hub components are installed into a
# temporary prefix, tests/install/consumer is configured with
# find_package(cascade CONFIG) and built, the installed hub is started and the
# consumer registers, resolves and deregisters through it.
# Usage: consumer_test.sh CMAKE BUILD_DIR SOURCE_DIR
set -euo pipefail
cmake=$1 build=$2 source=$3
. "$source/tests/install/lib.sh"

work=$(mktemp -d /tmp/cascade-consumer.XXXXXX)
trap 'stop_started; rm -rf "$work"' EXIT
prefix=$work/prefix

for component in dev hub; do
  "$cmake" --install "$build" --prefix "$prefix" --component "$component" >/dev/null
done

echo "== the CMake package is relocatable: it names no path of the build machine"
if grep -rl -e "$build" -e "$source" "$prefix"/lib*/cmake/cascade; then
  fail "the installed CMake package names the build or source tree"
fi

echo "== units and config follow the prefix"
unit=$prefix/lib/systemd/system/cascade-hub.service
grep -qx "ExecStart=$prefix/bin/cascade-hub --config $prefix/etc/cascade/hub.toml" "$unit" ||
  fail "$unit: $(grep ExecStart "$unit")"
[ -f "$prefix/etc/cascade/hub.toml" ] || fail "no $prefix/etc/cascade/hub.toml"

echo "== an out-of-tree program finds cascade and links cascade::agent"
"$cmake" -S "$source/tests/install/consumer" -B "$work/consumer" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release | grep 'installed headers'
"$cmake" --build "$work/consumer" -j2 >"$work/consumer-build.log" 2>&1 ||
  { cat "$work/consumer-build.log"; fail "the consumer does not build"; }

echo "== and works against the installed hub"
"$prefix/bin/cascade-hub" --id install-test --listen 'tcp://127.0.0.1:*' --data "$work/hub" \
  --log-level warn &
started $!
wait_for_file "$work/hub/hub.endpoint" 10 || fail "the hub wrote no endpoint"
endpoint=$(head -n1 "$work/hub/hub.endpoint")
"$work/consumer/consumer" "$endpoint" install-demo=127.0.0.1:9100
echo "PASS"
