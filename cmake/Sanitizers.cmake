# Instrumented builds (docs/fuzzing.md).
#   CASCADE_SANITIZE=address,undefined  every target built with these sanitizers, at -O1 with
#                                       assertions on; a finding fails the test (tools/test-sanitized.sh)
#   CASCADE_FUZZ=ON                     tests/fuzz/ as libFuzzer programs (clang only), with
#                                       ASan and UBSan unless CASCADE_SANITIZE says otherwise
# Without either, tests/fuzz/ builds the same targets as replay programs (ctest label "fuzz").
set(CASCADE_SANITIZE "" CACHE STRING
    "Sanitizers for every target, e.g. 'address,undefined' (empty: none)")
option(CASCADE_FUZZ "Build tests/fuzz/ as libFuzzer programs with ASan and UBSan (needs clang)" OFF)

if(CASCADE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR
      "CASCADE_FUZZ needs clang (libFuzzer ships with it), but the C++ compiler is "
      "${CMAKE_CXX_COMPILER_ID} (${CMAKE_CXX_COMPILER}). Configure a fresh build directory with "
      "-DCMAKE_CXX_COMPILER=clang++ (Debian packages clang and libclang-rt-14-dev).")
  endif()
  if(NOT CASCADE_SANITIZE)
    set(CASCADE_SANITIZE address,undefined)
  endif()
  # Coverage feedback for every library; the fuzz programs add libFuzzer's main at link time.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

if(CASCADE_SANITIZE)
  # -O1 keeps the build and the run fast enough for CI and the reports readable; assertions
  # stay on (invariants are checked too); -fno-sanitize-recover makes every finding fatal.
  add_compile_options(-fsanitize=${CASCADE_SANITIZE} -fno-sanitize-recover=all
                      -fno-omit-frame-pointer -O1 -UNDEBUG)
  add_link_options(-fsanitize=${CASCADE_SANITIZE})
endif()
