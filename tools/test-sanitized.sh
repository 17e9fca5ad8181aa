#!/usr/bin/env bash
# The unit tests under AddressSanitizer and UndefinedBehaviorSanitizer, and a
# bounded run of every fuzz target (docs/fuzzing.md). Built with clang in
# ./build-asan (-O1, assertions on, every finding fatal: cmake/Sanitizers.cmake);
# run by tools/test.sh after the release suite.
#
# Test folders (tests/): codec, store, hub, agent (the sans-IO cores, the
# codec, the stores, the Client over in-process ZeroMQ) and fuzz. Left out:
# sim (thousands of simulated agents: minutes under ASan, and the same code as
# hub/agent), integration and install (child processes and packaging: they
# test the system, not memory safety), tools (cascadectl rendering; CLI11
# alone costs more build time than its tests are worth here), setup (Python)
# and the benchmarks.
#   CASCADE_ASAN_AREAS="hub;agent"  other test folders
#   CASCADE_FUZZ_SECONDS=20         length of each fuzz target's bounded run
set -euo pipefail
cd "$(dirname "$0")/.."
areas="${CASCADE_ASAN_AREAS:-codec;store;hub;agent;fuzz}"
cmake -S . -B build-asan -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Release \
  -DCASCADE_SANITIZE=address,undefined -DCASCADE_FUZZ=ON -DCASCADE_BUILD_BENCH=OFF \
  -DCASCADE_TEST_AREAS="$areas" -DCASCADE_FUZZ_SECONDS="${CASCADE_FUZZ_SECONDS:-20}" >/dev/null
cmake --build build-asan -j2 --target cascade_tests
# Leaks fail too; halt_on_error: one report per failing test, with its stack.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
ctest --test-dir build-asan --output-on-failure -j2 --timeout 600
