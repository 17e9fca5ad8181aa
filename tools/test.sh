#!/usr/bin/env bash
# The whole test suite from a clean clone: installs what is missing, builds,
# checks that set-up installs everything used, runs every test with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bash tools/build.sh
# Fails here, naming the package, when the build, a test or a script uses
# something tools/setup.sh does not install (a fresh machine would lack it).
/usr/bin/python3 tools/check_setup.py --build-dir build
ctest --test-dir build --output-on-failure -j2 --timeout 300
# The unit tests under AddressSanitizer and UndefinedBehaviorSanitizer, and a
# bounded run of every fuzz target: a clang build in ./build-asan.
bash tools/test-sanitized.sh
