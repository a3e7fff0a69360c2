# RIDGELINE_FUZZ=ON (the `fuzz` preset): every target is compiled with libFuzzer's coverage
# instrumentation plus AddressSanitizer and UndefinedBehaviorSanitizer, and fuzz/ adds one libFuzzer
# binary per parser (docs/reliability.md). Needs clang (Debian: clang-14 and libclang-rt-14-dev).
# Included from the top-level CMakeLists.txt before the modules, so the libraries under test carry the
# instrumentation too (a fuzzer only sees the coverage of code compiled with it).
if(RIDGELINE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "RIDGELINE_FUZZ=ON needs clang (libFuzzer); use `cmake --preset fuzz` or "
                        "-DCMAKE_CXX_COMPILER=clang++")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
