#!/usr/bin/env bash
# Builds cascade's Debian packages into build/packages: cascade-hub (hub,
# cascadectl, units, /etc/cascade/hub.toml), cascade-agent (agent, unit,
# /etc/cascade/agent-example.toml) and libcascade-dev (library, headers,
# CMake package). Installs what is missing and builds first, as the other
# scripts do.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bash tools/build.sh
cpack --config build/CPackConfig.cmake -B build/packages >build/packages.log 2>&1 ||
  { cat build/packages.log; exit 1; }
ls -1 build/packages/*.deb
