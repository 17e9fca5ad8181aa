#!/usr/bin/env bash
# A long fuzzing run of one target (docs/fuzzing.md), in the sanitizer build
# ./build-asan (made by tools/test-sanitized.sh, or here if missing).
#   tools/fuzz.sh TARGET [SECONDS] [LIBFUZZER-OPTION...]
#   tools/fuzz.sh hub_core 3600 -jobs=2 -workers=2
# TARGET: decode_frame hub_core agent_core proxy_core msgpack_blob routing_rule http_request.
# The corpus grows in build-asan/tests/fuzz/corpus/TARGET/ and survives runs;
# a finding lands in build-asan/tests/fuzz/findings/TARGET/ (copy it to
# tests/fuzz/regressions/TARGET/ with its fix and regression test).
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:?usage: tools/fuzz.sh TARGET [SECONDS] [LIBFUZZER-OPTION...]}"
seconds="${2:-600}"
shift $(( $# < 2 ? $# : 2 ))
if [ ! -f build-asan/CMakeCache.txt ]; then
  cmake -S . -B build-asan -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Release \
    -DCASCADE_SANITIZE=address,undefined -DCASCADE_FUZZ=ON -DCASCADE_BUILD_BENCH=OFF \
    -DCASCADE_TEST_AREAS=fuzz >/dev/null
fi
cmake --build build-asan -j2 --target "fuzz_$target"
dir=build-asan/tests/fuzz
exec "$dir/fuzz_$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$dir/findings/$target/" "$@" \
  "$dir/corpus/$target" "$dir/seeds/$target"
