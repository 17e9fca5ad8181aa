#!/usr/bin/env bash
# Builds the Debian packages from the build tree into OUT (the fixture of the
# package tests): cascade-hub, cascade-agent and libcascade-dev.
# Usage: build_debs.sh CPACK BUILD_DIR OUT
set -euo pipefail
cpack=$1 build=$2 out=$3
rm -rf "$out"
"$cpack" --config "$build/CPackConfig.cmake" -B "$out" >"$out.log" 2>&1 ||
  { cat "$out.log"; echo "FAIL: cpack" >&2; exit 1; }
for package in cascade-hub cascade-agent libcascade-dev; do
  ls "$out/${package}"_*.deb >/dev/null 2>&1 || { cat "$out.log"; echo "FAIL: no $package" >&2; exit 1; }
done
ls -l "$out"/*.deb
