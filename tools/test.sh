#!/usr/bin/env bash
# The whole test suite from a clean clone: installs what is missing, builds,
# runs every test with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bash tools/build.sh
ctest --test-dir build --output-on-failure -j2 --timeout 300
