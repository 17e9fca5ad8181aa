#!/usr/bin/env bash
# The unit tests under AddressSanitizer and UndefinedBehaviorSanitizer, and a
# bounded run of every fuzz target (docs/fuzzing.md). Built with clang in
# ./build-asan (-O1, assertions on, every finding fatal: cmake/Sanitizers.cmake);
# run by tools/test.sh after the release suite.
#
# Test folders (tests/): codec, store, hub (the core and the server), agent
# (the core, routing, calls), security (key files, the ZAP handler's thread,
# Curve on real sockets), dns (the DNS interface's libldns code and its socket
# server), metrics (updates racing a scrape) and fuzz. Left out:
# agent_library_test (the Client's thread and sockets against a real hub: its
# logic is AgentCore's, tested here; its 6 files cost ~45 s of CPU to build
# with the sanitizers), sim (thousands of simulated agents: minutes under ASan,
# and the same code as hub/agent), integration and install (child processes
# and packaging: they test the system, not memory safety), tools (cascadectl
# rendering; CLI11 alone costs more build time than its tests are worth here),
# setup (Python) and the benchmarks.
#   CASCADE_ASAN_AREAS="hub;agent"  other test folders
#   CASCADE_ASAN_SKIP=""            other test programs left out
#   CASCADE_FUZZ_SECONDS=15         length of each fuzz target's bounded run
set -euo pipefail
cd "$(dirname "$0")/.."
areas="${CASCADE_ASAN_AREAS:-codec;store;hub;agent;security;http;dns;metrics;fuzz}"
cmake -S . -B build-asan -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Release \
  -DCASCADE_SANITIZE=address,undefined -DCASCADE_FUZZ=ON -DCASCADE_BUILD_BENCH=OFF \
  -DCASCADE_TEST_AREAS="$areas" -DCASCADE_TEST_SKIP="${CASCADE_ASAN_SKIP-agent_library_test}" \
  -DCASCADE_FUZZ_SECONDS="${CASCADE_FUZZ_SECONDS:-15}" >/dev/null
cmake --build build-asan -j2 --target cascade_tests
# Leaks fail too; halt_on_error: one report per failing test, with its stack.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
ctest --test-dir build-asan --output-on-failure -j2 --timeout 600
